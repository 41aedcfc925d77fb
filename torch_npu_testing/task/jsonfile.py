# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""The task commands' ``--json`` documents and edited files, each written atomically
(:func:`~torch_npu_testing.common.atomic.write_text_atomic`), and the sort key of torch versions in them.

:func:`check_json_target` runs before any work, so a bad ``--json`` path is a one-line error with nothing
written.
"""
import json
import os

from ..common.atomic import write_text_atomic  # noqa: F401 - re-exported for the task commands
from ..common.errors import UsageError
from ..runtime.carried import parse_version


def check_json_target(path, option="--json"):
    """UsageError unless ``path`` (may be None) can be created: its folder exists and it is not a folder."""
    if path is None:
        return
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise UsageError(f"{option} {path}: folder {folder} does not exist")
    if os.path.isdir(path):
        raise UsageError(f"{option} {path} is a directory")


def write_json(path, document):
    if path is not None:
        write_text_atomic(path, json.dumps(document, indent=2, ensure_ascii=False) + "\n")


def version_key(version):
    """Sort key of ``"2.13.0"`` / ``"2.7.1.post9"`` / None (None and non-versions first), by the runtime's
    ``parse_version``."""
    try:
        return (1,) + parse_version(version)
    except ValueError:
        return (0,)
