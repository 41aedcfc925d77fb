# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Read a JSON document the kit wrote, checked for its format name (``torch_npu_testing.<kind>/<version>``).

The one reader for records that name their format: each caller words its own message from the exception
(a missing file, an unreadable one, another format), so the check itself is written once.
"""
import json


class WrongFormat(Exception):
    """The file is JSON but not a document of the expected format; ``found`` is what it names instead."""

    def __init__(self, found):
        super().__init__(f"format {found!r}")
        self.found = found


def read_document(path, expected):
    """The document at ``path``; OSError (FileNotFoundError included) or ValueError when it cannot be read,
    :class:`WrongFormat` when it is not a dict whose ``format`` is ``expected`` (a name, or a tuple of the
    names a reader accepts)."""
    accepted = (expected,) if isinstance(expected, str) else tuple(expected)
    with open(path, encoding="utf-8") as handle:
        document = json.load(handle)
    if not isinstance(document, dict) or document.get("format") not in accepted:
        raise WrongFormat(document.get("format") if isinstance(document, dict) else type(document).__name__)
    return document
