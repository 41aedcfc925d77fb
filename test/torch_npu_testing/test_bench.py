# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Unit tests of ``python -m torch_npu_testing bench``.

The figures logic (medians, ratios to the floor, targets, verdicts) and the interleaving are checked
with injected fake timings; the commands the bench would run are checked as argv lists (tox is never
run here). One real run over a tiny synthetic suite (files that do not import torch) checks that the
subprocess timing, the table and the JSON work end to end in a few seconds.
"""
import argparse
import io
import json
import os
import sys
import textwrap

import pytest

from torch_npu_testing.suite import bench
from torch_npu_testing.__main__ import main as cli_main
from torch_npu_testing.common.errors import UsageError
from torch_npu_testing.common.layout import TABLE_REL
from torch_npu_testing.common.table import TABLE_FORMAT

FILES = ["test/functorch/a_api.py", "test/functorch/b_api.py", "test/functorch/c_api.py",
         "test/npu/test_d.py"]


def parse(argv):
    parser = argparse.ArgumentParser()
    bench.add_arguments(parser)
    return parser.parse_args(argv)


def make_root(tmp_path, files=FILES, body="import sys\n", table=True):
    """A checkout whose own table names ``files`` (what bench, like suite, runs by default), each holding
    ``body``; ``table=False``: no table (a ``torch_npu_testing`` folder in the cwd of a real subprocess would
    hide the kit's package)."""
    for path in files:
        target = tmp_path / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(body)
    if not table:
        return tmp_path
    table = tmp_path / TABLE_REL
    table.parent.mkdir(parents=True, exist_ok=True)
    table.write_text(json.dumps({"format": TABLE_FORMAT, "apis": [{"name": f"torch.made_up_{index}", "test_file": path}
                                                                  for index, path in enumerate(files)]}))
    return tmp_path


class FakeTimer:
    """Returns scripted seconds per step and records the order in which steps were timed."""

    def __init__(self, seconds):
        self.seconds = seconds  # {measurement: seconds per step, or a list consumed in order}
        self.calls = []

    def __call__(self, step):
        self.calls.append(step)
        value = self.seconds[step.measurement]
        return value.pop(0) if isinstance(value, list) else value


# ---- figures --------------------------------------------------------------------------------------

def rows_by_name(rows):
    return {row["measurement"]: row for row in rows}


def test_summarize_uses_medians_and_floor_ratios():
    """Ratios are medians over the floor's median; suite is judged as a ratio to the floor."""
    timings = {"floor": [2.0, 2.2, 9.0], "suite": [4.0, 4.4, 4.2], "direct": [9.0, 9.6, 9.2]}
    rows = rows_by_name(bench.summarize(timings, file_count=4, stat="median"))
    assert rows["floor"]["median_s"] == pytest.approx(2.2)
    assert rows["floor"]["min_s"] == pytest.approx(2.0)
    assert rows["floor"]["ratio_to_floor"] == pytest.approx(1.0)
    assert rows["floor"]["within"] is None
    assert rows["suite"]["median_s"] == pytest.approx(4.2)
    assert rows["suite"]["ratio_to_floor"] == pytest.approx(4.2 / 2.2)
    assert rows["suite"]["compared"] == pytest.approx(4.2 / 2.2)
    assert rows["suite"]["within"] is True
    assert rows["direct"]["compared"] == pytest.approx(9.2 / (4 * 2.2))
    assert rows["direct"]["within"] is True
    assert "tox" not in rows


def test_summarize_flags_figures_over_target():
    """Suite above 2.5x the floor, direct above 1.5x the floors, tox 25 s over the suite: OVER."""
    timings = {"floor": [2.0], "suite": [5.1], "direct": [12.2], "tox": [30.2]}
    rows = rows_by_name(bench.summarize(timings, file_count=4))
    assert rows["suite"]["compared"] == pytest.approx(2.55) and rows["suite"]["within"] is False
    assert rows["direct"]["compared"] == pytest.approx(1.525) and rows["direct"]["within"] is False
    assert rows["tox"]["compared"] == pytest.approx(25.1) and rows["tox"]["within"] is False
    assert rows["suite"]["target_text"] == "<= 2.5 x floor"
    assert bench.verdict(rows["tox"]) == "OVER target"


def test_summarize_targets_are_inclusive_and_scale_with_file_count():
    """Exactly on target counts as within; the direct target is per file (n x floor), not fixed at 4."""
    timings = {"floor": [2.0], "suite": [5.0], "direct": [6.0], "tox": [30.0]}
    rows = rows_by_name(bench.summarize(timings, file_count=2))
    assert rows["suite"]["compared"] == pytest.approx(2.5) and rows["suite"]["within"] is True
    assert rows["direct"]["compared"] == pytest.approx(1.5) and rows["direct"]["within"] is True
    assert rows["direct"]["target_text"] == "<= 1.5 x 2 floors"
    assert rows["tox"]["within"] is True


def test_summarize_with_min_compares_the_fastest_runs():
    """--stat min: ratios and verdicts use each measurement's minimum; the median is still reported."""
    timings = {"floor": [2.0, 3.0, 4.0], "suite": [3.5, 9.0, 9.0], "direct": [8.0, 12.0, 12.0],
               "tox": [28.5, 40.0, 40.0]}
    by_median = rows_by_name(bench.summarize(timings, file_count=4, stat="median"))
    by_min = rows_by_name(bench.summarize(timings, file_count=4, stat="min"))
    assert by_median["suite"]["within"] is False and by_min["suite"]["within"] is True
    assert by_min["suite"]["compared"] == pytest.approx(1.75)
    assert by_min["suite"]["ratio_to_floor"] == pytest.approx(1.75)
    assert by_min["suite"]["median_s"] == pytest.approx(9.0)
    assert by_min["direct"]["compared"] == pytest.approx(1.0)
    assert by_min["tox"]["compared"] == pytest.approx(25.0) and by_min["tox"]["within"] is True
    assert by_median["tox"]["compared"] == pytest.approx(31.0) and by_median["tox"]["within"] is False


def test_paired_compares_each_round_with_its_own_reference():
    """The default: the median of per-round ratios (differences for tox). A round under load scales both sides
    of its ratio (rounds under 2x and 4x load still give 2.0); medians taken apart mix rounds (8.0 / 3.0)."""
    timings = {"floor": [2.0, 4.0, 8.0], "suite": [4.0, 8.0, 16.0], "coverage": [6.0, 8.0, 32.0],
               "direct": [8.0, 40.0, 32.0], "tox": [30.0, 10.0, 41.0]}
    rows = rows_by_name(bench.summarize(timings, file_count=2))
    assert rows["suite"]["stat"] == "paired" and rows["suite"]["compared"] == pytest.approx(2.0)
    assert rows["suite"]["ratio_to_floor"] == pytest.approx(2.0) and rows["suite"]["within"] is True
    assert rows["coverage"]["compared"] == pytest.approx(1.5) and rows["coverage"]["within"] is True
    assert rows["direct"]["compared"] == pytest.approx(2.0) and rows["direct"]["within"] is False
    assert rows["tox"]["compared"] == pytest.approx(25.0)
    skewed = {"floor": [2.0, 4.0, 3.0], "suite": [9.0, 8.0, 7.5]}
    assert bench.summarize(skewed, 4, stat="median")[1]["compared"] == pytest.approx(8.0 / 3.0)
    assert bench.summarize(skewed, 4)[1]["compared"] == pytest.approx(2.5)


def test_format_table_has_one_row_per_measurement_with_verdicts():
    """The table shows median, min, ratio to floor, target and verdict for each measurement."""
    rows = bench.summarize({"floor": [2.0], "suite": [6.0], "direct": [8.0]}, file_count=4)
    lines = bench.format_table(rows).splitlines()
    assert lines[0].split()[:8] == ["measurement", "runs", "median", "s", "min", "s", "x", "floor"]
    assert "x floor (paired)" in lines[0]
    assert len(lines) == 2 + 3
    assert lines[2].startswith("floor") and lines[2].split()[-2:] == ["reference", "-"]
    assert "6.00" in lines[3] and "3.00" in lines[3] and lines[3].endswith("OVER target")
    assert "1.00 x 4 floors" in lines[4] and lines[4].endswith("within target")


# ---- interleaving ---------------------------------------------------------------------------------

def test_run_rounds_interleaves_rotates_and_sums_direct_files(tmp_path):
    """Each round times every measurement once, starting one later each round; direct sums its files."""
    plan = bench.build_plan("py", FILES[:2], str(tmp_path), coverage=False)
    timer = FakeTimer({"floor": [1.0, 2.0, 3.0], "suite": 4.0, "direct": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]})
    per_step = {}
    timings = bench.run_rounds(plan, 3, timer, step_timings=per_step)
    order = [step.measurement for step in timer.calls]
    assert order == ["floor", "suite", "direct", "direct",
                     "suite", "direct", "direct", "floor",
                     "direct", "direct", "floor", "suite"]
    assert timings == {"floor": [1.0, 2.0, 3.0], "suite": [4.0, 4.0, 4.0], "direct": [3.0, 7.0, 11.0]}
    assert per_step[f"py {FILES[0]}"] == [1.0, 3.0, 5.0] and per_step[f"py {FILES[1]}"] == [2.0, 4.0, 6.0]


# ---- command construction -------------------------------------------------------------------------

def test_plan_commands_are_the_issue_measurements(tmp_path):
    """floor imports torch + aot_autograd; suite runs the files in one process, coverage off (the
    input-space figure), then with its coverage on; direct runs each file."""
    plan = bench.build_plan("/x/python", FILES, str(tmp_path))
    assert [step.measurement for step in plan] == ["floor", "suite", "coverage"] + ["direct"] * 4
    assert plan[0].argv == ["/x/python", "-c", "import torch, torch._functorch.aot_autograd"]
    assert plan[1].argv == ["/x/python", "-m", "torch_npu_testing", "suite", *FILES,
                            "--results", os.path.join(str(tmp_path), "suite.json"), "--no-coverage"]
    assert plan[2].argv == ["/x/python", "-m", "torch_npu_testing", "suite", *FILES,
                            "--results", os.path.join(str(tmp_path), "coverage.json")]
    assert [step.argv for step in plan[3:]] == [["/x/python", path] for path in FILES]
    assert [s.measurement for s in bench.build_plan("py", FILES, str(tmp_path), coverage=False)] == [
        "floor", "suite"] + ["direct"] * 4


def test_the_coverage_row_is_a_ratio_to_the_suite_without_coverage():
    rows = rows_by_name(bench.summarize({"floor": [2.0], "suite": [4.0, 4.0, 4.4], "coverage": [5.6, 6.0, 9.0],
                                         "direct": [8.0]}, file_count=4))
    assert rows["coverage"]["compared"] == pytest.approx(6.0 / 4.0) and rows["coverage"]["within"] is True
    assert rows["coverage"]["compared_text"] == "1.50 x suite" and rows["coverage"]["target_text"] == "<= 1.5 x suite"
    assert rows["coverage"]["label"] == "suite with coverage (4 files)"
    over = rows_by_name(bench.summarize({"floor": [2.0], "suite": [4.0], "coverage": [6.1]}, file_count=1))
    assert over["coverage"]["within"] is False and bench.verdict(over["coverage"]) == "OVER target"


def test_tox_step_runs_the_env_without_touching_real_results(tmp_path):
    """tox -e master writes its results to the scratch dir and does not inherit an outer tox env."""
    plan = bench.build_plan("py", FILES, str(tmp_path), tox_argv=["tox"], tox_env="master")
    tox = plan[-1]
    assert tox.measurement == "tox"
    assert tox.argv == ["tox", "-e", "master"]
    env = tox.environ({"TOX_ENV_NAME": "bench", "VIRTUAL_ENV": "/r/.tox/bench", "PATH": "/bin",
                       "TORCH_NPU_TESTING_RESULTS_DIR": "/r/.tox/results"})
    assert "TOX_ENV_NAME" not in env and "VIRTUAL_ENV" not in env
    assert env["PATH"] == "/bin"
    assert env["TORCH_NPU_TESTING_RESULTS_DIR"] == os.path.join(str(tmp_path), "results")
    assert env["TORCH_NPU_TESTING_XML_DIR"] == os.path.join(str(tmp_path), "test-reports")


def test_tox_step_passes_explicit_files_as_posargs(tmp_path):
    """With --files, tox runs the same files as the suite row (after `--`)."""
    step = bench.tox_step(["python", "-m", "tox"], "v2_12", FILES[:1], str(tmp_path), explicit_files=True)
    assert step.argv == ["python", "-m", "tox", "-e", "v2_12", "--", FILES[0]]


def test_commands_disable_backend_autoload_unless_set():
    """Like the tox envs, measured commands run with TORCH_DEVICE_BACKEND_AUTOLOAD=0 unless the user set it."""
    step = bench.floor_step("py")
    assert step.environ({})["TORCH_DEVICE_BACKEND_AUTOLOAD"] == "0"
    assert step.environ({"TORCH_DEVICE_BACKEND_AUTOLOAD": "1"})["TORCH_DEVICE_BACKEND_AUTOLOAD"] == "1"


def test_tox_requires_an_existing_env(tmp_path):
    """--tox measures a warm env: a missing .tox/ENV is a usage error, nothing is run."""
    root = make_root(tmp_path)
    timer = FakeTimer({})
    with pytest.raises(UsageError, match=r"run `tox -e master_213` once first"):
        bench.main(parse(["--root", str(root), "--tox", "--tox-command", sys.executable]), timer=timer)
    assert timer.calls == []


def test_missing_file_and_empty_root_are_usage_errors(tmp_path):
    """An explicit file that does not exist, a table with no files or one missing on disk, stops before any
    timing."""
    make_root(tmp_path, files=[])
    with pytest.raises(UsageError, match="no test files found"):
        bench.main(parse(["--root", str(tmp_path)]), timer=FakeTimer({}))
    make_root(tmp_path / "gone", files=FILES[:1])
    (tmp_path / "gone" / FILES[0]).unlink()
    with pytest.raises(UsageError, match=f"^{FILES[0]}, the test_file of torch.made_up_0 in .*, does not exist"):
        bench.main(parse(["--root", str(tmp_path / "gone")]), timer=FakeTimer({}))
    with pytest.raises(UsageError, match="no such test file: nope.py"):
        bench.main(parse(["--root", str(tmp_path), "--files", "nope.py"]), timer=FakeTimer({}))


# ---- main with fake timings -----------------------------------------------------------------------

def test_main_prints_table_writes_json_and_exits_zero_when_over_target(tmp_path):
    """Over target is reported, not failed: exit 0, table on stdout, figures and raw timings in JSON."""
    root = make_root(tmp_path / "root")
    (root / ".tox" / "master_213").mkdir(parents=True)
    out = tmp_path / "out" / "bench.json"
    timer = FakeTimer({"floor": 2.0, "suite": 6.0, "coverage": 7.0, "direct": 2.0, "tox": 40.0})
    stdout, stderr = io.StringIO(), io.StringIO()
    args = parse(["--root", str(root), "--repeat", "2", "--tox", "--tox-command", sys.executable,
                  "--json", str(out), "--python", "/x/python"])
    assert bench.main(args, timer=timer, stream=stdout, progress_stream=stderr) == 0
    # one warm-up floor, then 2 rounds of floor + suite + coverage + 4 direct + tox
    assert len(timer.calls) == 1 + 2 * 8
    table = stdout.getvalue()
    assert table.count("OVER target") == 2 and table.count("within target") == 2
    report = json.loads(out.read_text())
    assert report["format"] == "torch_npu_testing.bench/1"
    assert report["files"] == FILES and report["repeat"] == 2
    assert report["timings_s"] == {"floor": [2.0, 2.0], "suite": [6.0, 6.0], "coverage": [7.0, 7.0],
                                   "direct": [8.0, 8.0], "tox": [40.0, 40.0]}
    assert report["commands"]["tox"] == [f"{sys.executable} -e master_213"]
    assert report["step_timings_s"][f"/x/python {FILES[3]}"] == [2.0, 2.0]
    assert "round 2/2" in stderr.getvalue()


def test_main_fails_with_one_line_naming_the_failing_command(tmp_path):
    """A measured command that fails makes the bench exit 1 with one line naming that command."""
    root = make_root(tmp_path)

    def timer(step):
        if step.measurement == "suite":
            raise bench.CommandFailed(step.argv, "exit status 1")
        return 1.0
    stdout, stderr = io.StringIO(), io.StringIO()
    args = parse(["--root", str(root), "--python", "/x/python", "--repeat", "1"])
    assert bench.main(args, timer=timer, stream=stdout, progress_stream=stderr) == 1
    errors = [line for line in stderr.getvalue().splitlines() if "error" in line]
    assert len(errors) == 1
    assert errors[0].startswith("torch_npu_testing: error: bench: command failed (exit status 1): "
                                f"/x/python -m torch_npu_testing suite {' '.join(FILES)} --results ")
    assert stdout.getvalue() == ""


# ---- real subprocesses ----------------------------------------------------------------------------

def test_time_step_reports_exit_status_and_last_output_line(tmp_path):
    """A real command that exits non-zero raises CommandFailed with its status and last output line."""
    step = bench.Step("direct", [sys.executable, "-c", "print('first'); print('boom'); raise SystemExit(3)"])
    with pytest.raises(bench.CommandFailed, match=r"exit status 3; last output line: 'boom'"):
        bench.time_step(step, str(tmp_path))
    assert bench.time_step(bench.Step("direct", [sys.executable, "-c", "pass"]), str(tmp_path)) > 0


def test_cli_real_failure_exits_nonzero(tmp_path, capsys):
    """Through the CLI: an interpreter that fails (here `false`) gives exit 1 and names the command."""
    root = make_root(tmp_path)
    false = "/bin/false" if os.path.exists("/bin/false") else "/usr/bin/false"
    assert cli_main(["bench", "--root", str(root), "--python", false, "--repeat", "1"]) == 1
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err == (f"torch_npu_testing: error: bench: command failed (exit status 1): {false} -c "
                   "'import torch, torch._functorch.aot_autograd'")


TINY_TEST = textwrap.dedent("""\
    import unittest


    class Tiny(unittest.TestCase):
        def test_adds(self):
            self.assertEqual(1 + 1, 2)


    if __name__ == "__main__":
        unittest.main()
    """)


def test_real_run_over_a_tiny_synthetic_suite(tmp_path, capsys, monkeypatch):
    """End to end with real subprocesses, --repeat 1: table printed, JSON written, exit 0."""
    for name in list(os.environ):  # the measured subprocesses inherit the environment: keep it neutral
        if name in ("IN_CI", "TORCH_DEVICE_BACKEND_AUTOLOAD") or name.startswith("TORCH_NPU_TESTING_"):
            monkeypatch.delenv(name)
    root = make_root(tmp_path / "root", files=["test/functorch/tiny_api.py", "test/npu/test_tiny.py"],
                     body=TINY_TEST, table=False)
    out = tmp_path / "bench.json"
    status = cli_main(["bench", "--root", str(root), "--repeat", "1", "--warmup", "0", "--json", str(out),
                       "--files", "test/functorch/tiny_api.py", "test/npu/test_tiny.py"])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    report = json.loads(out.read_text())
    assert report["files"] == ["test/functorch/tiny_api.py", "test/npu/test_tiny.py"]
    assert report["versions"].get("torch")
    assert [row["measurement"] for row in report["rows"]] == ["floor", "suite", "coverage", "direct"]
    assert all(len(values) == 1 and values[0] > 0 for values in report["timings_s"].values())
    # files that do not import torch cost far less than the torch import
    direct = next(row for row in report["rows"] if row["measurement"] == "direct")
    assert direct["ratio_to_floor"] < 1.0
    assert "floor (import torch + aot_autograd)" in captured.out


def test_no_coverage_row_times_no_suite_with_coverage(tmp_path):
    root = make_root(tmp_path)
    timer = FakeTimer({"floor": 2.0, "suite": 4.0, "direct": 2.0})
    args = parse(["--root", str(root), "--repeat", "1", "--warmup", "0", "--no-coverage-row"])
    assert bench.main(args, timer=timer, stream=io.StringIO(), progress_stream=io.StringIO()) == 0
    assert [step.measurement for step in timer.calls] == ["floor", "suite"] + ["direct"] * 4


def test_bench_mutate_times_one_run_against_its_target(tmp_path, capsys):
    import re
    import shutil
    fixtures = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "mutate")
    shutil.copytree(fixtures, tmp_path, dirs_exist_ok=True)
    options = "--api fakeapi.Level.clone --internal-package fakeapi"
    assert cli_main(["bench", "--root", str(tmp_path), "--mutate", "test_strong_api.py", "--mutate-args", options]) == 0
    line = capsys.readouterr().out.strip()
    assert re.fullmatch(r"mutate test_strong_api\.py: [\d.]+s wall; target 1\.25 x \(import [\d.]+s \+ \d+ x [\d.]+s / "
                        r"\d+\) = [\d.]+s: (within|over) target", line), line
    assert cli_main(["bench", "--root", str(tmp_path), "--mutate", "test_strong_api.py", "--mutate-args",
                     "--api fakeapi.nope"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("torch_npu_testing: error: bench: ")


def test_the_tox_env_defaults_to_the_env_of_the_tables_tool_torch(monkeypatch):
    """No env name is pinned in bench: --tox-env defaults to the env whose torch is table.json's tool_torch."""
    from torch_npu_testing.common import table

    assert parse([]).tox_env == table.tool_env()
    assert table.env_torch(table.tool_env()) == table.tool_torch()
    monkeypatch.setattr(table, "tool_torch", lambda: "2.14.1")
    assert parse([]).tox_env == "master_214"
    monkeypatch.setattr(table, "tool_torch", lambda: "9.9.9")
    with pytest.raises(ValueError, match="no env of the table pins tool_torch 9.9.9"):
        table.tool_env()


def test_the_simulated_row_times_each_file_on_the_simulated_npu_against_twice_direct(tmp_path):
    """--simulated: each file also runs as PY FILE with TORCH_NPU_TESTING_STANDIN_NPU=simulated (the direct row's
    steps drop the switch, so an exported switch cannot slip into the CPU figure); target at most 2 x direct."""
    plan = bench.build_plan("py", FILES[:2], str(tmp_path), coverage=False, simulated=True)
    simulated = [step for step in plan if step.measurement == "simulated"]
    direct = [step for step in plan if step.measurement == "direct"]
    assert [step.argv for step in simulated] == [["py", path] for path in FILES[:2]]
    assert all(step.environ({})["TORCH_NPU_TESTING_STANDIN_NPU"] == "simulated" for step in simulated)
    assert all("TORCH_NPU_TESTING_STANDIN_NPU" not in step.environ({"TORCH_NPU_TESTING_STANDIN_NPU": "simulated"})
               for step in direct)
    assert "simulated" not in {step.measurement for step in bench.build_plan("py", FILES, str(tmp_path))}
    rows = rows_by_name(bench.summarize({"floor": [2.0], "suite": [4.0], "direct": [8.0], "simulated": [16.0]},
                                        file_count=2))
    assert (rows["simulated"]["compared"], rows["simulated"]["within"]) == (2.0, True)
    assert rows["simulated"]["target_text"] == "<= 2 x direct"
    over = rows_by_name(bench.summarize({"floor": [2.0], "suite": [4.0], "direct": [8.0], "simulated": [16.5]},
                                        file_count=2))
    assert over["simulated"]["within"] is False
