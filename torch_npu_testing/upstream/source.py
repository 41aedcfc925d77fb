# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Which PyTorch source tree the patches apply to: ``--source DIR``, else ``$PYTORCH_SRC``.

A directory counts as a PyTorch checkout when it has a ``test/`` directory and one of
``torch/__init__.py``, ``version.txt``, ``setup.py`` or ``test/run_test.py`` (a sparse copy of a few
upstream files keeps ``version.txt`` for this). Whether it has the files the patches need is checked
per patch.
"""
import os
from pathlib import Path

from ..common.errors import UsageError

SOURCE_ENV = "PYTORCH_SRC"
MARKERS = ("torch/__init__.py", "version.txt", "setup.py", "test/run_test.py")
NO_SOURCE = f"no PyTorch source (set {SOURCE_ENV}=/path/to/pytorch or pass --source)"


def given_source(option=None, environ=None):
    """The source the user named (option first, then the environment), or None."""
    environ = os.environ if environ is None else environ
    value = option if option else environ.get(SOURCE_ENV, "").strip()
    return Path(value).expanduser() if value else None


def require_source(option=None, environ=None):
    """The validated checkout (absolute); missing or non-PyTorch -> UsageError."""
    source = given_source(option, environ)
    if source is None:
        raise UsageError(NO_SOURCE)
    return validate(source)


def validate(source):
    source = Path(source).expanduser()
    if not source.exists():
        raise UsageError(f"PyTorch source {source} does not exist")
    if not source.is_dir():
        raise UsageError(f"PyTorch source {source} is not a directory")
    if not (source / "test").is_dir() or not any((source / marker).is_file() for marker in MARKERS):
        raise UsageError(f"{source} does not look like a PyTorch checkout (needs test/ and one of "
                         f"{', '.join(MARKERS)})")
    return source.resolve()
