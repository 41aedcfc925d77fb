# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""``locate``: where torch defines an API, in this interpreter and in others (【API 功能介绍】).

    python -m torch_npu_testing locate API [--python PY ...] [--tox] [--json PATH]

Without ``--python`` / ``--tox`` it resolves the API in this interpreter (importing torch here). Each
``--python PY`` runs ``where_defined.py`` by path in PY, which needs only torch there; ``--tox`` adds every
``<kit>/.tox/*/bin/python``. Rows are sorted by torch version, so "absent before 2.9" or "moved in 2.11"
shows at a glance. An interpreter without torch, or where the probe fails, is a row with its error. A name
found in no probed torch (misspelt), or no torch here without ``--python`` / ``--tox``, is one line, exit 2,
nothing written.

JSON (``--json PATH``)::

    {"format": "torch_npu_testing.locate/1", "api": NAME,
     "results": [{"python", "torch", "found", "kind", "implementation", "module", "file", "first_line",
                  "last_line", "signature", "doc", "public", "private_reason", "aliases", "error"}, ...]}

(field meanings: :mod:`torch_npu_testing.task.where_defined`).
"""
import glob
import importlib.util
import os
import sys
from concurrent.futures import ThreadPoolExecutor

from ..common.errors import UsageError
from ..common.toolspython import require_torch
from . import apiname, by_path, jsonfile

FORMAT = "torch_npu_testing.locate/1"
WHERE_DEFINED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "where_defined.py")
KIT_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WHERE_DEFINED_TIMEOUT_S = 300


def tox_interpreters(kit_root=KIT_ROOT):
    return sorted(glob.glob(os.path.join(kit_root, ".tox", "*", "bin", "python")))


def check_pythons(pythons):
    for python in pythons:
        if not (os.path.isfile(python) and os.access(python, os.X_OK)):
            raise UsageError(f"--python {python} is not an executable file")


def probe_subprocess(python, name):
    """Run the probe by path in ``python``; a row with ``error`` set when it fails."""
    rows, why = by_path.run_json(python, WHERE_DEFINED, [name], WHERE_DEFINED_TIMEOUT_S)
    if why is None and not (isinstance(rows, list) and rows):
        why = f"no row in its answer {rows!r}"
    row = rows[0] if why is None else {"api": name, "torch": None, "found": False, "error": f"probe failed: {why}"}
    row["python"] = python
    return row


def probe_here(name):
    from . import where_defined
    return where_defined.locate(name)


def probe_here_if_torch(name):
    """This interpreter's row for ``name``; None when torch is not importable here (nothing imported)."""
    if importlib.util.find_spec("torch") is None:
        return None
    return probe_here(name)


def locate_all(name, pythons=()):
    """Rows for ``pythons`` (probed in parallel) or, when empty, for this interpreter; sorted by torch."""
    if not pythons:
        return [probe_here(name)]
    with ThreadPoolExecutor(max_workers=min(4, len(pythons))) as pool:
        rows = list(pool.map(lambda python: probe_subprocess(python, name), pythons))
    return sorted(rows, key=lambda row: (row.get("torch") is None, jsonfile.version_key(row.get("torch"))))


def document(name, rows):
    return {"format": FORMAT, "api": name, "results": rows}


def _cell(value):
    return "-" if value in (None, "") else str(value).replace("|", "\\|")


def where(row):
    if not row.get("found"):
        return "-"
    if row.get("file") is None:
        return "(C, no Python source)"
    return f"`{row['file']}:{row['first_line']}-{row['last_line']}`"


def render(name, rows):
    lines = [f"### locate `{name}`", "",
             "| torch | python | found | kind | impl | module | defined at (in torch/) | signature | public |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for row in rows:
        found = "yes" if row.get("found") else f"no: {_cell(row.get('error'))}"
        public = "-" if row.get("public") is None else ("yes" if row["public"] else f"no ({row['private_reason']})")
        signature = f"`{row['signature']}`" if row.get("signature") else "-"
        lines.append(f"| {_cell(row.get('torch'))} | `{row.get('python')}` | {found} | {_cell(row.get('kind'))} | "
                     f"{_cell(row.get('implementation'))} | {_cell(row.get('module'))} | {where(row)} | "
                     f"{_cell(signature)} | {_cell(public)} |")
    docs = {row["doc"] for row in rows if row.get("doc")}
    for doc in sorted(docs):
        lines += ["", f"Docstring: {doc}"]
    aliases = sorted({alias for row in rows for alias in row.get("aliases") or []})
    if aliases:
        lines += ["", "Also reachable as: " + ", ".join(f"`{alias}`" for alias in aliases)]
    missing = [f"torch {row['torch']}" for row in rows if row.get("torch") and not row.get("found")]
    if missing:
        lines += ["", "Not found in: " + ", ".join(missing)]
    unprobed = [f"`{row.get('python')}`" for row in rows if not row.get("torch")]
    if unprobed:
        lines += ["", "Not probed (no importable torch there): " + ", ".join(unprobed)]
    return "\n".join(lines)


def check_found(name, rows):
    """UsageError (nothing written) when ``name`` resolves in no probed torch: a misspelt name, or no torch."""
    if any(row.get("found") for row in rows):
        return
    probed = [row for row in rows if row.get("torch")]
    if not probed:
        pythons = ", ".join(str(row.get("python")) for row in rows)
        raise UsageError(f"no interpreter probed could import torch ({pythons}): give --tox (the branch envs) or "
                         "--python PY with a torch")
    versions = ", ".join(dict.fromkeys(str(row["torch"]) for row in probed))
    why = probed[0].get("error") or "not found"
    raise UsageError(f"{name} resolves in no probed torch ({versions}): {why} (check the name)")


def add_arguments(parser):
    parser.add_argument("api", help="dotted API name, e.g. torch.autograd.grad_mode.set_grad_enabled.clone")
    parser.add_argument("--python", action="append", default=[], metavar="PY",
                        help="another interpreter to probe (repeatable; it needs torch, not this kit)")
    parser.add_argument("--tox", action="store_true", help="also probe every <kit>/.tox/*/bin/python")
    parser.add_argument("--json", metavar="PATH", help=f"also write the {FORMAT} document")


def main(args):
    apiname.parse(args.api)
    jsonfile.check_json_target(args.json)
    pythons = list(args.python)
    check_pythons(pythons)
    if args.tox:
        found = tox_interpreters()
        if not found:
            raise UsageError(f"--tox: no {os.path.join(KIT_ROOT, '.tox', '*', 'bin', 'python')} exists")
        pythons += [python for python in found if python not in pythons]
    if not pythons:
        require_torch("locate")
    rows = locate_all(args.api, pythons)
    check_found(args.api, rows)
    print(render(args.api, rows))
    jsonfile.write_json(args.json, document(args.api, rows))
    sys.stdout.flush()
    return 0
