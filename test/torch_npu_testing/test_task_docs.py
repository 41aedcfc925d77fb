# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""``docs``: listed / missing per torch version of each branch, entries in the neighbours' format,
``--write`` (atomic, refuses dirty files), and every bad input."""
import json
import subprocess

import pytest

from torch_npu_testing.__main__ import main

from ascend_fixture import API, clone_of, make_ascend

DOCS = "docs/zh/api/native_api"


@pytest.fixture
def ascend(tmp_path):
    return make_ascend(tmp_path / "ascend")


def run_docs(capsys, *argv):
    code = main(["docs", *argv])
    return code, capsys.readouterr()


def test_method_listed_for_2_13_missing_for_2_7_with_entry(ascend, tmp_path, capsys):
    out = tmp_path / "docs.json"
    code, captured = run_docs(capsys, API, "--ascend", str(ascend), "--branches", "master", "v2.7.1",
                              "--json", str(out))
    assert code == 0, captured.err
    doc = json.loads(out.read_text())
    assert doc["format"] == "torch_npu_testing.docs/1"
    rows = {(v["branch"], v["torch_version"]): v for v in doc["versions"]}
    assert list(rows) == [("master", "2.14.0"), ("master", "2.13.0"), ("v2.7.1", "2.7.1")]
    assert rows[("master", "2.14.0")]["folder"] is None and not rows[("master", "2.14.0")]["listed"]
    listed = rows[("master", "2.13.0")]
    assert listed["listed"] and listed["file"] == f"{DOCS}/pytorch_2-13-0/torch.md" and listed["line"] == 18
    missing = rows[("v2.7.1", "2.7.1")]
    assert not missing["listed"] and missing["target_file"] == f"{DOCS}/pytorch_2-7-1/torch.md"
    entry = missing["entry"]
    assert entry.startswith('> <font size="3">clone()</font>\n\n<div style="margin-left: 2em">\n')
    assert ("**原生文档**：[torch.autograd.grad_mode.set_grad_enabled.clone](https://pytorch.org/docs/2.7/generated/"
            "torch.autograd.grad_mode.set_grad_enabled.html#torch.autograd.grad_mode.set_grad_enabled.clone)") in entry
    assert "| <term>Atlas A2 训练系列产品</term> | TODO(✔/✘) |\n| <term>Ascend 950DT</term> | TODO(✔/✘) |" in entry
    assert "| v2.7.1 (" in captured.out and "| 2.7.1 | missing |" in captured.out
    assert f"`{DOCS}/pytorch_2-13-0/torch.md:18`" in captured.out


def test_write_puts_the_method_inside_the_class_block_then_lists_it(ascend, capsys):
    code, captured = run_docs(capsys, API, "--ascend", str(ascend), "--branches", "v2.7.1", "--write")
    assert code == 0, captured.err
    page = (ascend / DOCS / "pytorch_2-7-1/torch.md").read_text(encoding="utf-8")
    lines = page.split("\n")
    method = lines.index('> <font size="3">clone()</font>')
    next_heading = lines.index("### torch.is_grad_enabled")
    assert lines.index("### torch.autograd.grad_mode.set_grad_enabled") < method < next_heading
    # the method's block closes, then the class's block, then the next heading
    assert lines[next_heading - 4:next_heading] == ["</div>", "", "</div>", ""]
    assert not list(ascend.glob(f"{DOCS}/pytorch_2-7-1/.tmp-*"))
    code, captured = run_docs(capsys, API, "--ascend", str(ascend), "--branches", "v2.7.1")
    assert code == 0 and "| 2.7.1 | missing |" in captured.out  # docs are read from master's commit
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-am", "docs"], cwd=ascend,
                   check=True)
    code, captured = run_docs(capsys, API, "--ascend", str(ascend), "--branches", "v2.7.1")
    assert code == 0 and "| 2.7.1 | listed |" in captured.out


def test_private_api_gets_a_private_table_row(ascend, tmp_path, capsys):
    out = tmp_path / "docs.json"
    code, captured = run_docs(capsys, "torch._functorch.config.patch", "--ascend", str(ascend), "--branches",
                              "v2.7.1", "--json", str(out), "--write")
    assert code == 0, captured.err
    version = json.loads(out.read_text())["versions"][0]
    assert version["private"] and version["target_file"] == f"{DOCS}/private_apis.md"
    assert version["entry"] == "|torch._functorch.config.patch|TODO(是否支持)|TODO(限制与说明)|"
    lines = (ascend / DOCS / "private_apis.md").read_text(encoding="utf-8").split("\n")
    assert lines[8] == version["entry"] and lines[7].startswith("|torch.\\_foreach")
    code, captured = run_docs(capsys, "torch._foreach_tanh_", "--ascend", str(ascend), "--branches", "v2.7.1")
    assert "| 2.7.1 | listed | `docs/zh/api/native_api/private_apis.md:8` |" in captured.out


def test_missing_class_gets_a_heading_after_its_closest_neighbour(ascend, capsys, tmp_path):
    out = tmp_path / "d.json"
    code, captured = run_docs(capsys, "torch.autograd.grad_mode.inference_mode", "--ascend", str(ascend),
                              "--branches", "master", "--json", str(out))
    assert code == 0, captured.err
    version = json.loads(out.read_text())["versions"][1]
    assert version["entry"].startswith("### <code><i>class</i></code> torch.autograd.grad_mode.inference_mode\n")
    assert "(https://pytorch.org/docs/2.13/generated/torch.autograd.grad_mode.inference_mode.html)" in version["entry"]


def test_a_name_that_does_not_resolve_gets_no_entry_exit_2_nothing_written(ascend, capsys, tmp_path):
    out = tmp_path / "d.json"
    code, captured = run_docs(capsys, "torch.autograd.grad_mode.no_such_fn", "--ascend", str(ascend),
                              "--branches", "master", "--write", "--json", str(out))
    assert code == 2 and captured.err.count("\n") == 1, captured.err
    assert "torch.autograd.grad_mode.no_such_fn does not resolve in torch" in captured.err
    assert not out.exists() and captured.out == ""


def test_write_refuses_a_dirty_target_and_changes_nothing(ascend, capsys):
    page = ascend / DOCS / "pytorch_2-7-1/torch.md"
    page.write_text(page.read_text(encoding="utf-8") + "\nlocal edit\n", encoding="utf-8")
    before = page.read_bytes()
    code, captured = run_docs(capsys, API, "--ascend", str(ascend), "--branches", "v2.7.1", "--write")
    assert code == 2 and "uncommitted changes" in captured.err and captured.err.count("\n") == 1
    assert page.read_bytes() == before


@pytest.mark.parametrize("argv, message", [
    (["docs", "torch.", "--ascend", "{ascend}"], "cannot parse API name"),
    (["docs", API, "--ascend", "{missing}"], "not a directory"),
    (["docs", API, "--ascend", "{ascend}", "--branches", "nope"], "unknown ref 'nope'"),
    (["docs", API, "--ascend", "{ascend}", "--branches", "{nover}"], "no version.txt"),
    (["docs", API, "--ascend", "{ascend}", "--json", "{missing}/d.json"], "does not exist"),
])
def test_docs_bad_input_is_one_line_exit_2_nothing_written(ascend, tmp_path, capsys, argv, message):
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "x"],
                   cwd=ascend, check=True)
    subprocess.run(["git", "rm", "-q", "version.txt"], cwd=ascend, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "nover"], cwd=ascend,
                   check=True)
    nover = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ascend, capture_output=True, text=True).stdout.strip()
    values = {"ascend": ascend, "missing": tmp_path / "missing", "nover": nover}
    json_path = tmp_path / "out.json"
    argv = [a.format(**values) for a in argv] + ([] if "--json" in argv else ["--json", str(json_path)])
    assert main(argv + ["--write"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1 and message in captured.err, captured.err
    assert not json_path.exists()
    status = subprocess.run(["git", "status", "--porcelain"], cwd=ascend, capture_output=True, text=True).stdout
    assert status == ""


def test_docs_are_read_from_origin_master_with_another_branch_checked_out(ascend, tmp_path, capsys):
    """A normal clone with v2.7.1 checked out: the docs come from origin/master through git."""
    clone = clone_of(ascend, tmp_path / "clone")
    subprocess.run(["git", "checkout", "-q", "v2.7.1"], cwd=clone, check=True)  # local v2.7.1 tracking origin
    subprocess.run(["git", "branch", "-q", "-D", "master"], cwd=clone, check=True)
    assert not (clone / "docs").exists()
    out = tmp_path / "d.json"
    code, captured = run_docs(capsys, API, "--ascend", str(clone), "--branches", "v2.7.1", "master", "--json", str(out))
    assert code == 0, captured.err
    doc = json.loads(out.read_text())
    master = subprocess.run(["git", "rev-parse", "origin/master"], cwd=clone, capture_output=True, text=True).stdout
    assert doc["docs_from"] == f"origin/master ({master[:7]})"
    assert [(v["branch"], v["torch_version"], v["listed"]) for v in doc["versions"]] == [
        ("v2.7.1", "2.7.1", False), ("origin/master", "2.14.0", False), ("origin/master", "2.13.0", True)]
    assert "Docs read from `origin/master (" in captured.out
    code, captured = run_docs(capsys, API, "--ascend", str(clone), "--write")
    assert code == 2 and "check out master first" in captured.err and captured.err.count("\n") == 1
    assert subprocess.run(["git", "status", "--porcelain"], cwd=clone, capture_output=True, text=True).stdout == ""
