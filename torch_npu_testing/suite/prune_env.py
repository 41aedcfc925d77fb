# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""``prune-env``: remove a branch env's venv once it has run, when ``$TORCH_NPU_TESTING_PRUNE_ENVS`` asks.

Why: each branch env pins a CUDA build of torch from PyPI, about 5 GB installed, and the default
``tox`` holds four of them (about 24 GB with the CPU envs). On a shared machine with less free disk the
run dies half-way with "No space left on device". The branch envs' only lasting output is their
results file (``.tox/results/<env>.json``) and JUnit XML, both outside the venv, so a run that sets
``TORCH_NPU_TESTING_PRUNE_ENVS=1`` needs room for one CUDA env at a time: tox.ini runs this command
as each branch env's last step, and tox rebuilds the env the next time it is asked for.

Only the env the command runs in can be removed (its ``sys.prefix``), and only when it looks like a
tox venv (``pyvenv.cfg`` and ``.tox-info.json``); anything else is a one-line error and nothing is
removed. Without the variable (or with ``0``) the command does nothing, so a plain ``tox`` keeps its
envs warm.
"""
import os
import shutil
import sys

from ..common.errors import UsageError

PRUNE_ENV = "TORCH_NPU_TESTING_PRUNE_ENVS"
_YES = {"1", "true", "yes", "on"}
_NO = {"", "0", "false", "no", "off"}
VENV_MARKERS = ("pyvenv.cfg", ".tox-info.json")


def prune_asked(environ):
    """Whether ``$TORCH_NPU_TESTING_PRUNE_ENVS`` asks for pruning; a value that is neither yes nor no is an error."""
    value = environ.get(PRUNE_ENV, "").strip().lower()
    if value in _YES:
        return True
    if value in _NO:
        return False
    raise UsageError(f"{PRUNE_ENV}={environ[PRUNE_ENV]!r}: expected 1 or 0")


def tree_bytes(path):
    """Bytes of the regular files under ``path`` (links not followed), what removing it frees."""
    total = 0
    for folder, _dirs, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(folder, name)).st_size
            except OSError:
                pass
    return total


def check_prunable(env_dir, prefix):
    """Raise UsageError unless ``env_dir`` is the running interpreter's own tox venv."""
    if not os.path.isdir(env_dir):
        raise UsageError(f"prune-env: {env_dir} is not a directory")
    missing = [name for name in VENV_MARKERS if not os.path.isfile(os.path.join(env_dir, name))]
    if missing:
        raise UsageError(f"prune-env: {env_dir} is not a tox venv (no {', '.join(missing)}); nothing removed")
    if os.path.realpath(env_dir) != os.path.realpath(prefix):
        raise UsageError(f"prune-env: {env_dir} is not this interpreter's env ({prefix}); nothing removed")


def prune(env_dir, environ, prefix=None, out=None):
    out = sys.stdout if out is None else out
    if not prune_asked(environ):
        return 0
    check_prunable(env_dir, sys.prefix if prefix is None else prefix)
    size = tree_bytes(env_dir)
    shutil.rmtree(env_dir)
    print(f"prune-env: removed {env_dir} ({size / 1e9:.1f} GB) after its run; its results stay, and tox "
          f"rebuilds it when next asked ({PRUNE_ENV}=1)", file=out)
    return 0


def add_arguments(parser):
    parser.add_argument("env_dir", help="the tox env directory this command runs in ({env_dir} in tox.ini)")


def main(args):
    return prune(args.env_dir, os.environ)
