# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""``mutate``'s bad input: one line on stderr, exit 2, nothing written; an absent API is exit 0; the three
reasons for fresh processes. Run in-process (``__main__.main``), on copies of fixtures/mutate."""
import shutil
import textwrap
from pathlib import Path

import pytest

from torch_npu_testing.__main__ import main

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "mutate"


@pytest.fixture
def folder(tmp_path, monkeypatch):
    shutil.copytree(FIXTURES, tmp_path, dirs_exist_ok=True)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _error(capsys, argv):
    status = main(["mutate"] + argv + ["--json", "out.json", "--internal-package", "fakeapi"])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(err) == 1, err
    assert not Path("out.json").exists()
    return err[0]


def test_an_unknown_api_name(folder, capsys):
    line = _error(capsys, ["test_weak_api.py", "--api", "fakeapi.nope"])
    assert line == "torch_npu_testing: error: unknown API 'fakeapi.nope': fakeapi has no attribute 'nope'"


def test_an_api_that_is_no_function(folder, capsys):
    line = _error(capsys, ["test_weak_api.py", "--api", "fakeapi.settings"])
    assert "fakeapi.settings is a Registry: mutate replaces functions, C builtins and methods" in line


def test_a_missing_file_a_non_python_file_and_a_file_outside_the_table(folder, capsys):
    line = _error(capsys, ["nope.py", "--api", "fakeapi.scale"])
    assert line == "torch_npu_testing: error: no such test file: nope.py"
    Path("notes.txt").write_text("no tests here\n")
    assert "notes.txt is not a Python test file" in _error(capsys, ["notes.txt", "--api", "fakeapi.scale"])
    assert "test_weak_api.py is not a test file of the table; name its APIs with --api" in _error(
        capsys, ["test_weak_api.py"])


def test_a_file_without_tests(folder, capsys):
    Path("test_empty_api.py").write_text(
        "import os, sys\nsys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))\nimport fakeapi\n")
    line = _error(capsys, ["test_empty_api.py", "--api", "fakeapi.scale"])
    assert line == "torch_npu_testing: error: test_empty_api.py has no tests"


def test_a_file_that_cannot_be_imported(folder, capsys):
    Path("test_broken_api.py").write_text("raise RuntimeError('broken at import')\n")
    line = _error(capsys, ["test_broken_api.py", "--api", "fakeapi.scale"])
    assert line == "torch_npu_testing: error: cannot import test_broken_api.py: RuntimeError: broken at import"


def test_a_failing_baseline_names_its_failing_tests(folder, capsys):
    Path("test_failing_api.py").write_text(textwrap.dedent("""\
        import os, sys, unittest
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import torch
        import fakeapi

        class TestFails(unittest.TestCase):
            def test_a_wrong_expectation(self):
                self.assertEqual(fakeapi.scale(torch.ones(1), 2).tolist(), [3.0])
        """))
    line = _error(capsys, ["test_failing_api.py", "--api", "fakeapi.scale"])
    assert line.startswith("torch_npu_testing: error: the baseline fails (no mutant applied): 1 of 1 tests fail: "
                           "TestFails.test_a_wrong_expectation (AssertionError: Lists differ")
    assert line.endswith("; write them so they pass (--passing-only needs at least one passing test)")


def test_an_api_this_torch_lacks_is_absent_exit_0(folder, capsys, monkeypatch):
    from torch_npu_testing.mutate import cli
    entries = cli.table.apis() + [{"name": "fakeapi.gone", "test_file": "test_weak_api.py"}]
    monkeypatch.setattr(cli.table, "apis", lambda: entries)
    assert main(["mutate", "test_weak_api.py", "--internal-package", "fakeapi"]) == 0
    out = capsys.readouterr().out
    assert out.strip() == "strength fakeapi.gone: absent in this torch (fakeapi has no attribute 'gone')"


def test_fresh_processes_when_the_device_is_not_cpu_or_the_file_starts_threads(folder):
    from torch_npu_testing.mutate import child, runner
    Path("test_threads_api.py").write_text(textwrap.dedent("""\
        import threading, unittest
        STOP = threading.Event()
        threading.Thread(target=STOP.wait, daemon=True).start()

        class TestNothing(unittest.TestCase):
            def test_nothing(self):
                STOP.set()
        """))
    prepared = child.prepare("test_threads_api.py", [])
    assert runner.fresh_reasons(prepared, "npu") == [
        "the device is npu (an accelerator runtime must not be forked)",
        "test_threads_api.py starts 1 thread(s) at import"]
    prepared.module.STOP.set()


def test_fresh_processes_when_the_baseline_fails_only_in_a_fork(folder):
    from torch_npu_testing.mutate import child, runner, session
    Path("test_pid_api.py").write_text(textwrap.dedent("""\
        import os, sys, unittest
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import torch
        import fakeapi
        IMPORTED_BY = os.getpid()

        class TestSameProcess(unittest.TestCase):
            def test_runs_where_it_was_imported(self):
                self.assertEqual(os.getpid(), IMPORTED_BY)
                fakeapi.scale(torch.ones(1), 1)
        """))
    prepared = child.prepare("test_pid_api.py", ["fakeapi.scale"], ["fakeapi"])
    prepared.mutants = prepared.mutants[:2]  # two are enough to see them run forked, then again fresh
    done, restarts = [], []
    fresh, reasons, baseline = session.run_session(prepared, "cpu", 2, lambda baseline: 30, done.append,
                                                   lambda: restarts.append(len(done)))
    assert fresh and runner.passed(baseline) and baseline["tallies"]["fakeapi.scale"]["calls"] == 1
    assert len(restarts) == 1 and len(done) == restarts[0] + len(prepared.mutants)
    assert all(report.get("first_failure") is None or report["tallies"]["fakeapi.scale"]["changed"]
               for report in done[restarts[0]:])
    assert len(reasons) == 1
    assert reasons[0].startswith("the baseline fails in a forked child "
                                 "(TestSameProcess.test_runs_where_it_was_imported: AssertionError: ")
    assert reasons[0].endswith(f" != {prepared.module.IMPORTED_BY}) but passes in a fresh process")
