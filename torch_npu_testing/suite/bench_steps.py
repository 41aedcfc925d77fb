# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""One timed subprocess of the bench: the command (:class:`Step`), its wall time (:func:`time_step`) and the
failure that makes a figure meaningless (:class:`CommandFailed`). Shared by the bench's rounds
(:mod:`.bench`) and its one timed ``mutate`` run (:mod:`.bench_mutate`)."""
import os
import shlex
import subprocess
import time

DEFAULT_TIMEOUT_S = 900


class CommandFailed(Exception):
    """A measured command exited non-zero or timed out: the figures would be meaningless."""

    def __init__(self, argv, detail):
        super().__init__(f"command failed ({detail}): {shlex.join(argv)}")
        self.argv = argv


class Step:
    """One subprocess of one measurement: its argv and the environment variables it changes."""

    def __init__(self, measurement, argv, set_env=None, unset_env=()):
        self.measurement = measurement
        self.argv = list(argv)
        self.set_env = dict(set_env or {})
        self.unset_env = tuple(unset_env)

    def environ(self, base):
        """The subprocess environment built from ``base`` (a mapping, not changed)."""
        env = dict(base)
        # As in the tox envs: torch_npu without CANN would otherwise break `import torch`.
        env.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")
        for name in self.unset_env:
            env.pop(name, None)
        env.update(self.set_env)
        return env

    def __repr__(self):
        return f"Step({self.measurement!r}, {shlex.join(self.argv)!r})"


def time_step(step, cwd, timeout_s=DEFAULT_TIMEOUT_S, environ=None):
    """Wall time in seconds of one fresh subprocess; raises :class:`CommandFailed` if it fails."""
    env = step.environ(os.environ if environ is None else environ)
    started = time.perf_counter()
    try:
        completed = subprocess.run(step.argv, check=False, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        raise CommandFailed(step.argv, f"timed out after {timeout_s} s") from None
    except OSError as exc:
        raise CommandFailed(step.argv, f"cannot start: {exc.strerror or exc}") from None
    elapsed = time.perf_counter() - started
    if completed.returncode != 0:
        lines = [line for line in completed.stdout.decode(errors="replace").splitlines() if line.strip()]
        last = f"; last output line: {lines[-1].strip()[:200]!r}" if lines else ""
        raise CommandFailed(step.argv, f"exit status {completed.returncode}{last}")
    return elapsed
