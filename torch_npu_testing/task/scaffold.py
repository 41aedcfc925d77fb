# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""``new``: start an API task: the test file (an OpInfo draft or the plain scaffold) and the API's table row.

    python -m torch_npu_testing new API [--path test/<area>/test_<name>.py] [--ascend DIR [--branch REF]]
                                    [--mkdir] [--join] [--no-opinfo] [--kit DIR] [--python PY ...] [--json PATH]

Without ``--path``, ``--ascend DIR`` suggests it: ``search`` on the branch (default master) names a file
whose tests are about the API (:mod:`placement`), else the API's own file at Ascend's ``*_api.py``
convention (the same path in the kit, since export writes kit paths as they are); without ``--ascend``
either, it is that own file, the area's folder as the kit has it. When that path is already one of the table's
test files, no test file is written: the API joins that file. A ``--path`` that another API's row owns is
refused unless ``--join`` says the API joins it (one line, exit 2, nothing changed). A folder of ``--path``
that the kit lacks is created only when the ``--ascend`` branch has it or ``--mkdir`` asks (a typo makes no
stray folder).

The file written at ``<kit>/<path>`` has the kit's license header, a module docstring naming the API, the
kit's import line and ``run_tests()``. When torch's OpInfo database (``op_db``) has the API in one of the
interpreters probed (by function, method variant, alias or name; :mod:`opinfo_lookup`), it is the OpInfo
draft (:mod:`opinfo_draft`): real tests, one class per entry and area, that read ``op_db`` when they run,
plus placeholder classes for what OpInfo cannot know. Otherwise, or with ``--no-opinfo``, it is the plain
scaffold (:mod:`scaffold_text`): one class per contract area, every case a placeholder that fails (the
dtype, memory-format, sparse-layout and size areas loop over the spaces from torch, one labelled subtest
per case), so a scaffold never merges green. ``op_db`` failing to import is one line per interpreter.

``since`` comes from ``locate`` over the interpreters: ``--python`` ones, else every
``<kit>/.tox/*/bin/python``, else this interpreter. It is the first torch version (``X.Y``) where the
API is found when an older one lacks it, null when all have it. The API is appended to the ``apis`` of
``<kit>/torch_npu_testing/common/table.json`` (``ascend_task_id`` null, ``coverage`` regions empty: fill
both in), which is what suite, bench and export run; export sends the file to every branch whose oldest
torch has it and leaves it out of the others with the reason (printed). An API already there, or a path
that exists and is not a table test file, refuses with nothing changed; the files are built first and
written atomically.

JSON (``--json PATH``)::

    {"format": "torch_npu_testing.new/2", "api": NAME, "path": PATH, "suggested_by": TEXT|null, "since": "2.9"|null,
     "branches": [BRANCH...], "left_out": {BRANCH: REASON}, "locate": [locate rows],
     "draft": "opinfo"|"kind"|"scaffold"|null (null: an existing file joined), "kind": the API's kind
     (task/apikind.py) when drafted by kind, else null, "opinfo": null (--no-opinfo or drafted by kind) |
     {"entries": [merged lookup entries, each with "torch": [releases]],
      "lookups": [{"python", "torch", "error", "entries": [[name, variant_test_name]...]}]},
     "written": [PATH...]}

(Format 2 added ``draft`` and ``opinfo``; ``"kind"`` as a draft, and the ``kind`` field, came later within it.)
"""
import json
import os
import sys

from ..common.errors import UsageError
from ..common.layout import TABLE_REL
from ..common.toolspython import require_torch
from ..runtime.carried import parse_version
from . import apiname, gitrefs, jsonfile, locate, placement
from .scaffold_text import render_file

FORMAT = "torch_npu_testing.new/2"
PATH_RE = placement.PATH_RE  # the shape of a test file path the kit writes (search places homes by it too)


def since_from(rows):
    """``(since, found_versions)``: first X.Y found after an older torch lacked it; None when all have it."""
    rows = [row for row in rows if row.get("torch")]
    if not rows:
        raise UsageError("no interpreter with torch to locate the API in (give --python PY)")
    rows.sort(key=lambda row: jsonfile.version_key(row["torch"]))
    found = [row for row in rows if row.get("found")]
    if not found:
        versions = ", ".join(row["torch"] for row in rows)
        raise UsageError(f"the API is not found in any torch probed ({versions}): check the name")
    if found[0] is rows[0]:
        return None, [row["torch"] for row in found]
    return ".".join(found[0]["torch"].split(".")[:2]), [row["torch"] for row in found]


def branch_scope(doc, api, since):
    """``(chosen, left_out)``: the table's supported branches whose oldest torch has the API, and why not."""
    chosen, left_out = [], {}
    for name, entry in doc["branches"].items():
        if entry.get("maintenance"):
            continue
        oldest = min((pins["torch"] for pins in entry["envs"].values()), key=parse_version)
        if since is None or parse_version(oldest) >= parse_version(since):
            chosen.append(name)
        else:
            left_out[name] = f"{api.rsplit('.', 1)[-1]} does not exist in torch {oldest} (added in {since})"
    return chosen, left_out


def plan(kit, api, rel, since, render, refuse_join=False):
    """``(files, chosen, left_out, existing)``: the texts to write (table, and ``render()``'s test file unless
    ``rel`` is already one of the table's test files, which the API then joins), the branches and what is left
    out."""
    table_path = os.path.join(kit, TABLE_REL)
    target_path = os.path.join(kit, rel)
    with open(table_path, encoding="utf-8") as handle:
        doc = json.load(handle)
    if any(entry.get("name") == api for entry in doc.get("apis", [])):
        raise UsageError(f"{api} is already in {table_path}: nothing changed")
    existing = any(entry.get("test_file") == rel for entry in doc.get("apis", []))
    if os.path.exists(target_path) and not existing:
        raise UsageError(f"{rel} already exists in {kit} and is no test file of the table: nothing changed")
    owners = [entry["name"] for entry in doc.get("apis", []) if entry.get("test_file") == rel]
    if owners and refuse_join:
        raise UsageError(f"--path {rel} is the test file of {', '.join(owners)}: give --join to add {api} to it, "
                         "or another --path for a file of its own; nothing changed")
    title = api.rsplit(".", 1)[-1] if api.count(".") < 2 else ".".join(api.rsplit(".", 2)[-2:])
    doc["apis"].append({"name": api, "title": title, "ascend_task_id": None, "since": since, "test_file": rel,
                        "coverage": []})
    chosen, left_out = branch_scope(doc, api, since)
    files = {table_path: json.dumps(doc, indent=2, ensure_ascii=False) + "\n"}
    if not existing:
        files[target_path] = render()
    return files, chosen, left_out, existing


def suggested_path(api, ascend, ref):
    """``(path, line)``: where ``search`` says the new tests belong on ``ref`` of ``ascend``."""
    from . import search
    return search.suggest_home(api, ascend, ref)


def add_arguments(parser):
    parser.add_argument("api", help="dotted API name, e.g. torch.autograd.grad_mode.set_grad_enabled.clone")
    parser.add_argument("--path", help="test file to create, test/<area>/test_<name>.py (default: where `search` "
                                       "on --ascend says the new tests belong)")
    parser.add_argument("--ascend", metavar="DIR", help="an Ascend/pytorch checkout: suggests --path by `search`")
    parser.add_argument("--branch", default="master", help="the branch of --ascend to search (default: master)")
    parser.add_argument("--mkdir", action="store_true",
                        help="create the --path folder under test/ when neither the kit nor the --ascend branch has it")
    parser.add_argument("--kit", default=locate.KIT_ROOT, help=f"the kit checkout (default: {locate.KIT_ROOT})")
    parser.add_argument("--python", action="append", default=[], metavar="PY",
                        help="interpreters to locate the API in (default: <kit>/.tox/*/bin/python, else this one)")
    parser.add_argument("--join", action="store_true",
                        help="let the API join --path when that file is another API's row in the table (refused "
                             "otherwise: one task, one file)")
    parser.add_argument("--no-opinfo", action="store_true",
                        help="write the plain scaffold even where torch's OpInfo database has the op")
    parser.add_argument("--json", metavar="PATH", help=f"also write the {FORMAT} document")
    parser.add_argument("--limits", metavar="TABLE",
                        help="a table written by `limits`: an OpInfo draft expects the API's documented refusals")


def choose_path(args):
    """``(rel, note)``: ``--path``, else where ``search`` on ``--ascend`` says the tests belong, else the API's own
    file at Ascend's *_api.py convention (:func:`placement.own_file`)."""
    suggestion, note = (None, None)
    if args.ascend and not args.path:
        suggestion, note = suggested_path(args.api, args.ascend, args.branch)
    elif not args.path:
        suggestion, note = placement.own_file(args.api, os.path.realpath(args.kit))
    rel = (args.path or suggestion or "").replace("\\", "/")
    if not rel:
        raise UsageError("give --path test/<area>/test_<name>.py, or --ascend DIR for search to suggest one"
                         + (f" ({note})" if note else ""))
    if not PATH_RE.match(rel):
        raise UsageError(f"--path {rel}: give test/<area>/test_<name>.py (relative, letters, digits, _)")
    return rel, note


def check_folder(args, kit, rel):
    """The folder of ``rel`` is made only where the kit has it, the ``--ascend`` branch has it (Ascend's tree
    is where the file goes), or ``--mkdir`` asks: a typo makes no stray folder. UsageError otherwise."""
    folder = os.path.dirname(rel)
    if os.path.isdir(os.path.join(kit, folder)) or args.mkdir:
        return
    where = ""
    if args.ascend:
        directory = gitrefs.check_ascend(args.ascend)
        ref, _ = gitrefs.resolve_branch(directory, args.branch)
        if gitrefs.list_tree(directory, ref, folder):
            return
        where = f" nor on {ref} of {args.ascend}"
    raise UsageError(f"--path {rel}: folder {folder} does not exist in {kit}{where} (give --mkdir to create it)")


def draft(args, pythons, since, signature, drafted):
    """The test file's text: the OpInfo draft when op_db has the API in an interpreter probed (unless
    ``--no-opinfo``), else the plain scaffold; says which, and where op_db could not be read, one line each.
    ``drafted`` receives the JSON's ``draft`` and ``opinfo`` fields."""
    from . import limits, opinfo_draft, opinfo_probe

    if args.no_opinfo:
        drafted["draft"] = "scaffold"
        return render_file(args.api, since, signature)
    kind_text = by_kind(args.api, since, pythons, drafted, ("context manager", "config module"))
    if kind_text is not None:
        print("\n".join(drafted.pop("notes")))
        return kind_text
    results = opinfo_probe.lookup_all(args.api, pythons)
    entries = opinfo_draft.merge(results)
    lines = opinfo_probe.summary_lines(args.api, results, entries)
    for line in lines if entries else lines[:-1]:  # without an entry the last line waits for the kind's answer
        print(line)
    drafted["opinfo"] = {"entries": entries, "lookups": [
        {"python": r["python"], "torch": r.get("torch"), "error": r.get("error"),
         "entries": [[e["name"], e["variant_test_name"]] for e in r.get("entries", [])]} for r in results]}
    if not entries:
        kind_text = by_kind(args.api, since, pythons, drafted, ("function", "C builtin"))
        notes = drafted.pop("notes")
        if kind_text is not None:
            print("\n".join(notes))
            return kind_text
        print("\n".join([lines[-1]] + notes))
        drafted["draft"] = "scaffold"
        return render_file(args.api, since, signature)
    drafted["draft"] = "opinfo"
    versions = sorted({r["torch"] for r in results if r.get("torch") and not r.get("error")}, key=jsonfile.version_key)
    documented = limits.documented_dtypes(args.limits, args.api) if args.limits else None
    return opinfo_draft.render(args.api, since, entries, versions, signature, documented)


def by_kind(api, since, pythons, drafted, kinds):
    """The draft by kind (:mod:`kind_draft`) when the API is one of ``kinds``, else None. What it has to say
    goes to ``drafted["notes"]``: printed with its draft, or after the OpInfo lines when there is none."""
    from . import kind_draft

    pythons, notes = pythons or [sys.executable], drafted.setdefault("notes", [])
    if "infos" not in drafted:  # asked once: before the OpInfo lookup, and again after it when it has no entry
        drafted["infos"], problems = kind_draft.probe_infos(api, pythons)
        notes += problems
    infos = drafted["infos"]
    if not infos or infos[-1]["contract"] not in kinds:
        return None
    text, kind, problems = kind_draft.draft(api, since, pythons, infos)
    notes += problems
    if text is None:
        notes.append(f"no draft by kind for {api}: {kind}")
        return None
    notes.append(f"Drafted the generic contract of a {kind} (probed on {len(pythons)} interpreters)")
    drafted["draft"], drafted["kind"] = "kind", kind
    return text


def main(args):
    apiname.parse(args.api)
    jsonfile.check_json_target(args.json)
    rel, note = choose_path(args)
    kit = os.path.realpath(args.kit)
    if not os.path.isfile(os.path.join(kit, TABLE_REL)):
        raise UsageError(f"--kit {args.kit}: no {TABLE_REL} (give the kit checkout)")
    check_folder(args, kit, rel)
    locate.check_pythons(args.python)
    pythons = args.python or locate.tox_interpreters(kit)
    if not pythons:
        require_torch("new")
    rows = locate.locate_all(args.api, pythons)
    since, _ = since_from(rows)
    signature = next((row["signature"] for row in reversed(rows) if row.get("signature")), None)
    drafted = {"draft": None, "opinfo": None, "kind": None}
    files, chosen, left_out, existing = plan(kit, args.api, rel, since,
                                             lambda: draft(args, pythons, since, signature, drafted),
                                             refuse_join=bool(args.path) and not args.join)
    for path, text in files.items():
        jsonfile.write_text_atomic(path, text)
    print_outcome(args, rel, note, rows, since, chosen, left_out, existing)
    jsonfile.write_json(args.json, {"format": FORMAT, "api": args.api, "path": rel, "suggested_by": note,
                                    "since": since, "branches": chosen, "left_out": left_out, "locate": rows,
                                    "draft": drafted["draft"], "kind": drafted.get("kind"),
                                    "opinfo": drafted["opinfo"],
                                    "written": sorted(files)})
    sys.stdout.flush()
    return 0


def split_probed(kit, chosen, rows):
    """``(probed, unprobed)``: the branches of ``chosen`` some of whose torches (the kit table's) were probed
    (``rows``), and the others: a branch line claims only what was probed."""
    with open(os.path.join(os.path.realpath(kit), TABLE_REL), encoding="utf-8") as handle:
        branches = json.load(handle)["branches"]
    seen = {parse_version(row["torch"])[:3] for row in rows if row.get("torch")}
    probed = [name for name in chosen if any(parse_version(pins["torch"])[:3] in seen
                                             for pins in branches[name]["envs"].values())]
    return probed, [name for name in chosen if name not in probed]


def print_outcome(args, rel, note, rows, since, chosen, left_out, existing):
    if note:
        print(note)
    found = ", ".join(row["torch"] for row in rows if row.get("torch") and row.get("found")) or "-"
    absent = ", ".join(row["torch"] for row in rows if row.get("torch") and not row.get("found")) or "-"
    kept = "; it is already a test file of the kit: add the new tests there" if existing else ""
    print(f"{'Kept' if existing else 'Wrote'} {rel} (since: {since or 'every torch probed'}; found in torch "
          f"{found}; absent in {absent}){kept}")
    for row in rows:
        if not row.get("torch"):
            print(f"  not probed (ignored for since): {row.get('python')}: {row.get('error')}")
    probed, unprobed = split_probed(args.kit, chosen, rows)
    print(f"Added {args.api} to {TABLE_REL} (test_file {rel}); export sends it to {', '.join(chosen) or 'no branch'}"
          + (f"; probed on the torch of {', '.join(probed)}" if probed else "")
          + (f"; not probed on the torch of {', '.join(unprobed)} (`locate {args.api} --tox` or that branch's tox "
             "env shows whether it exists there)" if unprobed else ""))
    for branch, reason in left_out.items():
        print(f"  left out of {branch}: {reason}")
