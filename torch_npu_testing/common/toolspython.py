# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""The one documented way to run the tools that need torch: the unit env's interpreter (README, "A new task").

A tool that needs torch (``locate``, ``docs``, ``new``, ``mutate``, ``pr``), run by an interpreter that cannot
import it, stops before doing anything with one line naming the interpreter to run it with instead (exit 2,
nothing written), rather than giving weaker results or a traceback.
"""
import importlib.util
import os
import sys

from .errors import UsageError

TOOLS_PYTHON = os.path.join(".tox", "unit", "bin", "python")


def has_torch():
    return importlib.util.find_spec("torch") is not None


def require_torch(command):
    """UsageError naming the tools' interpreter when this one cannot import torch."""
    if not has_torch():
        raise UsageError(f"{command} needs torch, which {sys.executable} cannot import: run it with the kit's "
                         f"tools interpreter, `{TOOLS_PYTHON} -m torch_npu_testing {command} ...` (made by "
                         "`tox -e unit --notest`)")
