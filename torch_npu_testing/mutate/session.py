# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""One mutate session: the baseline and every mutant, forked when possible, else in fresh processes.

In fork mode the baseline starts first and the mutants start alongside it (the baseline's run is not paid
before them); their timeouts apply once the baseline has measured T. If the baseline fails in its fork,
the children are killed, and the baseline runs again in a fresh process: when it passes there, every
mutant runs fresh (the reason said); when it fails there too, :class:`BaselineFailed`. When a reason is
known before any run (the device is not cpu, FILE starts threads at import, ``--fresh-processes``), the
baseline runs fresh first, then the mutants.

``indices`` (``mutate --only``) are the mutants to run, a part of the catalogue; by default all of it.

With ``passing_only`` (``mutate --passing-only``) the baseline runs alone first (fork, or fresh for a reason
known before any run); the tests it sees fail are left out of every mutant's run (``prepared.exclude``).
A baseline that cannot be narrowed that way (the child raised or died, a class fixture failed, no test
passes) is :class:`BaselineFailed` all the same.
"""
import gc

from . import child, runner


class BaselineFailed(Exception):
    """The tests fail with no mutant applied; ``report`` is the baseline's."""

    def __init__(self, report):
        super().__init__(runner.describe_failure(report))
        self.report = report


def _overlapped(prepared, indices, jobs, timeout_for, on_done):
    """Baseline and mutants forked together; a mutant's report is held back until the baseline has passed,
    so a failing baseline leaves one error line and nothing else."""
    state, held = {}, []

    def done(report):
        if report["index"] != child.BASELINE:
            if "baseline" in state:
                on_done(report)
            else:
                held.append(report)
        elif not runner.passed(report):
            raise BaselineFailed(report)
        else:
            state["baseline"] = report
            for early in held:
                on_done(early)
            held.clear()

    def timeout():
        return timeout_for(state["baseline"]) if "baseline" in state else None

    runner.run_all(lambda index: runner.start_fork(prepared, index), [child.BASELINE] + indices, jobs, timeout, done)
    return state["baseline"]


def run_session(prepared, device, jobs, timeout_for, on_done, on_restart, force_fresh=False, passing_only=False,
                indices=None):
    """``(fresh, reasons, baseline report)``; ``on_done(report)`` per mutant, ``on_restart()`` before the
    mutants run again in fresh processes. ``timeout_for(baseline report)`` gives the timeout per mutant."""
    if indices is None:
        indices = [mutant.index for mutant in prepared.mutants]
    gc.freeze()  # the children's collector then leaves the parent's objects (and their shared pages) alone
    try:
        if passing_only:
            return _run_passing_only(prepared, device, jobs, timeout_for, on_done, force_fresh, indices)
        return _run(prepared, device, jobs, timeout_for, on_done, on_restart, force_fresh, indices)
    finally:
        gc.unfreeze()


def failing_tests(report, test_ids):
    """``(how, tests)`` of a baseline ``report``: ``("some", ids)`` when leaving the failing tests out leaves
    a passing run, ``("every", ids)`` when every test fails, ``("run", [])`` when what failed is no test (the
    child raised, died or timed out; a class or module fixture failed), ``("none", [])`` when it passed."""
    failing = list(dict.fromkeys(test for test, _ in report.get("failures", [])))
    if report.get("error") or report.get("died") or report.get("timed_out") or any(
            test not in test_ids for test in failing):
        return "run", []
    if not failing:
        return "none", []
    return ("every" if len(failing) >= len(set(test_ids)) else "some"), failing


def _run_passing_only(prepared, device, jobs, timeout_for, on_done, force_fresh, indices):
    reasons = runner.fresh_reasons(prepared, device) + (["--fresh-processes was given"] if force_fresh else [])
    baseline = runner.run_baseline(prepared, bool(reasons))
    how, failing = failing_tests(baseline, child.test_ids(prepared.module))
    if how in ("run", "every"):
        raise BaselineFailed(baseline)
    prepared.exclude = frozenset(failing)
    start = runner.start_fresh if reasons else runner.start_fork
    runner.run_all(lambda index: start(prepared, index), indices, jobs, timeout_for(baseline), on_done)
    return bool(reasons), reasons, baseline


def _run(prepared, device, jobs, timeout_for, on_done, on_restart, force_fresh, indices):
    reasons = runner.fresh_reasons(prepared, device) + (["--fresh-processes was given"] if force_fresh else [])
    if not reasons:
        try:
            return False, [], _overlapped(prepared, indices, jobs, timeout_for, on_done)
        except BaselineFailed as failed:
            forked = failed.report
        on_restart()
    baseline = runner.run_baseline(prepared, True)
    if not runner.passed(baseline):
        raise BaselineFailed(baseline)
    if not reasons:
        reasons = [f"the baseline fails in a forked child ({runner.describe_failure(forked)}) but passes in a "
                   "fresh process"]
    runner.run_all(lambda index: runner.start_fresh(prepared, index), indices, jobs, timeout_for(baseline), on_done)
    return True, reasons, baseline
