# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Run one file of DEST once, whole, under one interpreter, and turn it into a results-model run.

The run is the command of :mod:`.command` (cwd ``DEST/test``); its outcomes are the JUnit XML the file's
runner wrote (:mod:`.junit`). When no XML came back the file is imported once more, on its own, to tell
the two cases apart: it cannot import here (``<import>``, with the import error and its test ids from
the AST; ``not run: needs an Ascend host`` when the error names a missing device), or it imported and its
runner stopped before any test (``<runner>``, the exit status and the output's last lines). The output
is kept as the log, never parsed.
"""
import json
import os
import subprocess
import tempfile
import time

from ..common import gaps, results
from ..common.errors import UsageError
from ..common.results import Case, Outcome
from . import classify, command, junit

FILE_TIMEOUT_S = 2000           # Ascend CI's limit per file
OUTPUT_LIMIT = 200_000          # characters of output kept per run (the end)
TAIL_LINES = 40
IMPORT_CHECK = r"""
import importlib.util, json, sys, traceback
path = sys.argv[1]
try:
    spec = importlib.util.spec_from_file_location("verify_import_check", path)
    spec.loader.exec_module(importlib.util.module_from_spec(spec))
except BaseException as exc:
    lines = traceback.format_exception_only(type(exc), exc)
    print(json.dumps({"ok": False, "reason": lines[-1].strip(), "details": traceback.format_exc()}))
else:
    print(json.dumps({"ok": True}))
"""


def import_check(python, target, cwd, env):
    """``{"ok": True}`` or ``{"ok": False, "reason", "details"}``: does the file import on this host?"""
    try:
        done = subprocess.run([python, "-c", IMPORT_CHECK, target.test_dir_name + ".py"], cwd=cwd, env=env,
                              capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=FILE_TIMEOUT_S,
                              check=False)
        return json.loads(done.stdout.strip().splitlines()[-1])
    except (OSError, subprocess.TimeoutExpired, ValueError, IndexError) as exc:
        return {"ok": False, "reason": f"the import check itself failed: {exc}", "details": None}


def _tail(text, lines=TAIL_LINES):
    return "\n".join(text.rstrip("\n").splitlines()[-lines:])


def no_xml_cases(python, target, cwd, env, rc, output):
    """``(cases, not_run)`` of a run that wrote no XML (see the module docstring)."""
    rel = target.rel_path
    check = import_check(python, target, cwd, env)
    if not check["ok"]:
        case = Case(file=rel, id="<import>", outcome=Outcome.ERROR, reason=check["reason"], details=check["details"])
        device = classify.needed_device(classify.case_text(case))
        return [case], (classify.ASCEND_HOST if device == "npu" else f"needs {device}" if device else None)
    reason = f"the file's runner exited with status {rc} without writing JUnit XML (no test ran)"
    return [Case(file=rel, id="<runner>", outcome=Outcome.ERROR, reason=reason, details=_tail(output))], None


def execute(argv, cwd, env):
    """``(rc, output, seconds)`` of one child, stdout and stderr together."""
    started = time.perf_counter()
    try:
        done = subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              stdin=subprocess.DEVNULL, text=True, errors="replace", timeout=FILE_TIMEOUT_S,
                              check=False)
        rc, output = done.returncode, done.stdout
    except subprocess.TimeoutExpired as exc:
        partial = exc.stdout.decode("utf-8", "replace") if isinstance(exc.stdout, bytes) else exc.stdout
        rc, output = 124, (partial or "") + f"\n(verify: killed after {FILE_TIMEOUT_S} s, Ascend CI's limit per file)\n"
    return rc, output, round(time.perf_counter() - started, 3)


def run_file(python, target, dest, use_runner, how, extra_env, device="cpu"):
    """One results-model run of ``target`` (``path`` relative to DEST), with verify's record in ``verify``."""
    cwd = os.path.join(dest, "test")
    with tempfile.TemporaryDirectory(prefix="verify-xml-") as xml_dir:
        argv, variables = command.file_command(python, target, xml_dir, use_runner, device)
        gaps_file = os.path.join(xml_dir, "device-gaps.jsonl")
        env = dict(os.environ, **extra_env, **variables, **{gaps.VARIABLE: gaps_file})
        rc, output, seconds = execute(argv, cwd, env)
        cases, xml_files = junit.read_cases(xml_dir, target.rel_path)
        xml_names = [os.path.relpath(path, xml_dir) for path in xml_files]
        device_gaps = device_gaps_of(gaps_file, target.rel_path)
    not_run = None
    if not cases:
        cases, not_run = no_xml_cases(python, target, cwd, env, rc, output)
    needs, problems = classify.judge(cases, target.kit_ids)
    if not_run:
        needs, problems = {}, []
    elif not xml_files:
        problems = [f"{cases[0].id}: {cases[0].reason}"]
    seen = {case.id for case in cases}
    problems += [f"kit test {test} has no outcome in the JUnit XML" for test in target.kit_ids
                 if xml_files and test not in seen]
    run = {"path": target.rel_path, "sha256": target.sha256, "initial_grad_mode": True,
           "cases": results.cases_to_dicts(cases), "counts": results.tally(cases), "duration_s": seconds}
    if cases[0].id == "<import>":
        run["import_error"] = cases[0].details or cases[0].reason
    run["verify"] = {"kind": "file", "command": argv, "cwd": cwd, "how": how,
                     "environment": command.recorded_environment(env), "rc": rc, "junit_files": xml_names,
                     "output": output[-OUTPUT_LIMIT:], "needs": needs, "problems": problems, "not_run": not_run,
                     "ids_from_ast": target.ids if not_run or not xml_files else None, "device_gaps": device_gaps}
    return run


def device_gaps_of(path, rel):
    """The simulated NPU's rows of one run (:mod:`..common.gaps`, from ``$TORCH_NPU_TESTING_GAPS``, which verify
    points at a file of its own per run); UsageError naming the file's bad line: a gap list is never short."""
    try:
        return [dict(row, files=[rel]) for row in gaps.read(path)]
    except gaps.GapsFileError as exc:
        raise UsageError(f"{rel}: the device's gaps list cannot be read: {exc}") from None
