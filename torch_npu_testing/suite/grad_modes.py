# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""``python -m torch_npu_testing grad-modes FILE [FILE...]``: prove test files ignore the initial grad mode.

Each file runs twice in this process, as the suite's grad-mode isolation probe runs it
(:func:`torch_npu_testing.suite.run_file` then :func:`~torch_npu_testing.suite.rerun_other_grad_mode`):
first with the main thread's grad mode disabled before the first test, then enabled. A file that
passes only under one of the two depends on global state it does not set itself. Outcomes are the
recorded test cases (:mod:`torch_npu_testing.common.results`), not unittest's printed summary.

A run fails when a case failed, errored or unexpectedly succeeded, or when it ran no case at all (a
file that could not be imported, or found nothing to run, proves nothing). ``--python PY`` runs the
same command under another interpreter (with this kit on its ``PYTHONPATH``).

Importing this module does not import torch; running files does.
"""
import importlib.util
import io
import json
import os
import subprocess
import sys

from ..common import results
from ..common.atomic import write_text_atomic
from ..common.errors import UsageError

FAILED_OUTPUT_TAIL_LINES = 40
KIT_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_under_grad_modes(path, on_result=None):
    """Run ``path`` with grad mode disabled, then enabled, at start; ``(runs, probe)``.

    Each run is the suite's run of the file (``path``, ``initial_grad_mode``, ``cases``, ``counts``,
    ...) plus ``output``, unittest's verbose text of that run; the probe says whether every case had
    the same outcome in both. ``on_result(run)``, when given, is called as each run ends.
    """
    from . import run as suite

    path = os.fspath(path)
    if not os.path.isfile(path):
        raise UsageError(f"grad-modes: no such test file: {path}")
    runs = []

    def finish(run, stream):
        run["output"] = stream.getvalue()
        runs.append(run)
        if on_result is not None:
            on_result(run)
        return run

    stream = io.StringIO()
    first = finish(suite.run_file(path, False, stream), stream)
    stream = io.StringIO()
    rerun, probe = suite.rerun_other_grad_mode(first, stream)
    finish(rerun, stream)
    return runs, probe


def run_failed(run):
    """A run fails when a case failed (see :attr:`results.Outcome.fails`) or when it ran no case."""
    return bool(results.failed_count(run["counts"])) or not run["counts"]["cases"]


def summary_line(run):
    """``PATH  grad=off  tests=3 cases=5 passed=4 failed=0 error=0 skipped=1 ...  ok``"""
    verdict = "FAILED" if run_failed(run) else "ok"
    if not run["counts"]["cases"]:
        verdict += " (no tests ran)"
    elif run.get("import_error"):
        verdict += " (the file could not be imported)"
    mode = "on" if run["initial_grad_mode"] else "off"
    return f"{run['path']}  grad={mode}  {results.counts_fields(run['counts'])}  {verdict}"


def output_tail(output, lines=FAILED_OUTPUT_TAIL_LINES):
    kept = output.rstrip("\n").splitlines()[-lines:]
    return "\n".join("    | " + line for line in kept)


def _print_result(run):
    print(summary_line(run), flush=True)
    if run_failed(run):
        print(output_tail(run["output"]), flush=True)


def add_arguments(parser):
    parser.add_argument("files", nargs="+", metavar="FILE", help="unittest files to run, each under both grad modes")
    parser.add_argument("--python", default=sys.executable, metavar="PY",
                        help="interpreter that runs the files (default: this one, %(default)s)")
    parser.add_argument("--json", dest="json_path", metavar="OUT",
                        help="also write all runs (their cases and unittest output) as JSON to OUT")


def _in_other_interpreter(args):
    """The same command under ``--python``, with this kit importable there; its exit status."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [KIT_PARENT, env.get("PYTHONPATH")]))
    argv = [args.python, "-m", "torch_npu_testing", "grad-modes", *args.files]
    if args.json_path:
        argv += ["--json", args.json_path]
    sys.stdout.flush()
    try:
        return subprocess.run(argv, env=env, stdin=subprocess.DEVNULL, check=False).returncode
    except OSError as exc:
        raise UsageError(f"grad-modes: cannot run interpreter {args.python}: {exc.strerror}") from exc


def main(args):
    missing = [path for path in args.files if not os.path.isfile(path)]
    if missing:
        raise UsageError(f"grad-modes: no such test file: {', '.join(missing)}")
    if os.path.abspath(args.python) != os.path.abspath(sys.executable):
        return _in_other_interpreter(args)
    if importlib.util.find_spec("torch") is None:
        raise UsageError(f"grad-modes: torch is not installed in {sys.executable}")
    runs, probes = [], []
    for path in args.files:
        file_runs, probe = run_under_grad_modes(path, on_result=_print_result)
        runs += file_runs
        probes.append(probe)
        if not probe["same"]:
            print(f"{path}: the outcomes differ between the two initial grad modes", flush=True)
    failed = [run for run in runs if run_failed(run)]
    print(f"grad-modes: {len(runs) - len(failed)} of {len(runs)} runs passed", flush=True)
    if args.json_path:
        document = {"format": results.FORMAT, "python": sys.executable, "runs": runs, "grad_mode_isolation": probes}
        write_text_atomic(args.json_path, json.dumps(document, indent=2) + "\n")
    return 1 if failed else 0
