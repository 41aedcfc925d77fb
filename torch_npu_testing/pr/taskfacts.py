# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Run the task tools (``locate``, ``search``, ``docs`` of :mod:`torch_npu_testing.task`) for one API and keep
their JSON documents (``torch_npu_testing.locate/1``, ``.search/1``, ``.docs/1``).

Each tool is driven through its own command line (``add_arguments`` + ``main`` with ``--json`` into a
temporary file, its printed Markdown discarded), so this adapter depends only on the documented options
and JSON formats. A tool that is missing, refuses (UsageError) or fails gives ``(None, why)``: the
description shows that gap, it never guesses.
"""
import argparse
import contextlib
import importlib
import io
import json
import os
import tempfile

from ..common.errors import UsageError

FORMATS = {"locate": "torch_npu_testing.locate/1", "search": "torch_npu_testing.search/1",
           "docs": "torch_npu_testing.docs/1"}


def run_tool(name, argv):
    """``(document, None)`` from ``python -m torch_npu_testing NAME ARGV --json TMP``, or ``(None, why)``."""
    try:
        module = importlib.import_module(f"torch_npu_testing.task.{name}")
    except ImportError as exc:
        return None, f"the `{name}` command is not available in this kit ({exc})"
    parser = argparse.ArgumentParser(prog=f"{name}")
    module.add_arguments(parser)
    with tempfile.TemporaryDirectory(prefix=f"pr-{name}-") as folder:
        path = os.path.join(folder, f"{name}.json")
        try:
            args = parser.parse_args(list(argv) + ["--json", path])
            with contextlib.redirect_stdout(io.StringIO()):
                module.main(args)
        except UsageError as exc:
            return None, f"`{name}` refused: {exc}"
        except SystemExit as exc:  # argparse rejected the options
            return None, f"`{name}` rejected its options (exit {exc.code})"
        except Exception as exc:  # a bug or an environment problem in the tool: a gap, with its reason
            return None, f"`{name}` failed: {type(exc).__name__}: {exc}"
        try:
            with open(path, encoding="utf-8") as handle:
                document = json.load(handle)
        except (OSError, ValueError) as exc:
            return None, f"`{name}` wrote no readable --json document ({exc})"
    if document.get("format") != FORMATS[name]:
        return None, f"`{name}` wrote format {document.get('format')!r}, expected {FORMATS[name]}"
    return document, None


def locate(api, pythons):
    """Where the torch of each interpreter in ``pythons`` defines ``api``."""
    argv = [api]
    for python in pythons:
        argv += ["--python", python]
    return run_tool("locate", argv)


def search(api, ascend, ref):
    """Which tests at ``ref`` of the Ascend checkout already call ``api``."""
    return run_tool("search", [api, "--ascend", ascend, "--branches", ref])


def docs(api, ascend, ref):
    """Whether ``api`` is listed in Ascend's native-API docs for the torch versions ``ref`` ships."""
    return run_tool("docs", [api, "--ascend", ascend, "--branches", ref])


def tool_command(name, api, ascend=None, ref=None, pythons=()):
    """The command a reviewer can rerun for a tool's facts."""
    parts = ["python", "-m", "torch_npu_testing", name, api]
    if name == "locate":
        for python in pythons:
            parts += ["--python", python]
    else:
        parts += ["--ascend", ascend, "--branches", ref]
    return " ".join(parts)
