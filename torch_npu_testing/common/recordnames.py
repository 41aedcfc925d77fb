# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""The names of the records export, verify and pr write: one task's never those of another.

A record is keyed by the branch and the API selection (``--api``): ``verify-v2.12.0--torch.nn.functional.pad.json``,
``pr-v2.12.0--torch.nn.functional.pad.md``, ``evidence-...``, ``export-...``. Several ``--api`` are sorted and
joined with ``+``. Without ``--api`` (every API of the branch) the name is the branch's alone, as before tasks
were keyed (``pr-v2.12.0.md``), so readers of those names keep working. ``/`` in a branch name becomes ``_``.
"""
import re

_UNSAFE = re.compile(r"[^A-Za-z0-9._+-]")


def selection_key(api_names):
    """``""`` for every API (None or empty), else the sorted, de-duplicated names joined by ``+``."""
    names = sorted(set(api_names or ()))
    return _UNSAFE.sub("_", "+".join(names))


def stem(kind, branch, api_names=None):
    """``verify-v2.12.0`` or ``verify-v2.12.0--torch.nn.functional.pad``: a record's name without extension."""
    key = selection_key(api_names)
    return f"{kind}-{branch.replace('/', '_')}" + (f"--{key}" if key else "")


def name(kind, branch, api_names=None, ext=".json"):
    return stem(kind, branch, api_names) + ext
