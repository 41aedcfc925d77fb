# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Unit tests of ``python -m torch_npu_testing pr``: the Ascend PR description of one branch, from facts.

A small kit (one test file at the grad-mode file's path, its own target_apis.json and branch map) is
built in a temp dir; its results come from the real suite, run in this process with the API-call recorder;
the Ascend checkout is the task tools' fake git repository (ascend_fixture) with branches master and
v2.7.1. With every fact present the description is complete (every section, every checklist item
ticked, exit 0). Each missing fact (no results, no search, no docs, no task id, no env interpreter) is a
visible ``⚠ 缺少 / missing`` line in its section and an unticked checklist item with the reason, and the
command exits 1 with both files still written. Usage errors exit 2 and write nothing.
"""
import json
import os
import sys

import pytest
from ascend_fixture import make_ascend as make_task_ascend
from ascend_fixture import git

from torch_npu_testing.suite import api_calls, run as suite
from torch_npu_testing.__main__ import main as cli_main
from torch_npu_testing.export import branchmap
from torch_npu_testing.pr import render as pr_render

KIT_HEADER = ("# Copyright (c) 2026, torch_npu API-consistency kit contributors.\n"
              "# SPDX-License-Identifier: BSD-3-Clause\n")
API = "torch.is_grad_enabled"
TEST_FILE = "test/npu/test_locally_disabling_gradient_omputation.py"
TEST_TEXT = KIT_HEADER + '''"""Synthetic grad-mode file: torch.is_grad_enabled reports the mode of this thread."""
from torch_npu_testing import TestCase, run_tests

import torch


class TestIsGradEnabled(TestCase):
    def test_reports_no_grad(self):
        """Inside no_grad it answers False."""
        with torch.no_grad():
            self.assertFalse(torch.is_grad_enabled())

    def test_reports_enable_grad(self):
        """Inside enable_grad it answers True."""
        with torch.enable_grad():
            self.assertTrue(torch.is_grad_enabled())


if __name__ == "__main__":
    run_tests()
'''
BRANCH = "v2.7.1"
ENV = "v2_7"


def write(path, text):
    os.makedirs(os.path.dirname(str(path)), exist_ok=True)
    with open(str(path), "w", encoding="utf-8") as handle:
        handle.write(text)
    return str(path)


def manifest(task_id="Task-47", api=API):
    return {"format": api_calls.MANIFEST_FORMAT, "apis": [
        {"name": api, "task": api, "ascend_task_id": task_id, "since": None, "test_file": TEST_FILE}]}


@pytest.fixture
def kit(tmp_path, monkeypatch):
    root = tmp_path / "kit"
    write(root / TEST_FILE, TEST_TEXT)
    write(root / "target_apis.json", json.dumps(manifest()))
    write(root / "branches.json", json.dumps({
        "format": branchmap.BRANCHES_FORMAT,
        "files": {TEST_FILE: {"title": "is_grad_enabled"}},
        "branches": {name: {"torch": torch, "test_files": [TEST_FILE], "upstream_patches": [], "left_out": {}}
                     for name, torch in (("master", "2.13.0"), (BRANCH, "2.7.1"))}}))
    monkeypatch.setattr(branchmap, "BRANCHES_FILE", str(root / "branches.json"))
    monkeypatch.setattr(api_calls, "MANIFEST_PATH", str(root / "target_apis.json"))
    from torch_npu_testing.pr import facts
    monkeypatch.setattr(facts, "MANIFEST_PATH", str(root / "target_apis.json"))
    return root


@pytest.fixture(scope="module")
def ascend_repo(tmp_path_factory):
    """The task tools' fake checkout, with torch.is_grad_enabled listed for 2.7.1 and 2.13.0 (committed)."""
    root = make_task_ascend(tmp_path_factory.mktemp("ascend") / "ascend")
    os.makedirs(str(root / "test" / "functorch"), exist_ok=True)
    return root


def make_results(kit, monkeypatch, results_dir):
    """The real suite over the kit's file, in this process, API calls recorded, as env v2_7."""
    monkeypatch.chdir(kit)
    loaded = api_calls.load_manifest(str(kit / "target_apis.json"))
    monkeypatch.setattr(api_calls, "load_manifest", lambda path=None: loaded)
    stream = open(os.devnull, "w")
    try:
        suite.run_suite([TEST_FILE], str(results_dir / f"{ENV}.json"), api_calls=True, stream=stream, env_name=ENV)
    finally:
        stream.close()


@pytest.fixture
def env_python(kit):
    """``.tox/v2_7/bin/python`` of the kit: this interpreter (locate runs its probe there)."""
    path = kit / ".tox" / ENV / "bin" / "python"
    os.makedirs(str(path.parent))
    write(path, f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')  # a wrapper: a symlink would lose the venv
    os.chmod(str(path), 0o755)
    return path


def run_pr(kit, ascend, results, capsys, branch=BRANCH):
    out = kit / "reports"
    code = cli_main(["pr", branch, "--ascend", str(ascend), "--results", str(results), "--out", str(out),
                     "--kit", str(kit), "--year", "2026"])
    stdout, stderr = capsys.readouterr()
    markdown = out / f"pr-{branch}.md"
    facts = json.loads((out / f"pr-{branch}.json").read_text()) if markdown.exists() else None
    return code, stdout, stderr, (markdown.read_text() if markdown.exists() else None), facts


def section(markdown, title):
    start = markdown.index(f"## {title}\n")
    end = markdown.find("\n## ", start + 1)
    return markdown[start:end if end != -1 else None]


def checklist_item(markdown, fragment):
    lines = [line for line in section(markdown, "【CheckList】").splitlines() if fragment in line]
    assert len(lines) == 1, lines
    return lines[0]


# --------------------------------------------------------------------------- complete
def test_full_description_from_synthetic_results_and_a_fake_checkout(
        kit, ascend_repo, env_python, tmp_path, monkeypatch, capsys):
    results = tmp_path / "results"
    make_results(kit, monkeypatch, results)
    code, stdout, stderr, markdown, facts = run_pr(kit, ascend_repo, results, capsys)
    assert code == 0, stderr
    assert stdout.strip() == str(kit / "reports" / f"pr-{BRANCH}.md")
    positions = [markdown.index(f"## {title}\n") for title in pr_render.SECTIONS]
    assert positions == sorted(positions), "sections out of the template's order"
    assert "⚠" not in markdown, markdown
    assert "`Task-47`" in section(markdown, "【合入来源】")
    assert "`v2.9.0`, `v2.10.0` — maintenance branches" in section(markdown, "【分支范围】")
    plan = section(markdown, "【修改方案】")
    assert f"| `{TEST_FILE}` | 新增 (new) | test file | 2 |" in plan
    api = section(markdown, "【API 功能介绍】")
    assert "- torch 2.13.0: function" in api and "C builtin" in api and f"--python {env_python}" in api
    assert "- `test_reports_no_grad`: Inside no_grad it answers False." in section(markdown, "【测试方案】")
    search = section(markdown, "【社区用例检索与新增必要性】")
    assert f"0 tests call {API} directly on {BRANCH}" in search and "git -C" in search
    assert "torch 2.7.1: 已列出 / listed in `docs/zh/api/native_api/pytorch_2-7-1/torch.md:" in \
        section(markdown, "【资料补齐检查结论】")
    assert "不涉及 / none" in section(markdown, "【资料变更】")
    assert "### v2_7" in section(markdown, "【测试环境】")
    assert "tox -e v2_7" in section(markdown, "【测试命令】")
    assert TEST_FILE in section(markdown, "【测试日志】")
    assert "不涉及" in section(markdown, "【upstream patch 实跑日志】")
    assert section(markdown, "【接口变更】").startswith("## 【接口变更】\n\n不涉及")
    checklist = section(markdown, "【CheckList】")
    assert checklist.count("- [x]") == 8 and "- [ ]" not in checklist, checklist
    assert "grad mode enabled and disabled at start (1 probe(s))" in checklist
    assert facts["format"] == "torch_npu_testing.pr/1" and facts["problems"] == [] and facts["gaps"] == []
    assert facts["ascend"]["ref"] == BRANCH and len(facts["ascend"]["commit"]) == 40


# --------------------------------------------------------------------------- missing facts
def assert_gap(code, markdown, facts, title, text, item):
    assert code == 1
    assert f"> ⚠ 缺少 / missing: {text}" in section(markdown, title), section(markdown, title)
    line = checklist_item(markdown, item)
    assert line.startswith("- [ ] "), line
    assert any(text in problem for problem in facts["problems"]), facts["problems"]
    assert markdown.startswith("> ⚠ 本描述尚不完整 / not ready to paste")


def test_no_results_is_a_visible_gap(kit, ascend_repo, tmp_path, capsys):
    code, _, stderr, markdown, facts = run_pr(kit, ascend_repo, tmp_path / "no-results", capsys)
    assert_gap(code, markdown, facts, "【测试环境】", "no usable results for env v2_7", "tests pass in every env")
    assert "no results for env v2_7" in checklist_item(markdown, "every target API is called")
    assert "no results for env v2_7" in checklist_item(markdown, "grad-mode isolation probe")
    assert "**no results: env did not run" in section(markdown, "【测试日志】")
    assert "run `tox -e v2_7`" in markdown and "FAIL" in stderr


def test_no_env_interpreter_is_a_visible_gap_in_the_api_section(kit, ascend_repo, tmp_path, capsys):
    code, _, _, markdown, facts = run_pr(kit, ascend_repo, tmp_path / "no-results", capsys)
    assert f"> ⚠ 缺少 / missing: no interpreter for env {ENV}" in section(markdown, "【API 功能介绍】")
    assert "locate did not run for this API" in section(markdown, "【API 功能介绍】")


def test_no_search_is_a_visible_gap(kit, ascend_repo, tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "torch_npu_testing.task.search", None)  # the command is not there
    code, _, _, markdown, facts = run_pr(kit, ascend_repo, tmp_path / "no-results", capsys)
    assert_gap(code, markdown, facts, "【社区用例检索与新增必要性】",
               f"search {API}: the `search` command is not available", "community tests searched")
    assert "search did not run" in section(markdown, "【社区用例检索与新增必要性】")


def test_no_docs_is_a_visible_gap(kit, tmp_path, capsys):
    ascend = make_task_ascend(tmp_path / "ascend-no-docs")
    os.makedirs(str(ascend / "test" / "functorch"), exist_ok=True)
    git(ascend, "rm", "-q", "-r", "docs")  # the work tree has no docs: the docs command refuses
    code, _, _, markdown, facts = run_pr(kit, ascend, tmp_path / "no-results", capsys)
    assert_gap(code, markdown, facts, "【资料补齐检查结论】", f"docs {API}: `docs` refused", "资料已补齐")
    assert "docs did not run for every API, changes unknown" in section(markdown, "【资料变更】")


def test_missing_task_id_is_shown_never_made_up(kit, ascend_repo, tmp_path, capsys):
    write(kit / "target_apis.json", json.dumps(manifest(task_id=None)))
    code, _, _, markdown, facts = run_pr(kit, ascend_repo, tmp_path / "no-results", capsys)
    assert_gap(code, markdown, facts, "【合入来源】", f"no ascend_task_id for {API}", "task ids filled in")
    assert "Ascend task id **⚠ 缺少 / missing**" in section(markdown, "【合入来源】")


def test_existing_direct_callers_outside_the_pr_must_be_explained(kit, ascend_repo, tmp_path, capsys):
    """The fake checkout's own tests call set_grad_enabled(...).clone() directly: the necessity is not
    claimed, it is a gap naming the first caller."""
    clone = "torch.autograd.grad_mode.set_grad_enabled.clone"
    write(kit / "target_apis.json", json.dumps(manifest(api=clone)))
    code, _, _, markdown, facts = run_pr(kit, ascend_repo, tmp_path / "no-results", capsys)
    search = section(markdown, "【社区用例检索与新增必要性】")
    assert code == 1
    assert f"> ⚠ 缺少 / missing: 2 test(s) outside this PR's files call {clone} directly on {BRANCH} " \
           "(first: test/npu/test_grad.py::test_chained)" in search, search
    assert "新增必要性 / why new tests" not in search
    assert any("say in the description what the new tests add" in problem for problem in facts["problems"])


# --------------------------------------------------------------------------- usage errors
@pytest.mark.parametrize("argv, pattern", [
    (["v9.9.9"], "unknown branch 'v9.9.9'"),
    (["--ascend-is-not-a-checkout"], "--ascend .*not a git work tree"),
])
def test_usage_errors_exit_2_and_write_nothing(kit, ascend_repo, tmp_path, capsys, argv, pattern):
    import re
    ascend = str(tmp_path) if argv[0].startswith("--") else str(ascend_repo)
    branch = BRANCH if argv[0].startswith("--") else argv[0]
    code = cli_main(["pr", branch, "--ascend", ascend, "--out", str(kit / "reports"), "--kit", str(kit)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and re.search(pattern, err[0]), err
    assert not (kit / "reports").exists()


def test_a_branch_missing_from_the_checkout_is_a_usage_error(kit, tmp_path, capsys):
    ascend = make_task_ascend(tmp_path / "ascend-master-only")
    git(ascend, "branch", "-q", "-D", BRANCH)
    code = cli_main(["pr", BRANCH, "--ascend", str(ascend), "--out", str(kit / "reports"), "--kit", str(kit)])
    err = capsys.readouterr().err
    assert code == 2 and f"branch {BRANCH} is not a ref of" in err and not (kit / "reports").exists()


def test_search_section_names_class_methods_and_module_level_tests_like_search_does():
    """A direct hit in a test class is path::Class::test; a module-level test function is path::test (no
    'None' in between), the same id the search command prints."""
    from torch_npu_testing.pr import render

    hits = [{"path": "test/a.py", "class": "TestA", "test": "test_x", "line": 3, "kind": "direct"},
            {"path": "test/b.py", "class": None, "test": "test_y", "line": 7, "kind": "direct"}]
    facts = {"branch": "v2.12.0", "plan": {"files": []}, "gaps": [],
             "apis": [{"name": "torch.x", "search": {"repos": [{"branches": [
                 {"commands": ["git grep x"], "hits": hits, "summary": "2 tests call torch.x directly"}]}]}}]}
    text = "\n".join(render.search_section(facts))
    assert "- `test/a.py::TestA::test_x` (line 3): direct call" in text
    assert "- `test/b.py::test_y` (line 7): direct call" in text
    assert "None" not in text
