# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""The interpreters verify runs DEST's files under, each with a name the record keys its results by.

- ``--env ENV ...`` (default: every env of the branch in the one table): ``KIT/.tox/<env>/bin/python``;
  an env of another branch, an unknown env or an env with no interpreter is refused.
- ``--python PY ...``: any interpreter, keyed by the torch it imports (``torch-2.12.0``), asked with
  ``TORCH_DEVICE_BACKEND_AUTOLOAD=0`` so a torch_npu without CANN cannot break the question.
"""
import os
import subprocess

from ..common import table
from ..common.errors import UsageError

TORCH_QUESTION = "import torch; print(torch.__version__)"


def env_python(kit_root, env):
    return os.path.join(os.path.abspath(kit_root), ".tox", env, "bin", "python")


def torch_version(python):
    """The torch version ``python`` imports; UsageError when it cannot run or has no torch."""
    env = dict(os.environ, TORCH_DEVICE_BACKEND_AUTOLOAD="0")
    try:
        done = subprocess.run([python, "-c", TORCH_QUESTION], capture_output=True, text=True, env=env,
                              stdin=subprocess.DEVNULL, check=False, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise UsageError(f"--python {python}: cannot run it ({exc})") from None
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise UsageError(f"--python {python}: cannot import torch ({last})")
    return done.stdout.strip().splitlines()[-1]


def choose(branch, kit_root, envs=None, pythons=None):
    """``[(name, python)]``: the envs asked for (default: the branch's), or the ``--python`` interpreters."""
    if envs and pythons:
        raise UsageError("give --env or --python, not both")
    if pythons:
        chosen = []
        for python in pythons:
            name = f"torch-{torch_version(python)}"
            if name in (known for known, _ in chosen):
                raise UsageError(f"--python: two interpreters import the same torch ({name})")
            chosen.append((name, python))
        return chosen
    own = list(table.envs_for_branch(branch))
    for env in envs or ():
        if env not in own:
            raise UsageError(f"--env {env}: not an env of {branch} (its envs: {', '.join(own)})")
    chosen = [(env, env_python(kit_root, env)) for env in dict.fromkeys(envs or own)]
    missing = [(env, python) for env, python in chosen if not os.path.isfile(python)]
    if missing:
        shown = ", ".join(f"{env} ({python})" for env, python in missing)
        raise UsageError(f"no interpreter for env {shown}: run `tox -e {missing[0][0]}` or give --python PY")
    return chosen
