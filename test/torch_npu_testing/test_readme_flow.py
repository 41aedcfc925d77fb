# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""README's "A new task, end to end", run as written: the acceptance test of one task's flow.

The tool lines are read from README itself and run, one subprocess each, on a fixture API that is not one
of the kit's five (``torch.nn.utils.parameters_to_vector`` stands in for README's example API and path), in
a copy of the kit (so ``new``, ``task-id`` and ``adds`` write its own table) against a real git clone shaped
like an Ascend branch (``v2.12.0`` checked out; master with the docs and the PR template), under the
stand-in torch_npu. README's ``tox`` line is replaced by what ``tox -e v2_12`` runs for the task's file
(the suite, under this test's interpreter); between ``new`` and it, the contributor's tests replace the
draft's placeholders. Each step must exit 0, ``pr`` included, and the commit export's ``git add`` makes must
hold the task's file and nothing else. A tool line README adds that this test does not know fails it.
"""
import os
import re
import shlex
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from ascend_fixture import TEMPLATE, git, write
from export_repo import git as git_output

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).resolve().parent / "fixtures"
API = "torch.nn.utils.parameters_to_vector"
TEST_PATH = "test/nn/test_utils_parameters_to_vector_api.py"
BRANCH = "v2.12.0"
TOOLS = ("locate", "search", "docs", "new", "mutate", "task-id", "adds", "export", "verify", "pr")
INPUTS = {"TASK": "任务90", "CAMPAIGN": "测试用的社区任务", "NUMBER": "9001", "TITLE": "[API一致性] a test commit",
          "WHAT THE NEW TESTS ADD": "the order of the vector, its dtype and the refusal of a non-tensor"}

DOC_PAGE = """\
# torch.nn

### {api}

<div style="margin-left: 2em">

**原生文档**：[{api}](https://pytorch.org/docs/{mm}/generated/{api}.html)

**支持情况**：

| 硬件 | 是否支持 |
| ---- | :----: |
| <term>Atlas A2 训练系列产品</term> | ✔ |

</div>
"""

THEIR_TEST = """\
import torch


class TestMisc:
    def test_vector(self):
        torch.nn.utils.parameters_to_vector([torch.ones(2)])
"""

# What the contributor writes in place of new's placeholders (README: "replace the placeholders").
CONTRIBUTED = textwrap.dedent('''\
    # Copyright (c) 2026, torch_npu API-consistency kit contributors.
    # SPDX-License-Identifier: BSD-3-Clause
    """API consistency on the test device of ``torch.nn.utils.parameters_to_vector``.

    Covers the order and dtype of the vector and the refusal of a non-tensor; the other contract areas do not
    apply to this fixture.
    """
    from torch_npu_testing import TestCase, run_tests, device_type

    import torch

    DEVICE = device_type()


    class TestParametersToVector(TestCase):
        """The flattened vector of parameters, in order."""

        def test_concatenates_in_order(self):
            """Two parameters become one vector, first then second, float32 kept."""
            out = torch.nn.utils.parameters_to_vector([torch.tensor([1.0, 2.0], device=DEVICE),
                                                       torch.tensor([[3.0], [4.0]], device=DEVICE)])
            self.assert_tensor(out, torch.tensor([1.0, 2.0, 3.0, 4.0], device=DEVICE), "the vector")

        def test_refuses_a_non_tensor(self):
            """A parameter that is not a tensor raises AttributeError, as upstream."""
            with self.assert_raises_exactly(AttributeError, "a float parameter"):
                torch.nn.utils.parameters_to_vector([1.0])


    if __name__ == "__main__":
        run_tests()
    ''')


def flow_lines(readme):
    """The command lines of the first fenced block under README's "A new task, end to end" heading."""
    section = readme.split("## A new task, end to end", 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, re.S).group(1)
    return [shlex.split(line, comments=True) for line in block.splitlines() if line.strip()]


def kind_of(words):
    """``("tool", name)``, ``("tox", None)``, ``("git", None)``, else ``(None, line)``: a line this test does not
    know."""
    if words[:3] == ["python", "-m", "torch_npu_testing"] and len(words) > 3 and words[3] in TOOLS:
        return "tool", words[3]
    if words[0] == "tox":
        return "tox", None
    if words[0] == "git":
        return "git", None
    return None, " ".join(words)


def make_ascend(root):
    """An Ascend-shaped origin (master: docs, template, tests; v2.12.0) and a clone with v2.12.0 checked out."""
    origin = root / "origin"
    origin.mkdir()
    git(origin, "init", "-q", "-b", "master")
    write(origin, "setup.py", "name = 'torch_npu'\n")
    write(origin, "torch_npu/__init__.py", "")
    write(origin, "version.txt", "2.13.0\n")
    write(origin, "test/run_test.py", (FIXTURES / "ascend_ci" / "run_test.py").read_text())
    write(origin, "test/npu/test_grad_mode_shape.py", (FIXTURES / "ascend_npu" / "test_grad_mode_shape.py").read_text())
    write(origin, "test/nn/test_utils_misc.py", THEIR_TEST)
    write(origin, ".gitcode/PULL_REQUEST_TEMPLATE.md", TEMPLATE)
    for version, mm in (("2-12-0", "2.12"), ("2-13-0", "2.13")):
        write(origin, f"docs/zh/api/native_api/pytorch_{version}/torch-nn.md", DOC_PAGE.format(api=API, mm=mm))
    git(origin, "add", "-A")
    git(origin, "commit", "-q", "-m", "master")
    git(origin, "checkout", "-q", "-b", BRANCH)
    write(origin, "version.txt", "2.12.0\n")
    git(origin, "add", "-A")
    git(origin, "commit", "-q", "-m", BRANCH)
    git(origin, "checkout", "-q", "master")
    git(root, "clone", "-q", str(origin), "dest")
    git(root / "dest", "checkout", "-q", BRANCH)
    return root / "dest"


def make_kit(root):
    """A copy of this kit's package, patches and stand-in, with `.tox/v2_12/bin/python` this interpreter."""
    kit = root / "kit"
    shutil.copytree(ROOT / "torch_npu_testing", kit / "torch_npu_testing",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "test_upstream", kit / "test_upstream")
    standin = Path("test/torch_npu_testing/fixtures/standin_torch_npu")
    if (ROOT / standin).is_dir():
        shutil.copytree(ROOT / standin, kit / standin, ignore=shutil.ignore_patterns("__pycache__"))
    python = kit / ".tox" / "v2_12" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')  # a wrapper: a symlink would lose the venv
    python.chmod(0o755)
    return kit


def substitute(words, example_api, example_path, dest):
    out = []
    for word in words:
        word = INPUTS.get(word, word)
        word = word.replace(example_api, API).replace(example_path, TEST_PATH)
        out.append(str(dest) if word == "DEST" else sys.executable if word == "python" else word)
    return out


def run(argv, kit, log):
    env = dict(os.environ, PYTHONPATH=str(kit), TORCH_DEVICE_BACKEND_AUTOLOAD="0", GIT_AUTHOR_NAME="t",
               GIT_AUTHOR_EMAIL="t@e", GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@e")
    for name in ("TORCH_NPU_TESTING_STANDIN_NPU", "TORCH_NPU_TESTING_DEVICE", "IN_CI", "TEST_REPORT_PATH"):
        env.pop(name, None)
    started = time.perf_counter()
    result = subprocess.run(argv, cwd=kit, env=env, capture_output=True, text=True, check=False, timeout=300)
    log.append((argv, result.returncode, result.stdout[-3000:] + result.stderr[-3000:]))
    print(f"{time.perf_counter() - started:6.1f} s  rc {result.returncode}  {' '.join(argv[2:5])}")
    return result


def test_readme_task_flow_runs_to_a_one_task_diff_and_pr_exit_0(tmp_path):
    lines = flow_lines((ROOT / "README.md").read_text(encoding="utf-8"))
    unknown = [line for kind, line in map(kind_of, lines) if kind is None]
    assert not unknown, f"README's task flow has lines this test does not know: {unknown}"
    tools = [kind_of(words)[1] for words in lines if kind_of(words)[0] == "tool"]
    assert tools[:4] == ["locate", "search", "docs", "new"] and tools[-3:] == ["export", "verify", "pr"], tools
    example_api = lines[0][4]
    new = next(words for words in lines if kind_of(words) == ("tool", "new"))
    example_path = new[new.index("--path") + 1]
    dest, kit = make_ascend(tmp_path), make_kit(tmp_path)
    log = []
    for words in lines:
        kind, tool = kind_of(words)
        argv = substitute(words, example_api, example_path, dest)
        if kind == "tox":  # what `tox -e v2_12` runs for the task's file, under this interpreter
            argv = [sys.executable, "-m", "torch_npu_testing", "suite", "--api-calls", "--results",
                    str(kit / ".tox" / "results" / "v2_12.json"), "--env", "v2_12", TEST_PATH]
        if kind == "git":
            cut = argv.index("&&")
            for part in (argv[:cut], argv[cut + 1:]):
                assert run(part, kit, log).returncode == 0, log[-1]
            continue
        result = run(argv, kit, log)
        assert result.returncode == 0, log[-1]
        if tool == "new":
            assert (kit / TEST_PATH).is_file()
            (kit / TEST_PATH).write_text(CONTRIBUTED, encoding="utf-8")
    changed = git_output(dest, "diff", "--name-only", f"origin/{BRANCH}", "HEAD").split()
    assert changed == [TEST_PATH], changed
    assert git_output(dest, "status", "--porcelain") == ""
    assert (kit / "reports" / f"pr-{BRANCH}--{API}.md").is_file()
