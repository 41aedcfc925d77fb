# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Dotted API names (``torch.autograd.grad_mode.set_grad_enabled.clone``): parsing and privacy.

Every task command takes one API name. It must be a dotted Python name starting with ``torch`` and
having at least two parts; anything else is a :class:`UsageError` before any work is done. A name is
*private by spelling* when any part starts with an underscore (``torch._functorch.config.patch``);
dunder names such as ``__init__`` are not private. Whether a public-looking name is exported by its
module needs torch and is decided by :mod:`torch_npu_testing.task.where_defined`.
"""
import re

from ..common.errors import UsageError
# The spelling rule lives in the probe, which must stay importable without this package.
from .where_defined import underscore_reason  # noqa: F401

_PART = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_KEYWORDS = frozenset(("False", "None", "True", "and", "as", "assert", "async", "await", "break", "class",
                       "continue", "def", "del", "elif", "else", "except", "finally", "for", "from", "global",
                       "if", "import", "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return",
                       "try", "while", "with", "yield"))


def parse(name):
    """The list of parts of ``name``, or UsageError (one line) when it is not a dotted torch API name."""
    text = (name or "").strip()
    parts = text.split(".")
    if len(parts) < 2 or parts[0] != "torch" or any(not _PART.match(p) or p in _KEYWORDS for p in parts):
        raise UsageError(f"cannot parse API name {name!r}: give a dotted name starting with torch., "
                         "e.g. torch.autograd.grad_mode.set_grad_enabled.clone")
    return parts


def parent(parts):
    return ".".join(parts[:-1])
