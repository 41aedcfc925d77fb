# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""One run of FILE's tests under one mutant (or the baseline), in the process it is called in.

:func:`prepare` is what the parent pays once: import torch, FILE's module (by path, as ``suite`` loads it)
and what the tests import lazily on their first test (:data:`LAZY_IMPORTS`), resolve the targets and build
the catalogue; it runs no tensor op. :func:`run` installs the mutant's hook on its target (the baseline:
pass-through hooks on every target, which count the in-scope calls and show the file cannot see the hook
itself), runs the tests (a mutant's with failfast; the baseline's all, so that every failing test is known)
and returns a JSON-able report: ``first_failure`` (``Class.test`` with its subtest) and its ``reason``,
``failures`` (``[test id, reason]`` per failing test, in order), ``tests_run``, ``test_s``, and the tally per
API. Tests named in ``Prepared.exclude`` (``mutate --passing-only``: those the baseline saw fail) are not run.

The fresh-process mode runs ``python -m torch_npu_testing.mutate.child FILE --api NAME ... --index I
--result-fd FD [--exclude TEST ...]``: the same :func:`prepare` (same catalogue, same indexes) and
:func:`run`, reported on FD.
"""
import argparse
import importlib
import io
import json
import os
import threading
import time
import types
import unittest
from dataclasses import dataclass

from ..common import results
from ..suite.run import load_module
from . import catalogue as catalogue_module
from . import returned
from . import targets as targets_module
from .faults import Tally
from .scope import Scope

LAZY_IMPORTS = ("torch._dynamo", "torch.distributed.tensor")
BASELINE = -1


@dataclass
class Prepared:
    path: str
    module: object
    targets: list
    absent: dict
    mutants: list
    import_s: float
    threads_at_import: int
    packages: tuple = ()
    exclude: frozenset = frozenset()


def _import_lazily_used():
    for name in LAZY_IMPORTS:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - absent in this torch, or unusable here: the tests import it anyway
            continue


def prepare(path, api_names, packages=()):
    """Import everything the children share and resolve ``api_names``; see the module docstring.

    ``absent`` maps an API this torch lacks to the reason; a name that is no callable raises ValueError.
    """
    started = time.perf_counter()
    import torch  # noqa: F401 - the import the children share

    before = threading.active_count()
    module = load_module(path)
    threads = threading.active_count() - before
    _import_lazily_used()
    for name in packages:
        importlib.import_module(name)
    targets, absent = [], {}
    for name in api_names:
        try:
            targets.append(targets_module.resolve_target(name))
        except targets_module.AbsentApi as exc:
            absent[name] = str(exc)
    return Prepared(path, module, targets, absent, catalogue_module.catalogue(targets),
                    round(time.perf_counter() - started, 3), threads, tuple(packages))


def _hook(target, fault, tally, packages):
    scope = Scope(target.kind, packages)
    bound_self = target.bound_self

    def hook(real, args, kwargs, caller):
        if bound_self is not None and (not args or args[0] is not bound_self):
            return real(*args, **kwargs)
        if not scope.acts(caller):
            return real(*args, **kwargs)
        tally.calls += 1
        if fault is None:
            return real(*args, **kwargs)
        return fault.call(real, args, kwargs, tally)
    return hook


def _install(prepared, index):
    """``({api: Tally}, restores)`` for the mutant ``index`` or, for BASELINE, pass-through hooks."""
    tallies, restores = {}, []
    chosen = prepared.mutants[index] if index != BASELINE else None
    for target in prepared.targets:
        if chosen is not None and target.name != chosen.api:
            continue
        tallies[target.name] = Tally()
        hook = _hook(target, chosen.fault if chosen else None, tallies[target.name], prepared.packages)
        restores.append(targets_module.install(target, hook, (prepared.module,), prepared.packages))
    return tallies, restores


def _flat(suite):
    for test in suite:
        if isinstance(test, unittest.TestSuite):
            yield from _flat(test)
        else:
            yield test


def test_ids(module):
    """The ids (``Class.test``) of every test of ``module``, in the loader's order."""
    return [results.test_id(test) for test in _flat(unittest.defaultTestLoader.loadTestsFromModule(module))]


def _selected(module, exclude):
    tests = unittest.defaultTestLoader.loadTestsFromModule(module)
    if not exclude:
        return tests
    return unittest.TestSuite([test for test in _flat(tests) if results.test_id(test) not in exclude])


def _failures(cases):
    found = {}
    for case in cases:
        if case.outcome.fails and case.id not in found:
            found[case.id] = case.reason
    return [[test, reason] for test, reason in found.items()]


def run(prepared, index, on_start=None):
    """Run the tests under mutant ``index`` (BASELINE: none); the report of the module docstring.
    ``on_start()`` is called just before the first test (the parent's clock for ``--timeout`` starts there)."""
    import torch

    torch.set_num_threads(1)
    tallies, restores = _install(prepared, index)
    report = run_tests(prepared, restores, on_start, failfast=index != BASELINE)
    report.update(index=index, tallies={name: tally.to_dict() for name, tally in tallies.items()})
    return report


def run_tests(prepared, restores, on_start=None, context=None, only=None, on_test=None, failfast=True):
    """FILE's tests (less ``prepared.exclude``; only the test ids of ``only`` when given), inside
    ``context`` when given, ``on_test(id)`` as each starts; then ``restores`` undone. The report's
    ``tests_run``, ``test_s``, ``first_failure``, ``reason`` and ``failures``."""
    import contextlib

    if on_start is not None:
        on_start()
    tests = _selected(prepared.module, prepared.exclude)
    if only is not None:
        tests = unittest.TestSuite([test for test in _flat(tests) if results.test_id(test) in only])
    listener = None if on_test is None else types.SimpleNamespace(start_test=on_test, stop_test=lambda test: None)
    runner = unittest.TextTestRunner(stream=io.StringIO(), verbosity=0, failfast=failfast,
                                     resultclass=results.recorder_class(prepared.path, listener))
    started = time.perf_counter()
    try:
        with context if context is not None else contextlib.nullcontext():
            outcome = runner.run(tests)
    finally:
        for restore in reversed(restores):
            restore()
        returned.restore_all()
    failed = next((case for case in outcome.cases if case.outcome.fails), None)
    return {"tests_run": outcome.testsRun, "test_s": round(time.perf_counter() - started, 3),
            "first_failure": failed.name if failed else None, "reason": failed.reason if failed else None,
            "failures": _failures(outcome.cases)}


START_MARK = b"\n"


def mark_start(fd):
    """``on_start`` for :func:`run`: one newline on ``fd`` before the report."""
    return lambda: os.write(fd, START_MARK)


def write_report(fd, report):
    data = json.dumps(report).encode()
    while data:
        data = data[os.write(fd, data):]
    os.close(fd)


def _parse(argv):
    parser = argparse.ArgumentParser(prog="python -m torch_npu_testing.mutate.child")
    parser.add_argument("file")
    parser.add_argument("--api", action="append", required=True)
    parser.add_argument("--internal-package", action="append", default=[])
    parser.add_argument("--index", type=int, required=True)
    parser.add_argument("--result-fd", type=int, required=True)
    parser.add_argument("--exclude", action="append", default=[])
    return parser.parse_args(argv)


def main(argv=None):
    """The fresh-process child: prepare, run one index, report on ``--result-fd``."""
    args = _parse(argv)
    prepared = prepare(args.file, args.api, args.internal_package)
    prepared.exclude = frozenset(args.exclude)
    write_report(args.result_fd, run(prepared, args.index, mark_start(args.result_fd)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
