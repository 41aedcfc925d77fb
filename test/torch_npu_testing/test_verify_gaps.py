# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""The device gaps a run met, from verify's record to pr's description and report (issue 36, item 4).

verify runs a file exported from a kit file that meets device limits (fixtures/kit/kit_limits_api.py: a refused
vehicle, a documented API limit, and the device's own log in ``$TORCH_NPU_TESTING_GAPS``, which verify points at
a file of its own per run) in a fake Ascend checkout (real git, real subprocesses): the record (format verify/2)
lists each gap once and, per file, the cases skipped for a device limit beside the cases that ran. pr's
【功能验证】 carries the table (and nothing when no run was on a device and none was met; one line when a
device met none); a verify/1 record is still read, its gaps derived from its cases. A corrupt gaps line is
one line, exit 2, nothing written. report says the same per file.
"""
import copy
import json
import sys

import pytest
from export_repo import CONFIG, clone, make_kit, make_origin
from limits_fixture import make_docs_repo
import test_pr
from test_pr import EVIDENCE, KIT_HEADER, TEST_FILE, export_and_verify, make_results, run_pr, section, write

from torch_npu_testing.__main__ import main as cli_main
from torch_npu_testing.common import gaps, results
from torch_npu_testing.common.results import Case, Outcome
from torch_npu_testing.pr import devicegaps, fit, verified
from torch_npu_testing.report.render import run_section
from torch_npu_testing.verify import record

CONFIG_API = "torch._functorch.config.patch"
RECORD = f"verify-master--{CONFIG_API}.json"
DOUBLE, INT16 = "aclnnMul not implemented for DT_DOUBLE", "aclnnMul not implemented for DT_INT16"
UINT16 = "aclnnCast not implemented for DT_UINT16"


@pytest.fixture(autouse=True)
def plain_environment(monkeypatch):
    for name in ("IN_CI", "CI", "TEST_REPORT_PATH", "PYTHONPATH", "TORCH_NPU_TESTING_STANDIN_NPU", gaps.VARIABLE,
                 "TORCH_NPU_TESTING_DEVICE", "TORCH_DEVICE_BACKEND_AUTOLOAD", "TORCH_NPU_TESTING_LIMITS",
                 "KIT_FIXTURE_CORRUPT_GAPS"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """``(dest, kit)``: the limits kit file exported into the config file of a fake checkout (that task only)."""
    root = tmp_path_factory.mktemp("gaps")
    dest = clone(make_origin(root / "src"), root / "dest")
    kit = make_kit(root / "k", "kit_limits_api.py")
    assert cli_main(["export", "master", str(dest), "--kit", str(kit), "--api", CONFIG_API]) == 0
    return dest, kit


def verify(dest, kit, out):
    return cli_main(["verify", "master", str(dest), "--kit", str(kit), "--python", sys.executable, "--out", str(out)])


@pytest.fixture(scope="module")
def verified_run(exported, tmp_path_factory):
    """``(rc, document, path)`` of one verify of the exported file; what it printed is checked by a test."""
    out = tmp_path_factory.mktemp("out")
    rc = verify(*exported, out)
    return rc, json.loads((out / RECORD).read_text()), out / RECORD


def test_the_record_lists_each_gap_once_and_per_file_counts(verified_run):
    rc, document, _ = verified_run
    assert rc == 0, document["problems"]
    assert document["format"] == "torch_npu_testing.verify/2" == record.FORMAT
    summary = document["gaps"]
    assert [(row["kind"], row["what"], row["documented"], row["message"], row["cases"]) for row in summary["rows"]] \
        == [("API", "torch.mul int16", True, INT16, 1), ("vehicle", "x * k, torch.float64", None, DOUBLE, 1),
            ("device", "_to_copy DT_UINT16", None, UINT16, None)]  # the device's mul line: the vehicle row says it
    assert all(row["files"] == [CONFIG] for row in summary["rows"])
    (counts,) = summary["files"]
    assert counts["path"] == CONFIG and counts["device_limit"] == 2 and counts["other_skips"] == 0
    assert counts["run"] == record.WHOLE_FILE
    (env,) = document["envs"]
    (run,) = env["results"]["runs"]
    # their 2 tests and test_runs; xmlrunner writes the skipped subtest, not its test's passing float32 part
    assert counts["ran"] == run["counts"]["passed"] == 3
    assert [row["what"] for row in run["verify"]["device_gaps"]] == ["mul DT_DOUBLE", "_to_copy DT_UINT16"]
    assert summary["on_device"] is False and summary["limits"] == []  # this run was on the CPU, no table
    assert run["verify"]["environment"]["TORCH_NPU_TESTING_LIMITS"] is None


def test_verify_prints_the_gaps_and_the_counts(exported, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("TORCH_NPU_TESTING_LIMITS", str(tmp_path / "limits.json"))  # recorded, said
    assert verify(*exported, tmp_path / "out") == 0
    captured = capsys.readouterr()
    assert "skipped=2 (device limit 2)  ok" in captured.err
    assert f"  device gaps met: 3 (limits: {tmp_path / 'limits.json'})\n" in captured.out
    assert f"  {CONFIG}: " in captured.out and " ran, 2 skipped for a device limit\n" in captured.out
    document = json.loads((tmp_path / "out" / RECORD).read_text())
    assert document["gaps"]["limits"] == [str(tmp_path / "limits.json")]


def test_a_corrupt_gaps_line_is_one_line_exit_2_nothing_written(exported, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("KIT_FIXTURE_CORRUPT_GAPS", "1")
    assert verify(*exported, tmp_path / "out") == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert error.startswith(f"torch_npu_testing: error: {CONFIG}: the device's gaps list cannot be read: ")
    assert error.endswith("device-gaps.jsonl, line 3: not JSON ('{\"op\": \"mul\", \"dtype\"')")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("device, stand_in, on_device", [("npu", None, True), ("npu", "simulated", True),
                                                         ("npu", "available", False), ("cpu", None, False),
                                                         ("cpu", "none", False)])
def test_on_a_device_means_an_npu_with_a_device_behind_it(verified_run, device, stand_in, on_device):
    envs = copy.deepcopy(verified_run[1]["envs"])
    envs[0]["results"]["probe"]["device"]["type"] = device
    summary = record.gaps_summary(envs, {"mode": stand_in} if stand_in else None)
    assert summary["on_device"] is on_device and len(summary["rows"]) == 3


def test_on_the_simulated_npu_with_limits_the_record_lists_what_the_device_refused(tmp_path, monkeypatch, capsys):
    """The real chain: the simulated NPU with a limits table (from a docs tree in Ascend's shape) refuses the
    float64 vehicle (a labelled skip) and a uint16 copy a case catches (the device's own log, through the file
    verify points ``$TORCH_NPU_TESTING_GAPS`` at); the record says the table and that it ran on a device."""
    table = tmp_path / "limits.json"
    assert cli_main(["limits", "--ascend", str(make_docs_repo(tmp_path / "docs")), "--torch", "2.13",
                     "--out", str(table)]) == 0
    dest = clone(make_origin(tmp_path / "src"), tmp_path / "dest")
    kit = make_kit(tmp_path / "k", "kit_limits_device_api.py")
    assert cli_main(["export", "master", str(dest), "--kit", str(kit), "--api", CONFIG_API]) == 0
    monkeypatch.setenv("TORCH_NPU_TESTING_LIMITS", str(table))
    capsys.readouterr()
    assert cli_main(["verify", "master", str(dest), "--kit", str(kit), "--python", sys.executable,
                     "--stand-in-npu=simulated", "--out", str(tmp_path / "out")]) == 0, capsys.readouterr()
    summary = json.loads((tmp_path / "out" / RECORD).read_text())["gaps"]
    assert summary["on_device"] is True and summary["limits"] == [str(table)]
    rows = [(row["kind"], row["what"], row["message"].split(" (")[0]) for row in summary["rows"]]
    assert rows[0] == ("vehicle", "x * k, torch.float64", DOUBLE)
    assert ("device", "_to_copy DT_UINT16", "aclnnToCopy not implemented for DT_UINT16") in rows
    assert ("device", "mul DT_DOUBLE", DOUBLE) not in rows  # the vehicle's row says it
    assert summary["files"][0]["device_limit"] == 1 and summary["files"][0]["other_skips"] == 0


def test_gaps_read_refuses_a_line_that_is_not_a_gap(tmp_path):
    path = tmp_path / "g.jsonl"
    path.write_text(json.dumps({"op": "mul", "dtype": "DT_DOUBLE", "message": DOUBLE}) + "\n\n[1, 2]\n")
    with pytest.raises(gaps.GapsFileError, match=r"g.jsonl, line 3: not a gap \(a JSON object with op, dtype"):
        gaps.read(path)
    path.write_bytes(b"\xff\xfe\n")
    with pytest.raises(gaps.GapsFileError, match="cannot be read"):
        gaps.read(path)


def test_an_undocumented_refusal_reads_the_same_with_the_junit_type_before_it():
    text = ("AssertionError: torch.mul int8: the device refuses the API under test and Ascend's docs do not say so: "
            "aclnnMul not implemented for DT_INT8")
    (row,) = gaps.from_reasons([text, text[len("AssertionError: "):]], "test/x.py")[:1]
    assert (row["kind"], row["what"], row["documented"], row["files"]) == ("API", "torch.mul int8", False,
                                                                           ["test/x.py"])
    assert [r["cases"] for r in gaps.merged(gaps.from_reasons([text, text[len("AssertionError: "):]]))] == [2]


# --------------------------------------------------------------------------- pr
def pr_facts(document, dest, tmp_path):
    path = record.write(document, str(tmp_path / "rec"))
    files = [{"path": CONFIG, "kind": "test file", "sha256": document["files"][0]["sha256"]}]
    return verified.gather(path, str(dest), files, "master")


def test_pr_carries_the_table_and_reads_an_old_record(exported, verified_run, tmp_path):
    _, document, _ = verified_run
    facts = pr_facts(document, exported[0], tmp_path)
    assert facts["state"] == "ok" and facts["device_gaps"] == document["gaps"]
    text = "\n".join(devicegaps.lines(facts["device_gaps"]))
    assert text.startswith(devicegaps.HEADING) and "no limits table" in text
    assert (f"| `{document['envs'][0]['name']}` | `{CONFIG}` | {record.WHOLE_FILE} | "
            f"{document['gaps']['files'][0]['ran']} | 2 | 0 |") in text
    assert f"| vehicle | x * k, torch.float64 | - | {DOUBLE} | 1 |" in text
    assert f"| API | torch.mul int16 | yes | {INT16} | 1 |" in text and "| device | _to_copy DT_UINT16 |" in text
    old = copy.deepcopy(document)
    old["format"] = "torch_npu_testing.verify/1"
    del old["gaps"]
    for run in old["envs"][0]["results"]["runs"]:
        del run["verify"]["device_gaps"]
    facts = pr_facts(old, exported[0], tmp_path / "old")
    assert facts["state"] == "ok" and [row["kind"] for row in facts["device_gaps"]["rows"]] == ["API", "vehicle"]
    assert facts["device_gaps"]["files"] == document["gaps"]["files"]


def test_no_table_off_a_device_with_none_met_one_line_on_a_device():
    files = [{"env": "e", "path": CONFIG, "ran": 7, "device_limit": 0, "other_skips": 1}]
    assert devicegaps.lines({"on_device": False, "limits": [], "rows": [], "files": files}) == []
    assert devicegaps.lines(None) == []
    assert devicegaps.lines({"on_device": True, "limits": ["t.json"], "rows": [], "files": files}) == [
        devicegaps.HEADING, "", "No device gap met. (7 cases ran; limits table `t.json`)", ""]


def test_the_table_is_cut_when_the_body_must_shrink():
    rows = [{"kind": "API", "what": f"torch.op{i} float64", "documented": True, "message": f"{i} " + "m" * 300,
             "cases": 1} for i in range(40)]
    summary = {"on_device": True, "limits": [], "rows": rows, "files": []}
    full, cut = "\n".join(devicegaps.lines(summary)), "\n".join(devicegaps.lines(summary, {"max_gaps": 10}))
    assert "10 more gaps in the record." in full and "30 more gaps in the record." in cut
    assert max(len(line) for line in cut.splitlines()) < 300  # each message cut to gaps.MESSAGE_CHARS
    text, shortened = fit.fit(lambda options: "\n".join(devicegaps.lines(summary, options)), limit=len(cut) + 10)
    assert text == cut and shortened[-1].startswith("the device gaps table cut to 10 rows")


# --------------------------------------------------------------------------- report
def test_report_says_per_file_the_limit_skips_beside_the_cases_that_ran():
    cases = [Case(file="test/t.py", id="T.test_a", outcome=Outcome.PASSED),
             Case(file="test/t.py", id="T.test_b", outcome=Outcome.SKIPPED, subtest="(dtype=torch.float64)",
                  reason=f"device limit, vehicle x * k, torch.float64: {DOUBLE}"),
             Case(file="test/t.py", id="T.test_c", outcome=Outcome.SKIPPED, reason="requires torch >= 2.9")]
    run = {"path": "test/t.py", "sha256": "0" * 64, "initial_grad_mode": True, "cases": results.cases_to_dicts(cases),
           "counts": results.tally(cases)}
    lines = run_section(run, {})
    assert "- device limits: 1 ran, 1 skipped for a device limit, 1 other skip; gaps met: 1" in lines
    run["cases"], run["counts"] = run["cases"][:1], results.tally(cases[:1])
    assert not any(line.startswith("- device limits") for line in run_section(run, {}))


# --------------------------------------------------------------------------- pr, whole
kit, origin, ascend_repo, env_python = test_pr.kit, test_pr.origin, test_pr.ascend_repo, test_pr.env_python
LIMITS_TEXT = '''"""Synthetic grad-mode file that meets a device limit: its float64 vehicle is refused."""
from torch_npu_testing import TestCase, run_tests, skip_unless_vehicle

import torch


def refuse(message):
    raise RuntimeError(message)


class TestIsGradEnabled(TestCase):
    def test_reports_no_grad_in_float64(self):
        """Inside no_grad it answers False, for a float64 tensor (a vehicle the device refuses)."""
        skip_unless_vehicle(self, "x * k, torch.float64", lambda: refuse("aclnnMul not implemented for DT_DOUBLE"))

    def test_reports_enable_grad(self):
        """Inside enable_grad it answers True."""
        with torch.enable_grad():
            self.assertTrue(torch.is_grad_enabled())


if __name__ == "__main__":
    run_tests()
'''


def test_the_pr_body_carries_the_gaps_table(kit, ascend_repo, env_python, tmp_path, monkeypatch, capsys):
    """export, verify and pr of a kit file meeting a device limit, as a user runs them (test_pr's fake task)."""
    write(kit / TEST_FILE, KIT_HEADER + LIMITS_TEXT)
    results_dir = tmp_path / "results"
    make_results(kit, monkeypatch, results_dir)
    export_and_verify(kit, ascend_repo, capsys)
    code, _, stderr, markdown, facts = run_pr(kit, ascend_repo, results_dir, capsys)
    assert code == 0, stderr
    verification = section(markdown, "【功能验证】")
    table = verification[verification.index(devicegaps.HEADING):verification.index("### 测试命令")]
    assert f"| `{TEST_FILE}` | {record.WHOLE_FILE} | 1 | 1 | 0 |" in table
    assert f"| `{TEST_FILE}` | {record.PROBE_RUN} | 1 | 1 | 0 |" in table  # the grad-mode file's probe counts too
    assert "| vehicle | x * k, torch.float64 | - | aclnnMul not implemented for DT_DOUBLE | 1 |" in table
    assert facts["verify"]["device_gaps"]["rows"][0]["what"] == "x * k, torch.float64"
    attachment = (kit / "reports" / EVIDENCE).read_text()
    assert "## 设备缺口 / every device gap" in attachment and table.splitlines()[-2] in attachment


def test_the_table_says_one_message_once_with_every_case_it_refused():
    dense = "aclnnToDense: torch.Tensor.to_dense is not supported on Atlas A2 (✘ in Ascend's docs)"
    rows = gaps.from_reasons([f"device limit, vehicle COO {dtype} densified on npu: {dense}"
                              for dtype in ("torch.float32", "torch.int8", "torch.float32")]
                             + [f"device limit, documented for the API, to_dense int8: {dense}"])
    assert len(gaps.merged(rows)) == 3  # the record keeps each what
    table = gaps.render(gaps.merged(rows)).splitlines()
    both = "COO torch.float32 densified on npu; COO torch.int8 densified on npu"
    assert table[2:] == [f"| vehicle | {both} | - | {dense} | 3 |", f"| API | to_dense int8 | yes | {dense} | 1 |"]


def test_verify_says_the_probes_counts_apart_and_nothing_off_a_device_with_none_met():
    from torch_npu_testing.verify.cli import gaps_lines

    files = [{"env": "e", "path": "test/t.py", "run": record.WHOLE_FILE, "ran": 38, "device_limit": 156,
              "other_skips": 0},
             {"env": "e", "path": "test/t.py", "run": record.PROBE_RUN, "ran": 659, "device_limit": 156,
              "other_skips": 2}]
    assert gaps_lines({"on_device": True, "limits": ["t.json"], "rows": [{}], "files": files}) == [
        "  device gaps met: 1 (limits: t.json)", "    e  test/t.py: 38 ran, 156 skipped for a device limit",
        "    e  test/t.py (grad-mode probe: every subtest): 659 ran, 156 skipped for a device limit, 2 other skips"]
    assert gaps_lines({"on_device": False, "limits": [], "rows": [], "files": files}) == []
