# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""``upstream run`` and its driver (real files, real git, real subprocesses; the synthetic upstream
tests are stdlib-only, so no torch import slows them down).

Contract: the patched copy runs in a scratch directory (the checkout is never modified); each test case
is reported as passed / failed / error / skipped / expected_failure (with the manifest's reason) /
unexpected_success, in the kit's one results model (the driver loads ``results.py`` by path, so it
works where the kit is not installed); the exit status is non-zero only for failures the manifest does
not expect; ``--results`` writes the machine-readable document; ``--if-source`` without a source skips
with one line and exit 0.
"""
import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from test_upstream_support import TINY, TINY_PATCH, make_kit, tree_snapshot

from torch_npu_testing.common import results
from torch_npu_testing.__main__ import main as cli_main
from torch_npu_testing.common.results import Outcome
from torch_npu_testing.upstream import patches, runner, source
from torch_npu_testing.upstream.manifest import ExpectedFailure


@pytest.fixture(autouse=True)
def _no_outside_config(monkeypatch, tmp_path):
    monkeypatch.delenv(source.SOURCE_ENV, raising=False)
    monkeypatch.delenv(patches.PATCHES_DIR_ENV, raising=False)
    temp_root = tmp_path / "tempdir"
    temp_root.mkdir()
    monkeypatch.setattr("tempfile.tempdir", str(temp_root))  # to see that scratch copies are removed


def cli(args, capsys):
    code = cli_main(args)
    out, err = capsys.readouterr()
    return code, out, err


def outcomes(document):
    [patch] = document["patches"]
    return {case.name: (case.outcome.value, case.reason or "") for case in results.cases_from_dicts(patch["cases"])}


def test_run_reports_every_outcome_and_writes_results(tmp_path, capsys):
    kit = make_kit(tmp_path)
    results_path = tmp_path / "out" / "upstream.json"
    before = tree_snapshot(kit.source)
    code, out, _ = cli(kit.cli("run", "--results", results_path), capsys)
    assert code == 0, out
    document = json.loads(results_path.read_text())
    got = outcomes(document)
    assert got["TestTiny.test_adds"] == ("passed", "")
    assert got["TestTiny.test_needs_patch"] == ("passed", ""), "the scratch copy was not patched"
    assert got["TestTiny.test_known_gap"] == ("expected_failure", "synthetic device gap")
    assert got["TestTiny.test_raises"] == ("expected_failure", "raises on this device")
    assert got["TestTiny.test_fixed_upstream"][0] == "unexpected_success"
    assert "was broken before" in got["TestTiny.test_fixed_upstream"][1]
    assert got["TestTiny.test_gpu"] == ("skipped", "needs a GPU")
    [patch] = document["patches"]
    assert patch["patch"] == TINY_PATCH
    assert patch["source"] == str(kit.source.resolve()) == document["source"]
    assert patch["base_matches"] is True and patch["applies"] is True
    assert patch["device"] == "cpu" and document["device"] == "cpu"
    assert patch["torch"] == document["torch"]
    assert patch["upstream"]["tag"] == "v2.99.0"
    assert patch["counts"] == {"passed": 2, "failed": 0, "error": 0, "skipped": 1, "expected_failure": 2,
                               "unexpected_success": 1, "tests": 6, "cases": 6}
    assert {case["file"] for case in patch["cases"]} == {TINY}
    expected_detail = next(c for c in patch["cases"] if c["id"] == "TestTiny.test_known_gap")["details"]
    assert "AssertionError" in expected_detail
    assert document["ok"] is True and document["unexpected_failures"] == 0
    assert document["format"] == results.FORMAT and document["kind"] == "upstream"
    assert "  expected_failure    TestTiny.test_known_gap: synthetic device gap" in out
    assert f"upstream: {TINY_PATCH}: 2 passed, 1 skipped, 2 expected failure, 1 unexpected success " \
        "(6 tests, 6 cases): ok" in out
    assert tree_snapshot(kit.source) == before
    assert list((tmp_path / "tempdir").iterdir()) == [], "scratch copies left behind"


def test_run_fails_only_for_unexpected_failures(tmp_path, capsys):
    """test_raises is expected on npu only: on this cpu run it is an unexpected error -> exit 1."""
    kit = make_kit(tmp_path, expected=[
        {"test": "TestTiny.test_known_gap", "reason": "gap", "torch": ["0.1"]},  # other torch: not expected
        {"test": "TestTiny.test_raises", "reason": "npu only", "devices": ["npu"]},
    ])
    results_path = tmp_path / "r.json"
    code, out, _ = cli(kit.cli("run", "--results", results_path), capsys)
    assert code == 1
    got = outcomes(json.loads(results_path.read_text()))
    assert got["TestTiny.test_known_gap"][0] == "failed"
    assert got["TestTiny.test_raises"] == ("error", "RuntimeError: boom")
    assert "FAILED" in out and "RuntimeError: boom" in out
    assert json.loads(results_path.read_text())["ok"] is False


def test_run_reports_base_mismatch_and_still_runs(tmp_path, capsys):
    kit = make_kit(tmp_path)
    kit.base().write_text(kit.base().read_text().replace("    unittest.main()\n", "    unittest.main(verbosity=2)\n"))
    results_path = tmp_path / "r.json"
    code, out, _ = cli(kit.cli("run", "--results", results_path), capsys)
    assert code == 0
    assert "base is NOT the recorded base" in out and "the patch still applies" in out
    assert json.loads(results_path.read_text())["patches"][0]["base_matches"] is False


@pytest.mark.parametrize("breakage", ["conflict", "already_patched", "missing_base"])
def test_run_refuses_unapplicable_patch_without_running(tmp_path, capsys, breakage):
    kit = make_kit(tmp_path)
    if breakage == "conflict":
        kit.base().write_text(kit.base().read_text().replace("VALUE = 1\n", "VALUE = 3\n"))
    elif breakage == "already_patched":
        kit.base().write_text(kit.base().read_text().replace("VALUE = 1\n", "VALUE = 2  # adapted\n"))
    else:
        kit.base().unlink()
    results_path = tmp_path / "r.json"
    before = tree_snapshot(kit.source)
    code, _, err = cli(kit.cli("run", "--results", results_path), capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "cannot run" in err
    assert not results_path.exists()
    assert tree_snapshot(kit.source) == before


def test_run_if_source_without_source_skips_with_one_line(tmp_path, capsys):
    """The tox env `upstream` must not fail CI on a machine without a PyTorch checkout."""
    kit = make_kit(tmp_path)
    results_path = tmp_path / "r.json"
    code, out, err = cli(kit.cli("run", "--if-source", "--results", results_path, source=False), capsys)
    assert code == 0
    assert out == ("upstream: skipped: no PyTorch source (set PYTORCH_SRC=/path/to/pytorch or pass --source)\n")
    assert err == ""
    document = json.loads(results_path.read_text())
    assert document["skipped"] is True and document["patches"] == []
    assert document == runner.skipped_document(source.NO_SOURCE)


def test_run_if_source_uses_pytorch_src(tmp_path, capsys, monkeypatch):
    kit = make_kit(tmp_path)
    monkeypatch.setenv(source.SOURCE_ENV, str(kit.source))
    code, out, _ = cli(kit.cli("run", "--if-source", source=False), capsys)
    assert code == 0 and "TestTiny.test_needs_patch" in out


def test_run_without_source_and_without_if_source_is_error(tmp_path, capsys):
    kit = make_kit(tmp_path)
    code, _, err = cli(kit.cli("run", source=False), capsys)
    assert code == 2 and "no PyTorch source" in err


def test_run_with_missing_interpreter_is_error(tmp_path, capsys):
    kit = make_kit(tmp_path)
    code, _, err = cli(kit.cli("run", "--python", tmp_path / "bin" / "python9"), capsys)
    assert code == 2 and "no such executable" in err


def test_run_kept_scratch_holds_patched_copy_and_log(tmp_path, capsys):
    kit = make_kit(tmp_path)
    kept = tmp_path / "kept"
    code, out, _ = cli(kit.cli("run", "--scratch", kept), capsys)
    assert code == 0
    assert "VALUE = 2  # adapted" in (kept / TINY).read_text()
    assert "test_needs_patch" in (kept / ".results" / "0.log").read_text()
    assert f"scratch copy kept in {kept}" in out


def test_run_reports_import_error_of_patched_file(tmp_path, capsys):
    kit = make_kit(tmp_path)
    kit.base().write_text(kit.base().read_text() + "\nimport module_that_does_not_exist_here\n")
    results_path = tmp_path / "r.json"
    code, _, _ = cli(kit.cli("run", "--results", results_path), capsys)
    assert code == 1
    got = outcomes(json.loads(results_path.read_text()))
    assert got == {"<import>": ("error", "ModuleNotFoundError: No module named 'module_that_does_not_exist_here'")}


DRIVER_CASES = '''\
    import sys
    import unittest

    DEVICE = "cpu"


    class TestCases(unittest.TestCase):
        @unittest.expectedFailure
        def test_marked_and_fails(self):
            self.assertEqual(1, 2)

        @unittest.expectedFailure
        def test_marked_but_passes(self):
            pass

        def test_subtest_fails(self):
            for value in (1, 2):
                with self.subTest(value=value):
                    self.assertEqual(value, 1)

        def test_kit_package_not_imported(self):
            self.assertNotIn("torch_npu_testing", sys.modules)


    if __name__ == "__main__":
        raise SystemExit("the driver must not run the __main__ block")
'''


def test_driver_records_every_case_by_path_without_the_kit(tmp_path):
    """The driver, copied with results.py alone (no package) and run in an interpreter without site-packages,
    records the kit's cases: unittest's expectedFailure / unexpected success, every subtest case."""
    kit = tmp_path / "kit"
    (kit / "upstream").mkdir(parents=True)
    shutil.copy(runner.DRIVER, kit / "upstream" / "driver.py")
    (kit / "common").mkdir()
    shutil.copy(results.__file__, kit / "common" / "results.py")
    shutil.copy(Path(results.__file__).with_name("atomic.py"), kit / "common" / "atomic.py")
    test_file = tmp_path / "test_driver_cases.py"
    test_file.write_text(textwrap.dedent(DRIVER_CASES))
    out = tmp_path / "out.json"
    completed = subprocess.run([sys.executable, "-I", "-S", str(kit / "upstream" / "driver.py"), str(test_file),
                                str(out)], cwd=str(tmp_path), capture_output=True, text=True, timeout=120,
                               check=False)
    assert completed.returncode == 0, completed.stderr
    payload = json.loads(out.read_text())
    assert payload["format"] == results.FORMAT and payload["device"] == "cpu"
    got = {case.name: case for case in results.cases_from_dicts(payload["cases"])}
    assert {name: case.outcome.value for name, case in got.items()} == {
        "TestCases.test_marked_and_fails": "expected_failure",
        "TestCases.test_marked_but_passes": "unexpected_success",
        "TestCases.test_subtest_fails (value=1)": "passed",
        "TestCases.test_subtest_fails (value=2)": "failed",
        "TestCases.test_kit_package_not_imported": "passed"}
    assert got["TestCases.test_subtest_fails (value=2)"].reason == "AssertionError: 2 != 1"
    assert "TestCases.test_subtest_fails) (value=2) ... FAIL" in completed.stderr  # unittest's verbose output


def _cases(*items):
    return [results.Case("t.py", test, Outcome(outcome), subtest) for test, outcome, subtest in items]


def test_classify_matches_torch_release_and_device():
    cases = _cases(("T.test_a", "failed", None), ("T.test_b", "error", None), ("T.test_c", "passed", None))
    failures = [ExpectedFailure("T.test_a", "old torch", torch=("2.12", "2.13")),
                ExpectedFailure("T.test_b", "npu gap", devices=("npu",)),
                ExpectedFailure("T.test_c", "gap", torch=("2.13",))]
    on_cpu = {c.name: c.outcome.value for c in runner.classify(cases, failures, "2.13.0+cpu", "cpu")}
    assert on_cpu == {"T.test_a": "expected_failure", "T.test_b": "error", "T.test_c": "unexpected_success"}
    on_npu = {c.name: c.outcome.value for c in runner.classify(cases, failures, "2.11.0", "npu")}
    assert on_npu == {"T.test_a": "failed", "T.test_b": "expected_failure", "T.test_c": "passed"}
    assert runner.stale_expectations(failures, cases[:1], "2.13.0", "cpu") == ["T.test_c"]
    [expected] = [c for c in runner.classify(cases, failures, "2.13.0", "cpu") if c.id == "T.test_a"]
    assert expected.reason == "old torch"


def test_classify_applies_an_expectation_to_the_cases_of_a_test():
    """A test the manifest expects to fail: its failing subtests are expected failures, the passing ones stay
    passed; when none of its cases fail, they are unexpected successes. Failing outcomes fail the run."""
    failures = [ExpectedFailure("T.test_table", "gap")]
    some_fail = _cases(("T.test_table", "passed", "(x=1)"), ("T.test_table", "failed", "(x=2)"))
    assert [c.outcome.value for c in runner.classify(some_fail, failures, "2.13.0", "cpu")] == [
        "passed", "expected_failure"]
    all_pass = _cases(("T.test_table", "passed", "(x=1)"), ("T.test_table", "passed", "(x=2)"))
    assert [c.outcome.value for c in runner.classify(all_pass, failures, "2.13.0", "cpu")] == [
        "unexpected_success", "unexpected_success"]
    assert [o.value for o in Outcome if runner.fails_upstream_run(o)] == ["failed", "error"]


def second_base(kit, key, run_under, value):
    """Another base's patch of the tiny file (setting VALUE to ``value``), with its own run_under."""
    from test_upstream_support import TINY_BASE, make_patch_text
    patch = kit.patches / key / (TINY + ".patch")
    patch.parent.mkdir(parents=True)
    patch.write_text(make_patch_text(kit.root / f"work-{key}", TINY, TINY_BASE,
                                     TINY_BASE.replace("VALUE = 1\n", f"VALUE = {value}\n")))
    data = kit.manifest_data()
    data["patches"][TINY_PATCH]["run_under"] = ["2.99.0"]
    data["patches"][f"{key}/{TINY}.patch"] = {"run_under": run_under, "expected_failures": []}
    kit.write_manifest(data)


def test_plain_run_picks_the_patch_whose_base_fits_the_interpreters_torch(tmp_path, capsys):
    """Two bases patch the same file: one copy takes one patch, the one made for this torch (X.Y)."""
    import torch
    kit = make_kit(tmp_path)
    release = torch.__version__.split("+")[0]
    second_base(kit, "v-here", [release], 2)
    code, out, _ = cli(kit.cli("run"), capsys)
    assert f"v-here/{TINY}.patch" in out and TINY_PATCH not in out
    assert "TestTiny.test_needs_patch" in out and code in (0, 1)


def test_two_patches_of_one_file_without_a_fitting_torch_is_a_one_line_error(tmp_path, capsys):
    kit = make_kit(tmp_path)
    second_base(kit, "v-other", ["2.98.0"], 2)
    before = tree_snapshot(kit.root)
    code, out, err = cli(kit.cli("run"), capsys)
    assert code == 2 and out == "" and "no selected patch is made for torch" in err and err.count("\n") == 1
    assert tree_snapshot(kit.root) == before
    code, out, err = cli(kit.cli("apply"), capsys)
    assert code == 2 and "pick one base with --base KEY" in err
    assert tree_snapshot(kit.root) == before
