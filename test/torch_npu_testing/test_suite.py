# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Unit tests of torch_npu_testing.suite: one process runs the API files and writes the results.

Contract: every test's outcome is recorded (pass, fail, skip with its reason, error, import error,
failing subTest, leaked state, expected failure, unexpected success, a failing setUpClass); counts and
the closing line "N passed, N failed, N skipped" add up; the exit status is 1 when anything failed;
each file's sha256 is its content's; the grad-mode files (GRAD_MODE_FILES, by relative path) run again
with grad mode disabled at start; IN_CI=1 writes JUnit XML; a missing file or no files at all is a
one-line error with exit status 2. The suite runs for real in subprocesses on synthetic files.
"""
import hashlib
import json
import os
import sys
import xml.etree.ElementTree as ET

import pytest

from torch_npu_testing import suite
from torch_npu_testing.errors import UsageError

GRAD_FILE = "test/npu/test_locally_disabling_gradient_omputation.py"

MIXED_FILE = '''
import unittest
from torch_npu_testing import TestCase
import torch


class Mix(TestCase):
    def test_pass(self):
        self.assertTrue(torch.equal(torch.ones(2) + 1, torch.full((2,), 2.0)))

    def test_fail(self):
        self.assertEqual(1, 2)

    def test_skip(self):
        self.skipTest("no widget here")

    def test_error(self):
        raise RuntimeError("boom")

    def test_sub(self):
        for x in (0.5, 1.5, 2.5):
            with self.subTest(x=x):
                self.assertNotEqual(x, 1.5)

    def test_leak(self):
        torch.set_default_dtype(torch.float64)

    @unittest.expectedFailure
    def test_xfail(self):
        self.assertEqual(1, 2)

    @unittest.expectedFailure
    def test_xpass(self):
        pass


class BrokenSetup(TestCase):
    @classmethod
    def setUpClass(cls):
        raise RuntimeError("needs an NPU")

    def test_never_runs(self):
        pass
'''

GRAD_MODE_FILE = '''
from torch_npu_testing import TestCase
import torch


class Grad(TestCase):
    def test_reports_initial_mode(self):
        print("GRAD_AT_START", torch.is_grad_enabled())

    def test_enable_grad_inside(self):
        with torch.enable_grad():
            x = torch.ones(2, requires_grad=True)
            (x * 2).sum().backward()
        self.assertTrue(torch.equal(x.grad, torch.full((2,), 2.0)))
'''

PASSING_API_FILE = '''
from torch_npu_testing import TestCase
import torch


class Ok(TestCase):
    def test_add(self):
        self.assertTrue(torch.equal(torch.arange(3) + 1, torch.tensor([1, 2, 3])))
'''


def write(root, relative, text):
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def sha256(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def run_suite_cli(run_python, cwd, *args, **env):
    return run_python(["-m", "torch_npu_testing", "suite", *args], cwd=cwd, **env)


def test_grad_mode_files_name_the_upstream_file():
    """The grad-mode isolation re-run applies to the upstream-named file (typo kept), by relative path."""
    assert suite.GRAD_MODE_FILES == (GRAD_FILE,)


# --------------------------------------------------------------------------- real runs
def test_passing_run_discovers_files_and_reruns_grad_mode_file(tmp_path, run_python):
    """No file arguments: the default globs are discovered under cwd; everything passes -> exit 0; the
    grad-mode file (same relative path as in the repo) runs again with grad mode disabled at start."""
    write(tmp_path, GRAD_FILE, GRAD_MODE_FILE)
    api = write(tmp_path, "test/functorch/test_ok_api.py", PASSING_API_FILE)
    write(tmp_path, "test/functorch/helper.py", "raise SystemExit('not a test file')\n")
    write(tmp_path, "test/npu/not_a_test.py", "raise SystemExit('not a test file')\n")
    result = run_suite_cli(run_python, tmp_path, "--results", "out/r.json", "--env", "unit-a",
                           TORCH_NPU_TESTING_DEVICE="cpu")
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines()[0].startswith("python     ")  # the probe comes first
    assert result.stderr.rstrip().splitlines()[-1] == "5 passed, 0 failed, 0 skipped"
    assert [line for line in result.stdout.splitlines() if line.startswith("GRAD_AT_START")] == [
        "GRAD_AT_START True", "GRAD_AT_START False"]
    results = json.loads((tmp_path / "out" / "r.json").read_text())
    assert not (tmp_path / "out" / "r.json.tmp").exists()
    assert results["format"] == suite.RESULTS_FORMAT and results["env"] == "unit-a"
    assert results["command"] == [os.path.basename(sys.executable), "-m", "torch_npu_testing", "suite",
                                  "--results", "out/r.json", "--env", "unit-a"]
    assert os.path.samefile(results["cwd"], tmp_path)
    assert [(r["path"], r["initial_grad_mode"]) for r in results["runs"]] == [
        ("test/functorch/test_ok_api.py", True), (GRAD_FILE, True), (GRAD_FILE, False)]
    assert results["runs"][0]["sha256"] == sha256(api)
    assert results["runs"][1]["sha256"] == results["runs"][2]["sha256"] == sha256(tmp_path / GRAD_FILE)
    two_passed = dict.fromkeys(suite.OUTCOMES, 0) | {"passed": 2, "run": 2}
    assert results["grad_mode_isolation"] == [{"path": GRAD_FILE, "enabled": two_passed, "disabled": two_passed}]
    assert results["totals"] == dict.fromkeys(suite.OUTCOMES, 0) | {"passed": 5, "run": 5}
    assert results["probe"]["torch"]["version"] and results["probe"]["device"]["type"] == "cpu"
    assert not (tmp_path / "test-reports").exists()  # no JUnit XML without IN_CI=1


def test_failing_run_records_every_outcome_and_writes_junit(tmp_path, run_python):
    """Pass, fail, skip (reason kept), error, failing subTest, leaked state, expected failure, unexpected
    success, failing setUpClass and an import error are recorded; exit 1; IN_CI=1 writes JUnit XML."""
    mixed = write(tmp_path, "test_mix.py", MIXED_FILE)
    write(tmp_path, "test_importerr.py", "import nonexistent_module_xyz\n")
    write(tmp_path, GRAD_FILE, GRAD_MODE_FILE)
    result = run_suite_cli(run_python, tmp_path, "test_mix.py", "test_importerr.py", GRAD_FILE,
                           "--results", "r.json", "--no-grad-mode-probe",
                           IN_CI="1", TORCH_NPU_TESTING_XML_DIR=tmp_path / "xml", TORCH_NPU_TESTING_DEVICE="cpu")
    assert result.returncode == 1, result.stderr
    assert result.stderr.rstrip().splitlines()[-1] == "3 passed, 7 failed, 1 skipped"
    assert "skipped 'no widget here'" in result.stderr
    assert "ERROR: cannot import test_importerr.py" in result.stderr
    results = json.loads((tmp_path / "r.json").read_text())
    mix, importerr, grad = results["runs"]
    assert results["grad_mode_isolation"] == [] and len(results["runs"]) == 3  # --no-grad-mode-probe
    assert mix["sha256"] == sha256(mixed)
    outcomes = {test["id"]: test["outcome"] for test in mix["tests"]}
    assert outcomes == {
        "setUpClass (tnt_suite_test_mix.BrokenSetup)": "error",
        "Mix.test_error": "error", "Mix.test_fail": "failed", "Mix.test_leak": "failed",
        "Mix.test_pass": "passed", "Mix.test_skip": "skipped", "Mix.test_sub (x=1.5)": "failed",
        "Mix.test_xfail": "expected_failure", "Mix.test_xpass": "unexpected_success"}
    by_id = {test["id"]: test for test in mix["tests"]}
    assert by_id["Mix.test_skip"]["reason"] == "no widget here"
    assert "leaked global state: default dtype: was torch.float32, left torch.float64" in by_id["Mix.test_leak"][
        "details"]
    assert "RuntimeError: boom" in by_id["Mix.test_error"]["details"]
    assert "RuntimeError: needs an NPU" in by_id["setUpClass (tnt_suite_test_mix.BrokenSetup)"]["details"]
    assert mix["counts"] == {"passed": 1, "failed": 3, "errors": 2, "skipped": 1, "expected_failures": 1,
                             "unexpected_successes": 1, "run": 9}
    assert importerr["tests"][0]["id"] == "<import>" and importerr["counts"]["errors"] == 1
    assert "ModuleNotFoundError: No module named 'nonexistent_module_xyz'" in importerr["import_error"]
    assert grad["counts"]["passed"] == 2
    assert results["totals"] == {"passed": 3, "failed": 3, "errors": 3, "skipped": 1, "expected_failures": 1,
                                 "unexpected_successes": 1, "run": 12}

    xml_dir = tmp_path / "xml"
    assert sorted(os.listdir(xml_dir)) == [
        "test_importerr-grad-enabled.xml", "test_mix-grad-enabled.xml",
        "test_npu_test_locally_disabling_gradient_omputation-grad-enabled.xml"]
    root = ET.parse(xml_dir / "test_mix-grad-enabled.xml").getroot()
    assert {key: root.get(key) for key in ("name", "tests", "failures", "errors", "skipped")} == {
        "name": "test_mix.py", "tests": "9", "failures": "4", "errors": "2", "skipped": "1"}
    cases = {(case.get("classname"), case.get("name")): case for case in root.iter("testcase")}
    assert cases[("Mix", "test_sub (x=1.5)")].find("failure") is not None
    assert cases[("Mix", "test_skip")].find("skipped").get("message") == "no widget here"
    assert cases[("Mix", "test_xpass")].find("failure").get("message") == "unexpected success"
    assert cases[("Mix", "test_pass")].find("*") is None
    import_root = ET.parse(xml_dir / "test_importerr-grad-enabled.xml").getroot()
    assert import_root.get("errors") == "1" and import_root.find("testcase/error") is not None


def test_missing_file_is_a_one_line_error(tmp_path, run_python):
    """A file argument that does not exist: exit 2, one line naming it, nothing run."""
    write(tmp_path, "test_real.py", PASSING_API_FILE)
    result = run_suite_cli(run_python, tmp_path, "test_real.py", "test_missing.py", "--results", "r.json")
    assert result.returncode == 2
    assert result.stderr == "torch_npu_testing: error: no such test file: test_missing.py\n"
    assert result.stdout == "" and not (tmp_path / "r.json").exists()


def test_interpreter_without_torch_is_a_one_line_error(tmp_path, run_python):
    """`tox -e installed` on an interpreter with no torch: exit 2 and one line saying so, not a traceback."""
    import subprocess
    import venv

    from conftest import REPO_ROOT
    bare = tmp_path / "bare"
    venv.EnvBuilder(with_pip=False).create(bare)
    check = subprocess.run([str(bare / "bin" / "python"), "-c", "import torch"], capture_output=True, check=False)
    if check.returncode == 0:  # pragma: no cover - a base interpreter with a global torch
        pytest.skip("the base interpreter exposes a torch even in a bare venv")
    write(tmp_path, "test_real.py", PASSING_API_FILE)
    result = run_python(["-m", "torch_npu_testing", "suite", "test_real.py"], python=bare / "bin" / "python",
                        cwd=tmp_path, PYTHONPATH=str(REPO_ROOT))
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1 and "torch is not installed in" in result.stderr


def test_no_files_is_a_one_line_error(tmp_path, run_python):
    """No file arguments and nothing matching the default globs: exit 2, one line saying where it looked."""
    result = run_suite_cli(run_python, tmp_path)
    assert result.returncode == 2
    assert result.stderr == (f"torch_npu_testing: error: no test files found (looked for "
                             f"{', '.join(suite.DEFAULT_TEST_GLOBS)} under {tmp_path})\n")


# --------------------------------------------------------------------------- helpers, in process
def test_discover_matches_only_the_default_globs(tmp_path):
    """discover() returns sorted relative paths of test/functorch/*_api.py and test/npu/test_*.py."""
    for relative in ["test/npu/test_b.py", "test/functorch/test_z_api.py", "test/functorch/test_a_api.py",
                     "test/functorch/test_helper.py", "test/npu/helper.py", "test/other/test_c_api.py"]:
        write(tmp_path, relative, "")
    assert suite.discover(str(tmp_path)) == [
        "test/functorch/test_a_api.py", "test/functorch/test_z_api.py", "test/npu/test_b.py"]
    assert suite.discover(str(tmp_path / "nowhere")) == []


def test_sha256_of_reads_the_whole_file(tmp_path):
    """The digest covers files larger than one read block."""
    path = tmp_path / "big.py"
    path.write_bytes(os.urandom(200_000))
    assert suite.sha256_of(str(path)) == sha256(path)


def test_load_module_gives_same_named_files_distinct_modules(tmp_path):
    """Two files with the same basename in different folders do not replace each other."""
    first = write(tmp_path, "a/test_same.py", "VALUE = 'a'\n")
    second = write(tmp_path, "b/test_same.py", "VALUE = 'b'\n")
    modules = [suite.load_module(str(first)), suite.load_module(str(second))]
    try:
        assert [m.VALUE for m in modules] == ["a", "b"]
        assert modules[0].__name__ != modules[1].__name__
    finally:
        for module in modules:
            sys.modules.pop(module.__name__, None)


def test_count_totals_and_closing_line():
    """Outcome records add up per file and over files; errors and unexpected successes count as failed."""
    records = [{"outcome": outcome} for outcome in
               ["passed", "passed", "failed", "error", "skipped", "expected_failure", "unexpected_success"]]
    counts = suite.count(records)
    assert counts == {"passed": 2, "failed": 1, "errors": 1, "skipped": 1, "expected_failures": 1,
                      "unexpected_successes": 1, "run": 7}
    total = suite.totals([{"counts": counts}, {"counts": suite.count([{"outcome": "skipped"}])}])
    assert total["skipped"] == 2 and total["run"] == 8
    assert suite.closing_line(total) == "2 passed, 3 failed, 2 skipped"


def test_main_usage_errors_in_process(tmp_path, monkeypatch):
    """main() raises UsageError (nothing run) for a missing file and for an empty discovery."""
    import argparse
    parser = argparse.ArgumentParser()
    suite.add_arguments(parser)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UsageError, match="^no test files found"):
        suite.main(parser.parse_args([]))
    with pytest.raises(UsageError, match="^no such test file: gone.py$"):
        suite.main(parser.parse_args(["gone.py"]))
