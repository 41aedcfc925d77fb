# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""README.md and docs/ cannot drift from the CLI: every command line they show is parsed for real.

The check itself (``doc_commands``) is shown to fail on a scratch copy of a page with a wrong option, an
unknown env, a missing path and a wrong format name, each reported with file and line.
"""
import shutil
import subprocess

import pytest

import doc_commands
from conftest import REPO_ROOT


def test_every_command_path_and_format_in_readme_and_docs_is_real():
    problems = doc_commands.check_docs(REPO_ROOT)
    assert problems == [], "stale lines in README.md / docs/:\n" + "\n".join(problems)


def test_readme_is_a_front_door():
    lines = (REPO_ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 200, f"README.md has {len(lines)} lines (at most 200; the reference lives in docs/)"
    head = "\n".join(lines[:40])
    assert "pip install tox" in head and "\ntox\n" in head + "\n", "the setup commands are not in the first 40 lines"
    flow = "\n".join(lines[:120])
    for command in ("locate", "search", "docs", "new", "mutate", "export", "verify", "pr"):
        assert f"python -m torch_npu_testing {command} " in flow, f"{command} is not in README's first 120 lines"
    order = [flow.index(f"python -m torch_npu_testing {command} ") for command in ("export", "verify", "pr")]
    assert order == sorted(order), "README's task flow must read export -> verify -> pr"


@pytest.fixture
def scratch(tmp_path):
    """A git-tracked copy of the repository's pages and tox.ini, plus the package's format names."""
    for name in ("README.md", "tox.ini", "setup.cfg"):
        shutil.copy(REPO_ROOT / name, tmp_path / name)
    for folder in ("docs", "test_upstream", "test/in_env"):
        shutil.copytree(REPO_ROOT / folder, tmp_path / folder, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO_ROOT / "torch_npu_testing", tmp_path / "torch_npu_testing",
                    ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    subprocess.run(["git", "-C", str(tmp_path), "add", "."], check=True)
    return tmp_path


@pytest.mark.parametrize("line, problem", [
    ("python -m torch_npu_testing report --results DIR --no-such-option", "unknown option '--no-such-option'"),
    ("python -m torch_npu_testing upstream run --each-torch --bogus", "unknown option '--bogus'"),
    ("python -m torch_npu_testing no-such-command FILE", "unknown command 'no-such-command'"),
    ("tox -e v2_99", "tox env 'v2_99' is not in tox.ini"),
    ("tox -m nightly", "tox label 'nightly' is not in tox.ini"),
    ("tox -e bench -- --repeat 5 --no-such-flag", "unknown option '--no-such-flag'"),
])
def test_a_stale_command_in_a_scratch_page_fails_with_file_and_line(scratch, line, problem):
    page = scratch / "docs" / "scratch.md"
    page.write_text("# scratch\n\nFor the check's own test.\n\n```bash\n" + line + "\n```\n", encoding="utf-8")
    problems = doc_commands.check_docs(scratch, [page])
    assert len(problems) == 1 and problems[0].startswith("docs/scratch.md:6: ") and problem in problems[0], problems


@pytest.mark.parametrize("text, problem", [
    ("see `test_upstream/no-such-dir/x.patch`", "no such path 'test_upstream/no-such-dir/x.patch'"),
    ("files `test/nowhere/test_*.py`", "no file matches 'test/nowhere/test_*.py'"),
    ("written as torch_npu_testing.results/9", "format 'torch_npu_testing.results/9' is not one the package writes"),
])
def test_a_missing_path_or_a_wrong_format_name_fails(scratch, text, problem):
    page = scratch / "docs" / "scratch.md"
    page.write_text(f"# scratch\n\n{text}\n", encoding="utf-8")
    problems = doc_commands.check_docs(scratch, [page])
    assert len(problems) == 1 and problems[0].startswith("docs/scratch.md:3: ") and problem in problems[0], problems


@pytest.mark.parametrize("text", [
    "```bash\nTORCH_NPU_TESTING_PRUNE_ENVS=1 python -m torch_npu_testing report \\\n    --results DIR --out <dir>\n```",
    "```bash\npython -m torch_npu_testing upstream run [--results FILE.json] [--torch X.Y.Z ...]\n```",
    "```bash\ncd DEST/test && python -m torch_npu_testing probe   # a comment --not-an-option\n```",
    "`tox -e v2_12,master_213` and `tox -m master`, Ascend's `DEST/test/run_test.py`",
    "```text\ntox -e (warm)   3   28.90   output, not a command\n```",
])
def test_placeholders_prefixes_continuations_and_output_blocks_are_accepted(scratch, text):
    page = scratch / "docs" / "scratch.md"
    page.write_text(f"# scratch\n\n{text}\n", encoding="utf-8")
    assert doc_commands.check_docs(scratch, [page]) == []
