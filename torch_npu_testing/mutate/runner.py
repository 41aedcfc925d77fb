# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Run the baseline and the mutants, ``jobs`` children at a time, each reporting through a pipe.

Fork mode (the default): the parent has imported everything once (:func:`child.prepare`); each child is a
fork that calls ``torch.set_num_threads(1)`` first (a fork after an OpenMP region hangs the child's first
matmul on torch 2.13 cpu), sends its output to /dev/null, runs :func:`child.run` and writes its report.

Fresh mode: each child is ``python -m torch_npu_testing.mutate.child`` (pays the import itself). Used when
the resolved device is not cpu (an accelerator runtime must not be forked), when FILE starts threads at
import, and when the baseline fails in a fork but passes in a fresh process (:mod:`.session`).

A child past its timeout (counted from its first test) is killed (SIGKILL) and reported as
``{"timed_out": true}``; one that dies without a report as ``{"died": "<how>"}``.
"""
import json
import os
import selectors
import signal
import subprocess
import sys
import time
import traceback
from dataclasses import dataclass, field

from . import child

STARTUP_LIMIT_S = 300.0  # a child that has not started its tests by then (imports hung) is timed out


@dataclass
class Job:
    index: int
    fd: int
    started: float
    pid: int = 0
    process: object = None
    data: list = field(default_factory=list)
    tests_started: float = None

    def receive(self, chunk, now):
        if self.tests_started is None and chunk.startswith(child.START_MARK):
            self.tests_started, chunk = now, chunk[len(child.START_MARK):]
        self.data.append(chunk)

    def deadline(self, timeout):
        """When the child is late: ``timeout`` after its tests started, STARTUP_LIMIT_S before that."""
        if self.tests_started is None:
            return self.started + STARTUP_LIMIT_S + (timeout or 0)
        return None if timeout is None else self.tests_started + timeout

    def kill(self):
        if self.process is not None:
            self.process.kill()
        else:
            os.kill(self.pid, signal.SIGKILL)

    def wait(self):
        """How the child ended: None for a clean exit, else a few words."""
        if self.process is not None:
            code = self.process.wait()
        else:
            _, status = os.waitpid(self.pid, 0)
            code = os.waitstatus_to_exitcode(status)
        return None if code == 0 else (f"killed by signal {-code}" if code < 0 else f"exit status {code}")


def _save_coverage():
    """The kit's own coverage (``tox -e unit``) of a forked child, which leaves by ``os._exit``."""
    module = sys.modules.get("coverage")
    current = module.Coverage.current() if module is not None else None
    if current is not None:
        current.stop()
        current.save()


def _fork_child(prepared, index, write_fd, run):
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        report = run(prepared, index, child.mark_start(write_fd))
    except BaseException:  # noqa: BLE001 - the parent gets the traceback instead of a silent death
        report = {"index": index, "error": traceback.format_exc()}
    try:
        child.write_report(write_fd, report)
        _save_coverage()
    finally:
        os._exit(0)


def start_fork(prepared, index, run=None):
    """A forked child running ``run(prepared, index, on_start)`` (default :func:`child.run`)."""
    read_fd, write_fd = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child's coverage is not collected (it leaves by os._exit)
        os.close(read_fd)
        _fork_child(prepared, index, write_fd, run or child.run)
    os.close(write_fd)
    return Job(index, read_fd, time.perf_counter(), pid=pid)


def start_fresh(prepared, index):
    read_fd, write_fd = os.pipe()
    command = [sys.executable, "-m", "torch_npu_testing.mutate.child", prepared.path, "--index", str(index),
               "--result-fd", str(write_fd)]
    for target in prepared.targets:
        command += ["--api", target.name]
    for package in prepared.packages:
        command += ["--internal-package", package]
    for test in sorted(prepared.exclude):
        command += ["--exclude", test]
    process = subprocess.Popen(command, pass_fds=(write_fd,), stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(write_fd)
    return Job(index, read_fd, time.perf_counter(), process=process)


def _finish(job, timed_out=False):
    os.close(job.fd)
    if timed_out:
        job.kill()
        job.wait()
        return {"index": job.index, "timed_out": True}
    died = job.wait()
    try:
        report = json.loads(b"".join(job.data).decode())
    except ValueError:
        return {"index": job.index, "died": died or "no report"}
    return report


def run_all(start, indices, jobs, timeout, on_done):
    """Run ``start(index)`` for every index, ``jobs`` at a time; ``on_done(report)`` as each finishes.

    Returns the reports by index. ``timeout`` (seconds per child) may be None (no limit) or a callable
    giving the current one (None until the baseline has measured it).
    """
    pending, running, reports = list(indices), {}, {}
    selector = selectors.DefaultSelector()
    try:
        while pending or running:
            while pending and len(running) < jobs:
                job = start(pending.pop(0))
                running[job.fd] = job
                selector.register(job.fd, selectors.EVENT_READ)
            limit = timeout() if callable(timeout) else timeout
            deadlines = [d for d in (j.deadline(limit) for j in running.values()) if d is not None]
            wait = max(0.0, min(deadlines) - time.perf_counter()) if deadlines else None
            for key, _ in selector.select(wait):
                job = running[key.fd]
                chunk = os.read(key.fd, 1 << 16)
                if chunk:
                    job.receive(chunk, time.perf_counter())
                    continue
                selector.unregister(key.fd)
                del running[key.fd]
                _done(job, _finish(job), reports, on_done)
            now, limit = time.perf_counter(), timeout() if callable(timeout) else timeout
            for fd, job in list(running.items()):
                deadline = job.deadline(limit)
                if deadline is not None and now > deadline:
                    selector.unregister(fd)
                    del running[fd]
                    _done(job, _finish(job, timed_out=True), reports, on_done)
    finally:
        for fd, job in running.items():
            selector.unregister(fd)
            _finish(job, timed_out=True)
        selector.close()
    return reports


def _done(job, report, reports, on_done):
    report["wall_s"] = round(time.perf_counter() - job.started, 3)
    reports[job.index] = report
    on_done(report)


def run_baseline(prepared, fresh):
    """The baseline's report, forked or fresh; no time limit (it measures T)."""
    start = start_fresh if fresh else start_fork
    return run_all(lambda index: start(prepared, index), [child.BASELINE], 1, None, lambda report: None)[
        child.BASELINE]


def passed(report):
    return not report.get("error") and not report.get("died") and report.get("first_failure") is None


def simulated(device):
    """True for a device that lives in host memory and may be forked (the simulated NPU marks its module)."""
    import torch

    return bool(getattr(getattr(torch, device, None), "_SIMULATED", False))


def fresh_reasons(prepared, device):
    """Why fork mode cannot be used before any run (device, threads at import); [] when it can."""
    reasons = []
    if device != "cpu" and not simulated(device):
        reasons.append(f"the device is {device} (an accelerator runtime must not be forked)")
    if prepared.threads_at_import > 0:
        reasons.append(f"{prepared.path} starts {prepared.threads_at_import} thread(s) at import")
    return reasons


def describe_failure(report):
    if report.get("error"):
        return "the child raised: " + report["error"].strip().splitlines()[-1]
    if report.get("died"):
        return f"the child died ({report['died']})"
    if report.get("timed_out"):
        return "the child timed out"
    return f"{report['first_failure']}: {report.get('reason') or 'failed'}"
