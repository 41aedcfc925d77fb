# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""``python -m torch_npu_testing grad-modes FILE [FILE...]``: prove test files ignore the initial grad mode.

Each file is run twice in fresh subprocesses (``PY FILE -v``), once with
``TORCH_NPU_TESTING_INITIAL_GRAD_MODE=0`` (grad disabled before any test) and once with ``=1``; see
:func:`torch_npu_testing.testcase.run_tests`, which applies the variable. A file that passes only under
one of the two depends on global state it does not set itself.

The counts come from unittest's closing lines (``Ran N tests``, ``OK (skipped=K)``,
``FAILED (failures=F, errors=E, skipped=K)``). A run fails when its exit status is not 0 or when it
ran no tests at all (a file that crashed before the summary, or found nothing to run, proves nothing).

This module only starts subprocesses: it never imports torch.
"""
import json
import os
import re
import subprocess
import sys

from .errors import UsageError

INITIAL_GRAD_MODE_ENV = "TORCH_NPU_TESTING_INITIAL_GRAD_MODE"
DEFAULT_MODES = (False, True)
FAILED_OUTPUT_TAIL_LINES = 40

_RAN_RE = re.compile(r"^Ran (\d+) tests? in ", re.MULTILINE)
_OUTCOME_RE = re.compile(r"^(OK|FAILED)(?: \(([^)]*)\))?\s*$", re.MULTILINE)
_COUNT_RE = re.compile(r"([a-z ]+)=(\d+)")


def parse_unittest_summary(output):
    """Counts from unittest's closing lines: ``{"tests", "failures", "errors", "skipped"}``.

    ``tests`` is ``None`` when there is no ``Ran N tests`` line (the run crashed before it); the other
    counts are 0 unless the outcome line names them. The last summary in the output wins.
    """
    counts = {"tests": None, "failures": 0, "errors": 0, "skipped": 0}
    ran = _RAN_RE.findall(output)
    if ran:
        counts["tests"] = int(ran[-1])
    outcomes = _OUTCOME_RE.findall(output)
    if outcomes:
        details = outcomes[-1][1]
        for key, value in _COUNT_RE.findall(details):
            key = key.strip()
            if key in counts:
                counts[key] = int(value)
    return counts


def run_under_grad_modes(path, python=sys.executable, modes=DEFAULT_MODES, env=None, on_result=None):
    """Run ``python path -v`` once per initial grad mode; one result dict per run, in ``modes`` order.

    ``env`` is the base environment (default: this process's); the initial-grad-mode variable is set
    on a copy of it. Each dict has ``path``, ``initial_grad_mode`` (bool), ``returncode``, ``tests``
    (``None`` if no ``Ran N tests`` line), ``failures``, ``errors``, ``skipped`` and ``output``
    (stdout and stderr together). ``on_result(result)``, when given, is called as each run ends.
    """
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise UsageError(f"grad-modes: no such test file: {path}")
    base_env = dict(os.environ if env is None else env)
    results = []
    for mode in modes:
        run_env = dict(base_env)
        run_env[INITIAL_GRAD_MODE_ENV] = "1" if mode else "0"
        try:
            completed = subprocess.run(
                [python, path, "-v"], env=run_env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, text=True, errors="replace", check=False)
        except FileNotFoundError as exc:
            raise UsageError(f"grad-modes: cannot run interpreter {python}: {exc.strerror}") from exc
        except PermissionError as exc:
            raise UsageError(f"grad-modes: cannot run interpreter {python}: {exc.strerror}") from exc
        result = {"path": path, "initial_grad_mode": bool(mode), "returncode": completed.returncode}
        result.update(parse_unittest_summary(completed.stdout))
        result["output"] = completed.stdout
        results.append(result)
        if on_result is not None:
            on_result(result)
    return results


def run_failed(result):
    """A run fails on a non-zero exit status or when it ran no tests."""
    return result["returncode"] != 0 or not result["tests"]


def summary_line(result):
    """``PATH  grad=off  rc=0  tests=32 failures=0 errors=0 skipped=1  ok``"""
    tests = "?" if result["tests"] is None else result["tests"]
    verdict = "FAILED" if run_failed(result) else "ok"
    if result["tests"] == 0 and result["returncode"] == 0:
        verdict += " (no tests ran)"
    elif result["tests"] is None:
        verdict += " (no unittest summary in the output)"
    mode = "on" if result["initial_grad_mode"] else "off"
    return (f"{result['path']}  grad={mode}  rc={result['returncode']}  tests={tests} "
            f"failures={result['failures']} errors={result['errors']} skipped={result['skipped']}  {verdict}")


def output_tail(output, lines=FAILED_OUTPUT_TAIL_LINES):
    kept = output.rstrip("\n").splitlines()[-lines:]
    return "\n".join("    | " + line for line in kept)


def _print_result(result):
    print(summary_line(result), flush=True)
    if run_failed(result):
        print(output_tail(result["output"]), flush=True)


def add_arguments(parser):
    parser.add_argument("files", nargs="+", metavar="FILE", help="unittest files to run (each as `PY FILE -v`)")
    parser.add_argument("--python", default=sys.executable, metavar="PY",
                        help="interpreter that runs the files (default: this one, %(default)s)")
    parser.add_argument("--json", dest="json_path", metavar="OUT",
                        help="also write all results (with each run's full output) as JSON to OUT")


def main(args):
    missing = [path for path in args.files if not os.path.isfile(path)]
    if missing:
        raise UsageError(f"grad-modes: no such test file: {', '.join(missing)}")
    results = []
    for path in args.files:
        results.extend(run_under_grad_modes(path, python=args.python, on_result=_print_result))
    failed = [result for result in results if run_failed(result)]
    print(f"grad-modes: {len(results) - len(failed)} of {len(results)} runs passed", flush=True)
    if args.json_path:
        with open(args.json_path, "w", encoding="utf-8") as handle:
            json.dump({"python": args.python, "runs": results}, handle, indent=2)
            handle.write("\n")
    return 1 if failed else 0
