# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""What export carries into a file: only the definitions, class methods and imports its code names.

Contract: a carried class keeps only the methods the file reads as attributes (and the methods those name),
so an unused check costs no line and no import; a class left with no statement gets ``pass``; the carried
constants go first as one run; and a draft of every kind ``new`` writes (an OpInfo op with the device-limit
helpers, the case that once came to 157 lines) merges under :data:`plan.CARRIED_LIMIT` and compiles.
"""
import ast

import pytest
from export_repo import FUNCTORCH_SHAPE

from torch_npu_testing.export import carry, merge, plan
from torch_npu_testing.export.kitfile import parse_kit_file

CLASS_ONLY = '''# --- carried: begin
import contextlib
import re


class Checks(object):
    """Checks."""

    def check_a(self):
        return self.check_b()

    @contextlib.contextmanager
    def check_b(self):
        yield re.escape("b")

    def check_c(self):
        return re.escape("c")
# --- carried: end
'''
NO_DOCSTRING = CLASS_ONLY.replace('    """Checks."""\n\n', "")
HOOKS = "".join(f"    def {name}(self):\n        pass\n\n" for name in ("setUp", "__init__", "_helper"))
WITH_HOOKS = CLASS_ONLY.replace("    def check_c(self):", HOOKS + "    def check_c(self):")


def text_of(carried, names, attributes):
    imports, definitions = carried.select(names, attributes)
    return [b.name for b in imports], merge.helpers_text(definitions)


def test_a_class_keeps_the_methods_the_file_names_and_those_they_name():
    imports, text = text_of(carry.parse_carried(CLASS_ONLY), ["Checks"], {"check_a", "shape"})
    assert "def check_a(" in text and "def check_b(" in text and "def check_c(" not in text
    assert imports == ["contextlib", "re"] and "@contextlib.contextmanager\n    def check_b" in text
    assert "\n\n    @contextlib" in text and text.endswith(")\n") and "\n\n\n" not in text
    compile(text, "carried", "exec")


def test_a_method_and_the_imports_only_it_used_are_left_out():
    imports, text = text_of(carry.parse_carried(CLASS_ONLY), ["Checks"], {"check_c"})
    assert imports == ["re"] and "check_b" not in text and "contextmanager" not in text
    assert text_of(carry.parse_carried(CLASS_ONLY), ["Checks"], None)[1].count("    def ") == 3


def test_hooks_private_and_dunder_methods_always_stay():
    """unittest calls setUp (and Python __init__) without the file naming them: never left out."""
    _, text = text_of(carry.parse_carried(WITH_HOOKS), ["Checks"], set())
    assert "def setUp(" in text and "def __init__(" in text and "def _helper(" in text
    assert "def check_a(" not in text and "def check_c(" not in text
    compile(text, "carried", "exec")


def test_a_class_left_with_no_statement_gets_pass():
    imports, text = text_of(carry.parse_carried(NO_DOCSTRING), ["Checks"], set())
    assert imports == [] and text == "class Checks(object):\n    pass\n"
    compile(text, "carried", "exec")


def test_the_carried_testcase_keeps_only_the_checks_a_file_calls():
    imports, text = text_of(carry.load_carried(), ["TestCase"], {"assert_value"})
    assert "def assert_value(" in text and "assert_tensor" not in text and "assert_raises_exactly" not in text
    assert "contextlib" not in imports and "re" not in imports and "importlib" in imports
    compile(text, "carried", "exec")


def test_constants_go_first_as_one_run():
    _, definitions = carry.load_carried().select(["_device_runtime", "skip_unless_vehicle"])
    lines = merge.helpers_text(definitions).splitlines()
    expected = ["DEVICE_VARIABLES", "RUNNER_MODULE", "REFUSALS", "DEVICE_VEHICLES"]
    assert [line.split(" = ")[0] for line in lines[:4]] == expected
    assert lines[4:6] == ["", ""]
    constant = carry.Definition("LATE", "LATE = device_type()\n", frozenset({"device_type"}))
    late = merge.helpers_text(definitions + [constant])
    assert late.index("LATE = ") > late.index("def device_type(")       # reads a function: stays after it


def opinfo_draft_text(api):
    from torch_npu_testing.task import opinfo_draft, opinfo_lookup
    import torch
    found = opinfo_lookup.lookup(api)
    entries = opinfo_draft.merge([{"torch": torch.__version__, "entries": found["entries"]}])
    return opinfo_draft.render(api, None, entries, [torch.__version__], None)


@pytest.mark.parametrize("api", ["torch.nn.functional.relu6", "torch.nn.functional.pad", "torch.linalg.det"])
def test_an_opinfo_draft_with_the_limits_helpers_merges_within_the_limit(api):
    """An OpInfo draft imports TestCase, run_tests, device_type, requires_api and both limits helpers: its
    carried part came to 157 lines (limit 150) before classes carried only the methods a file calls."""
    text = opinfo_draft_text(api)
    names = {a.name for node in ast.parse(text).body if isinstance(node, ast.ImportFrom)
             and node.module == "torch_npu_testing" for a in node.names}
    assert {"requires_api", "skip_unless_vehicle", "api_limit", "TestCase"} <= names
    kit = parse_kit_file("test/nn/test_x_api.py", text)
    merged = merge.merge_into(kit, FUNCTORCH_SHAPE.read_text(), carry.load_carried(), "test/nn/test_x_api.py")
    assert 0 < merged.carried_lines <= plan.CARRIED_LIMIT, merged.carried_lines
    compile(merged.text, "merged", "exec")
    created = merge.new_file(kit, carry.load_carried(), "# header\n", api)
    assert 0 < created.carried_lines <= plan.CARRIED_LIMIT
    compile(created.text, "created", "exec")
