# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""In a merged file the kit's TestCase base follows the runner the file's main guard calls.

PyTorch's ``common_utils.run_tests`` exits 1 on a TestCase class that is not its own; torch_npu's TestCase
is expecttest's. So export fixes the carried ``RUNNER_MODULE`` to the module of their guard's ``run_tests``
(any import form), leaves it ``None`` (the device's pair) for a file it creates or a runner of another
kind, refuses a guard calling both families, and the strict checks behave the same on both bases (run in
a subprocess under the stand-in torch_npu, whose TestCase is expecttest's as the real one is).
"""
import ast
import json

import pytest
from conftest import REPO_ROOT
from export_repo import AOT, CONFIG, FIXTURES, FUNCTORCH_SHAPE, GRAD, NPU_SHAPE, VMAP, clone, make_kit, make_origin

from torch_npu_testing import standin
from torch_npu_testing.common.errors import UsageError
from torch_npu_testing.export import carry, merge, plan
from torch_npu_testing.export.kitfile import parse_kit_file

COMMON = "torch.testing._internal.common_utils"
NPU = "torch_npu.testing.testcase"
MODULE_RUNNER = FIXTURES / "ascend_functorch" / "test_functorch_module_runner_shape.py"
ALIASED_RUNNER = FIXTURES / "ascend_npu" / "test_npu_aliased_runner_shape.py"
STANDIN = standin.FOLDER
GUARD = '\n\nif __name__ == "__main__":\n    {}\n'


def kit():
    return parse_kit_file("test/x_api.py", (FIXTURES / "kit" / "kit_small_api.py").read_text())


def runner_of(text):
    tree = ast.parse(text)
    return merge.guard_runner(tree, [node for node in tree.body if merge.is_main_guard(node)][-1])


@pytest.mark.parametrize("text, expected", [
    (FUNCTORCH_SHAPE.read_text(), COMMON),
    (MODULE_RUNNER.read_text(), COMMON),
    (NPU_SHAPE.read_text(), NPU),
    (ALIASED_RUNNER.read_text(), NPU),
    ("import torch.testing._internal.common_utils as cu" + GUARD.format("cu.run_tests()"), COMMON),
    ("import torch.testing._internal.common_utils" + GUARD.format("torch.testing._internal.common_utils.run_tests()"),
     COMMON),
    ("import torch_npu.testing.testcase" + GUARD.format("torch_npu.testing.testcase.run_tests()"), NPU),
    ("import unittest" + GUARD.format("unittest.main()"), None),
    ("def run_tests():\n    pass" + GUARD.format("run_tests()"), None),
    ("from torch.testing._internal.common_utils import run_tests" + GUARD.format("print()"), None),
], ids=["functorch", "module", "npu", "aliased", "as-module", "dotted", "npu-dotted", "unittest", "own", "not-called"])
def test_the_guards_runner_is_read_from_its_import(text, expected):
    assert runner_of(text) == expected


def test_a_guard_calling_both_families_is_refused():
    text = (f"from {COMMON} import run_tests\nfrom {NPU} import run_tests as npu_run" +
            GUARD.format("run_tests()\n    npu_run()"))
    with pytest.raises(UsageError, match=f"its main guard calls both {COMMON} and {NPU} run_tests; keep one"):
        merge.merge_into(kit(), text, carry.load_carried(), "test/x.py")


def _setting(text):
    return [line for line in text.splitlines() if "RUNNER_MODULE = " in line]


@pytest.mark.parametrize("fixture, module", [(FUNCTORCH_SHAPE, COMMON), (MODULE_RUNNER, COMMON), (NPU_SHAPE, NPU),
                                             (ALIASED_RUNNER, NPU)], ids=lambda value: getattr(value, "stem", value))
def test_a_merged_file_fixes_the_base_to_its_runners_module(fixture, module):
    merged = merge.merge_into(kit(), fixture.read_text(), carry.load_carried(), "test/x.py")
    assert merged.runner == module
    assert _setting(merged.text) == [f'RUNNER_MODULE = "{module}"  # {merge.RUNNER_COMMENT}']
    assert "getattr(importlib.import_module(RUNNER_MODULE or by_device), name)" in merged.text
    assert max(len(line) for line in merged.text.splitlines() if "RUNNER_MODULE" in line or "by_device" in line) <= 120
    compile(merged.text, "x.py", "exec")


def test_a_file_export_creates_keeps_the_device_pair():
    merged = merge.new_file(kit(), carry.load_carried(), "# header\n", "torch.x")
    assert merged.runner is None and _setting(merged.text)[0].startswith("RUNNER_MODULE = None  #")
    assert "\ndef run_tests():\n" in merged.text


def test_a_file_whose_runner_is_another_kind_keeps_the_device_pair():
    merged = merge.merge_into(kit(), "import unittest" + GUARD.format("unittest.main()"), carry.load_carried())
    assert merged.runner is None and _setting(merged.text)[0].startswith("RUNNER_MODULE = None  #")


def test_their_runner_module_name_is_not_touched_the_kits_is_renamed():
    theirs = NPU_SHAPE.read_text().replace("device = 'npu:0'", "device = 'npu:0'\nRUNNER_MODULE = 'theirs'")
    merged = merge.merge_into(kit(), theirs, carry.load_carried(), "test/x.py")
    assert merged.renamed["RUNNER_MODULE"] == "KIT_RUNNER_MODULE"
    assert "\nRUNNER_MODULE = 'theirs'\n" in merged.text
    assert f'\nKIT_RUNNER_MODULE = "{NPU}"  # {merge.RUNNER_COMMENT}\n' in merged.text
    assert "import_module(KIT_RUNNER_MODULE or by_device)" in merged.text


@pytest.mark.parametrize("name, fragment", [("TestCase", "no one-line `TestCase = ...`"),
                                            ("NOT_CARRIED", "no one-line `NOT_CARRIED = ...`")])
def test_set_value_refuses_what_is_not_a_carried_one_line_assignment(name, fragment):
    _, definitions = carry.load_carried().select(["TestCase"])
    with pytest.raises(UsageError, match=fragment):
        carry.set_value(definitions, name, COMMON, "c")


STRICT_CHECKS = r'''
import json, sys
import torch
from torch_npu_testing.export import carry
imports, definitions = carry.load_carried().select(["TestCase"])
definitions = carry.set_value(definitions, "RUNNER_MODULE", sys.argv[1], "test")
namespace = {}
exec("\n".join(b.statement for b in imports) + "\n\n" + "\n\n".join(d.text for d in definitions), namespace)


class Case(namespace["TestCase"]):
    def runTest(self):
        pass


case, outcomes = Case(), {}


def outcome(label, call):
    try:
        call()
        outcomes[label] = "passed"
    except AssertionError as exc:
        outcomes[label] = str(exc)


def raises_subclass():
    with case.assert_raises_exactly(LookupError, "subclass"):
        raise KeyError("k")


x = torch.arange(6.).reshape(2, 3)
outcome("equal", lambda: case.assert_tensor(x, x.clone(), "equal"))
outcome("dtype", lambda: case.assert_tensor(x.long(), x, "dtype"))
outcome("1e-6", lambda: case.assert_tensor(x + 1e-6, x, "1e-6"))
outcome("bool", lambda: case.assert_value(1, True, "bool"))
outcome("subclass", raises_subclass)
bases = [f"{k.__module__}.{k.__name__}" for k in Case.__mro__]
print(json.dumps({"outcomes": outcomes, "bases": bases}))
'''


def test_the_strict_checks_are_the_same_on_both_bases(run_python):
    results = {}
    for module in (COMMON, NPU):
        result = run_python(["-c", STRICT_CHECKS, module], PYTHONPATH=f"{STANDIN}:{REPO_ROOT}")
        assert result.returncode == 0, result.stderr[-3000:]
        results[module] = json.loads(result.stdout.splitlines()[-1])
    assert f"{COMMON}.TestCase" in results[COMMON]["bases"]
    assert f"{NPU}.TestCase" in results[NPU]["bases"] and f"{COMMON}.TestCase" not in results[NPU]["bases"]
    outcomes = results[COMMON]["outcomes"]
    assert results[NPU]["outcomes"] == outcomes
    assert outcomes["equal"] == "passed"
    assert "dtype: dtype is torch.int64, expected torch.float32" in outcomes["dtype"]
    assert "1e-6: values differ (atol=0.0, rtol=0.0)" in outcomes["1e-6"]
    assert outcomes["bool"] == "bool: got 1, expected True"
    assert outcomes["subclass"].startswith("subclass: expected LookupError matching None, got KeyError")


def test_the_plan_names_each_merged_files_runner(tmp_path, monkeypatch):
    monkeypatch.setattr(plan, "exported_patches", lambda base, kit: [])
    dest = clone(make_origin(tmp_path / "src"), tmp_path / "dest")
    targets = plan.plan_at_ref(make_kit(tmp_path / "k"), "master", dest).targets
    assert {target.rel_path: target.runner for target in targets} == {CONFIG: COMMON, VMAP: COMMON, AOT: COMMON,
                                                                      GRAD: NPU}
