# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Mutation strength for ``report`` and ``pr``: one line per API, with its survivors named.

``tox -e strength`` writes one ``mutate --json`` document per API file into ``RESULTS/strength/`` (a
subfolder, so ``report`` never takes them for env results), and so does a task's own file through README's
``mutate FILE --json .tox/results/strength/NAME.json``. :func:`rows` reads every document there of a
format in :data:`torch_npu_testing.mutate.output.READABLE_FORMATS` (``mutate/1`` to ``/3``; a ``/3`` document
may carry each API's device strength, shown as a line of its own); a document that is unreadable or of another
format is a row of its own saying so (it is never silently dropped). No folder, no rows: nothing is shown. A
document measured with ``--passing-only`` says so on each of its lines, with the number of failing tests it
left out.
"""
import glob
import os

from ..common.documents import WrongFormat, read_document
from ..mutate import device_output
from ..mutate.output import READABLE_FORMATS
from ..mutate.score import strength_line
from .markdown import code

STRENGTH_FOLDER = "strength"
DEVICE_FOLDER = "strength-device"


def _read(path):
    try:
        return read_document(path, READABLE_FORMATS), None
    except WrongFormat as exc:
        return None, f"{path}: format {exc.found!r}, expected one of {', '.join(map(repr, READABLE_FORMATS))}"
    except (OSError, ValueError) as exc:
        return None, f"{path}: unreadable ({exc})"


def _row(document, block):
    if block.get("status") != "present":
        line = f"strength {block['name']}: absent in this torch ({block.get('reason')})"
        return {"name": block["name"], "line": line, "survivors": [], "explained": []}
    survivors = [m["code"] for m in block["mutants"] if m["outcome"] == "survived"]
    explained = [m["code"] for m in block["mutants"] if m["outcome"] == "survived" and m.get("explained")]
    line = strength_line(block["name"], block["strength"])
    if document.get("passing_only"):
        line += f"; passing tests only ({len(document.get('left_out', []))} failing left out)"
    if document.get("only"):
        line += f"; only the mutants matching {' '.join(document['only'])}"
    found = {"name": block["name"], "line": line,
             "survivors": survivors, "explained": explained, "file": document.get("file"),
             "torch": document.get("torch_version")}
    if block.get("device"):  # format 3 with --device: device strength, a line of its own
        found["device"] = {"line": device_output.line(block["name"], block["device"]), "survivors": [
            m["code"] for m in block["device"].get("mutants", []) if m["outcome"] == "survived"], "explained": [
            m["code"] for m in block["device"].get("mutants", []) if m["outcome"] == "survived" and m.get("explained")]}
    return found


def rows(results_dir, api_names=None):
    """One row per API (``name``, ``line``, ``survivors``, ``explained``, ``file``, ``torch``, and ``device``
    when the document has device blocks), or per bad file (``problem``); only ``api_names`` when given.
    Documents in :data:`DEVICE_FOLDER` (the device gate's, run on the simulated NPU) give their device lines
    alone: their generic lines were measured on the device, beside the strength env's."""
    found = []
    for folder in (STRENGTH_FOLDER, DEVICE_FOLDER):
        for path in sorted(glob.glob(os.path.join(results_dir, folder, "*.json"))):
            document, problem = _read(path)
            if problem:
                found.append({"name": None, "problem": problem})
                continue
            try:
                found += _document_rows(document, folder, api_names)
            except (KeyError, TypeError) as exc:
                found.append({"name": None, "problem": f"{path}: an API block lacks {exc} ({document['format']})"})
    return found


def _document_rows(document, folder, api_names):
    found = []
    for block in document.get("apis", []):
        if api_names is not None and block["name"] not in api_names:
            continue
        row = _row(document, block)
        if folder == STRENGTH_FOLDER:
            found.append(row)
        elif row.get("device"):
            found.append(dict(row.pop("device"), name=block["name"], file=row["file"], torch=row["torch"]))
    return found


def missing_lines(found, api_names, test_files):
    """Where no strength document names an API of ``api_names``: the line saying how to measure it (its file's
    ``mutate --json`` into ``RESULTS/strength/``, where report and pr read it)."""
    named = {row["name"] for row in found}
    return [f"- strength {name}: not measured — run `python -m torch_npu_testing mutate {path} --json "
            f".tox/results/strength/{os.path.basename(path)[:-3]}.json`"
            for name, path in zip(api_names, test_files) if name not in named]


def markdown_lines(found):
    """The strength block: a title, then one bullet per row (nothing when there are no rows)."""
    if not found:
        return []
    lines = ["Mutation strength (`mutate`: generic port faults at each API's boundary; the kit's files under the "
             "torch of the `strength` env; docs/strength.md):", ""]
    for row in found:
        if row.get("problem"):
            lines.append(f"- strength results {row['problem']}")
            continue
        lines.append(_bullet(row))
        if row.get("device"):
            lines.append(_bullet(row["device"]))
    return lines + [""]


def _bullet(row):
    text = f"- {code(row['line'])}"
    if row["survivors"]:
        named = ", ".join(code(name) + (" (explained)" if name in row["explained"] else "")
                          for name in row["survivors"])
        text += f"; survivors: {named}"
    return text
