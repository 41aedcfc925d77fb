# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""``mutate`` on a draft (issue 34 item 1): the refusal of a failing baseline names the failing tests and the
ways on; ``--passing-only`` measures the passing tests and names those it left out; the reach headline counts
the faults no test reaches, so deleting tests lowers it; ``report`` reads format 1 and 2 documents.

Real ``mutate`` runs (forked children, fresh processes) on copies of fixtures/mutate.
"""
import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from torch_npu_testing.__main__ import main
from torch_npu_testing.mutate import output, score
from torch_npu_testing.report import strength as report_strength

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "mutate"
HEADER = """\
import os, sys, unittest
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch
import fakeapi
"""
REAL_TESTS = """
class TestScaleValues(unittest.TestCase):
    def test_values_and_dtype(self):
        y = fakeapi.scale(torch.tensor([1.25, -2.5], dtype=torch.float64), 3, offset=0.5)
        self.assertEqual(y.dtype, torch.float64)
        self.assertEqual(y.tolist(), [4.25, -7.0])
"""
ERRORS_TEST = """
class TestScaleErrors(unittest.TestCase):
    def test_negative_factor_raises(self):
        with self.assertRaises(Exception):  # any type: error-type survives, error-swallowed is killed
            fakeapi.scale(torch.ones(1), -1)
"""
PLACEHOLDERS = """
class TestScaleSemantics(unittest.TestCase):
    def test_offset_semantics(self):
        self.fail("placeholder: offset semantics not written yet")

    def test_factor_semantics(self):
        self.fail("placeholder: factor semantics not written yet")
"""


@pytest.fixture
def folder(tmp_path, monkeypatch):
    shutil.copytree(FIXTURES, tmp_path, dirs_exist_ok=True)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _write(name, *parts):
    Path(name).write_text(HEADER + "".join(textwrap.dedent(part) for part in parts))
    return name


def _refused(capsys, file):
    status = main(["mutate", file, "--api", "fakeapi.scale", "--internal-package", "fakeapi", "--jobs", "2",
                   "--json", "out.json"])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(err) == 1, err
    assert not Path("out.json").exists()
    return err[0]


def _mutate(file, *options, api="fakeapi.scale"):
    command = [sys.executable, "-m", "torch_npu_testing", "mutate", file, "--api", api,
               "--internal-package", "fakeapi", "--jobs", "2", "--json", "out.json", *options]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    return done, json.loads(Path("out.json").read_text())


def _outcomes(document):
    return {record["code"]: record for record in document["apis"][0]["mutants"]}


def test_the_refusal_names_every_failing_test_and_both_ways_on(folder, capsys):
    line = _refused(capsys, _write("test_draft_api.py", REAL_TESTS, PLACEHOLDERS))
    assert line == ("torch_npu_testing: error: the baseline fails (no mutant applied): 2 of 3 tests fail: "
                    "TestScaleSemantics.test_factor_semantics (AssertionError: placeholder: factor semantics not "
                    "written yet), TestScaleSemantics.test_offset_semantics; write them so they pass, or measure "
                    "the passing tests only with --passing-only (the output then names the tests it left out)")


def test_a_failure_that_is_no_test_cannot_be_left_out(folder, capsys):
    fixture = """
    class TestBrokenFixture(unittest.TestCase):
        @classmethod
        def setUpClass(cls):
            raise RuntimeError("no device")

        def test_never_runs(self):
            pass
    """
    line = _refused(capsys, _write("test_fixture_api.py", REAL_TESTS, fixture))
    assert line.startswith("torch_npu_testing: error: the baseline fails (no mutant applied): setUpClass (")
    assert line.endswith("RuntimeError: no device; --passing-only cannot leave this out (it is no failing test): "
                         "mend it first")
    status = main(["mutate", "test_fixture_api.py", "--api", "fakeapi.scale", "--internal-package", "fakeapi",
                   "--passing-only"])
    assert status == 2 and "--passing-only cannot leave this out" in capsys.readouterr().err


def test_passing_only_measures_the_passing_tests_and_names_those_it_left_out(folder):
    file = _write("test_draft_api.py", REAL_TESTS, PLACEHOLDERS)
    done, document = _mutate(file, "--passing-only")
    assert ("mutate --passing-only: measured the 1 passing tests of 3; left out 2 failing: "
            "TestScaleSemantics.test_factor_semantics, TestScaleSemantics.test_offset_semantics") in done.stdout
    assert document["format"] == output.FORMAT and output.FORMAT in output.READABLE_FORMATS
    assert document["passing_only"] is True and document["tests"] == 3
    assert [test for test, _ in document["left_out"]] == ["TestScaleSemantics.test_factor_semantics",
                                                          "TestScaleSemantics.test_offset_semantics"]
    outcomes = _outcomes(document)
    # a placeholder would kill every mutant it ran under: none is named, and a fault the real test misses survives
    assert {record["killed_by"] for record in outcomes.values() if record["killed_by"]} == {
        "TestScaleValues.test_values_and_dtype"}
    assert outcomes["result-shift"]["outcome"] == "killed"
    assert outcomes["state-grad-flipped"]["outcome"] == "survived"
    assert document["apis"][0]["api_kind"] == "function" and document["apis"][0]["kind"] == "python function"


def test_passing_only_in_fresh_processes_leaves_the_same_tests_out(folder):
    clone = """
    class TestLevelClone(unittest.TestCase):
        def test_clone_enters_and_restores(self):
            with fakeapi.Level(5).clone():
                self.assertEqual(fakeapi.current_level(), 5)
            self.assertEqual(fakeapi.current_level(), 0)
    """
    file = _write("test_draft_api.py", clone, PLACEHOLDERS)
    _, forked = _mutate(file, "--passing-only", "--quiet", api="fakeapi.Level.clone")
    _, fresh = _mutate(file, "--passing-only", "--quiet", "--fresh-processes", api="fakeapi.Level.clone")
    assert _outcomes(fresh)["cm-exit-no-restore"]["outcome"] == "killed"
    assert fresh["mode"] == "fresh" and forked["mode"] == "fork"
    assert {code: record["outcome"] for code, record in _outcomes(fresh).items()} == {
        code: record["outcome"] for code, record in _outcomes(forked).items()}
    assert fresh["left_out"] == forked["left_out"]


def test_passing_only_on_a_passing_file_leaves_nothing_out(folder):
    done, document = _mutate(_write("test_real_api.py", REAL_TESTS), "--passing-only", "--quiet")
    assert document["left_out"] == [] and document["tests"] == 1
    assert "mutate --passing-only: every test passes; measured all 1" in done.stdout


def test_deleting_a_test_lowers_the_reach_where_the_strength_rises(folder):
    _, whole = _mutate(_write("test_whole_api.py", REAL_TESTS, ERRORS_TEST), "--quiet")
    done, cut = _mutate(_write("test_cut_api.py", REAL_TESTS), "--quiet")
    whole_block, cut_block = whole["apis"][0]["strength"], cut["apis"][0]["strength"]
    assert (_outcomes(whole)["error-type"]["outcome"], _outcomes(cut)["error-type"]["outcome"]) == (
        "survived", "not reached")
    assert cut_block["percent"] > whole_block["percent"]
    assert cut_block["reach_percent"] < whole_block["reach_percent"]
    assert cut["reach_percent"] == cut_block["reach_percent"]
    counts = cut_block["counts"]
    assert cut_block["reach_scored"] == cut_block["scored"] + counts["not reached"]
    assert (f"; reach: killed {cut_block['killed']} of {cut_block['reach_scored']} ({cut_block['scored']} "
            f"effective + {counts['not reached']} not reached)") in done.stdout


def test_reach_leaves_no_effect_and_not_applicable_out():
    mutants = [{"id": f"a:{n}", "outcome": outcome} for n, outcome in enumerate(
        ("killed", "killed", "survived", "not reached", "no effect", "not applicable", "timeout"))]
    block = score.strength(mutants)
    assert (block["killed"], block["scored"], block["reach_scored"]) == (2, 3, 4)
    assert block["reach_percent"] == 50.0
    assert score.strength(mutants, timeout_kills=True)["reach_scored"] == 5
    assert score.strength_line("a", block).endswith("; reach: killed 2 of 4 (3 effective + 1 not reached)")
    assert score.strength([{"id": "a:x", "outcome": "no effect"}])["reach_percent"] is None


def _document(format_name, **extra):
    counts = {outcome: 0 for outcome in score.OUTCOMES}
    counts.update({"killed": 3, "survived": 1, "not reached": 2})
    block = {"killed": 3, "scored": 4, "counts": counts, "percent": 75.0, "survivors": ["a.b:x"], "explained": []}
    if format_name.endswith("/2"):
        block.update(reach_scored=6, reach_percent=50.0)
    return {"format": format_name, "file": "f.py", "torch_version": "2.13.0", **extra, "apis": [
        {"name": "a.b", "status": "present", "strength": block, "mutants": [
            {"code": "x", "outcome": "survived", "explained": None}]}]}


def test_report_reads_format_1_and_2_with_the_reach_and_the_passing_only_note(tmp_path):
    folder = tmp_path / "strength"
    folder.mkdir()
    (folder / "a1.json").write_text(json.dumps(_document("torch_npu_testing.mutate/1")))
    (folder / "b2.json").write_text(json.dumps(_document("torch_npu_testing.mutate/2", passing_only=True,
                                                         left_out=[["T.test_a", "AssertionError"]])))
    (folder / "c3.json").write_text(json.dumps(_document("torch_npu_testing.mutate/99")))
    rows = report_strength.rows(str(tmp_path))
    reach = "; reach: killed 3 of 6 (4 effective + 2 not reached)"
    assert rows[0]["line"].endswith(reach) and rows[0]["survivors"] == ["x"]
    assert rows[1]["line"].endswith(reach + "; passing tests only (1 failing left out)")
    assert "format 'torch_npu_testing.mutate/99', expected one of" in rows[2]["problem"]
