# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""``suite``: run the API-consistency files in one process and write a machine-readable results file.

This is what every tox branch env runs. One process pays the ``import torch`` cost once instead of once
per file. The run:

1. prints the environment probe (:mod:`torch_npu_testing.probe`) once;
2. loads each test file by path (default: each API's ``test_file`` in the one table; a file on disk that no
   API names is not run, and the run says so once) and runs its tests verbosely (skip reasons shown), recording every
   test case's outcome, passing subtests included (:mod:`torch_npu_testing.common.results`);
3. runs the grad-mode files again with the main thread's grad mode *disabled* before the first test,
   the grad-mode isolation probe (a file must not depend on the process's initial grad mode);
4. optionally records which target API each test called (``--api-calls``, see
   :mod:`torch_npu_testing.suite.api_calls`);
5. measures, per API test file, which lines and branches of its API's implementation in the installed
   torch the file's tests reach (:mod:`torch_npu_testing.suite.coverage`; on unless ``--no-coverage``)
   and prints one coverage line per API;
6. writes the results JSON (``--results``; the evidence report reads it), JUnit XML when ``IN_CI=1``,
   and a closing line ``N passed, N failed, N skipped (T tests, C cases)``, counting cases.

Exit status: 0 when nothing failed or errored, 1 otherwise.
"""
import contextlib
import datetime
import glob
import importlib.util
import json
import os
import re
import sys
import time
import unittest

from ..common import results, table
from ..common.errors import UsageError
from ..common.results import sha256_of
from ..common.atomic import write_text_atomic

from ..common.layout import GRAD_MODE_FILES, TABLE_REL, TEST_FILE_GLOB, TEST_ROOT, TOOL_TEST_DIRS
from ..runtime.collector import freeze_collector, freeze_wanted

DEFAULT_FILES_TEXT = f"each API's test_file in {TABLE_REL}"


def table_of(root):
    """The table a run from ``root`` reads: the checkout's own (``root/TABLE_REL``, where ``new`` adds rows),
    else the installed kit's."""
    local = os.path.abspath(os.path.join(root, TABLE_REL))
    return local if os.path.isfile(local) else table.TABLE_PATH


def discover(root="."):
    """The API test files of the table (each API's ``test_file``, in table order, once), relative to ``root``.

    The table is the one list: a file in a new folder runs once its API has a row, with no code edit.
    UsageError (one line) when the table names no file or a file it names is not on disk under ``root``."""
    path = table_of(root)
    try:
        entries = table.load_apis(path)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    files = list(dict.fromkeys(entry["test_file"] for entry in entries if entry["test_file"]))
    if not files:
        raise UsageError(f"no test files found: the table {path} names none")
    for rel in files:
        if not os.path.isfile(os.path.join(root, rel)):
            api = next(entry["name"] for entry in entries if entry["test_file"] == rel)
            raise UsageError(f"{rel}, the test_file of {api} in {path}, does not exist under {os.path.abspath(root)}")
    return files


def not_in_table(root, files):
    """Files on disk that look like API test files (``test/**/test_*.py`` outside the kit's own tests) and are
    not among ``files``: sorted, relative to ``root``. The suite does not run them and says so once."""
    listed = {os.path.normpath(rel) for rel in files}
    own = tuple(os.path.normpath(folder) + os.sep for folder in TOOL_TEST_DIRS)
    found = glob.glob(os.path.join(root, TEST_ROOT, "**", TEST_FILE_GLOB), recursive=True)
    rels = (os.path.normpath(os.path.relpath(path, root)) for path in found)
    return sorted(rel for rel in rels if rel not in listed and not rel.startswith(own))


def load_module(path):
    """Import a test file by path under a unique module name (files need not be a package)."""
    name = "tnt_suite_" + re.sub(r"\W", "_", os.path.splitext(os.path.normpath(path))[0])
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def run_file(path, initial_grad_mode, stream, recorder=None):
    """Run one file's tests with the main thread's grad mode set to ``initial_grad_mode``.

    Returns the file's run: ``path``, ``sha256``, ``initial_grad_mode``, ``cases`` (one
    :class:`~torch_npu_testing.common.results.Case` dict per test case), ``counts`` (:func:`results.tally`),
    ``duration_s``, and ``import_error`` (the traceback) when the file could not be imported.
    """
    import torch

    entry = {"path": path, "sha256": sha256_of(path), "initial_grad_mode": initial_grad_mode}
    started = time.perf_counter()
    try:
        module = load_module(path)
        tests = unittest.defaultTestLoader.loadTestsFromModule(module)
    except Exception:
        case = results.import_error_case(path, sys.exc_info())
        stream.write(f"ERROR: cannot import {path}\n{case.details}\n")
        cases = [case]
        entry["import_error"] = case.details
    else:
        freeze_collector()  # what torch and the file left alive: not traversed again (docs/bench.md)
        previous = torch.is_grad_enabled()
        torch.set_grad_enabled(initial_grad_mode)
        try:
            cases = results.run_tests(tests, path, stream, recorder)
        finally:
            torch.set_grad_enabled(previous)
    entry["cases"] = results.cases_to_dicts(cases)
    entry["counts"] = results.tally(cases)
    entry["duration_s"] = round(time.perf_counter() - started, 3)
    return entry


def rerun_other_grad_mode(first, stream, recorder=None):
    """The grad-mode isolation rerun: ``first``'s file again with the other initial grad mode.

    Returns ``(rerun, probe)``; the probe is ``{"path", "enabled", "disabled", "same"}``: the counts
    of the run that started with grad mode enabled / disabled, and whether every case had the same
    outcome in both.
    """
    rerun = run_file(first["path"], not first["initial_grad_mode"], stream, recorder)
    enabled, disabled = (first, rerun) if first["initial_grad_mode"] else (rerun, first)
    same = (results.outcome_map(results.cases_from_dicts(enabled["cases"]))
            == results.outcome_map(results.cases_from_dicts(disabled["cases"])))
    return rerun, {"path": first["path"], "enabled": enabled["counts"], "disabled": disabled["counts"],
                   "same": same}


_JUNIT_TAGS = {results.Outcome.FAILED: "failure", results.Outcome.UNEXPECTED_SUCCESS: "failure",
               results.Outcome.ERROR: "error", results.Outcome.SKIPPED: "skipped"}


def write_junit(runs, directory):
    """One JUnit XML file per run, one ``testcase`` per case (the Ascend CI convention when IN_CI=1)."""
    import xml.etree.ElementTree as ET

    os.makedirs(directory, exist_ok=True)
    for run in runs:
        cases = results.cases_from_dicts(run["cases"])
        tags = [_JUNIT_TAGS.get(case.outcome) for case in cases]
        # an unexpected success fails the suite (closing line, exit status), so it is a failure here too
        suite = ET.Element("testsuite", name=run["path"], tests=str(len(cases)),
                           failures=str(tags.count("failure")), errors=str(tags.count("error")),
                           skipped=str(tags.count("skipped")))
        for case, tag in zip(cases, tags):
            classname, _, name = case.id.rpartition(".")
            element = ET.SubElement(suite, "testcase", classname=classname,
                                    name=f"{name} {case.subtest}" if case.subtest else name,
                                    time=str(case.duration_s or 0))
            if tag == "skipped":
                ET.SubElement(element, tag, message=case.reason or "")
            elif tag:
                ET.SubElement(element, tag, message=case.outcome.label).text = case.details or ""
        mode = "grad-enabled" if run["initial_grad_mode"] else "grad-disabled"
        name = re.sub(r"\W", "_", os.path.splitext(run["path"])[0]) + f"-{mode}.xml"
        ET.ElementTree(suite).write(os.path.join(directory, name), encoding="utf-8", xml_declaration=True)


def totals(runs):
    """The counts of several runs added up."""
    return results.add_counts(run["counts"] for run in runs)


def _run_line(run):
    mode = "on " if run["initial_grad_mode"] else "off"
    return f"{run['path']:<60} grad {mode}  " + results.counts_fields(run["counts"], nonzero=True)


def start_coverage(enabled):
    """``(meter, block)``: a :class:`~.coverage.CoverageMeter`, or None and the block saying why not.

    ``enabled`` is a bool, or a meter the caller made (other APIs or regions, in tests)."""
    if not enabled:
        return None, None
    if enabled is not True:
        return enabled, None
    from . import coverage

    try:
        return coverage.CoverageMeter(), None
    except ImportError as exc:
        return None, coverage.unavailable_block(f"coverage.py is not importable here ({exc}); "
                                                "install it (pip install coverage) or pass --no-coverage")


def finish_coverage(meter):
    """The meter's results block; a block saying why when the analysis itself fails (the tests ran)."""
    from . import coverage

    try:
        return meter.finish()
    except Exception as exc:  # noqa: BLE001 - a results file without figures beats no results file
        return coverage.unavailable_block(f"the analysis failed: {type(exc).__name__}: {exc}")


def _measured(meter, path):
    return meter.measuring(path) if meter is not None else contextlib.nullcontext()


def run_files(paths, grad_mode_files, stream, recorder, meter):
    """``(runs, isolation)``: every file once with the process's grad mode, then the grad-mode files again."""
    import torch

    process_mode = torch.is_grad_enabled()
    runs = []
    for path in paths:
        print(f"\n=== {path} (grad mode {'enabled' if process_mode else 'disabled'} at start)", file=stream)
        with _measured(meter, path):
            runs.append(run_file(path, process_mode, stream, recorder))
    isolation = []
    probed = {os.path.normpath(p) for p in grad_mode_files}
    for first in [run for run in runs if os.path.normpath(run["path"]) in probed]:
        other = "disabled" if process_mode else "enabled"
        print(f"\n=== {first['path']} again, grad mode {other} at start", file=stream)
        with _measured(meter, first["path"]):
            rerun, probe_item = rerun_other_grad_mode(first, stream)
        runs.append(rerun)
        isolation.append(probe_item)
    return runs, isolation


def run_suite(paths, results_path=None, grad_mode_files=GRAD_MODE_FILES, api_calls=False,
              stream=None, env_name=None, coverage=True, threads=None):
    """Run ``paths`` in this process; ``threads``: torch's intra-op threads for the run (None: torch's own)."""
    import torch

    from .coverage import summary_lines
    from .probe import format_probe, probe

    if threads is not None:
        torch.set_num_threads(threads)
    stream = sys.stderr if stream is None else stream
    started_at = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    started = time.perf_counter()
    info = probe()
    print(format_probe(info), file=stream, flush=True)
    recorder = None
    if api_calls:
        from .api_calls import ApiCallRecorder
        recorder = ApiCallRecorder()
    meter, coverage_block = start_coverage(coverage)
    runs, isolation = run_files(paths, grad_mode_files, stream, recorder, meter)
    total = totals(runs)
    if meter is not None:
        coverage_block = finish_coverage(meter)
    document = {
        "format": results.FORMAT,
        "env": env_name or os.environ.get("TOX_ENV_NAME"),
        "started_at": started_at,
        "duration_s": round(time.perf_counter() - started, 3),
        "command": [os.path.basename(sys.executable), "-m", "torch_npu_testing", "suite"] + sys.argv[2:],
        "cwd": os.getcwd(),
        "probe": info,
        "runs": runs,
        "grad_mode_isolation": isolation,
        "totals": total,
        "coverage": coverage_block,
        "threads": torch.get_num_threads(),
    }
    if recorder is not None:
        document["api_calls"] = recorder.finish()
        document["api_call_details"] = recorder.details()
    if results_path:
        write_text_atomic(results_path, json.dumps(document, indent=1))
    if os.environ.get("IN_CI") == "1":
        from ..runtime.testcase import xml_dir
        write_junit(runs, xml_dir())
    print("\n" + "\n".join(_run_line(run) for run in runs), file=stream)
    if coverage_block is not None:
        print("\n".join(summary_lines(coverage_block)), file=stream)
    if results_path:
        print(f"results: {results_path}", file=stream)
    print(results.closing_line(total), file=stream, flush=True)
    return document


def add_arguments(parser):
    parser.add_argument("files", nargs="*", help=f"test files (default: {DEFAULT_FILES_TEXT})")
    parser.add_argument("--results", help="write the results JSON here")
    parser.add_argument("--env", help="env name stored in the results (default: $TOX_ENV_NAME)")
    parser.add_argument("--api-calls", action="store_true",
                        help="record which target API each test calls (for the evidence report)")
    parser.add_argument("--no-coverage", action="store_true",
                        help="do not measure the APIs' implementation coverage (on by default)")
    parser.add_argument("--no-grad-mode-probe", action="store_true",
                        help="do not re-run the grad-mode files with the other initial grad mode")
    parser.add_argument("--threads", type=int, metavar="N",
                        help="torch's intra-op CPU threads for the run (default: 1, or torch's own choice when "
                             "$OMP_NUM_THREADS is set)")


def suite_threads(args_threads, environ=os.environ):
    """The intra-op thread count the suite sets, or None to leave torch's own.

    The cases are tensors of a few elements: an intra-op thread only adds a parallel region's hand-off, and on
    a shared machine a parallel kernel waits for a thread whose core is busy (measured on the 2-core box with
    the other core loaded: a 24-element COO ``to_dense`` took 8 ms with 2 threads, 0.02 ms with 1; the suite
    13 s against 19 s). So one thread, unless the user says otherwise (``--threads``, ``$OMP_NUM_THREADS``)."""
    if args_threads is not None:
        if args_threads < 1:
            raise UsageError(f"--threads must be at least 1, not {args_threads}")
        return args_threads
    return None if environ.get("OMP_NUM_THREADS") else 1


def main(args):
    if importlib.util.find_spec("torch") is None:
        raise UsageError(f"torch is not installed in {sys.executable} (`tox -e installed` uses the interpreter's "
                         "own torch: install torch / torch_npu there, or use a branch env such as `tox -e master_213`)")
    threads = suite_threads(args.threads)
    try:
        freeze_wanted()  # a bad value stops the run before any file, in one line
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    paths = args.files or discover()
    unlisted = [] if args.files else not_in_table(".", paths)
    if unlisted:
        print(f"not run (no API of {table_of('.')} names them as its test_file): {', '.join(unlisted)}",
              file=sys.stderr)
    missing = [p for p in paths if not os.path.isfile(p)]
    if missing:
        raise UsageError(f"no such test file: {missing[0]}")
    document = run_suite(paths, args.results, () if args.no_grad_mode_probe else GRAD_MODE_FILES,
                         args.api_calls, env_name=args.env, coverage=not args.no_coverage, threads=threads)
    return 1 if results.failed_count(document["totals"]) else 0
