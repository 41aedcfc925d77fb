# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Unit tests of ``python -m torch_npu_testing pr``: the Ascend PR description of one branch, from facts.

A small kit (two APIs in its own table: ``torch.is_grad_enabled`` tested by a file at the grad-mode file's
path, ``set_grad_enabled.clone`` by another) is built in a temp dir; its results come from the real suite,
run in this process; the Ascend checkout is the task tools' fake git repository (ascend_fixture) with
branches master (holding the PR template and the docs) and v2.7.1, used through a normal clone. With
every fact present the description is complete: the template's sections in its order, the task sections
where community PRs put them, every box ticked or open by design, exit 0. Each missing fact is a visible
``⚠ 缺少 / missing`` line and an open box with the reason, exit 1 with the files written. Bad input exits
2 and writes nothing. The size guard shortens, and says so, never silently.
"""
import hashlib
import json
import os
import re
import subprocess
import sys

import pytest
from ascend_fixture import clone_of, git
from ascend_fixture import make_ascend as make_task_ascend

from torch_npu_testing.__main__ import main as cli_main
from torch_npu_testing.common import recordnames, table
from torch_npu_testing.export import record as export_record
from torch_npu_testing.pr import fit
from torch_npu_testing.suite import run as suite

KIT_HEADER = ("# Copyright (c) 2026, torch_npu API-consistency kit contributors.\n"
              "# SPDX-License-Identifier: BSD-3-Clause\n")
API = "torch.is_grad_enabled"
CLONE = "torch.autograd.grad_mode.set_grad_enabled.clone"
TEST_FILE = "test/npu/test_locally_disabling_gradient_omputation.py"
CLONE_FILE = "test/npu/test_clone_api.py"
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
CLONE_TEXT = KIT_HEADER + '''"""Synthetic clone file."""
from torch_npu_testing import TestCase, run_tests

import torch


class TestClone(TestCase):
    def test_clone_keeps_mode(self):
        """The clone has the same mode."""
        self.assertFalse(torch.set_grad_enabled(False).clone().mode)


if __name__ == "__main__":
    run_tests()
'''
BRANCH = "v2.7.1"
EVIDENCE = f"evidence-{BRANCH}--{API}.md"
ENV = "v2_7"


def write(path, text):
    os.makedirs(os.path.dirname(str(path)), exist_ok=True)
    with open(str(path), "w", encoding="utf-8") as handle:
        handle.write(text)
    return str(path)


TASK = {"task": "任务47", "campaign": "测试用的社区任务", "campaign_issue": 40, "campaign_note": "任务编号 #45 起",
        "issues": [{"role": "issue", "number": 47}]}


def table_doc(task_id=TASK):
    doc = json.loads(open(table.TABLE_PATH, encoding="utf-8").read())
    doc["apis"] = [{"name": API, "title": "is_grad_enabled", "ascend_task_id": task_id, "since": None,
                    "test_file": TEST_FILE, "coverage": []},
                   {"name": CLONE, "title": "set_grad_enabled.clone", "ascend_task_id": task_id, "since": None,
                    "test_file": CLONE_FILE, "coverage": []}]
    return doc


@pytest.fixture
def kit(tmp_path, monkeypatch):
    root = tmp_path / "kit"
    write(root / TEST_FILE, TEST_TEXT)
    write(root / CLONE_FILE, CLONE_TEXT)
    write(root / "table.json", json.dumps(table_doc()))
    monkeypatch.setattr(table, "TABLE_PATH", str(root / "table.json"))
    return root


@pytest.fixture(scope="module")
def origin(tmp_path_factory):
    return make_task_ascend(tmp_path_factory.mktemp("ascend") / "origin")


@pytest.fixture
def ascend_repo(origin, tmp_path):
    """A normal clone of the fake checkout: master local, v2.7.1 only as origin/v2.7.1."""
    return clone_of(origin, tmp_path / "clone")


def make_results(kit, monkeypatch, results_dir, files=(TEST_FILE,)):
    """The real suite over the kit's files, in this process, API calls recorded, as env v2_7."""
    monkeypatch.chdir(kit)
    table._load.cache_clear()
    stream = open(os.devnull, "w")
    try:
        suite.run_suite(list(files), str(results_dir / f"{ENV}.json"), api_calls=True, stream=stream, env_name=ENV,
                        coverage=False)
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


def run_pr(kit, ascend, results, capsys, branch=BRANCH, apis=(API,)):
    out = kit / "reports"
    argv = ["pr", branch, "--ascend", str(ascend), "--results", str(results), "--out", str(out), "--kit", str(kit),
            "--year", "2026"]
    for name in apis:
        argv += ["--api", name]
    if export_record.read_last(str(ascend), branch) is None:  # pr needs a record of the task: export it
        assert cli_main(["export", branch, str(ascend), "--kit", str(kit), "--year", "2026"]
                        + [part for name in apis for part in ("--api", name)]) == 0
        capsys.readouterr()
    code = cli_main(argv)
    stdout, stderr = capsys.readouterr()
    markdown = out / recordnames.name("pr", branch, apis, ".md")
    facts = json.loads((out / recordnames.name("pr", branch, apis)).read_text()) if markdown.exists() else None
    return code, stdout, stderr, (markdown.read_text() if markdown.exists() else None), facts


def export_and_verify(kit, ascend, capsys):
    """export then verify (this interpreter, DEST's files run whole) into the kit's reports/, as a user does."""
    assert cli_main(["export", BRANCH, str(ascend), "--kit", str(kit), "--year", "2026", "--api", API]) == 0
    assert cli_main(["verify", BRANCH, str(ascend), "--kit", str(kit), "--python", sys.executable,
                     "--out", str(kit / "reports")]) == 0
    capsys.readouterr()


def section(markdown, title):
    start = markdown.index(f"# {title}\n")
    end = markdown.find("\n# 【", start + 1)
    return markdown[start:end if end != -1 else None]


def box(markdown, title, fragment):
    lines = [line for line in section(markdown, title).splitlines() if fragment in line and line.startswith("- [")]
    assert len(lines) == 1, lines
    return lines[0]


ORDER = ["【合入来源】", "【分支范围】", "【修改方案】", "【API 功能介绍】", "【测试方案】", "【社区用例检索与新增必要性】",
         "【资料变更】", "【接口变更】", "【功能验证】", "【upstream patch 实跑日志】", "【CheckList】"]


# --------------------------------------------------------------------------- complete
def test_full_description_follows_the_template_of_master(
        kit, ascend_repo, env_python, tmp_path, monkeypatch, capsys):
    results = tmp_path / "results"
    make_results(kit, monkeypatch, results)
    export_and_verify(kit, ascend_repo, capsys)
    code, stdout, stderr, markdown, facts = run_pr(kit, ascend_repo, results, capsys)
    assert code == 0, stderr
    assert stdout.strip() == str(kit / "reports" / f"pr-{BRANCH}--{API}.md")
    headings = re.findall(r"^# (【[^】]+】)$", markdown, re.M)
    assert headings == ORDER
    assert "⚠" not in markdown, markdown
    assert f"pr {BRANCH}: origin/v2.7.1 at " in stderr and "attach:" in stderr
    assert "- [x] issue/工单 —— community task 任务47 (issue #47) (table.json)" in markdown
    assert "> 1 个 issue 出自「测试用的社区任务」（任务编号 #45 起，见 [#40](https://gitcode.com/Ascend/pytorch/issues/40)）。" \
        in section(markdown, "【合入来源】")
    assert f"- 关联 issue：[#47](https://gitcode.com/Ascend/pytorch/issues/47) — `{API}`（任务47）" \
        in section(markdown, "【合入来源】")
    assert box(markdown, "【合入来源】", "需求").startswith("- [ ] 需求 —— not this PR's kind")
    assert box(markdown, "【CheckList】", "代码注释完备").startswith("- [x]")
    assert "不涉及: the PR adds or changes only test files" in box(markdown, "【CheckList】", "返回值")
    assert box(markdown, "【CheckList】", "PR标题").startswith("- [ ] ") and "`test: [API一致性]" in markdown
    assert "`v2.9.0`, `v2.10.0` — maintenance branches" in section(markdown, "【分支范围】")
    assert "base `origin/v2.7.1`" in section(markdown, "【分支范围】")
    assert f"| `{TEST_FILE}` | 新增 (new) | test file | 0 | 2 |" in section(markdown, "【修改方案】")
    api = section(markdown, "【API 功能介绍】")
    assert "- torch 2.13.0: function" in api and f"--python {env_python}" in api
    assert "- `test_reports_no_grad`: Inside no_grad it answers False." in section(markdown, "【测试方案】")
    assert f"0 tests call {API} directly on origin/v2.7.1" in section(markdown, "【社区用例检索与新增必要性】")
    docs = section(markdown, "【资料变更】")
    assert "torch 2.7.1: 已列出 / listed in `docs/zh/api/native_api/pytorch_2-7-1/torch.md:" in docs
    verification = section(markdown, "【功能验证】")
    assert verification.split("\n")[2] == "**not run on an NPU: cpu**"  # the section's first line
    for part in ("### 测试环境", "### 测试命令", "### 实现覆盖率", "### 测试日志", "[source: verify-BRANCH.json"):
        assert part in verification, part
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ascend_repo, capture_output=True, text=True).stdout.strip()
    sha = hashlib.sha256((ascend_repo / TEST_FILE).read_bytes()).hexdigest()
    assert f"at HEAD `{head}`" in verification and f"| `{TEST_FILE}` | `{sha}` | not in HEAD | 0 | 2 |" in verification
    assert f"- `{API}` on torch 2.7.1: not measured: the suite ran without coverage" in verification
    assert "| `TestIsGradEnabled.test_reports_no_grad` | kit | passed |" in verification
    assert f"{TEST_FILE}.py -v" not in verification and f"{TEST_FILE[5:]} -v" in verification  # cd test && ...
    assert "same outcomes with grad mode enabled and disabled at start" in verification
    assert "run standalone" not in markdown
    evidence_md = (kit / "reports" / EVIDENCE).read_text()
    assert "These are the kit's files, not the PR's" in evidence_md and f"PR file `{TEST_FILE}`: SHA-256 `{sha}`" \
        in evidence_md
    assert "不涉及" in section(markdown, "【upstream patch 实跑日志】")
    assert f"`{EVIDENCE}`" in markdown and (kit / "reports" / EVIDENCE).exists()
    assert CLONE not in markdown  # --api: no other target API named
    assert facts["format"] == "torch_npu_testing.pr/1" and facts["problems"] == [] and facts["gaps"] == []
    assert facts["ascend"]["ref"] == "origin/v2.7.1" and len(facts["ascend"]["commit"]) == 40
    assert facts["characters"] == len(markdown) <= fit.LIMIT and facts["shortened"] == []


def test_a_pr_file_edited_after_verify_makes_the_description_stale(kit, ascend_repo, tmp_path, capsys):
    """One staleness check: the PR file's bytes in DEST are not the bytes verify ran: ⚠ at the top, exit 1."""
    export_and_verify(kit, ascend_repo, capsys)
    with open(ascend_repo / TEST_FILE, "a", encoding="utf-8") as handle:
        handle.write("# edited after verify\n")
    code, _, stderr, markdown, facts = run_pr(kit, ascend_repo, tmp_path / "no-results", capsys)
    assert code == 1 and facts["verify"]["state"] == "stale"
    assert markdown.startswith(f"> ⚠ 描述已过期 / stale: {TEST_FILE} has other bytes now"), markdown[:300]
    assert any(problem.startswith(f"stale: {TEST_FILE} has other bytes now") for problem in facts["problems"])


def test_no_verify_record_is_a_warning_at_the_top(kit, ascend_repo, tmp_path, capsys):
    code, _, _, markdown, facts = run_pr(kit, ascend_repo, tmp_path / "no-results", capsys)
    assert code == 1 and facts["verify"]["state"] == "missing"
    assert markdown.startswith("> ⚠ verify 结果缺失 / no verify results: missing: no verify results at ")
    assert f"verify {BRANCH} {os.path.realpath(ascend_repo)}` first" in markdown


def test_the_owner_file_is_cited_for_an_api_with_callers_nowhere_else(kit, ascend_repo, tmp_path, capsys):
    """--api set_grad_enabled.clone: the search's home file is cited; only that API is named."""
    code, _, _, markdown, facts = run_pr(kit, ascend_repo, tmp_path / "none", capsys, apis=(CLONE,))
    search = section(markdown, "【社区用例检索与新增必要性】")
    assert ("新增用例归属 / where the new tests are: `test/npu/test_clone_api.py`, chosen with `new --path`; "
            "search's suggestion was `test/npu/test_grad.py`") in search
    assert API not in markdown and [api["name"] for api in facts["apis"]] == [CLONE]
    assert code == 1  # the fixture's own tests already call clone directly: a gap to explain
    (gap,) = [gap for gap in facts["gaps"] if "outside this PR's files call" in gap]
    assert gap.endswith(f"`python -m torch_npu_testing adds {CLONE} \"TEXT\"`")


def test_what_the_new_tests_add_written_once_clears_the_callers_gap(kit, ascend_repo, tmp_path, capsys):
    doc = table_doc()
    doc["apis"][1]["adds_over_callers"] = "the clone's own grad mode, threads and the decorator form"
    write(kit / "table.json", json.dumps(doc))
    table._load.cache_clear()
    code, _, _, markdown, facts = run_pr(kit, ascend_repo, tmp_path / "none", capsys, apis=(CLONE,))
    assert not any("outside this PR's files call" in gap for gap in facts["gaps"]), facts["gaps"]
    assert ("新增必要性 / what the new tests add over the 2 existing direct caller(s): the clone's own grad mode, "
            "threads and the decorator form") in section(markdown, "【社区用例检索与新增必要性】")


# --------------------------------------------------------------------------- missing facts
def assert_gap(code, markdown, facts, title, text):
    assert code == 1
    assert f"> ⚠ 缺少 / missing: {text}" in section(markdown, title), section(markdown, title)
    assert any(text in problem for problem in facts["problems"]), facts["problems"]
    assert markdown.startswith("> ⚠ ") and "\n> ⚠ 本描述尚不完整 / not ready to paste" in markdown[:3000]


def test_no_results_is_a_visible_gap(kit, ascend_repo, tmp_path, capsys):
    code, _, stderr, markdown, facts = run_pr(kit, ascend_repo, tmp_path / "no-results", capsys)
    assert_gap(code, markdown, facts, "【功能验证】", "no usable results for env v2_7")
    assert "no results for env v2_7 — run `tox -e v2_7`" in box(markdown, "【功能验证】", "tests pass in every env")
    assert f"> ⚠ 缺少 / missing: no interpreter for env {ENV}" in section(markdown, "【API 功能介绍】")
    assert "run `tox -e v2_7`" in markdown and "FAIL" in stderr


def test_no_search_is_a_visible_gap(kit, ascend_repo, tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "torch_npu_testing.task.search", None)  # the command is not there
    code, _, _, markdown, facts = run_pr(kit, ascend_repo, tmp_path / "no-results", capsys)
    assert_gap(code, markdown, facts, "【社区用例检索与新增必要性】",
               f"search {API}: the `search` command is not available")


def test_missing_task_id_is_shown_never_made_up(kit, ascend_repo, tmp_path, capsys):
    write(kit / "table.json", json.dumps(table_doc(task_id=None)))
    code, _, _, markdown, facts = run_pr(kit, ascend_repo, tmp_path / "no-results", capsys)
    assert_gap(code, markdown, facts, "【合入来源】", f"no ascend_task_id in torch_npu_testing/common/table.json for {API}")
    assert box(markdown, "【合入来源】", "issue/工单").startswith("- [ ] issue/工单 —— no ascend_task_id")


def test_master_without_a_template_falls_back_and_says_so(kit, tmp_path, capsys):
    ascend = make_task_ascend(tmp_path / "no-template")
    git(ascend, "rm", "-q", ".gitcode/PULL_REQUEST_TEMPLATE.md")
    git(ascend, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "no template")
    code, _, _, markdown, facts = run_pr(kit, ascend, tmp_path / "no-results", capsys)
    assert code == 1 and re.findall(r"^# (【[^】]+】)$", markdown, re.M) == ORDER
    assert "> ⚠ 缺少 / missing: no .gitcode/PULL_REQUEST_TEMPLATE.md" in section(markdown, "【合入来源】")


def test_docs_are_read_from_master_with_the_branch_checked_out(kit, ascend_repo, tmp_path, capsys):
    subprocess.run(["git", "checkout", "-q", BRANCH], cwd=ascend_repo, check=True)
    assert not (ascend_repo / "docs").exists()
    code, _, _, markdown, facts = run_pr(kit, ascend_repo, tmp_path / "no-results", capsys)
    assert "listed in `docs/zh/api/native_api/pytorch_2-7-1/torch.md:" in section(markdown, "【资料变更】")
    assert not any(gap.startswith("资料变更") for gap in facts["gaps"]), facts["gaps"]


# --------------------------------------------------------------------------- size
def test_a_long_log_is_shortened_and_says_so(kit, ascend_repo, env_python, tmp_path, monkeypatch, capsys):
    results = tmp_path / "results"
    make_results(kit, monkeypatch, results)
    monkeypatch.setattr(fit, "LIMIT", 6000)
    code, _, stderr, markdown, facts = run_pr(kit, ascend_repo, results, capsys)
    assert len(markdown) <= 6000 and facts["shortened"], len(markdown)
    assert "> 已缩短 / shortened to fit a PR body: " + facts["shortened"][0] in markdown
    assert "shortened:" in stderr
    evidence = (kit / "reports" / EVIDENCE).read_text()
    assert "TestIsGradEnabled.test_reports_no_grad" in evidence  # the full log is in the attachment


def test_hard_cut_keeps_the_limit_and_marks_the_cut():
    text = "head\n" + fit.LOG_START + "\n" + "\n".join(f"line {i}" for i in range(5000)) + "\n" + fit.LOG_END + \
        "\n# 【CheckList】\n- [x] done\n"
    cut = fit.hard_cut(text, 2000)
    assert len(cut) <= 2000 and "the log is cut here" in cut and cut.endswith("- [x] done\n")


# --------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("argv, pattern", [
    (["v9.9.9"], "unknown Ascend/pytorch branch 'v9.9.9'"),
    (["--not-a-checkout"], "--ascend .*not a git work tree"),
    (["--api", "torch.nope"], "unknown target API 'torch.nope'"),
])
def test_usage_errors_exit_2_and_write_nothing(kit, ascend_repo, tmp_path, capsys, argv, pattern):
    ascend = str(tmp_path) if argv[0] == "--not-a-checkout" else str(ascend_repo)
    branch = argv[0] if argv[0].startswith("v9") else BRANCH
    extra = argv if argv[0] == "--api" else []
    code = cli_main(["pr", branch, "--ascend", ascend, "--out", str(kit / "reports"), "--kit", str(kit)] + extra)
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and re.search(pattern, err[0]), err
    assert not (kit / "reports").exists()


def test_no_export_or_verify_record_of_the_branch_is_exit_2_and_nothing_written(kit, ascend_repo, capsys):
    code = cli_main(["pr", BRANCH, "--ascend", str(ascend_repo), "--out", str(kit / "reports"), "--kit", str(kit),
                     "--api", API])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and f"no export or verify record of {BRANCH}" in err[0], err
    assert not (kit / "reports").exists()


def test_an_ambiguous_or_missing_branch_is_a_usage_error(kit, ascend_repo, origin, tmp_path, capsys):
    subprocess.run(["git", "remote", "add", "fork", str(origin)], cwd=ascend_repo, check=True)
    subprocess.run(["git", "fetch", "-q", "fork"], cwd=ascend_repo, check=True)
    code = cli_main(["pr", BRANCH, "--ascend", str(ascend_repo), "--out", str(kit / "reports"), "--kit", str(kit)])
    err = capsys.readouterr().err
    assert code == 2 and "ambiguous" in err and "fork/v2.7.1, origin/v2.7.1" in err
    ascend = make_task_ascend(tmp_path / "ascend-master-only")
    git(ascend, "branch", "-q", "-D", BRANCH)
    code = cli_main(["pr", BRANCH, "--ascend", str(ascend), "--out", str(kit / "reports"), "--kit", str(kit)])
    err = capsys.readouterr().err
    assert code == 2 and f"unknown ref '{BRANCH}'" in err and not (kit / "reports").exists()


# --------------------------------------------------------------------------- template and log, as units
def test_template_sections_boxes_and_task_section_places():
    from torch_npu_testing.pr import template
    from ascend_fixture import TEMPLATE
    parsed = template.parse(TEMPLATE + "\n# 【新章节】\n> new hint\n- [ ] new box\n")
    assert [s["title"] for s in parsed][-2:] == ["【CheckList】", "【新章节】"]
    assert parsed[0]["checkboxes"] == ["需求", "issue/工单", "资料更新"] and parsed[0]["hints"] == ["> hint: link the issue"]
    order = template.layout({"sections": parsed})
    assert order == ORDER + ["【新章节】"]
    # a template without 【功能验证】: the upstream section goes before the last section
    short = [s for s in parsed if s["title"] not in ("【功能验证】", "【新章节】")]
    assert template.layout({"sections": short})[-2:] == ["【upstream patch 实跑日志】", "【CheckList】"]


def test_an_unknown_template_section_and_box_stay_open_and_are_problems():
    from torch_npu_testing.pr import checklist, sections
    section_doc = {"title": "【新章节】", "hints": ["> fill me"], "checkboxes": ["new box"]}
    lines = sections.unknown_section({}, section_doc)
    assert "> fill me" in lines and any(line.startswith("- [ ] new box") for line in lines)
    facts = {"template": {"sections": [section_doc]}, "apis": [], "plan": {"files": []}}
    item = checklist.template_boxes(facts)["【新章节】"][0]
    assert not item["ticked"] and not item["open_by_design"] and "new in the template" in item["why"]


def test_log_collapses_passing_subtests_and_shows_failures_in_full():
    from torch_npu_testing.pr import log
    cases = [{"file": "t.py", "id": "TestA.test_x", "outcome": "passed", "subtest": f"(i={i})"} for i in range(50)]
    cases += [{"file": "t.py", "id": "TestA.test_y", "outcome": "failed", "subtest": "(k=1)", "reason": "boom",
               "details": "Traceback\n" + "\n".join(f"  frame {i}" for i in range(40)) + "\nAssertionError: boom"},
              {"file": "t.py", "id": "TestB.test_z", "outcome": "skipped", "reason": "requires torch >= 2.9"}]
    run = {"path": "t.py", "initial_grad_mode": True, "cases": cases,
           "counts": {"tests": 3, "cases": 52, "passed": 50, "failed": 1, "error": 0, "skipped": 1,
                      "expected_failure": 0, "unexpected_success": 0}}
    text = "\n".join(log.run_lines(run, "v2_7", "methods"))
    assert "| `TestA.test_x` | passed | 50 |" in text and "(i=3)" not in text
    assert "| `TestB.test_z` | skipped: requires torch >= 2.9 | 1 |" in text
    assert "- **failed** `TestA.test_y (k=1)`: boom" in text and "frame 0" in text and "frame 39" in text
    short = "\n".join(log.run_lines(run, "v2_7", "files", max_trace=5))
    assert "TestA.test_x" not in short and "frame 0" not in short and "frame 39" in short
    assert "first 37 traceback lines cut; in full in the evidence file, env v2_7" in short
    classes = "\n".join(log.run_lines(run, "v2_7", "classes"))
    assert "| `TestA` | 2 | 51 |" in classes


def test_either_aot_api_selects_the_aot_file_but_only_it_is_described():
    from torch_npu_testing.pr import facts
    aot = "test/functorch/test_aot_joint_with_descriptors_api.py"
    export = "torch._functorch.aot_autograd.aot_export_joint_with_descriptors"
    assert [api["name"] for api in facts.described_apis([aot], [export])] == [export]
    assert len(facts.described_apis([aot], None)) == 2


def test_coverage_lines_one_per_api_and_torch_with_figures_or_the_reason():
    from torch_npu_testing.pr import evidence
    block = {"format": "torch_npu_testing.coverage/1", "torch_version": "2.13.0+cpu", "apis": {
        API: {"status": "measured", "lines": {"covered": 40, "total": 52}, "branches": {"covered": 10, "total": 16}}}}
    doc = {"envs": [{"name": "master_213", "state": "ok", "results": {"coverage": block}},
                    {"name": "master_214", "state": "missing", "results": None}]}
    lines = evidence.coverage_lines(doc, [{"name": API}, {"name": CLONE}])
    assert lines == [f"- `{API}`: lines 40/52, branches 10/16 on torch 2.13.0",
                     f"- `{API}` on torch 2.14.1: not measured: no results for env master_214",
                     f"- `{CLONE}` on torch 2.13.0: not measured: the suite ran without coverage (--no-coverage, or a "
                     "kit before it)",
                     f"- `{CLONE}` on torch 2.14.1: not measured: no results for env master_214"]


def test_patch_lines_agree_a_patch_of_another_task_is_not_listed_as_skipped():
    """A verify record that also names another task's upstream patch: pr's 【功能验证】 lists only the PR's own."""
    from torch_npu_testing.pr import verified
    record = {"files": [{"path": "test/a.py"}, {"path": "test/b.py"}], "envs": [],
              "patches_skipped": [{"path": "test_upstream/x.py.patch", "why": "a patch"}]}
    slim = verified._slim(record, {"test/a.py"})
    assert slim["files"] == [{"path": "test/a.py"}] and slim["patches_skipped"] == []
    slim = verified._slim(record, {"test/a.py"}, {"test_upstream/x.py.patch"})
    assert [item["path"] for item in slim["patches_skipped"]] == ["test_upstream/x.py.patch"]


def test_docs_box_counts_only_torch_versions_that_have_a_native_api_list():
    """master ships 2.15/2.14 before Ascend writes their docs folders: those are said, not gaps."""
    from torch_npu_testing.pr import checklist

    def facts(*versions):
        return {"apis": [{"name": API, "docs": {"versions": [dict(zip(("torch_version", "listed", "folder"), v))
                                                             for v in versions]}}]}
    item = checklist.docs_listed(facts(("2.13.0", True, "docs/x/pytorch_2-13-0"), ("2.14.0", False, None)))
    assert item["ticked"] and item["why"].endswith("; Ascend has no native-API list for torch 2.14.0 yet")
    item = checklist.docs_listed(facts(("2.13.0", False, "docs/x/pytorch_2-13-0")))
    assert not item["ticked"] and f"not listed: {API} (torch 2.13.0)" in item["why"] and "--write" in item["why"]
