# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""``limits``: each note shape read into limits (and what no shape matches kept as text), what a note leaves to
a product, the table of a docs tree in Ascend's shape for a torch version (the nearest folder when it has none),
and every bad input (one line, exit 2, nothing written)."""
import json

import pytest

from torch_npu_testing.__main__ import main
from torch_npu_testing.task.limits_notes import read_line, read_note, resolve

from limits_fixture import DOCS, make_docs_repo

A2, A3, DT = "Atlas A2 训练系列产品", "Atlas A3 训练系列产品", "Ascend 950DT"


@pytest.fixture(scope="module")
def ascend(tmp_path_factory):
    return make_docs_repo(tmp_path_factory.mktemp("limits") / "ascend")


def run(capsys, *argv):
    code = main(["limits", *argv])
    return code, capsys.readouterr()


def table_of(capsys, ascend, tmp_path, *argv):
    out = tmp_path / "t.json"
    code, captured = run(capsys, "--ascend", str(ascend), "--out", str(out), *argv)
    assert code == 0, captured.err
    return json.loads(out.read_text(encoding="utf-8")), captured.out


# --------------------------------------------------------------------------- one line per shape
def test_only_list_on_the_colon_line_maps_dtype_words():
    shape, limit = read_line("`input`仅支持bf16，fp16，fp32，uint8，bool，complex64")
    assert shape == "allow" and limit["args"] == ["input"] and limit["products"] is None
    assert limit["allow"] == ["bfloat16", "bool", "complex64", "float16", "float32", "uint8"]


def test_only_list_as_bullet_for_several_arguments_with_an_exclusion():
    shape, limit = read_line("- `input`、`other`仅支持fp16，fp32，不支持fp64，double数据类型")
    assert shape == "allow" and limit["args"] == ["input", "other"]
    assert limit["allow"] == ["float16", "float32"] and limit["exclude"] == ["float64"]


def test_product_scoped_only_list():
    shape, limit = read_line(f"- <term>{A2}</term>、<term>{A3}</term>：`self`仅支持bf16，fp64")
    assert shape == "allow" and limit["products"] == [A2, A3] and limit["allow"] == ["bfloat16", "float64"]


def test_exclusions_general_and_per_product():
    assert read_line("不支持double数据类型")[1]["exclude"] == ["float64"]
    shape, limit = read_line(f"<term>{DT}</term>：不支持fp64, complex64, complex128")
    assert shape == "exclude" and limit["products"] == [DT] and limit["args"] == ["*"]
    assert limit["exclude"] == ["complex128", "complex64", "float64"]


def test_a_products_extra_dtypes():
    shape, limit = read_line(f"- <term>{A3}</term>额外支持bf16")
    assert shape == "product-adds" and limit["products"] == [A3] and limit["allow"] == ["bfloat16"]


def test_memory_formats_both_wordings():
    for line in ("- 当前NPU设备仅支持设置`memory_format`为torch.contiguous_format或torch.preserve_format",
                 "- `memory_format`仅支持torch.contiguous_format和torch.preserve_format"):
        shape, limit = read_line(line)
        assert shape == "formats" and limit["args"] == ["memory_format"]
        assert limit["formats"] == ["contiguous_format", "preserve_format"]


@pytest.mark.parametrize("line", [
    "- 属性`mode`为constant时，`input`仅支持fp16，fp32",  # a condition: not read as a plain limit
    "- int16不支持5维以上", "- 可能回退至CPU执行", "- `dilation`仅支持1", "支持uint8",
    "- `query`、`key`、`value`仅支持bf16、fp16和fp32。所有参数输入均符合以下约束",
    "`input`仅支持fp8模式下ScalingType为rowwise",
])
def test_lines_no_shape_reads_are_kept_as_text(line):
    assert read_line(line) == (None, None)


def test_a_note_keeps_a_code_block_as_text_even_where_a_line_would_match():
    limits, text = read_note([(3, "`input`仅支持fp32"), (4, "```python"), (5, "不支持double"), (6, "```")])
    assert [(limit["line"], limit["shape"], limit["source"]) for limit in limits] == [(3, "allow", "`input`仅支持fp32")]
    assert [item["line"] for item in text] == [4, 5, 6]


# --------------------------------------------------------------------------- what a note leaves to a product
def limits_of(*lines):
    return read_note(list(enumerate(lines, 1)))[0]


def test_product_list_replaces_the_general_one_and_extras_join():
    note = limits_of("`self`仅支持fp16，fp32", f"<term>{A3}</term>：`self`仅支持fp16", f"<term>{A3}</term>额外支持bf16")
    assert resolve(note, A2) == {"dtypes": {"self": ["float16", "float32"]}}
    assert resolve(note, A3) == {"dtypes": {"self": ["bfloat16", "float16"]}}


def test_a_products_exclusion_leaves_the_list_and_is_kept():
    note = limits_of("`input`仅支持fp16，fp32，int32", f"<term>{DT}</term>：不支持int32")
    assert resolve(note, A2) == {"dtypes": {"input": ["float16", "float32", "int32"]}}
    assert resolve(note, DT) == {"dtypes": {"input": ["float16", "float32"]}, "excluded": {"*": ["int32"]}}


def test_no_limit_is_an_empty_mapping():
    assert resolve(limits_of("不支持double"), A2) == {"excluded": {"*": ["float64"]}}
    assert resolve([], A2) == {}


# --------------------------------------------------------------------------- the command on a docs tree
def test_table_for_2_13_on_atlas_a2(ascend, tmp_path, capsys):
    table, out = table_of(capsys, ascend, tmp_path, "--torch", "2.13.0")
    assert table["format"] == "torch_npu_testing.limits/1" and table["docs_version"] == "2.13.0"
    assert table["nearest"] is None and table["product"] == A2 and table["products"][:3] == [A2, A3, DT]
    assert table["folder"] == f"{DOCS}/pytorch_2-13-0"
    entries = table["entries"]
    assert "torch" not in entries and "torch.Tensor" in entries  # title headings are no entries
    mul = entries["torch.mul"]
    assert mul["line"] == 5 and mul["file"] == f"{DOCS}/pytorch_2-13-0/torch.md" and mul["supported"] is True
    assert "float64" not in mul["limits"]["dtypes"]["input"] and "complex128" in mul["limits"]["dtypes"]["input"]
    assert mul["read"][0]["shape"] == "allow" and mul["read"][0]["line"] == 19
    assert entries["torch.special_op"]["supported"] is False
    assert entries["torch.Tensor.to"]["kind"] == "method"
    assert entries["torch.Tensor.to"]["limits"]["formats"] == {"memory_format": ["contiguous_format",
                                                                                 "preserve_format"]}
    assert [item["text"] for item in entries["torch.Tensor.copy_"]["text"]] == ["- int16不支持5维以上"]
    pad = entries["torch.pad"]
    assert pad["read"] == [] and len(pad["text"]) == 5 and pad["limits"] == {}
    assert table["counts"] == {
        "apis": 11, "headings": 9, "methods": 2, "duplicates": 0, "notes": 9, "notes_read": 7,
        "notes_partly_read": 1, "notes_kept_as_text": 1, "lines_read": 12, "lines_kept_as_text": 6,
        "refused_for_product": 1, "limited_for_product": 8,
        "shapes": {"allow": 8, "exclude": 2, "product-adds": 1, "formats": 1}}
    assert table["shapes"]["allow"]["rule"].startswith("^") and table["shapes"]["allow"]["means"]
    assert "| `torch.special_op` | ✘ | - | 0 |" in out and "| `torch.pad`" not in out
    assert "11 APIs (9 headings, 2 methods), 9 notes: 7 read whole, 1 partly, 1 kept as text" in out


def test_another_product(ascend, tmp_path, capsys):
    table, _ = table_of(capsys, ascend, tmp_path, "--torch", "2.13", "--product", "950dt")
    assert table["product"] == DT and table["nearest"] is None
    assert table["entries"]["torch.nansum"]["limits"]["dtypes"] == {"input": ["float16", "float32"]}
    entries = table["entries"]
    assert entries["torch.mul"]["supported"] is True and entries["torch.special_op"]["supported"] is False
    table, _ = table_of(capsys, ascend, tmp_path, "--torch", "2.13", "--product", "A3")
    assert table["entries"]["torch.acos"]["limits"]["dtypes"] == {"input": ["bfloat16", "float16", "float32"]}
    assert table["entries"]["torch.special_op"]["supported"] is True


@pytest.mark.parametrize("torch_version, folder, nearest", [
    ("2.14.1", "2.13.0", "nearest documented is 2.13.0"), ("2.9.1", "2.7.1", "nearest documented is 2.7.1"),
    ("2.10.0", "2.7.1", "nearest documented is 2.7.1"),  # a tie (3 minors each way) takes the older folder
    ("2.13.2", "2.13.0", "2.13.0 documents the same minor"), ("2.7", "2.7.1", None)])
def test_a_torch_without_its_folder_takes_the_nearest_and_says_so(ascend, tmp_path, capsys, torch_version, folder,
                                                                  nearest):
    table, out = table_of(capsys, ascend, tmp_path, "--torch", torch_version)
    assert table["docs_version"] == folder and table["torch_version"] == torch_version
    if nearest:
        assert nearest in table["nearest"] and nearest in out
    else:
        assert table["nearest"] is None


def test_docs_are_read_through_git_at_the_ref(ascend, tmp_path, capsys):
    page = ascend / DOCS / "pytorch_2-7-1/torch.md"
    before = page.read_text(encoding="utf-8")
    page.write_text(before.replace("fp16，fp32", "fp32"), encoding="utf-8")
    try:
        table, _ = table_of(capsys, ascend, tmp_path, "--torch", "2.7.1", "--ref", "master")
    finally:
        page.write_text(before, encoding="utf-8")
    assert table["entries"]["torch.mul"]["limits"]["dtypes"]["input"] == ["float16", "float32"]
    assert table["docs_from"].startswith("master (")


def test_default_out_is_named_for_the_version_and_product(ascend, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, captured = run(capsys, "--ascend", str(ascend), "--torch", "2.14", "--product", "A3")
    assert code == 0, captured.err
    written = tmp_path / "limits-2.13.0-atlas-a3.json"
    assert json.loads(written.read_text(encoding="utf-8"))["product"] == A3
    assert f"Wrote {written}" in captured.out


@pytest.mark.parametrize("argv, message", [
    (["--torch", "two"], "--torch 'two': not a torch version"),
    (["--torch", "2.13", "--product", "Atlas"], "--product 'Atlas' matches several of the documented products"),
    (["--torch", "2.13", "--product", "910B"], "--product '910B' matches none"),
    (["--torch", "2.13", "--ref", "nope"], "unknown ref 'nope'"),
    (["--torch", "2.13", "--out", "missing/dir/t.json"], "--out missing/dir/t.json: folder"),
])
def test_bad_input_is_one_line_and_writes_nothing(ascend, tmp_path, capsys, monkeypatch, argv, message):
    monkeypatch.chdir(tmp_path)
    code, captured = run(capsys, "--ascend", str(ascend), *argv)
    assert code == 2 and captured.out == ""
    assert captured.err.startswith("torch_npu_testing: error: ") and message in captured.err
    assert len(captured.err.strip().splitlines()) == 1
    assert list(tmp_path.iterdir()) == []


def test_not_an_ascend_checkout_or_no_docs_at_the_ref(ascend, tmp_path, capsys):
    code, captured = run(capsys, "--ascend", str(tmp_path), "--torch", "2.13")
    assert code == 2 and "not a git work tree" in captured.err
    first = __import__("subprocess").run(["git", "rev-list", "--max-parents=0", "HEAD"], cwd=ascend, check=True,
                                         capture_output=True, text=True).stdout.strip()
    assert first  # the fixture's only commit has docs; a docs-less ref is made below
    from ascend_fixture import git
    git(ascend, "checkout", "-q", "-b", "nodocs")
    git(ascend, "rm", "-q", "-r", DOCS)
    git(ascend, "commit", "-q", "-m", "no docs")
    git(ascend, "checkout", "-q", "master")
    code, captured = run(capsys, "--ascend", str(ascend), "--torch", "2.13", "--ref", "nodocs",
                         "--out", str(tmp_path / "t.json"))
    assert code == 2 and f"has no {DOCS}/" in captured.err and not (tmp_path / "t.json").exists()


# --------------------------------------------------------------------------- what new's OpInfo draft carries
def test_the_documented_dtypes_of_an_api_and_its_tensor_forms(ascend, tmp_path, capsys):
    from torch_npu_testing.common.errors import UsageError
    from torch_npu_testing.task import limits, opinfo_draft
    table, _ = table_of(capsys, ascend, tmp_path, "--torch", "2.13")
    path = tmp_path / "t.json"
    found, source = limits.documented_dtypes(str(path), "torch.mul")
    assert found == {"torch.mul": (("bfloat16", "bool", "complex128", "complex64", "float16", "float32", "int16",
                                    "int32", "int64", "int8", "uint8"), ())}
    assert source == f"{DOCS}/pytorch_2-13-0 of {table['docs_from']}, {A2}"
    assert limits.documented_dtypes(str(path), "torch.logaddexp")[0] == {"torch.logaddexp": (None, ("float64",))}
    assert limits.documented_dtypes(str(path), "torch.unknown")[0] == {}
    text = opinfo_draft.documented_text(limits.documented_dtypes(str(path), "torch.logaddexp"))
    namespace = {}
    exec(text, namespace)  # the draft's lines are Python that defines DOCUMENTED
    assert namespace["DOCUMENTED"] == {"torch.logaddexp": (None, "float64")}
    assert all(len(line) <= 120 for line in text.splitlines())
    exec(opinfo_draft.documented_text(None), namespace)
    assert namespace["DOCUMENTED"] == {}
    bad = tmp_path / "bad.json"
    bad.write_text("{}", encoding="utf-8")
    for given, said in ((bad, "not a torch_npu_testing.limits/1 table"), (tmp_path / "no.json", "cannot read")):
        with pytest.raises(UsageError, match=said):
            limits.documented_dtypes(str(given), "torch.mul")
