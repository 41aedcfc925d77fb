# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Run one patched upstream test file and write its test cases as JSON.

Executed by path with the interpreter under test (``python driver.py TEST_FILE RESULTS_JSON``), so it
uses the standard library only and never imports the package torch_npu_testing: the interpreter may be
one where this kit is not installed. It records with the kit's one results model all the same:
``common/results.py`` (and ``common/atomic.py``, which writes the results file) are standard library
only, and the driver loads them by file path from the package folder above its own (:func:`load_results_module`).

The test module is imported under its own name (so its ``if __name__ == "__main__"`` block does not
run), its tests are loaded and run with unittest in this one process, as ``python TEST_FILE`` would,
and every case is recorded (:class:`CaseRecorder`: passing subtests too; skips with their reason;
``expected_failure`` / ``unexpected_success`` for tests upstream marks ``@expectedFailure``). The
device is the module's ``DEVICE`` or ``device_type`` (the patches define one); a module that fails to import is one
``error`` case named ``<import>``.
"""
import importlib.util
import json
import os
import sys
import time
import unittest

RESULTS_MODULE = "_torch_npu_testing_results"
ATOMIC_MODULE = "_torch_npu_testing_atomic"


def _load_kit_module(name, relative):
    """A standard-library-only module of the kit (``common/<file>``), loaded by path from this file's
    package, so that a kit that is not installed in this interpreter still records the kit's way."""
    if name in sys.modules:
        return sys.modules[name]
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "common", relative)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the file runs
    spec.loader.exec_module(module)
    return module


def load_results_module():
    """The kit's results model (``torch_npu_testing/common/results.py``)."""
    return _load_kit_module(RESULTS_MODULE, "results.py")


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
    results = load_results_module()
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
    payload = {"format": results.FORMAT, "python": sys.version.split()[0], "file": test_file, "device": None}
    started = time.monotonic()
    try:
        spec = importlib.util.spec_from_file_location(module_name, test_file)
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        spec.loader.exec_module(module)
    except BaseException as exc:  # noqa: BLE001 - any failure at import (SystemExit too) is the result
        cases = [results.import_error_case(test_file, (type(exc), exc, exc.__traceback__))]
    else:
        payload["device"] = getattr(module, "DEVICE", None) or getattr(module, "device_type", None)
        cases = results.run_tests(unittest.defaultTestLoader.loadTestsFromModule(module), test_file, sys.stderr)
    payload["seconds"] = round(time.monotonic() - started, 3)
    payload["torch"] = _torch_version()
    payload["cases"] = results.cases_to_dicts(cases)
    _write(results_file, payload)
    return 0


def _write(path, payload):
    atomic = _load_kit_module(ATOMIC_MODULE, "atomic.py")
    atomic.write_text_atomic(path, json.dumps(payload, indent=2) + "\n")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.stderr.write("usage: driver.py TEST_FILE RESULTS_JSON\n")
        sys.exit(2)
    sys.exit(run(sys.argv[1], sys.argv[2]))
