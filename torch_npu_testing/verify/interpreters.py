# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""The interpreters verify runs DEST's files under, each with a name the record keys its results by.

- ``--env ENV ...`` (default: every env of the branch in the one table): ``KIT/.tox/<env>/bin/python``;
  an env of another branch, an unknown env or an env with no interpreter is refused.
- ``--python PY ...``: any interpreter, keyed by the torch it imports (``torch-2.12.0``), asked with
  ``TORCH_DEVICE_BACKEND_AUTOLOAD=0`` so a torch_npu without CANN cannot break the question.

Each is checked before anything runs: a module the file's runner needs (``xmlrunner``, ``expecttest``) that
it lacks is one line naming the module and the pip command that installs it, exit 2.
"""
import os
import subprocess

from ..common import table
from ..common.errors import UsageError

TORCH_QUESTION = "import torch; print(torch.__version__)"
# What a file's runner needs besides torch: module -> the package that installs it.
NEEDED = {"xmlrunner": "unittest-xml-reporting", "expecttest": "expecttest"}
MODULES_QUESTION = ("import importlib\nmissing = []\nfor name in %r:\n    try:\n        importlib.import_module(name)\n"
                    "    except ImportError:\n        missing.append(name)\nprint(' '.join(missing) or '-')"
                    % (tuple(NEEDED),))


def env_python(kit_root, env):
    return os.path.join(os.path.abspath(kit_root), ".tox", env, "bin", "python")


def _ask(python, label, code):
    env = dict(os.environ, TORCH_DEVICE_BACKEND_AUTOLOAD="0")
    try:
        return subprocess.run([python, "-c", code], capture_output=True, text=True, env=env,
                              stdin=subprocess.DEVNULL, check=False, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise UsageError(f"{label}: cannot run it ({exc})") from None


def torch_version(python, label=None):
    """The torch version ``python`` imports; UsageError when it cannot run or has no torch."""
    label = label or f"--python {python}"
    done = _ask(python, label, TORCH_QUESTION)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise UsageError(f"{label}: cannot import torch ({last})")
    return done.stdout.strip().splitlines()[-1]


def check_modules(python, label):
    """UsageError naming the first module a file's runner needs that ``python`` lacks, and how to install it:
    checked before anything runs, so a missing ``xmlrunner`` is not a run with no JUnit XML."""
    done = _ask(python, label, MODULES_QUESTION)
    missing = [name for name in (done.stdout.strip().splitlines() or ["-"])[-1].split() if name != "-"]
    if done.returncode != 0 or missing:
        name = missing[0] if missing else "?"
        raise UsageError(f"{label}: no module {name} (the file's runner needs it): install it with "
                         f"`{python} -m pip install {NEEDED.get(name, name)}`")


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
            check_modules(python, f"--python {python}")
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
    for env, python in chosen:
        check_modules(python, f"--env {env} ({python})")
    return chosen
