# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Markdown pieces every section of the evidence report uses (and the PR description, through :mod:`.render`)."""
import re


def cell(text):
    """Text safe inside a Markdown table cell (one line, pipes escaped)."""
    return " ".join(str(text).split()).replace("|", "\\|")


def code(text):
    text = str(text)
    fence = "``" if "`" in text else "`"
    pad = " " if "`" in text else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def fence(lines):
    """A code fence longer than any backtick run in ``lines`` (at least three backticks)."""
    longest = max([len(run) for line in lines for run in re.findall(r"`+", line)] + [2])
    return "`" * (longest + 1)
