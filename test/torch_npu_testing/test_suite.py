# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Unit tests of torch_npu_testing.suite: one process runs the API files and writes the results.

Contract: every test case's outcome is recorded (pass, fail, skip with its reason, error, import error,
every subtest case passing or failing, leaked state, expected failure, unexpected success, a failing
setUpClass); counts and the closing line "N passed, N failed, N skipped (T tests, C cases)" add up
cases; the exit status is 1 when anything failed; each file's sha256 is its content's; the grad-mode
files (GRAD_MODE_FILES, by relative path) run again with grad mode disabled at start; IN_CI=1 writes
JUnit XML with one testcase per case; a missing file or no files at all is a one-line error with exit
status 2. Without file arguments the files are the table's (each API's ``test_file`` in the checkout's
``torch_npu_testing/common/table.json``): a file in a new folder runs with no code edit, a table file missing
on disk is a one-line error, a test file on disk that no API names is not run and said so once. Runs are in
process (torch is imported once by this test process); one real subprocess checks the command line itself.
"""
import hashlib
import io
import json
import os
import sys
import xml.etree.ElementTree as ET

import pytest

from torch_npu_testing.common import results as results_model
from torch_npu_testing.common.layout import TABLE_REL
from torch_npu_testing.common.table import TABLE_FORMAT
from torch_npu_testing.suite import run as suite
from torch_npu_testing.common.errors import UsageError

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
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

    def test_table(self):
        for n in range(4):
            with self.subTest(n=n):
                self.assertEqual(int(torch.ones(n).sum()), n)
'''

GRAD_DEPENDENT_FILE = '''
import unittest

import torch


class Dependent(unittest.TestCase):
    def test_needs_grad_enabled(self):
        self.assertTrue(torch.is_grad_enabled())

    def test_table(self):
        for n in range(2):
            with self.subTest(n=n):
                pass
'''

ZERO = dict.fromkeys(["passed", "failed", "error", "skipped", "expected_failure", "unexpected_success",
                      "tests", "cases"], 0)


def write(root, relative, text):
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def write_table(root, *files):
    """A checkout's own table naming ``files`` as the test files of made-up APIs."""
    apis = [{"name": f"torch.made_up_{index}", "test_file": rel} for index, rel in enumerate(files)]
    return write(root, TABLE_REL, json.dumps({"format": TABLE_FORMAT, "apis": apis}))


def sha256(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def run_suite_cli(run_python, cwd, *args, **env):
    return run_python(["-m", "torch_npu_testing", "suite", *args], cwd=cwd, **env)


def suite_in_process(monkeypatch, capsys, cwd, *args, **env):
    """``python -m torch_npu_testing suite ARGS`` in this process: ``(exit status, stdout, stderr)``."""
    from torch_npu_testing.__main__ import main as cli_main
    monkeypatch.chdir(cwd)
    monkeypatch.setenv("TORCH_NPU_TESTING_DEVICE", "cpu")
    monkeypatch.delenv("IN_CI", raising=False)
    monkeypatch.delenv("TOX_ENV_NAME", raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, str(value))
    monkeypatch.setattr(sys, "argv", ["torch_npu_testing", "suite", *args])
    code = cli_main(["suite", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_grad_mode_files_name_the_upstream_file():
    """The grad-mode isolation re-run applies to the upstream-named file (typo kept), by relative path."""
    assert suite.GRAD_MODE_FILES == (GRAD_FILE,)


# --------------------------------------------------------------------------- the command line, for real
def test_passing_run_discovers_files_and_reruns_grad_mode_file(tmp_path, run_python):
    """No file arguments: the table's files are run from cwd, a file in a folder no code names included; a
    test file on disk that no API names is not run, said once; everything passes -> exit 0; the grad-mode file
    (same relative path as in the repo) runs again with grad mode disabled at start; the closing line counts
    cases (the subtests of test_table) and says how many tests and cases."""
    write(tmp_path, GRAD_FILE, GRAD_MODE_FILE)
    api = write(tmp_path, "test/linalg/test_ok_api.py", PASSING_API_FILE)
    write_table(tmp_path, "test/linalg/test_ok_api.py", GRAD_FILE)
    write(tmp_path, "test/functorch/helper.py", "raise SystemExit('not a test file')\n")
    write(tmp_path, "test/nn/test_stray_api.py", "raise SystemExit('not in the table')\n")
    write(tmp_path, "test/torch_npu_testing/test_unit.py", "raise SystemExit('a unit test of the kit')\n")
    result = run_suite_cli(run_python, tmp_path, "--results", "out/r.json", "--env", "unit-a",
                           TORCH_NPU_TESTING_DEVICE="cpu", PYTHONPATH=REPO_ROOT)  # the table's folder is no package
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines()[0] == (f"not run (no API of {tmp_path / TABLE_REL} names them as its "
                                             "test_file): "
                                             "test/nn/test_stray_api.py")
    assert result.stderr.count("not run (") == 1
    assert result.stderr.splitlines()[1].startswith("python     ")  # then the probe
    assert result.stderr.rstrip().splitlines()[-1] == "9 passed, 0 failed, 0 skipped (6 tests, 9 cases)"
    assert [line for line in result.stdout.splitlines() if line.startswith("GRAD_AT_START")] == [
        "GRAD_AT_START True", "GRAD_AT_START False"]
    results = json.loads((tmp_path / "out" / "r.json").read_text())
    assert not (tmp_path / "out" / "r.json.tmp").exists()
    assert results["format"] == "torch_npu_testing.results/2" and results["env"] == "unit-a"
    assert results["command"] == [os.path.basename(sys.executable), "-m", "torch_npu_testing", "suite",
                                  "--results", "out/r.json", "--env", "unit-a"]
    assert os.path.samefile(results["cwd"], tmp_path)
    assert [(r["path"], r["initial_grad_mode"]) for r in results["runs"]] == [
        ("test/linalg/test_ok_api.py", True), (GRAD_FILE, True), (GRAD_FILE, False)]
    assert results["runs"][0]["sha256"] == sha256(api)
    assert results["runs"][1]["sha256"] == results["runs"][2]["sha256"] == sha256(tmp_path / GRAD_FILE)
    assert [case["subtest"] for case in results["runs"][0]["cases"] if "subtest" in case] == [
        "(n=0)", "(n=1)", "(n=2)", "(n=3)"]
    two_passed = dict(ZERO, passed=2, tests=2, cases=2)
    assert results["grad_mode_isolation"] == [{"path": GRAD_FILE, "enabled": two_passed, "disabled": two_passed,
                                               "same": True}]
    assert results["totals"] == dict(ZERO, passed=9, tests=6, cases=9)
    assert results["probe"]["torch"]["version"] and results["probe"]["device"]["type"] == "cpu"
    assert not (tmp_path / "test-reports").exists()  # no JUnit XML without IN_CI=1


# --------------------------------------------------------------------------- in process
def test_failing_run_records_every_outcome_and_writes_junit(tmp_path, monkeypatch, capsys):
    """Pass, fail, skip (reason kept), error, every subTest case, leaked state, expected failure, unexpected
    success, failing setUpClass and an import error are recorded; exit 1; IN_CI=1 writes JUnit XML."""
    mixed = write(tmp_path, "test_mix.py", MIXED_FILE)
    write(tmp_path, "test_importerr.py", "import nonexistent_module_xyz\n")
    write(tmp_path, GRAD_FILE, GRAD_MODE_FILE)
    code, _, err = suite_in_process(monkeypatch, capsys, tmp_path, "test_mix.py", "test_importerr.py", GRAD_FILE,
                                    "--results", "r.json", "--no-grad-mode-probe",
                                    IN_CI="1", TORCH_NPU_TESTING_XML_DIR=tmp_path / "xml")
    assert code == 1, err
    assert err.rstrip().splitlines()[-1] == "5 passed, 7 failed, 1 skipped (12 tests, 14 cases)"
    assert "skipped 'no widget here'" in err
    assert "ERROR: cannot import test_importerr.py" in err
    results = json.loads((tmp_path / "r.json").read_text())
    mix, importerr, grad = results["runs"]
    assert results["grad_mode_isolation"] == [] and len(results["runs"]) == 3  # --no-grad-mode-probe
    assert mix["sha256"] == sha256(mixed)
    outcomes = {(case["id"], case.get("subtest")): case["outcome"] for case in mix["cases"]}
    assert outcomes == {
        ("setUpClass (tnt_suite_test_mix.BrokenSetup)", None): "error",
        ("Mix.test_error", None): "error", ("Mix.test_fail", None): "failed", ("Mix.test_leak", None): "failed",
        ("Mix.test_pass", None): "passed", ("Mix.test_skip", None): "skipped",
        ("Mix.test_sub", "(x=0.5)"): "passed", ("Mix.test_sub", "(x=1.5)"): "failed",
        ("Mix.test_sub", "(x=2.5)"): "passed",
        ("Mix.test_xfail", None): "expected_failure", ("Mix.test_xpass", None): "unexpected_success"}
    assert {case["file"] for case in mix["cases"]} == {"test_mix.py"}
    by_id = {case["id"]: case for case in mix["cases"]}
    assert by_id["Mix.test_skip"]["reason"] == "no widget here"
    assert "leaked global state: default dtype: was torch.float32, left torch.float64" in by_id["Mix.test_leak"][
        "details"]
    assert by_id["Mix.test_error"]["reason"] == "RuntimeError: boom"
    assert "RuntimeError: needs an NPU" in by_id["setUpClass (tnt_suite_test_mix.BrokenSetup)"]["details"]
    assert mix["counts"] == {"passed": 3, "failed": 3, "error": 2, "skipped": 1, "expected_failure": 1,
                             "unexpected_success": 1, "tests": 9, "cases": 11}
    assert importerr["cases"][0]["id"] == "<import>" and importerr["counts"]["error"] == 1
    assert "ModuleNotFoundError: No module named 'nonexistent_module_xyz'" in importerr["import_error"]
    assert grad["counts"]["passed"] == 2
    assert results["totals"] == {"passed": 5, "failed": 3, "error": 3, "skipped": 1, "expected_failure": 1,
                                 "unexpected_success": 1, "tests": 12, "cases": 14}

    xml_dir = tmp_path / "xml"
    assert sorted(os.listdir(xml_dir)) == [
        "test_importerr-grad-enabled.xml", "test_mix-grad-enabled.xml",
        "test_npu_test_locally_disabling_gradient_omputation-grad-enabled.xml"]
    root = ET.parse(xml_dir / "test_mix-grad-enabled.xml").getroot()
    assert {key: root.get(key) for key in ("name", "tests", "failures", "errors", "skipped")} == {
        "name": "test_mix.py", "tests": "11", "failures": "4", "errors": "2", "skipped": "1"}
    cases = {(case.get("classname"), case.get("name")): case for case in root.iter("testcase")}
    assert cases[("Mix", "test_sub (x=1.5)")].find("failure") is not None
    assert cases[("Mix", "test_sub (x=0.5)")].find("*") is None
    assert cases[("Mix", "test_skip")].find("skipped").get("message") == "no widget here"
    assert cases[("Mix", "test_xpass")].find("failure").get("message") == "unexpected success"
    assert cases[("Mix", "test_pass")].find("*") is None
    import_root = ET.parse(xml_dir / "test_importerr-grad-enabled.xml").getroot()
    assert import_root.get("errors") == "1" and import_root.find("testcase/error") is not None


def test_rerun_other_grad_mode_compares_every_case(tmp_path):
    """The isolation rerun: counts per initial mode and ``same`` over every case's outcome."""
    path = write(tmp_path, "test_grad_dependent.py", GRAD_DEPENDENT_FILE)
    stream = io.StringIO()
    first = suite.run_file(str(path), True, stream)
    rerun, probe = suite.rerun_other_grad_mode(first, stream)
    assert rerun["initial_grad_mode"] is False and rerun["path"] == str(path)
    assert probe["enabled"] == first["counts"] and probe["disabled"] == rerun["counts"]
    assert probe["same"] is False
    assert probe["enabled"]["passed"] == 3 and probe["disabled"]["failed"] == 1


THREADS_FILE = '''
from torch_npu_testing import TestCase
import torch


class Threads(TestCase):
    def test_threads(self):
        print("THREADS", torch.get_num_threads(), flush=True)
        self.assertGreaterEqual(torch.get_num_threads(), 1)
'''


@pytest.mark.parametrize("args, env, wanted", [((), {}, 1), (("--threads", "2"), {}, 2),
                                               (("--threads", "1"), {"OMP_NUM_THREADS": "2"}, 1)])
def test_the_files_run_with_the_suites_thread_count(tmp_path, run_python, args, env, wanted):
    """Tiny tensors: one intra-op thread unless ``--threads`` says otherwise; the test sees it and the results
    record it."""
    write(tmp_path, "test_threads_api.py", THREADS_FILE)
    result = run_suite_cli(run_python, tmp_path, "test_threads_api.py", *args, "--no-grad-mode-probe", "--no-coverage",
                           "--results", "r.json", TORCH_NPU_TESTING_DEVICE="cpu", PYTHONPATH=REPO_ROOT, **env)
    assert result.returncode == 0, result.stderr
    assert f"THREADS {wanted}" in result.stdout.splitlines()
    assert json.loads((tmp_path / "r.json").read_text())["threads"] == wanted


def test_suite_threads_leaves_an_omp_choice_to_torch():
    """$OMP_NUM_THREADS set and no --threads: torch's own count (None); unset: 1; --threads wins over both."""
    assert suite.suite_threads(None, {"OMP_NUM_THREADS": "4"}) is None
    assert suite.suite_threads(None, {}) == 1 and suite.suite_threads(3, {"OMP_NUM_THREADS": "4"}) == 3


@pytest.mark.parametrize("value", ["0", "-2"])
def test_threads_under_one_is_a_one_line_error(tmp_path, monkeypatch, capsys, value):
    """--threads 0 or negative: exit 2, one line, nothing run or written."""
    write(tmp_path, "test_real.py", PASSING_API_FILE)
    code, out, err = suite_in_process(monkeypatch, capsys, tmp_path, "test_real.py", "--threads", value,
                                      "--results", "r.json")
    assert code == 2
    assert err == f"torch_npu_testing: error: --threads must be at least 1, not {value}\n"
    assert out == "" and not (tmp_path / "r.json").exists()


def test_missing_file_is_a_one_line_error(tmp_path, monkeypatch, capsys):
    """A file argument that does not exist: exit 2, one line naming it, nothing run."""
    write(tmp_path, "test_real.py", PASSING_API_FILE)
    code, out, err = suite_in_process(monkeypatch, capsys, tmp_path, "test_real.py", "test_missing.py",
                                      "--results", "r.json")
    assert code == 2
    assert err == "torch_npu_testing: error: no such test file: test_missing.py\n"
    assert out == "" and not (tmp_path / "r.json").exists()


def test_interpreter_without_torch_is_a_one_line_error(tmp_path, run_python):
    """`tox -e installed` on an interpreter with no torch: exit 2 and one line saying so, not a traceback."""
    import subprocess
    import venv

    bare = tmp_path / "bare"
    venv.EnvBuilder(with_pip=False).create(bare)
    check = subprocess.run([str(bare / "bin" / "python"), "-c", "import torch"], capture_output=True, check=False)
    if check.returncode == 0:  # pragma: no cover - a base interpreter with a global torch
        pytest.skip("the base interpreter exposes a torch even in a bare venv")
    write(tmp_path, "test_real.py", PASSING_API_FILE)
    result = run_python(["-m", "torch_npu_testing", "suite", "test_real.py"], python=bare / "bin" / "python",
                        cwd=tmp_path, PYTHONPATH=REPO_ROOT)
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1 and "torch is not installed in" in result.stderr


def test_no_files_is_a_one_line_error(tmp_path, monkeypatch, capsys):
    """No file arguments and a table that names no test file: exit 2, one line naming the table."""
    write_table(tmp_path)
    code, _, err = suite_in_process(monkeypatch, capsys, tmp_path)
    assert code == 2
    assert err == f"torch_npu_testing: error: no test files found: the table {tmp_path / TABLE_REL} names none\n"


def test_a_table_file_missing_on_disk_is_a_one_line_error(tmp_path, monkeypatch, capsys):
    """The table names a file that is not there: exit 2, one line naming the file, its API and the table;
    nothing run, no results written."""
    write(tmp_path, "test/npu/test_here.py", PASSING_API_FILE)
    write_table(tmp_path, "test/npu/test_here.py", "test/nn/test_gone_api.py")
    code, out, err = suite_in_process(monkeypatch, capsys, tmp_path, "--results", "r.json")
    assert code == 2 and out == "" and not (tmp_path / "r.json").exists()
    assert err == (f"torch_npu_testing: error: test/nn/test_gone_api.py, the test_file of torch.made_up_1 in "
                   f"{tmp_path / TABLE_REL}, does not exist under {tmp_path}\n")


def test_a_table_that_is_not_one_is_a_one_line_error(tmp_path, monkeypatch, capsys):
    write(tmp_path, TABLE_REL, "{not json")
    code, _, err = suite_in_process(monkeypatch, capsys, tmp_path)
    assert code == 2 and err.count("\n") == 1 and "not valid JSON" in err


# --------------------------------------------------------------------------- helpers, in process
def test_discover_takes_the_tables_files_in_table_order(tmp_path):
    """discover() returns each API's test_file once, in table order, in any folder; a checkout without a
    table of its own reads the installed kit's; not_in_table() lists test files on disk no API names,
    leaving out the kit's own tests and files not named test_*.py."""
    for relative in ["test/npu/test_b.py", "test/functorch/test_z_api.py", "test/linalg/test_det_api.py",
                     "test/functorch/test_helper.py", "test/npu/helper.py", "test/in_env/test_this_env.py"]:
        write(tmp_path, relative, "")
    write_table(tmp_path, "test/npu/test_b.py", "test/linalg/test_det_api.py", "test/npu/test_b.py")
    files = suite.discover(str(tmp_path))
    assert files == ["test/npu/test_b.py", "test/linalg/test_det_api.py"]
    assert suite.not_in_table(str(tmp_path), files) == ["test/functorch/test_helper.py",
                                                        "test/functorch/test_z_api.py"]
    from torch_npu_testing.common import table
    assert suite.table_of(str(tmp_path / "nowhere")) == table.TABLE_PATH
    assert suite.discover(REPO_ROOT) == table.test_files()


def test_sha256_of_reads_the_whole_file(tmp_path):
    """The digest covers files larger than one read block."""
    path = tmp_path / "big.py"
    path.write_bytes(os.urandom(200_000))
    assert results_model.sha256_of(str(path)) == sha256(path)


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


def test_totals_add_up_runs():
    """Counts add up over files, tests and cases included; the closing line counts cases."""
    one = {"counts": results_model.tally([results_model.Case("a.py", "C.t", results_model.Outcome.SKIPPED)])}
    two = {"counts": results_model.tally([
        results_model.Case("b.py", "C.t", results_model.Outcome.PASSED, "(x=1)"),
        results_model.Case("b.py", "C.t", results_model.Outcome.ERROR, "(x=2)")])}
    total = suite.totals([one, two])
    assert (total["skipped"], total["passed"], total["error"], total["tests"], total["cases"]) == (1, 1, 1, 2, 3)
    assert results_model.closing_line(total) == "1 passed, 1 failed, 1 skipped (2 tests, 3 cases)"


def test_main_usage_errors_in_process(tmp_path, monkeypatch):
    """main() raises UsageError (nothing run) for a missing file and for an empty discovery."""
    import argparse
    parser = argparse.ArgumentParser()
    suite.add_arguments(parser)
    monkeypatch.chdir(tmp_path)
    write_table(tmp_path)
    with pytest.raises(UsageError, match="^no test files found"):
        suite.main(parser.parse_args([]))
    with pytest.raises(UsageError, match="^no such test file: gone.py$"):
        suite.main(parser.parse_args(["gone.py"]))
