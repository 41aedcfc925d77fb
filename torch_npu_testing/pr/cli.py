# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""``python -m torch_npu_testing pr BRANCH --ascend DEST [--verify PATH] [--api NAME ...] [--results DIR] [--out DIR]``.

One task: ``--api NAME`` (repeatable), else what the last export of BRANCH into DEST wrote, as export recorded
it. Every record is keyed by branch and task (``pr-v2.12.0--NAME.md``; :mod:`..common.recordnames`).
Writes ``OUT/pr-BRANCH.md`` (the description, at most 60,000 characters), ``OUT/pr-BRANCH.json`` (the
facts, the checkboxes and the problems) and ``OUT/evidence-BRANCH.md`` / ``.json`` (the full evidence, the
file to attach), each atomically, and prints the description's path. ``BRANCH`` is a branch name as a
contributor types it (``v2.7.1`` is ``origin/v2.7.1`` on a normal clone); the output says which ref and
commit were used. ``--api NAME`` (repeatable, table names) describes only those APIs and their files.

The plan (which files, their bytes) is read from the branch at its ref; 【功能验证】 is verify's record of
those files in DEST (``--verify``, default ``OUT/verify-BRANCH.json``): ``--ascend`` must name the DEST that
was verified. A missing or stale record (a PR file's bytes in DEST differ from what verify ran) is a ``⚠``
line at the top and exit 1. The kit suite's results (``--results``) stay in the attachment, labelled as the
kit's own files.

Exit 1 (files still written) when anything the description states is not backed by a fact (a gap, a
problem the report finds, an open box that should be ticked); 2 for bad input (unknown API, unknown or
ambiguous branch, not a checkout): one line, nothing written.
"""
import json
import os
import sys

from ..common import table
from ..common.atomic import write_text_atomic
from ..common.errors import UsageError
from ..common.toolspython import require_torch
from ..export import record as export_record
from ..export.describe import description_name
from ..task import gitrefs
from ..verify.record import record_name
from . import boxsources, checklist, evidence, facts as facts_module, verified
from .render import render


def add_arguments(parser):
    parser.add_argument("branch", help="Ascend/pytorch branch: master, v2.12.0, v2.11.0 or v2.7.1 (a local branch, "
                                       "else the single remote-tracking one, e.g. origin/v2.7.1)")
    parser.add_argument("--ascend", metavar="DEST", required=True,
                        help="the Ascend/pytorch checkout that export wrote into and verify ran (the plan is read from "
                             "the branch at its ref through git; the template and the docs from master)")
    parser.add_argument("--verify", metavar="PATH",
                        help="verify's record of DEST (default: OUT/verify-BRANCH[--API].json, this task's)")
    parser.add_argument("--api", action="append", metavar="NAME",
                        help="the task: describe only this API of the table and its file (repeatable; default: what "
                             "the last export of BRANCH into DEST wrote, as export recorded it)")
    parser.add_argument("--results", default=os.path.join(".tox", "results"),
                        help="folder with the envs' results files (default: .tox/results)")
    parser.add_argument("--out", default="reports", help="folder to write pr-BRANCH.md/.json and evidence-BRANCH.md/"
                                                         ".json into (default: reports, where export looks)")
    parser.add_argument("--kit", default=".", help="the kit checkout (test files, .tox envs; default: .)")
    parser.add_argument("--year", type=int, help="copyright year of new exported files (default: this year)")


def problems_of(document):
    """Everything that keeps the description from being pasted as it is."""
    problems = list(document["verify"]["problems"])
    problems += [f"missing: {gap}" for gap in document["gaps"]]
    problems += [problem for problem in document["report"]["problems"]
                 if not any(problem.startswith(f"{env}: no results") for env in document["envs"])]
    items = document["kit_checks"] + [item for boxes in document["template_boxes"].values() for item in boxes]
    problems += [f"unticked: {item['item']} — {item['why']}" for item in items
                 if not item["ticked"] and not item.get("open_by_design")]
    return list(dict.fromkeys(problems))


def other_apis_named(markdown, document):
    """Target APIs of the table named in the description although it is not about them (must be none)."""
    ours = {api["name"] for api in document["apis"]}
    return [api["name"] for api in table.apis() if api["name"] not in ours and api["name"] in markdown]


def task_of(args):
    """``(api_names, verify record path)`` of the task pr describes: ``--api``, else the last export's selection.
    UsageError (nothing written) when neither an export nor a verify record of the branch exists."""
    try:
        table.branch(args.branch)
    except KeyError as exc:
        raise UsageError(exc.args[0]) from None
    facts_module.check_api_names(args.api)
    dest = gitrefs.check_ascend(args.ascend)
    gitrefs.resolve_branch(dest, args.branch)
    last = export_record.read_last(dest, args.branch)
    names = sorted(set(args.api)) if args.api else (last or {}).get("api_names")
    path = args.verify or os.path.join(args.out, record_name(args.branch, names))
    if last is None and not os.path.exists(path):
        raise UsageError(f"no export or verify record of {args.branch} for {args.ascend}: run `python -m "
                         f"torch_npu_testing export {args.branch} {args.ascend} --api NAME`, then verify, first")
    return names, path


def main(args):
    require_torch("pr")
    names, verify_path = task_of(args)
    command = ["python", "-m", "torch_npu_testing", "pr", args.branch, "--ascend", args.ascend,
               "--results", args.results, "--out", args.out] + (["--verify", args.verify] if args.verify else [])
    command += [part for name in names or () for part in ("--api", name)]
    document = facts_module.gather(args.branch, args.ascend, args.results, kit_root=args.kit, api_names=names,
                                   year=args.year, command=command)
    document["evidence_name"] = evidence.evidence_name(args.branch, names)
    document["verify"] = verified.gather(verify_path, document["ascend"]["dir"], document["plan"]["files"],
                                         args.branch)
    document["template_boxes"] = checklist.template_boxes(document)
    document["kit_checks"] = checklist.kit_checks(document) + verified.verify_checks(document)
    boxsources.annotate(document["template_boxes"], document["kit_checks"])
    document["problems"] = problems_of(document)
    markdown_text = render(document)
    named = other_apis_named(markdown_text, document)
    if named:
        document["problems"].append(f"the description names other target APIs: {', '.join(named)}")
        markdown_text = render(document)
    os.makedirs(args.out, exist_ok=True)
    evidence.write_evidence(document["report"], args.out, document["evidence_name"], document["verify"])
    markdown = os.path.join(args.out, description_name(args.branch, names))
    document["characters"] = len(markdown_text)
    write_text_atomic(os.path.splitext(markdown)[0] + ".json",
                      json.dumps(document, indent=1, ensure_ascii=False, default=str) + "\n")
    write_text_atomic(markdown, markdown_text)
    report(args, document, markdown)
    return 1 if document["problems"] else 0


def report(args, document, markdown):
    ascend = document["ascend"]
    status = f"FAIL, {len(document['problems'])} item(s) not backed" if document["problems"] else "PASS"
    record = document["verify"]["record"]
    dest = f"; DEST {ascend['dir']} at {record['dest']['head'][:12]} (verify: {document['verify']['state']})" \
        if record else f"; verify: {document['verify']['state']}"
    print(f"pr {args.branch}: {ascend['ref']} at {ascend['commit'][:12]}{dest}; {document['characters']} characters"
          + (f" (shortened: {'; '.join(document['shortened'])})" if document["shortened"] else "")
          + f"; {status}", file=sys.stderr)
    for problem in document["problems"]:
        print(f"  - {problem}", file=sys.stderr)
    print(f"attach: {os.path.join(args.out, document['evidence_name'])}", file=sys.stderr)
    print(markdown)
