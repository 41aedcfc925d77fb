# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Unit tests of ``python -m torch_npu_testing grad-modes``.

Real subprocesses over small synthetic test files written into tmp dirs:

- a file (kit TestCase + run_tests, imports torch) that passes only when the process starts with grad
  enabled: proves the runner really sets TORCH_NPU_TESTING_INITIAL_GRAD_MODE for each run;
- plain-unittest files (no torch, fast) that pass in both modes, or fail with known counts.

The one end-to-end CLI run (4 child runs, 2 of them import torch) is shared by several tests.
"""
import argparse
import json
import os
import subprocess
import sys
import textwrap

import pytest

from torch_npu_testing import grad_modes
from torch_npu_testing.errors import UsageError

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

NEEDS_GRAD_ENABLED = """\
from torch_npu_testing import TestCase, run_tests

import torch


class NeedsGradEnabledAtStart(TestCase):
    def test_grad_enabled_at_start(self):
        self.assertTrue(torch.is_grad_enabled(), "process started with grad disabled")


if __name__ == "__main__":
    run_tests()
"""

PASSES_IN_BOTH = """\
import os
import unittest


class PassesInBoth(unittest.TestCase):
    def test_sees_the_initial_grad_mode_variable(self):
        print("INITIAL_GRAD_MODE=" + os.environ["TORCH_NPU_TESTING_INITIAL_GRAD_MODE"])
        print("EXTRA=" + os.environ.get("GRAD_MODES_TEST_EXTRA", "<unset>"))

    def test_second(self):
        pass

    @unittest.skip("not relevant to this synthetic file")
    def test_skipped(self):
        pass


if __name__ == "__main__":
    unittest.main()
"""

FAILS_WITH_COUNTS = """\
import unittest


class FailsWithCounts(unittest.TestCase):
    def test_fails(self):
        self.assertEqual(1, 2)

    def test_errors(self):
        raise RuntimeError("boom")

    def test_passes(self):
        pass

    @unittest.skip("skipped on purpose")
    def test_skipped(self):
        pass


if __name__ == "__main__":
    unittest.main()
"""


def write(directory, name, text):
    path = directory / name
    path.write_text(textwrap.dedent(text))
    return str(path)


def cli(*argv):
    env = dict(os.environ)
    env["PYTHONPATH"] = REPO_ROOT + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-m", "torch_npu_testing", "grad-modes", *argv], cwd=REPO_ROOT,
                          env=env, capture_output=True, text=True, check=False)


@pytest.fixture(scope="module")
def cli_run(tmp_path_factory):
    """One real CLI run over a grad-sensitive file and a passing file, with --json."""
    directory = tmp_path_factory.mktemp("grad_modes_cli")
    needs_grad = write(directory, "test_needs_grad_enabled.py", NEEDS_GRAD_ENABLED)
    passes = write(directory, "test_passes_in_both.py", PASSES_IN_BOTH)
    out = directory / "results.json"
    completed = cli(needs_grad, passes, "--json", str(out))
    return {"completed": completed, "json": json.loads(out.read_text()), "needs_grad": needs_grad,
            "passes": passes}


def runs_by_key(report):
    return {(os.path.basename(run["path"]), run["initial_grad_mode"]): run for run in report["runs"]}


# ---- end to end -------------------------------------------------------------------------------------

def test_runner_sets_initial_grad_mode_per_run(cli_run):
    runs = runs_by_key(cli_run["json"])
    disabled = runs[("test_needs_grad_enabled.py", False)]
    enabled = runs[("test_needs_grad_enabled.py", True)]
    assert (disabled["returncode"], disabled["tests"], disabled["failures"]) == (1, 1, 1)
    assert "process started with grad disabled" in disabled["output"]
    assert (enabled["returncode"], enabled["tests"], enabled["failures"], enabled["errors"]) == (0, 1, 0, 0)


def test_exit_status_is_nonzero_when_any_run_failed(cli_run):
    completed = cli_run["completed"]
    assert completed.returncode == 1, completed.stdout + completed.stderr
    assert "grad-modes: 3 of 4 runs passed" in completed.stdout


def test_summary_has_one_line_per_run_in_order(cli_run):
    lines = [line for line in cli_run["completed"].stdout.splitlines() if "  grad=" in line]
    assert len(lines) == 4
    assert lines[0].startswith(cli_run["needs_grad"] + "  grad=off  rc=1  tests=1 failures=1 errors=0 skipped=0")
    assert lines[0].endswith("FAILED")
    assert lines[1].startswith(cli_run["needs_grad"] + "  grad=on  rc=0  tests=1 failures=0")
    assert lines[2] == cli_run["passes"] + "  grad=off  rc=0  tests=3 failures=0 errors=0 skipped=1  ok"
    assert lines[3] == cli_run["passes"] + "  grad=on  rc=0  tests=3 failures=0 errors=0 skipped=1  ok"
    # The failing run's output tail is shown right under its summary line.
    assert "    | " in cli_run["completed"].stdout.split(lines[1])[0]


def test_json_holds_every_run_with_counts_and_output(cli_run):
    report = cli_run["json"]
    assert report["python"] == sys.executable
    assert [(os.path.basename(run["path"]), run["initial_grad_mode"]) for run in report["runs"]] == [
        ("test_needs_grad_enabled.py", False), ("test_needs_grad_enabled.py", True),
        ("test_passes_in_both.py", False), ("test_passes_in_both.py", True)]
    for run in report["runs"]:
        assert set(run) == {"path", "initial_grad_mode", "returncode", "tests", "failures", "errors", "skipped",
                            "output"}
    passes = runs_by_key(report)
    assert "INITIAL_GRAD_MODE=0" in passes[("test_passes_in_both.py", False)]["output"]
    assert "INITIAL_GRAD_MODE=1" in passes[("test_passes_in_both.py", True)]["output"]


def test_missing_file_exits_2_with_one_line_error(tmp_path):
    missing = str(tmp_path / "no_such_test.py")
    completed = cli(missing)
    assert completed.returncode == 2
    assert completed.stdout == ""
    assert completed.stderr == f"torch_npu_testing: error: grad-modes: no such test file: {missing}\n"


# ---- run_under_grad_modes ----------------------------------------------------------------------------

def test_run_under_grad_modes_counts_failures_errors_skips_and_uses_env(tmp_path):
    path = write(tmp_path, "test_fails_with_counts.py", FAILS_WITH_COUNTS)
    seen = []
    results = grad_modes.run_under_grad_modes(path, modes=(True,), env={**os.environ, "GRAD_MODES_TEST_EXTRA": "x"},
                                              on_result=seen.append)
    assert seen == results
    [result] = results
    assert result["initial_grad_mode"] is True
    assert result["returncode"] == 1
    assert (result["tests"], result["failures"], result["errors"], result["skipped"]) == (4, 1, 1, 1)
    assert grad_modes.run_failed(result)

    passing = write(tmp_path, "test_passes_in_both.py", PASSES_IN_BOTH)
    [result] = grad_modes.run_under_grad_modes(passing, modes=(False,), env={**os.environ,
                                                                             "GRAD_MODES_TEST_EXTRA": "x"})
    assert "INITIAL_GRAD_MODE=0" in result["output"] and "EXTRA=x" in result["output"]
    assert not grad_modes.run_failed(result)


def test_run_under_grad_modes_rejects_missing_file_and_interpreter(tmp_path):
    with pytest.raises(UsageError, match=r"^grad-modes: no such test file: .*nope\.py$"):
        grad_modes.run_under_grad_modes(str(tmp_path / "nope.py"))
    path = write(tmp_path, "test_passes_in_both.py", PASSES_IN_BOTH)
    with pytest.raises(UsageError, match="cannot run interpreter"):
        grad_modes.run_under_grad_modes(path, python=str(tmp_path / "no-python"))


def test_main_rejects_missing_file_before_running_anything(tmp_path, capsys):
    parser = argparse.ArgumentParser()
    grad_modes.add_arguments(parser)
    args = parser.parse_args([str(tmp_path / "a_missing_test.py"), "--python", str(tmp_path / "no-python")])
    with pytest.raises(UsageError, match="no such test file"):
        grad_modes.main(args)
    assert capsys.readouterr().out == ""


def test_module_does_not_import_torch():
    code = "import sys, torch_npu_testing.grad_modes; print('torch' in sys.modules)"
    completed = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, stdout=subprocess.PIPE, text=True,
                               check=True)
    assert completed.stdout.strip() == "False"


# ---- parsing -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("tail, expected", [
    ("Ran 5 tests in 0.1s\n\nOK\n", {"tests": 5, "failures": 0, "errors": 0, "skipped": 0}),
    ("Ran 1 test in 0.0s\n\nOK (skipped=1)\n", {"tests": 1, "failures": 0, "errors": 0, "skipped": 1}),
    ("Ran 9 tests in 2.0s\n\nFAILED (failures=2, errors=3, skipped=4)\n",
     {"tests": 9, "failures": 2, "errors": 3, "skipped": 4}),
    ("Ran 3 tests in 0.0s\n\nFAILED (errors=1, expected failures=1)\n",
     {"tests": 3, "failures": 0, "errors": 1, "skipped": 0}),
    ("Traceback (most recent call last):\nImportError: x\n", {"tests": None, "failures": 0, "errors": 0, "skipped": 0}),
])
def test_parse_unittest_summary(tail, expected):
    assert grad_modes.parse_unittest_summary("test_a ... ok\n---\n" + tail) == expected


def test_run_without_tests_or_summary_counts_as_failed():
    base = {"path": "f.py", "initial_grad_mode": False, "returncode": 0, "failures": 0, "errors": 0, "skipped": 0}
    assert grad_modes.run_failed({**base, "tests": 0})
    assert grad_modes.run_failed({**base, "tests": None})
    assert not grad_modes.run_failed({**base, "tests": 2})
    assert grad_modes.summary_line({**base, "tests": 0}).endswith("FAILED (no tests ran)")
