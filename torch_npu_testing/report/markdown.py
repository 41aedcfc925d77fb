# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Markdown pieces every section of the evidence report uses (and the PR description, through :mod:`.render`)."""


def cell(text):
    """Text safe inside a Markdown table cell (one line, pipes escaped)."""
    return " ".join(str(text).split()).replace("|", "\\|")


def code(text):
    text = str(text)
    fence = "``" if "`" in text else "`"
    pad = " " if "`" in text else ""
    return f"{fence}{pad}{text}{pad}{fence}"
