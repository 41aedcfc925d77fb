# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""``bench``: how much the kit costs on top of the unavoidable ``import torch``, as ratios in one run.

Importing ``torch`` and ``torch._functorch.aot_autograd`` (the *floor*) dominates every run of the kit,
so costs are stated relative to it rather than in absolute seconds (machines are shared and noisy;
absolute times from different runs do not compare). Each measurement is the wall time of a fresh
subprocess, started from ``--root`` (default: the current directory):

* ``floor``:  ``PY -c "import torch, torch._functorch.aot_autograd"``;
* ``suite``:  ``PY -m torch_npu_testing suite FILES --results TMP --no-coverage``; target: at most
  2.5 x floor (a ratio: shared machines differ in speed);
* ``coverage``: the same suite with its implementation coverage on (the default in the branch envs);
  target: at most 1.5 x the ``suite`` figure (``--no-coverage-row`` leaves it out);
* ``direct``: each file run as ``PY FILE``, summed; target: at most 1.5 x (number of files x floor);
* ``simulated`` (only with ``--simulated``): each file as ``PY FILE`` on the simulated NPU
  (``TORCH_NPU_TESTING_STANDIN_NPU=simulated``; its build is paid in the warm-up), summed; target: at most
  2 x ``direct``;
* ``tox`` (only with ``--tox``): a warm ``tox -e ENV``, by default the env of the table's ``tool_torch``;
  target: at most the suite + 25 s (a branch env also runs ``test/in_env``: two fresh interpreters and
  pytest's own torch import, ~12 s on a 2-core box, plus ensure-torch-npu and the helper's reinstall).

Every measurement is repeated ``--repeat`` times (default 3) in interleaved rounds (each round runs
every measurement once, starting at a different one each round) so slow drift of the machine's load
hits all of them alike. The verdict uses the median of the per-round ratios (``--stat paired``, the
default): each round's figure against the same round's reference, measured seconds apart, so a burst of
load on a shared machine scales both sides of one ratio and not one side of another. ``--stat median`` /
``--stat min`` instead divide the median / minimum of each measurement by the reference's (the same
rounds' median or minimum, taken at other moments). The median and minimum seconds are always shown.
One untimed floor run comes first (``--warmup``) so the first timed import does not pay for a cold
file cache.

A benchmark, not a test: exit 0 even when a figure is over its target; 1 only when a measured command
itself fails, with one line naming that command.
"""
import datetime
import json
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile

from ..common import table
from .bench_steps import DEFAULT_TIMEOUT_S, CommandFailed, Step, time_step  # noqa: F401 (bench.X, as before)

BENCH_FORMAT = "torch_npu_testing.bench/1"
FLOOR_CODE = "import torch, torch._functorch.aot_autograd"
VERSION_CODE = ("import importlib.metadata as m\nfor name in ('torch', 'torch_npu'):\n    try:\n"
                "        print(name, m.version(name))\n    except m.PackageNotFoundError:\n        pass\n")

# Targets from the issue, relative to the floor measured in the same run.
SUITE_RATIO = 2.5
COVERAGE_RATIO = 1.5
DIRECT_RATIO = 1.5
TOX_OVER_SUITE_S = 25.0
SIMULATED_RATIO = 2.0
SWITCH = "TORCH_NPU_TESTING_STANDIN_NPU"

DEFAULT_REPEAT = 3
# One figure per measurement: the median, or the minimum (noise only adds time; better on a busy machine).
STATS = {"median": statistics.median, "min": min, "paired": statistics.median}  # paired: of per-round ratios
REFERENCES = {"suite": "floor", "coverage": "suite", "direct": "floor", "simulated": "direct", "tox": "suite"}
MEASUREMENTS = ("floor", "suite", "coverage", "direct", "simulated", "tox")
# Variables tox sets inside an env; a nested `tox -e ENV` (from `tox -e bench`) must not inherit them.
TOX_INNER_VARIABLES = ("TOX_ENV_NAME", "TOX_ENV_DIR", "TOX_WORK_DIR", "TOX_PACKAGE", "VIRTUAL_ENV")


# ---- command construction -------------------------------------------------------------------------

def floor_step(python):
    return Step("floor", [python, "-c", FLOOR_CODE])


def suite_step(python, files, results_path, coverage=False):
    """The suite in one process; ``coverage``: with its implementation coverage (measurement ``coverage``)."""
    argv = [python, "-m", "torch_npu_testing", "suite", *files, "--results", results_path]
    return Step("coverage", argv) if coverage else Step("suite", argv + ["--no-coverage"])


def direct_steps(python, files, simulated=False):
    """Each file as ``PY FILE``: on the CPU, or on the simulated NPU (measurement ``simulated``)."""
    if simulated:
        return [Step("simulated", [python, path], set_env={SWITCH: "simulated"}) for path in files]
    return [Step("direct", [python, path], unset_env=(SWITCH,)) for path in files]


def tox_step(tox_argv, env_name, files, scratch_dir, explicit_files):
    """A ``tox -e ENV`` run whose results land in ``scratch_dir``, not in the user's results directory.

    Explicitly chosen files are passed on as tox posargs so tox runs the same files as the suite row;
    without them the env runs its own default discovery (the same table files).
    """
    argv = list(tox_argv) + ["-e", env_name]
    if explicit_files:
        argv += ["--", *files]
    return Step("tox", argv,
                set_env={"TORCH_NPU_TESTING_RESULTS_DIR": os.path.join(scratch_dir, "results"),
                         "TORCH_NPU_TESTING_XML_DIR": os.path.join(scratch_dir, "test-reports")},
                unset_env=TOX_INNER_VARIABLES)


def build_plan(python, files, scratch_dir, tox_argv=None, tox_env=None, explicit_files=False,
               coverage=True, simulated=False):
    """The steps of one round, grouped by measurement in :data:`MEASUREMENTS` order."""
    plan = [floor_step(python), suite_step(python, files, os.path.join(scratch_dir, "suite.json"))]
    if coverage:
        plan.append(suite_step(python, files, os.path.join(scratch_dir, "coverage.json"), coverage=True))
    plan += direct_steps(python, files) + (direct_steps(python, files, simulated=True) if simulated else [])
    if tox_argv:
        plan.append(tox_step(tox_argv, tox_env, files, scratch_dir, explicit_files))
    return plan


# ---- timing ---------------------------------------------------------------------------------------

def round_order(repeat_index, measurements):
    """Measurements of round ``repeat_index``: rotated so no measurement always runs first."""
    shift = repeat_index % len(measurements)
    return list(measurements[shift:]) + list(measurements[:shift])


def run_rounds(plan, repeat, timer, progress=None, step_timings=None):
    """Run ``repeat`` interleaved rounds; ``{measurement: [seconds per round]}``.

    ``timer(step) -> seconds`` runs one step (injected by tests). A measurement with several steps
    (``direct``: one per file) counts the sum of its steps in a round; each step's own seconds are
    appended to ``step_timings[command line]`` when a dict is given (which file costs what).
    """
    measurements = [m for m in MEASUREMENTS if any(step.measurement == m for step in plan)]
    timings = {m: [] for m in measurements}
    for index in range(repeat):
        this_round = {}
        for measurement in round_order(index, measurements):
            this_round[measurement] = 0.0
            for step in plan:
                if step.measurement == measurement:
                    seconds = timer(step)
                    this_round[measurement] += seconds
                    if step_timings is not None:
                        step_timings.setdefault(shlex.join(step.argv), []).append(seconds)
            timings[measurement].append(this_round[measurement])
        if progress:
            progress(f"round {index + 1}/{repeat}: " + ", ".join(
                f"{m} {this_round[m]:.2f} s" for m in measurements))
    return timings


# ---- figures --------------------------------------------------------------------------------------

def compared_value(timings, measurement, reference, stat, scale=1.0, difference=False):
    """``measurement`` against ``reference`` (times ``scale``): the median of the per-round ratios (or
    differences) with ``stat`` "paired", else the ratio (difference) of the two measurements' ``stat``."""
    def compare(value, ref):
        return value - ref if difference else value / (scale * ref)
    if stat == "paired":
        return statistics.median(compare(v, r) for v, r in zip(timings[measurement], timings[reference]))
    return compare(STATS[stat](timings[measurement]), STATS[stat](timings[reference]))


def summarize(timings, file_count, stat="paired"):
    """Rows of the table: median, min, ratio to the floor, the compared figure and verdict.

    Ratios, compared figures and verdicts use ``stat``: "paired" (the median of per-round ratios), or the
    "median" or "min" of each measurement (see :func:`compared_value`).
    """
    rows = []
    for measurement in MEASUREMENTS:
        if measurement not in timings:
            continue
        reference = REFERENCES.get(measurement)
        scale = file_count if measurement == "direct" else 1.0
        ratio = compared_value(timings, measurement, reference, stat, scale,
                               difference=measurement == "tox") if reference else None
        row = {"measurement": measurement, "runs": len(timings[measurement]), "stat": stat,
               "median_s": statistics.median(timings[measurement]), "min_s": min(timings[measurement]),
               "ratio_to_floor": compared_value(timings, measurement, "floor", stat)}
        if measurement == "floor":
            row.update(label="floor (import torch + aot_autograd)", compared=None, compared_text="-",
                       target=None, target_text="reference", within=None)
        elif measurement == "suite":
            row.update(label=f"suite, one process ({file_count} files)", compared=ratio,
                       compared_text=f"{ratio:.2f} x floor", target=SUITE_RATIO,
                       target_text=f"<= {SUITE_RATIO:g} x floor", within=ratio <= SUITE_RATIO)
        elif measurement == "coverage":
            row.update(label=f"suite with coverage ({file_count} files)", compared=ratio,
                       compared_text=f"{ratio:.2f} x suite", target=COVERAGE_RATIO,
                       target_text=f"<= {COVERAGE_RATIO:g} x suite", within=ratio <= COVERAGE_RATIO)
        elif measurement == "direct":
            row.update(label=f"direct, PY FILE x {file_count} (sum)", compared=ratio,
                       compared_text=f"{ratio:.2f} x {file_count} floors", target=DIRECT_RATIO,
                       target_text=f"<= {DIRECT_RATIO:g} x {file_count} floors", within=ratio <= DIRECT_RATIO)
        elif measurement == "simulated":
            row.update(label=f"simulated NPU, PY FILE x {file_count} (sum)", compared=ratio,
                       compared_text=f"{ratio:.2f} x direct", target=SIMULATED_RATIO,
                       target_text=f"<= {SIMULATED_RATIO:g} x direct", within=ratio <= SIMULATED_RATIO)
        elif measurement == "tox":
            over = ratio
            row.update(label="tox -e (warm)", compared=over, compared_text=f"suite {over:+.2f} s",
                       target=TOX_OVER_SUITE_S, target_text=f"<= suite + {TOX_OVER_SUITE_S:g} s",
                       within=over <= TOX_OVER_SUITE_S)
        rows.append(row)
    return rows


def verdict(row):
    if row["within"] is None:
        return "-"
    return "within target" if row["within"] else "OVER target"


def format_table(rows):
    stat = rows[0]["stat"] if rows else "paired"
    header = ("measurement", "runs", "median s", "min s", f"x floor ({stat})", "compared", "target", "verdict")
    lines = [(row["label"], str(row["runs"]), f"{row['median_s']:.2f}", f"{row['min_s']:.2f}",
              f"{row['ratio_to_floor']:.2f}", row["compared_text"], row["target_text"], verdict(row))
             for row in rows]
    widths = [max(len(cells[i]) for cells in [header] + lines) for i in range(len(header))]
    numeric = {1, 2, 3, 4}

    def render(cells):
        return "  ".join(c.rjust(w) if i in numeric else c.ljust(w)
                         for i, (c, w) in enumerate(zip(cells, widths))).rstrip()
    return "\n".join([render(header), render(["-" * w for w in widths])] + [render(cells) for cells in lines])


# ---- the command ----------------------------------------------------------------------------------

def installed_versions(python, cwd):
    """``{"torch": "2.13.0", ...}`` from the interpreter's package metadata (no torch import)."""
    try:
        out = subprocess.run([python, "-c", VERSION_CODE], cwd=cwd, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, timeout=120, check=True)
    except (OSError, subprocess.SubprocessError):
        return {}
    return dict(line.split(" ", 1) for line in out.stdout.decode().splitlines() if " " in line)


def resolve_files(args, root):
    from ..common.errors import UsageError
    from .run import discover

    files = list(args.files) or discover(root)
    missing = [path for path in files if not os.path.isfile(os.path.join(root, path))]
    if missing:
        raise UsageError(f"no such test file: {missing[0]} (paths are relative to --root {root})")
    return files


def resolve_tox(args, root):
    """The tox argv, or None without ``--tox``; the env must exist already (the figure is a warm run)."""
    from ..common.errors import UsageError

    if not args.tox:
        return None
    tox_argv = shlex.split(args.tox_command)
    if not tox_argv or shutil.which(tox_argv[0]) is None:
        raise UsageError(f"--tox: cannot find {args.tox_command!r} (set --tox-command)")
    if not os.path.isdir(os.path.join(root, ".tox", args.tox_env)):
        raise UsageError(f"--tox measures a warm env, but {os.path.join(root, '.tox', args.tox_env)} does not "
                         f"exist: run `tox -e {args.tox_env}` once first")
    return tox_argv


def add_arguments(parser):
    parser.add_argument("--repeat", type=int, default=DEFAULT_REPEAT,
                        help=f"timed runs of each measurement, interleaved (default {DEFAULT_REPEAT})")
    parser.add_argument("--python", default=sys.executable,
                        help="interpreter to measure (default: this one, %(default)s)")
    parser.add_argument("--files", nargs="+", default=[],
                        help="test files, relative to --root (default: what `suite` discovers)")
    parser.add_argument("--root", default=".", help="directory the commands run in (default: .)")
    parser.add_argument("--tox", action="store_true",
                        help="also time a warm `tox -e ENV` (the env must exist already); off by default")
    tool_env = table.tool_env()
    parser.add_argument("--tox-env", default=tool_env,
                        help=f"env for --tox (default: {tool_env}, whose torch is the table's tool_torch)")
    parser.add_argument("--tox-command", default="tox", help="how to call tox (default: tox)")
    parser.add_argument("--simulated", action="store_true",
                        help="also time each file on the simulated NPU (docs/device.md); off by default")
    parser.add_argument("--no-coverage-row", action="store_true",
                        help="do not time the suite with its implementation coverage on")
    parser.add_argument("--warmup", type=int, default=1, help="untimed floor runs first (default 1)")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S,
                        help=f"seconds one measured command may take (default {DEFAULT_TIMEOUT_S})")
    parser.add_argument("--stat", choices=sorted(STATS), default="paired",
                        help="figure compared with the targets: paired (default: the median of per-round ratios), "
                             "or the median or min of each measurement's runs")
    parser.add_argument("--json", metavar="OUT", help="also write the figures and raw timings as JSON here")
    parser.add_argument("--mutate", metavar="FILE", help="instead: time one `mutate FILE` against its wall-time "
                        "target, 1.25 x (import + N x T / jobs) (torch_npu_testing/suite/bench_mutate.py)")
    parser.add_argument("--mutate-args", default="", metavar="ARGS", help="more options for that mutate run")


def write_json(path, facts, progress_stream):
    """The figures, the commands and the raw timings as JSON (``--json``)."""
    plan, timings = facts.pop("plan"), facts.pop("timings")
    report = {"format": BENCH_FORMAT, "started_at": facts["started_at"], "python": facts["python"],
              "versions": facts["versions"], "platform": platform.platform(), "cpu_count": os.cpu_count(),
              "root": facts["root"], "files": facts["files"], "repeat": facts["repeat"], "stat": facts["stat"],
              "commands": {m: [shlex.join(step.argv) for step in plan if step.measurement == m] for m in timings},
              "timings_s": timings, "step_timings_s": facts["step_timings"], "rows": facts["rows"]}
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(report, handle, indent=1)
    print(f"bench: figures written to {path}", file=progress_stream)


def main(args, timer=None, stream=None, progress_stream=None):
    """Run the bench; ``timer(step) -> seconds`` replaces the real subprocess timing in unit tests."""
    from ..common.errors import UsageError

    stream = sys.stdout if stream is None else stream
    progress_stream = sys.stderr if progress_stream is None else progress_stream

    if args.repeat < 1:
        raise UsageError("--repeat must be at least 1")
    root = os.path.abspath(args.root)
    if not os.path.isdir(root):
        raise UsageError(f"--root {args.root} is not a directory")
    python = args.python if os.sep in args.python else (shutil.which(args.python) or args.python)
    if getattr(args, "mutate", None):
        from .bench_mutate import bench_mutate
        return bench_mutate(python, args.mutate, root, args.timeout, args.mutate_args, stream, progress_stream)
    files = resolve_files(args, root)
    tox_argv = resolve_tox(args, root)

    def progress(message):
        print(f"bench: {message}", file=progress_stream, flush=True)

    started_at = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    with tempfile.TemporaryDirectory(prefix="tnt-bench-") as scratch:
        plan = build_plan(python, files, scratch, tox_argv, args.tox_env, explicit_files=bool(args.files),
                          coverage=not args.no_coverage_row, simulated=getattr(args, "simulated", False))
        if timer is None:
            def timer(step):
                return time_step(step, root, args.timeout)
        versions = installed_versions(python, root)
        step_timings = {}
        progress(f"{python} ({', '.join(f'{k} {v}' for k, v in versions.items()) or 'torch version unknown'}), "
                 f"{len(files)} files, {args.repeat} rounds" + (f", tox -e {args.tox_env}" if tox_argv else ""))
        try:
            for _ in range(max(args.warmup, 0)):
                timer(floor_step(python))
            if getattr(args, "simulated", False):  # the device's build (or cache look-up), untimed
                timer(Step("simulated", [python, "-c", "import torch_npu_testing, torch_npu"], {SWITCH: "simulated"}))
            timings = run_rounds(plan, args.repeat, timer, progress, step_timings)
        except CommandFailed as exc:
            print(f"torch_npu_testing: error: bench: {exc}", file=progress_stream, flush=True)
            return 1
    rows = summarize(timings, len(files), args.stat)
    print(format_table(rows), file=stream, flush=True)
    if args.json:
        facts = dict(started_at=started_at, python=python, versions=versions, root=root, files=files,
                     repeat=args.repeat, stat=args.stat, plan=plan, timings=timings, step_timings=step_timings,
                     rows=rows)
        write_json(args.json, facts, progress_stream)
    return 0
