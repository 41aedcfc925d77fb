# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""``suite``: run the API-consistency files in one process and write a machine-readable results file.

This is what every tox branch env runs. One process pays the ``import torch`` cost once instead of once
per file. The run:

1. prints the environment probe (:mod:`torch_npu_testing.probe`) once;
2. loads each test file by path and runs its tests verbosely (skip reasons shown), recording every
   test's outcome;
3. runs the grad-mode files again with the main thread's grad mode *disabled* before the first test,
   the grad-mode isolation probe (a file must not depend on the process's initial grad mode);
4. optionally records which target API each test called (``--api-calls``, see
   :mod:`torch_npu_testing.api_calls`);
5. writes the results JSON (``--results``; the evidence report reads it), JUnit XML when ``IN_CI=1``,
   and a closing line ``N passed, N failed, N skipped``.

Exit status: 0 when nothing failed or errored, 1 otherwise.
"""
import datetime
import glob
import hashlib
import importlib.util
import json
import os
import re
import sys
import time
import traceback
import unittest

RESULTS_FORMAT = "torch_npu_testing.results/1"
DEFAULT_TEST_GLOBS = ("test/functorch/*_api.py", "test/npu/test_*.py")
GRAD_MODE_FILES = ("test/npu/test_locally_disabling_gradient_omputation.py",)
OUTCOMES = ("passed", "failed", "errors", "skipped", "expected_failures", "unexpected_successes")


def discover(root=".", patterns=DEFAULT_TEST_GLOBS):
    """The API test files under ``root``, as sorted paths relative to it."""
    found = set()
    for pattern in patterns:
        found.update(os.path.relpath(path, root) for path in glob.glob(os.path.join(root, pattern)))
    return sorted(found)


def sha256_of(path):
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 16), b""):
            digest.update(block)
    return digest.hexdigest()


def load_module(path):
    """Import a test file by path under a unique module name (files need not be a package)."""
    name = "tnt_suite_" + re.sub(r"\W", "_", os.path.splitext(os.path.normpath(path))[0])
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


class RecordingResult(unittest.TextTestResult):
    """A verbose text result that also keeps one record per test."""

    recorder = None  # an api_calls recorder, set by the suite when --api-calls is on

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.records = []
        self._started = {}

    def _short_id(self, test):
        # "module.Class.test" -> "Class.test": the module name is the file, stored beside.
        if hasattr(test, "test_case"):  # a failing subTest: "Class.test (i=1)"
            return f"{self._short_id(test.test_case)} {test._subDescription()}"
        parts = test.id().split(".")
        return ".".join(parts[-2:]) if len(parts) >= 2 else test.id()

    def startTest(self, test):
        self._started[test.id()] = time.perf_counter()
        if self.recorder is not None:
            self.recorder.start_test(self._short_id(test))
        super().startTest(test)

    def stopTest(self, test):
        super().stopTest(test)
        if self.recorder is not None:
            self.recorder.stop_test(self._short_id(test))

    def _record(self, test, outcome, reason=None, err=None):
        started = self._started.get(test.id())
        entry = {
            "id": self._short_id(test) if hasattr(test, "id") else str(test),
            "outcome": outcome,
            "duration_s": round(time.perf_counter() - started, 4) if started else None,
        }
        if reason:
            entry["reason"] = str(reason)
        if err is not None:
            entry["details"] = self._exc_info_to_string(err, test)
        # a failing cleanup (the state guard) comes after "passed": the later outcome wins.
        for existing in self.records:
            if existing["id"] == entry["id"] and existing["outcome"] == "passed":
                self.records.remove(existing)
                break
        self.records.append(entry)

    def addSuccess(self, test):
        super().addSuccess(test)
        self._record(test, "passed")

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._record(test, "failed", err=err)

    def addError(self, test, err):
        super().addError(test, err)
        self._record(test, "error", err=err)

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._record(test, "skipped", reason=reason)

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        self._record(test, "expected_failure", err=err)

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self._record(test, "unexpected_success")

    def addSubTest(self, test, subtest, err):
        super().addSubTest(test, subtest, err)
        if err is not None:
            failed = issubclass(err[0], test.failureException)
            self._record(subtest, "failed" if failed else "error", err=err)


def count(records):
    counts = dict.fromkeys(OUTCOMES, 0)
    key = {"passed": "passed", "failed": "failed", "error": "errors", "skipped": "skipped",
           "expected_failure": "expected_failures", "unexpected_success": "unexpected_successes"}
    for record in records:
        counts[key[record["outcome"]]] += 1
    counts["run"] = len(records)
    return counts


def run_file(path, initial_grad_mode, stream, recorder=None):
    """Run one file's tests with the main thread's grad mode set to ``initial_grad_mode``."""
    import torch

    entry = {"path": path, "sha256": sha256_of(path), "initial_grad_mode": initial_grad_mode}
    started = time.perf_counter()
    try:
        module = load_module(path)
        tests = unittest.defaultTestLoader.loadTestsFromModule(module)
    except Exception:
        details = traceback.format_exc()
        stream.write(f"ERROR: cannot import {path}\n{details}\n")
        entry.update(tests=[{"id": "<import>", "outcome": "error", "details": details}],
                     import_error=details)
        entry["counts"] = count(entry["tests"])
        return entry
    RecordingResult.recorder = recorder
    previous = torch.is_grad_enabled()
    torch.set_grad_enabled(initial_grad_mode)
    try:
        runner = unittest.TextTestRunner(stream=stream, verbosity=2, resultclass=RecordingResult)
        result = runner.run(tests)
    finally:
        torch.set_grad_enabled(previous)
        RecordingResult.recorder = None
    entry["tests"] = result.records
    entry["counts"] = count(result.records)
    entry["duration_s"] = round(time.perf_counter() - started, 3)
    return entry


def write_junit(runs, directory):
    """One JUnit XML file per run (the Ascend CI convention when IN_CI=1)."""
    import xml.etree.ElementTree as ET

    os.makedirs(directory, exist_ok=True)
    for run in runs:
        c = run["counts"]
        # an unexpected success fails the suite (closing line, exit status), so it is a failure here too
        suite = ET.Element("testsuite", name=run["path"], tests=str(c["run"]),
                           failures=str(c["failed"] + c["unexpected_successes"]),
                           errors=str(c["errors"]), skipped=str(c["skipped"]))
        for test in run["tests"]:
            # "Class.test (x=1.5)": the class ends at the last dot before the subTest parameters
            test_id, space, parameters = test["id"].partition(" (")
            classname, _, name = test_id.rpartition(".")
            case = ET.SubElement(suite, "testcase", classname=classname, name=name + space + parameters,
                                 time=str(test.get("duration_s") or 0))
            if test["outcome"] in ("failed", "error"):
                tag = "failure" if test["outcome"] == "failed" else "error"
                ET.SubElement(case, tag, message=test["outcome"]).text = test.get("details", "")
            elif test["outcome"] == "unexpected_success":
                ET.SubElement(case, "failure", message="unexpected success")
            elif test["outcome"] == "skipped":
                ET.SubElement(case, "skipped", message=test.get("reason", ""))
        mode = "grad-enabled" if run["initial_grad_mode"] else "grad-disabled"
        name = re.sub(r"\W", "_", os.path.splitext(run["path"])[0]) + f"-{mode}.xml"
        ET.ElementTree(suite).write(os.path.join(directory, name), encoding="utf-8", xml_declaration=True)


def totals(runs):
    total = dict.fromkeys(OUTCOMES + ("run",), 0)
    for run in runs:
        for key, value in run["counts"].items():
            total[key] += value
    return total


def closing_line(total):
    failed = total["failed"] + total["errors"] + total["unexpected_successes"]
    return f"{total['passed']} passed, {failed} failed, {total['skipped']} skipped"


def run_suite(paths, results_path=None, grad_mode_files=GRAD_MODE_FILES, api_calls=False,
              stream=sys.stderr, env_name=None):
    import torch

    from .probe import format_probe, probe

    started_at = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    started = time.perf_counter()
    info = probe()
    print(format_probe(info), file=stream, flush=True)
    recorder = None
    if api_calls:
        from .api_calls import ApiCallRecorder
        recorder = ApiCallRecorder()
    process_mode = torch.is_grad_enabled()
    runs = []
    for path in paths:
        print(f"\n=== {path} (grad mode {'enabled' if process_mode else 'disabled'} at start)", file=stream)
        runs.append(run_file(path, process_mode, stream, recorder))
    isolation = []
    for path in paths:
        if os.path.normpath(path) not in {os.path.normpath(p) for p in grad_mode_files}:
            continue
        other = not process_mode
        print(f"\n=== {path} again, grad mode {'enabled' if other else 'disabled'} at start", file=stream)
        rerun = run_file(path, other, stream, None)
        runs.append(rerun)
        first = next(r for r in runs if r["path"] == path and r["initial_grad_mode"] == process_mode)
        isolation.append({"path": path, "enabled": (first if process_mode else rerun)["counts"],
                          "disabled": (rerun if process_mode else first)["counts"]})
    total = totals(runs)
    results = {
        "format": RESULTS_FORMAT,
        "env": env_name or os.environ.get("TOX_ENV_NAME"),
        "started_at": started_at,
        "duration_s": round(time.perf_counter() - started, 3),
        "command": [os.path.basename(sys.executable), "-m", "torch_npu_testing", "suite"] + sys.argv[2:],
        "cwd": os.getcwd(),
        "probe": info,
        "runs": runs,
        "grad_mode_isolation": isolation,
        "totals": total,
    }
    if recorder is not None:
        results["api_calls"] = recorder.finish()
        results["api_call_details"] = recorder.details()
    if results_path:
        os.makedirs(os.path.dirname(os.path.abspath(results_path)), exist_ok=True)
        tmp = results_path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as handle:
            json.dump(results, handle, indent=1)
        os.replace(tmp, results_path)
    if os.environ.get("IN_CI") == "1":
        from .testcase import xml_dir
        write_junit(runs, xml_dir())
    print("\n" + "\n".join(
        f"{r['path']:<60} grad {'on ' if r['initial_grad_mode'] else 'off'}  " + ", ".join(
            f"{k}={v}" for k, v in r["counts"].items() if v) for r in runs), file=stream)
    if results_path:
        print(f"results: {results_path}", file=stream)
    print(closing_line(total), file=stream, flush=True)
    return results


def add_arguments(parser):
    parser.add_argument("files", nargs="*", help=f"test files (default: {' '.join(DEFAULT_TEST_GLOBS)})")
    parser.add_argument("--results", help="write the results JSON here")
    parser.add_argument("--env", help="env name stored in the results (default: $TOX_ENV_NAME)")
    parser.add_argument("--api-calls", action="store_true",
                        help="record which target API each test calls (for the evidence report)")
    parser.add_argument("--no-grad-mode-probe", action="store_true",
                        help="do not re-run the grad-mode files with the other initial grad mode")


def main(args):
    from .errors import UsageError

    if importlib.util.find_spec("torch") is None:
        raise UsageError(f"torch is not installed in {sys.executable} (`tox -e installed` uses the interpreter's "
                         "own torch: install torch / torch_npu there, or use a branch env such as `tox -e master`)")
    paths = args.files or discover()
    if not paths:
        raise UsageError(f"no test files found (looked for {', '.join(DEFAULT_TEST_GLOBS)} under {os.getcwd()})")
    missing = [p for p in paths if not os.path.isfile(p)]
    if missing:
        raise UsageError(f"no such test file: {missing[0]}")
    results = run_suite(paths, args.results, () if args.no_grad_mode_probe else GRAD_MODE_FILES,
                        args.api_calls, env_name=args.env)
    total = results["totals"]
    return 1 if (total["failed"] or total["errors"] or total["unexpected_successes"]) else 0
