# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Unit tests of torch_npu_testing.common.results: the case record, the outcome enum and the recorder.

Contract: every case is recorded, passing subtests included, each with its file, test id, subtest
label, outcome, reason and duration; a failing cleanup after a pass replaces the pass; a failure
outside the subtests is one more case; records survive a JSON round trip and bad entries are refused
by name; counts and the closing line add up cases. The module is standard library only and loads by
file path without the package (the upstream driver relies on it). Tests run in process on tiny
synthetic unittest classes (no torch).
"""
import importlib.util
import io
import json
import subprocess
import sys
import unittest

import pytest

from torch_npu_testing.common import results
from torch_npu_testing.common.results import Case, Outcome


class Synthetic(unittest.TestCase):
    __test__ = False  # run by the recorder below, not collected by pytest

    def test_pass(self):
        pass

    def test_fail(self):
        self.assertEqual(1, 2)

    def test_error(self):
        raise RuntimeError("boom")

    def test_skip(self):
        self.skipTest("no widget here")

    def test_table(self):
        for x in range(3):
            with self.subTest(x=x):
                self.assertGreaterEqual(x, 0)

    def test_table_one_bad(self):
        for x in (0.5, 1.5, 2.5):
            with self.subTest(x=x):
                self.assertNotEqual(x, 1.5)

    def test_table_then_broken_cleanup(self):
        self.addCleanup(self.fail, "leaked global state")
        for x in range(2):
            with self.subTest(x=x):
                pass

    def test_table_skips_one(self):
        for x in range(2):
            with self.subTest(x=x):
                if x:
                    self.skipTest("odd")

    @unittest.expectedFailure
    def test_xfail(self):
        raise ValueError("known gap")

    test_xpass = unittest.expectedFailure(lambda self: None)


class BrokenFixture(unittest.TestCase):
    __test__ = False

    @classmethod
    def setUpClass(cls):
        raise RuntimeError("needs an NPU")

    def test_never_runs(self):
        pass


class Listener:
    def __init__(self):
        self.events = []

    def start_test(self, test_id):
        self.events.append(("start", test_id))

    def stop_test(self, test_id):
        self.events.append(("stop", test_id))


@pytest.fixture(scope="module")
def recorded():
    listener = Listener()
    stream = io.StringIO()
    tests = unittest.TestSuite([unittest.defaultTestLoader.loadTestsFromTestCase(Synthetic),
                                unittest.defaultTestLoader.loadTestsFromTestCase(BrokenFixture)])
    cases = results.run_tests(tests, "test_synthetic.py", stream, listener)
    return cases, listener, stream.getvalue()


def test_every_case_is_recorded_with_its_label_and_outcome(recorded):
    cases, _, _ = recorded
    got = sorted((case.name, case.outcome.value) for case in cases)
    assert got == sorted([
        ("Synthetic.test_pass", "passed"), ("Synthetic.test_fail", "failed"), ("Synthetic.test_error", "error"),
        ("Synthetic.test_skip", "skipped"),
        ("Synthetic.test_table (x=0)", "passed"), ("Synthetic.test_table (x=1)", "passed"),
        ("Synthetic.test_table (x=2)", "passed"),
        ("Synthetic.test_table_one_bad (x=0.5)", "passed"), ("Synthetic.test_table_one_bad (x=1.5)", "failed"),
        ("Synthetic.test_table_one_bad (x=2.5)", "passed"),
        ("Synthetic.test_table_then_broken_cleanup (x=0)", "passed"),
        ("Synthetic.test_table_then_broken_cleanup (x=1)", "passed"),
        ("Synthetic.test_table_then_broken_cleanup", "failed"),
        ("Synthetic.test_table_skips_one (x=0)", "passed"), ("Synthetic.test_table_skips_one (x=1)", "skipped"),
        ("Synthetic.test_xfail", "expected_failure"), ("Synthetic.test_xpass", "unexpected_success"),
        ("setUpClass (test_results.BrokenFixture)", "error")])
    assert {case.file for case in cases} == {"test_synthetic.py"}


def test_reasons_details_and_durations(recorded):
    cases, _, _ = recorded
    by_name = {case.name: case for case in cases}
    assert by_name["Synthetic.test_skip"].reason == "no widget here"
    assert by_name["Synthetic.test_skip"].details is None
    assert by_name["Synthetic.test_fail"].reason == "AssertionError: 1 != 2"
    assert "Traceback" in by_name["Synthetic.test_fail"].details
    assert by_name["Synthetic.test_error"].reason == "RuntimeError: boom"
    assert by_name["Synthetic.test_table_one_bad (x=1.5)"].subtest == "(x=1.5)"
    assert by_name["Synthetic.test_table_one_bad (x=1.5)"].id == "Synthetic.test_table_one_bad"
    assert by_name["Synthetic.test_table_then_broken_cleanup"].reason == "AssertionError: leaked global state"
    assert by_name["Synthetic.test_xpass"].reason == "marked @expectedFailure, but passed"
    assert "RuntimeError: needs an NPU" in by_name["setUpClass (test_results.BrokenFixture)"].details
    assert all(case.duration_s is not None and case.duration_s >= 0 for case in cases
               if not case.id.startswith("setUpClass"))


def test_listener_and_verbose_output(recorded):
    _, listener, output = recorded
    assert ("start", "Synthetic.test_table") in listener.events
    assert listener.events.index(("start", "Synthetic.test_table")) + 1 == listener.events.index(
        ("stop", "Synthetic.test_table"))
    assert "skipped 'no widget here'" in output and "Ran 10 tests" in output


def test_counts_and_closing_line_count_cases(recorded):
    cases, _, _ = recorded
    counts = results.tally(cases)
    assert counts == {"passed": 9, "failed": 3, "error": 2, "skipped": 2, "expected_failure": 1,
                      "unexpected_success": 1, "tests": 11, "cases": 18}
    assert results.failed_count(counts) == 6
    assert results.closing_line(counts) == "9 passed, 6 failed, 2 skipped (11 tests, 18 cases)"
    total = results.add_counts([counts, results.tally(cases[:1])])
    assert total["cases"] == 19 and total["tests"] == 12
    assert results.counts_fields(results.tally([]), nonzero=True) == ""
    assert results.counts_fields(results.tally(cases[:1])).startswith("tests=1 cases=1 ")


def test_outcome_enum_is_the_one_vocabulary():
    assert [outcome.value for outcome in Outcome] == [
        "passed", "failed", "error", "skipped", "expected_failure", "unexpected_success"]
    assert {outcome for outcome in Outcome if outcome.fails} == {
        Outcome.FAILED, Outcome.ERROR, Outcome.UNEXPECTED_SUCCESS}
    assert f"{Outcome.EXPECTED_FAILURE}" == "expected_failure" and Outcome.EXPECTED_FAILURE.label == "expected failure"
    assert json.dumps(Outcome.PASSED) == '"passed"'


def test_round_trip_and_bad_entries(recorded):
    cases, _, _ = recorded
    text = json.dumps(results.cases_to_dicts(cases))
    assert results.cases_from_dicts(json.loads(text)) == cases
    assert Case("f.py", "C.t", Outcome.PASSED).to_dict() == {"file": "f.py", "id": "C.t", "outcome": "passed"}
    for bad, message in [({"file": "f", "id": "C.t", "outcome": "ok"}, "unknown outcome 'ok'"),
                         ({"file": "f", "outcome": "passed"}, "lacks 'id'"),
                         ({"file": "f", "id": "C.t", "outcome": "passed", "reason": 3}, "'reason' is int"),
                         ({"file": "f", "id": "C.t", "outcome": "passed", "duration_s": "1"}, "'duration_s' is str"),
                         ([1], "not an object")]:
        with pytest.raises(ValueError, match=message):
            results.cases_from_dicts([bad])
    with pytest.raises(ValueError, match="not a list"):
        results.cases_from_dicts({"cases": []})


def test_by_test_and_outcome_map_keep_subtests_apart():
    cases = [Case("f", "C.a", Outcome.PASSED, "(x=1)"), Case("f", "C.b", Outcome.FAILED),
             Case("f", "C.a", Outcome.FAILED, "(x=2)")]
    assert [(test, len(group)) for test, group in results.by_test(cases)] == [("C.a", 2), ("C.b", 1)]
    assert results.outcome_map(cases) == {"C.a (x=1)": Outcome.PASSED, "C.b": Outcome.FAILED,
                                          "C.a (x=2)": Outcome.FAILED}


def test_import_error_case():
    try:
        import module_that_is_not_there_xyz  # noqa: F401
    except ImportError:
        case = results.import_error_case("t.py", sys.exc_info())
    assert (case.id, case.outcome, case.file) == ("<import>", Outcome.ERROR, "t.py")
    assert case.reason == "ModuleNotFoundError: No module named 'module_that_is_not_there_xyz'"
    assert case.reason in case.details


def test_loads_by_path_without_the_package_and_only_stdlib(tmp_path):
    """What the upstream driver does: load results.py by path in an interpreter without site-packages."""
    script = (
        "import importlib.util, sys\n"
        f"spec = importlib.util.spec_from_file_location('_r', {results.__file__!r})\n"
        "module = importlib.util.module_from_spec(spec); sys.modules['_r'] = module; spec.loader.exec_module(module)\n"
        "assert module.Outcome('passed').fails is False\n"
        "print(sorted(name for name in sys.modules if name.split('.')[0] in ('torch', 'torch_npu_testing')))\n")
    completed = subprocess.run([sys.executable, "-I", "-S", "-c", script], capture_output=True, text=True,
                               check=False, timeout=60)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "[]"
    spec = importlib.util.find_spec("torch_npu_testing.common.results")
    source = open(spec.origin, encoding="utf-8").read()
    assert "from ." not in source and "import torch" not in source


def test_summary_is_the_first_line_of_the_exception():
    def err_of(exc):
        try:
            raise exc
        except BaseException:
            return sys.exc_info()
    assert results.summary(err_of(AssertionError("not close!\n\nMismatched elements: 1 / 2"))) == \
        "AssertionError: not close!"
    try:
        compile("x = (", "f.py", "exec")
    except SyntaxError:
        assert results.summary(sys.exc_info()).startswith("SyntaxError: ")
    assert len(results.summary(err_of(ValueError("x" * 1000)))) == results.MAX_REASON_CHARS
