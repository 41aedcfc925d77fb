# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Mutation strength for ``report`` and ``pr``: one line per API, with its survivors named.

``tox -e strength`` writes one ``mutate --json`` document per API file into ``RESULTS/strength/`` (a
subfolder, so ``report`` never takes them for env results), and so does a task's own file through README's
``mutate FILE --json .tox/results/strength/NAME.json``. :func:`rows` reads every document there of
format :data:`torch_npu_testing.mutate.output.FORMAT`; a document that is unreadable or of another format
is a row of its own saying so (it is never silently dropped). No folder, no rows: nothing is shown.
"""
import glob
import os

from ..common.documents import WrongFormat, read_document
from ..mutate.output import FORMAT
from ..mutate.score import strength_line
from .markdown import code

STRENGTH_FOLDER = "strength"
# Every mutate format whose per-API blocks this module reads (the current one and the first).
FORMATS = tuple(dict.fromkeys((FORMAT, "torch_npu_testing.mutate/1")))


def _read(path):
    for expected in FORMATS:
        try:
            return read_document(path, expected), None
        except WrongFormat as exc:
            found = exc.found
        except (OSError, ValueError) as exc:
            return None, f"{path}: unreadable ({exc})"
    return None, f"{path}: format {found!r}, expected one of {', '.join(repr(name) for name in FORMATS)}"


def _row(document, block):
    if block.get("status") != "present":
        line = f"strength {block['name']}: absent in this torch ({block.get('reason')})"
        return {"name": block["name"], "line": line, "survivors": [], "explained": []}
    survivors = [m["code"] for m in block["mutants"] if m["outcome"] == "survived"]
    explained = [m["code"] for m in block["mutants"] if m["outcome"] == "survived" and m.get("explained")]
    return {"name": block["name"], "line": strength_line(block["name"], block["strength"]),
            "survivors": survivors, "explained": explained, "file": document.get("file"),
            "torch": document.get("torch_version")}


def rows(results_dir, api_names=None):
    """One row per API (``name``, ``line``, ``survivors``, ``explained``, ``file``, ``torch``), or per bad file
    (``problem``); only ``api_names`` when given."""
    found = []
    for path in sorted(glob.glob(os.path.join(results_dir, STRENGTH_FOLDER, "*.json"))):
        document, problem = _read(path)
        if problem:
            found.append({"name": None, "problem": problem})
            continue
        try:
            found += [_row(document, block) for block in document.get("apis", [])
                      if api_names is None or block["name"] in api_names]
        except (KeyError, TypeError) as exc:
            found.append({"name": None, "problem": f"{path}: an API block lacks {exc} ({document['format']})"})
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
        text = f"- {code(row['line'])}"
        if row["survivors"]:
            named = ", ".join(code(name) + (" (explained)" if name in row["explained"] else "")
                              for name in row["survivors"])
            text += f"; survivors: {named}"
        lines.append(text)
    return lines + [""]
