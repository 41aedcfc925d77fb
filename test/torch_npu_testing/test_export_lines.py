# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Exported lines and Ascend's 120-column lint of ``test/``: the kit file's docstring, which becomes ``# ``
comments, is wrapped where the prefix would push a line past 120 (words kept, a list item's continuation
under its text); a code line that renaming lengthens past 120 is a plan warning naming file and line.
"""
from export_repo import FIXTURES, FUNCTORCH_SHAPE

from torch_npu_testing.export import carry, merge, plan
from torch_npu_testing.export.kitfile import parse_kit_file

SMALL = (FIXTURES / "kit" / "kit_small_api.py").read_text()
DOC_START = SMALL.index('"""')
DOC_END = SMALL.index('"""', DOC_START + 3) + 3
LONG_ITEM = "- " + " ".join(["word"] * 23) + " end"          # 120 characters: 122 as a comment
LONG_PARAGRAPH = "An opening paragraph line " + "x" * 90 + " with its tail"


def merged_with(text):
    kit = parse_kit_file("test/x_api.py", text)
    return merge.merge_into(kit, FUNCTORCH_SHAPE.read_text(), carry.load_carried(), "test/x_api.py")


def block_comments(text):
    block = text[text.index(merge.BEGIN_MARK):text.index(merge.END_MARK)]
    return [line for line in block.splitlines()[1:] if line.startswith("#")]


def test_a_docstring_line_the_prefix_would_push_past_120_is_wrapped_at_words():
    assert len(LONG_ITEM) == 120 and len(LONG_PARAGRAPH) > 118
    docstring = '"""A small kit test file.\n\n' + LONG_ITEM + "\n" + LONG_PARAGRAPH + '\n"""\n'
    text = SMALL[:DOC_START] + docstring + SMALL[DOC_END + 1:]
    comments = block_comments(merged_with(text).text)
    assert max(len(line) for line in comments) <= 120
    item = comments.index(next(line for line in comments if line.startswith("# - word")))
    assert comments[item + 1].startswith("#   ") and not comments[item + 1].startswith("#    ")
    joined = " ".join(line[2:].strip() for line in comments[item:item + 4])
    assert LONG_ITEM in joined and LONG_PARAGRAPH in joined


def test_a_short_docstring_is_copied_line_for_line():
    comments = block_comments(merged_with(SMALL).text)
    docstring = SMALL[DOC_START + 3:DOC_END - 3].strip().splitlines()
    assert len(docstring) > 2 and comments[:len(docstring)] == [f"# {line}".rstrip() for line in docstring]


def test_a_code_line_renaming_lengthens_past_120_is_a_plan_warning():
    line = "    return " + "device_type() + " * 6 + "'x' * 7"      # device_type -> kit_device_type: 24 more
    text = SMALL.replace("def doubled(tensor):\n    return tensor * 2\n", f"def doubled(tensor):\n{line}\n")
    merged = merged_with(text)
    renamed = line.replace("device_type", "kit_device_type")
    number = merged.text.splitlines().index(renamed) + 1
    target = plan.ExportTarget("test/x_api.py", "test/x_api.py", plan.TEST_FILE, merged.text.encode())
    assert len(line) <= 120 < len(renamed)
    assert plan.line_warnings([target]) == [
        f"test/x_api.py:{number}: {len(renamed)} characters in the kit's block (Ascend lints test/ at 120): shorten "
        "that line in the kit's file"]
    assert plan.line_warnings([plan.ExportTarget("p", "p", plan.UPSTREAM_PATCH, b"x" * 200)]) == []


def test_lines_outside_the_kit_block_are_not_the_kits_to_warn_about():
    assert merge.long_lines("x" * 200 + "\n") == []
    theirs = "y = 1  # " + "z" * 130 + "\n" + FUNCTORCH_SHAPE.read_text()
    kit = parse_kit_file("test/x_api.py", SMALL)
    assert merge.long_lines(merge.merge_into(kit, theirs, carry.load_carried()).text) == []


def test_one_line_assignments_in_a_row_stay_together_and_definitions_stay_two_lines_apart():
    """PEP 8 keeps a run of constants together: the carried REFUSALS and DEVICE_VEHICLES cost a line each."""
    _, definitions = carry.load_carried().select(["skip_unless_vehicle"])
    text = merge.helpers_text(definitions)
    assert "\nDEVICE_VEHICLES = {}" in text and text.startswith("REFUSALS = ")
    assert text.splitlines()[1].startswith("DEVICE_VEHICLES = ")
    assert "\n\n\ndef vehicle_refusal(" in text and "\n\n\ndef skip_unless_vehicle(" in text
    assert merge.helpers_text(definitions[2:]).startswith("def vehicle_refusal(")
    lone = [d for d in carry.load_carried().definitions if d.name in ("RUNNER_MODULE", "_device_runtime")]
    assert "\n\n\ndef _device_runtime(" in merge.helpers_text(lone)
    compile(text, "helpers", "exec")
