# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Unit tests of ``python -m torch_npu_testing grad-modes``.

grad-modes runs each file twice in its own process with the suite's grad-mode isolation rerun, and
judges the recorded test cases (no unittest text is parsed). Small synthetic test files in tmp dirs:

- a file (kit TestCase) that passes only when grad mode is enabled at start: proves each run really
  sets the initial grad mode;
- plain-unittest files that pass in both modes (with subtests: every case counted), or fail with
  known counts.

The command runs in process; one real subprocess checks ``--python`` (the same command under another
interpreter path) and one that importing the module does not import torch.
"""
import argparse
import json
import os
import subprocess
import sys
import textwrap

import pytest

from torch_npu_testing.common import results
from torch_npu_testing.suite import grad_modes
from torch_npu_testing.common.errors import UsageError

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
import unittest


class PassesInBoth(unittest.TestCase):
    def test_table(self):
        for n in range(3):
            with self.subTest(n=n):
                self.assertGreaterEqual(n, 0)

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


def cli_in_process(capsys, *argv):
    from torch_npu_testing.__main__ import main as cli_main
    code = cli_main(["grad-modes", *argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    directory = tmp_path_factory.mktemp("grad_modes_cli")
    return {"needs_grad": write(directory, "test_needs_grad_enabled.py", NEEDS_GRAD_ENABLED),
            "passes": write(directory, "test_passes_in_both.py", PASSES_IN_BOTH),
            "fails": write(directory, "test_fails_with_counts.py", FAILS_WITH_COUNTS), "dir": directory}


def runs_by_key(report):
    return {(os.path.basename(run["path"]), run["initial_grad_mode"]): run for run in report["runs"]}


# ---- the command, in process ----------------------------------------------------------------------

def test_each_file_runs_with_grad_disabled_then_enabled(files, capsys):
    out_json = files["dir"] / "results.json"
    code, out, err = cli_in_process(capsys, files["needs_grad"], files["passes"], "--json", str(out_json))
    assert code == 1, out + err
    lines = [line for line in out.splitlines() if "  grad=" in line]
    assert lines == [
        f"{files['needs_grad']}  grad=off  tests=1 cases=1 passed=0 failed=1 error=0 skipped=0 expected_failure=0 "
        "unexpected_success=0  FAILED",
        f"{files['needs_grad']}  grad=on  tests=1 cases=1 passed=1 failed=0 error=0 skipped=0 expected_failure=0 "
        "unexpected_success=0  ok",
        f"{files['passes']}  grad=off  tests=3 cases=5 passed=4 failed=0 error=0 skipped=1 expected_failure=0 "
        "unexpected_success=0  ok",
        f"{files['passes']}  grad=on  tests=3 cases=5 passed=4 failed=0 error=0 skipped=1 expected_failure=0 "
        "unexpected_success=0  ok"]
    # the failing run's output tail is shown right under its summary line
    assert "    | " in out.split(lines[1])[0] and "process started with grad disabled" in out.split(lines[1])[0]
    assert f"{files['needs_grad']}: the outcomes differ between the two initial grad modes" in out
    assert out.rstrip().endswith("grad-modes: 3 of 4 runs passed")

    report = json.loads(out_json.read_text())
    assert report["python"] == sys.executable and report["format"] == "torch_npu_testing.results/2"
    assert [(os.path.basename(run["path"]), run["initial_grad_mode"]) for run in report["runs"]] == [
        ("test_needs_grad_enabled.py", False), ("test_needs_grad_enabled.py", True),
        ("test_passes_in_both.py", False), ("test_passes_in_both.py", True)]
    runs = runs_by_key(report)
    disabled = runs[("test_needs_grad_enabled.py", False)]
    assert [(case["id"], case["outcome"]) for case in disabled["cases"]] == [
        ("NeedsGradEnabledAtStart.test_grad_enabled_at_start", "failed")]
    assert "process started with grad disabled" in disabled["output"]
    passes = runs[("test_passes_in_both.py", True)]
    assert [case.get("subtest") for case in passes["cases"] if case["id"] == "PassesInBoth.test_table"] == [
        "(n=0)", "(n=1)", "(n=2)"]
    assert [probe["same"] for probe in report["grad_mode_isolation"]] == [False, True]


def test_missing_file_exits_2_with_one_line_error(tmp_path, capsys):
    missing = str(tmp_path / "no_such_test.py")
    code, out, err = cli_in_process(capsys, missing)
    assert (code, out) == (2, "")
    assert err == f"torch_npu_testing: error: grad-modes: no such test file: {missing}\n"


# ---- run_under_grad_modes ----------------------------------------------------------------------------

def test_run_under_grad_modes_counts_failures_errors_skips(files):
    seen = []
    runs, probe = grad_modes.run_under_grad_modes(files["fails"], on_result=seen.append)
    assert seen == runs and [run["initial_grad_mode"] for run in runs] == [False, True]
    for run in runs:
        counts = run["counts"]
        assert (counts["cases"], counts["failed"], counts["error"], counts["skipped"]) == (4, 1, 1, 1)
        assert grad_modes.run_failed(run)
        assert "RuntimeError: boom" in run["output"]
    assert probe["same"] is True


def test_run_under_grad_modes_rejects_missing_file(tmp_path):
    with pytest.raises(UsageError, match=r"^grad-modes: no such test file: .*nope\.py$"):
        grad_modes.run_under_grad_modes(str(tmp_path / "nope.py"))


def test_main_rejects_missing_file_before_running_anything(tmp_path, capsys):
    parser = argparse.ArgumentParser()
    grad_modes.add_arguments(parser)
    args = parser.parse_args([str(tmp_path / "a_missing_test.py"), "--python", str(tmp_path / "no-python")])
    with pytest.raises(UsageError, match="no such test file"):
        grad_modes.main(args)
    assert capsys.readouterr().out == ""


def test_missing_interpreter_is_a_usage_error(files):
    parser = argparse.ArgumentParser()
    grad_modes.add_arguments(parser)
    args = parser.parse_args([files["passes"], "--python", str(files["dir"] / "no-python")])
    with pytest.raises(UsageError, match="cannot run interpreter"):
        grad_modes.main(args)


def test_a_run_without_cases_fails():
    empty = {"path": "f.py", "initial_grad_mode": False, "counts": results.tally([])}
    assert grad_modes.run_failed(empty)
    assert grad_modes.summary_line(empty).endswith("FAILED (no tests ran)")


# ---- real subprocesses ------------------------------------------------------------------------------

def test_python_option_runs_the_command_under_that_interpreter(files, tmp_path):
    """--python PY: the same command under PY (here this venv's interpreter by another name), exit status kept."""
    bin_dir = os.path.dirname(sys.executable)
    names = [f"python{sys.version_info[0]}", "python{}.{}".format(*sys.version_info[:2]), "python"]
    others = [os.path.join(bin_dir, name) for name in names
              if os.path.join(bin_dir, name) != sys.executable and os.path.exists(os.path.join(bin_dir, name))]
    if not others:
        pytest.skip(f"no other name for {sys.executable} in {bin_dir}")
    other = others[0]
    out_json = tmp_path / "other.json"
    completed = cli(files["passes"], "--python", str(other), "--json", str(out_json))
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert completed.stdout.rstrip().endswith("grad-modes: 2 of 2 runs passed")
    assert json.loads(out_json.read_text())["python"] == str(other)


def test_module_does_not_import_torch():
    code = "import sys, torch_npu_testing.suite.grad_modes; print('torch' in sys.modules)"
    completed = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, stdout=subprocess.PIPE, text=True,
                               check=True)
    assert completed.stdout.strip() == "False"
