# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Run one patched upstream test file and write per-test outcomes as JSON.

Executed by path with the interpreter under test (``python driver.py TEST_FILE RESULTS_JSON``), so it
uses the standard library only and never imports torch_npu_testing: the interpreter may be one where
this kit is not installed. The test module is imported under its own name (so its
``if __name__ == "__main__"`` block does not run), its tests are loaded and run with unittest in this
one process, as ``python TEST_FILE`` would, and each outcome is recorded:
passed, failed, error, skipped (with the skip reason), expected_failure / unexpectedly_passing (for
tests upstream marks ``@expectedFailure``). The device is the module's ``DEVICE`` (the patches define
it); a module that fails to import is one ``error`` named ``<import>``.
"""
import importlib.util
import json
import os
import sys
import time
import traceback
import unittest

_RANK = {"passed": 0, "skipped": 1, "expected_failure": 1, "unexpectedly_passing": 2, "failed": 3, "error": 4}


def _name(test):
    method = getattr(test, "_testMethodName", None)
    if method is None:  # _ErrorHolder: setUpClass / setUpModule failures
        return str(getattr(test, "description", test))
    return f"{type(test).__name__}.{method}"


def _summary(err):
    exc_type, value, _ = err
    lines = "".join(traceback.format_exception_only(exc_type, value)).strip().splitlines()
    first = lines[0] if lines else exc_type.__name__
    return first if len(first) <= 400 else first[:397] + "..."


def _trace(err, limit=6000):
    text = "".join(traceback.format_exception(*err))
    return text if len(text) <= limit else "...\n" + text[-limit:]


class RecordingResult(unittest.TextTestResult):
    """A TextTestResult that also keeps one record per test (the worst outcome it had)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.records = {}
        self._started = {}

    def _record(self, test, outcome, reason="", trace=None):
        name = _name(test)
        previous = self.records.get(name)
        if previous is not None and _RANK[previous["outcome"]] >= _RANK[outcome]:
            return
        record = {"name": name, "outcome": outcome, "reason": reason}
        if trace:
            record["traceback"] = trace
        started = self._started.get(name)
        if started is not None:
            record["seconds"] = round(time.monotonic() - started, 3)
        self.records[name] = record

    def startTest(self, test):
        self._started[_name(test)] = time.monotonic()
        super().startTest(test)

    def addSuccess(self, test):
        super().addSuccess(test)
        self._record(test, "passed")

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._record(test, "failed", _summary(err), _trace(err))

    def addError(self, test, err):
        super().addError(test, err)
        self._record(test, "error", _summary(err), _trace(err))

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._record(test, "skipped", str(reason))

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        self._record(test, "expected_failure", "marked @expectedFailure upstream: " + _summary(err))

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self._record(test, "unexpectedly_passing", "marked @expectedFailure upstream, but passed")

    def addSubTest(self, test, subtest, err):
        super().addSubTest(test, subtest, err)
        if err is not None:
            failed = issubclass(err[0], test.failureException)
            self._record(test, "failed" if failed else "error", f"{subtest._subDescription()}: {_summary(err)}",
                         _trace(err))


def _torch_version():
    torch = sys.modules.get("torch")
    if torch is not None:
        return str(getattr(torch, "__version__", "unknown"))
    try:
        from importlib.metadata import version
        return version("torch")
    except Exception:  # noqa: BLE001 - no torch distribution: the version is unknown
        return None


def run(test_file, results_file):
    # Run by path, Python put this file's folder first on sys.path; its sibling modules (manifest,
    # source, ...) must not shadow anything the test imports.
    own_dir = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [path for path in sys.path if os.path.abspath(path or os.curdir) != own_dir]
    test_file = os.path.abspath(test_file)
    test_dir = os.path.dirname(test_file)
    module_name = os.path.splitext(os.path.basename(test_file))[0]
    # Like `python test/<dir>/<file>.py` run from test/ by PyTorch's run_test.py.
    for path in (os.getcwd(), test_dir):
        if path not in sys.path:
            sys.path.insert(0, path)
    sys.argv = [test_file]
    payload = {"python": sys.version.split()[0], "file": test_file, "device": None, "tests": []}
    try:
        spec = importlib.util.spec_from_file_location(module_name, test_file)
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        spec.loader.exec_module(module)
    except BaseException as exc:  # noqa: BLE001 - any failure at import (SystemExit too) is the result
        err = (type(exc), exc, exc.__traceback__)
        payload["tests"].append({"name": "<import>", "outcome": "error", "reason": _summary(err),
                                 "traceback": _trace(err)})
        payload["torch"] = _torch_version()
        _write(results_file, payload)
        return 0
    payload["device"] = getattr(module, "DEVICE", None)
    suite = unittest.defaultTestLoader.loadTestsFromModule(module)
    runner = unittest.TextTestRunner(stream=sys.stderr, verbosity=2, resultclass=RecordingResult)
    started = time.monotonic()
    result = runner.run(suite)
    payload["seconds"] = round(time.monotonic() - started, 3)
    payload["tests"] = sorted(result.records.values(), key=lambda record: record["name"])
    payload["torch"] = _torch_version()
    _write(results_file, payload)
    return 0


def _write(path, payload):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as handle:
        json.dump(payload, handle, indent=2)
        handle.write("\n")
    os.replace(tmp, path)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.stderr.write("usage: driver.py TEST_FILE RESULTS_JSON\n")
        sys.exit(2)
    sys.exit(run(sys.argv[1], sys.argv[2]))
