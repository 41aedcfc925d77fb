# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""``mutate --device``: the device baseline, the device catalogue it yields, and the device mutants.

1. The baseline runs FILE's tests in a forked child with every target's hook putting its in-scope calls
   in scope (:class:`.device_scope.ApiScopes`) and :class:`.device_scope.DeviceOps` recording, per API,
   the aten overloads dispatched on the device within them, with the features each dispatch showed.
2. The parent builds the device catalogue from that record (:func:`catalogue`): per API, per op, each
   fault of :data:`.device_catalogue.DEVICE_FAULTS` whose needed features the op showed (``mutate --only``
   runs the part of it ``DevicePlan.choose`` keeps). An API whose calls
   dispatch no device op of its own gets none: "not applicable", stated, not a score.
3. Each device mutant runs in a forked child: the same hooks, and ``DeviceOps`` faulting that one op's
   in-scope device dispatches; every other dispatch, the CPU's included, is the right one. Only the tests
   that dispatched the op in scope in the baseline run: a kernel fault acts on that dispatch's results, so
   no other test can see it (the baseline names them per op).

The simulated NPU lives in host memory, so children are forked from the parent, which has imported
everything and run no tensor op (as for generic mutants); ``--jobs`` children at a time.
"""
import types
from dataclasses import dataclass

from . import child, runner
from . import targets as targets_module
from .device_catalogue import faults_for
from .device_scope import ApiScopes, DeviceOps
from .faults import Tally


@dataclass(frozen=True)
class DeviceMutant:
    """One op's device kernel faulted; ``tests``: the tests that dispatched it in scope in the baseline."""

    api: str
    op: str
    index: int
    fault: object
    tests: tuple = ()

    @property
    def id(self):
        return f"{self.api}:{self.op}:{self.fault.code}"


@dataclass
class DevicePlan:
    """What a device child needs besides the parent's :class:`.child.Prepared`; ``choose(mutants)`` gives
    those to run (``mutate --only``; may raise a usage error), ``chosen`` holds them once the catalogue is."""

    device: str
    mutants: list
    choose: object = None
    chosen: list = None


def _install(prepared, scopes):
    tallies, restores = {}, [scopes.count_vmap_levels()]
    for target in prepared.targets:
        tallies[target.name] = Tally()
        enter = types.SimpleNamespace(call=lambda real, args, kwargs, tally, name=target.name: scopes.enter(
            name, real, args, kwargs))
        hook = child._hook(target, enter, tallies[target.name], prepared.packages)
        restores.append(targets_module.install(target, hook, (prepared.module,), prepared.packages))
    return tallies, restores


def run(prepared, plan, index, on_start=None):
    """One device child: the baseline (``index`` BASELINE, recording) or device mutant ``index``."""
    import torch

    torch.set_num_threads(1)
    scopes = ApiScopes()
    mutant = None if index == child.BASELINE else plan.mutants[index]
    mode = DeviceOps(plan.device, scopes, None if mutant is None else (mutant.api, mutant.op, mutant.fault))
    tallies, restores = _install(prepared, scopes)
    only = None if mutant is None else set(mutant.tests)

    def on_test(test_id):
        mode.test = test_id
    report = child.run_tests(prepared, restores, on_start, mode, only, on_test)
    report.update(index=index, api_calls={name: tally.calls for name, tally in tallies.items()})
    if mutant is None:
        report["device"] = mode.report()
    else:
        report["tallies"] = {mutant.api: mode.tally.to_dict()}
    return report


def catalogue(prepared, record):
    """Every device mutant of the baseline's ``record`` (``{"ops": {api: {op: {"features": [...]}}}}``)."""
    mutants = []
    for target in prepared.targets:
        for op, entry in sorted(record.get("ops", {}).get(target.name, {}).items()):
            for fault in faults_for(set(entry["features"])):
                mutants.append(DeviceMutant(target.name, op, len(mutants), fault, tuple(entry.get("tests", ()))))
    return mutants


def run_session(prepared, plan, jobs, timeout_for, on_done):
    """The baseline's report; ``plan.mutants`` filled from it; ``on_done(report)`` per device mutant.
    Raises :class:`.session.BaselineFailed` when the tests fail under the recorder."""
    from .session import BaselineFailed

    baseline = runner.run_all(lambda index: runner.start_fork(prepared, index, _bound(plan)), [child.BASELINE],
                              1, None, lambda report: None)[child.BASELINE]
    if not runner.passed(baseline):
        raise BaselineFailed(baseline)
    plan.mutants = catalogue(prepared, baseline["device"])
    plan.chosen = plan.choose(plan.mutants) if plan.choose else list(plan.mutants)
    runner.run_all(lambda index: runner.start_fork(prepared, index, _bound(plan)),
                   [m.index for m in plan.chosen], jobs, timeout_for(baseline), on_done)
    return baseline


def _bound(plan):
    return lambda prepared, index, on_start=None: run(prepared, plan, index, on_start)
