# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""``python -m torch_npu_testing pr BRANCH --ascend DIR [--results DIR] [--out DIR]``.

Writes ``OUT/pr-BRANCH.md`` (the description) and ``OUT/pr-BRANCH.json`` (the facts, the checklist and
the problems) atomically, and prints the Markdown's path. Exit 1 (both still written) when anything the
description states is not backed by a fact: a gap (no results, no search, no docs, no task id, no env
interpreter) or a problem the report finds in the branch's results; 2 for a usage error (nothing written).
"""
import json
import os
import sys

from ..export.describe import description_name
from ..task import output
from . import facts as facts_module
from .checklist import checklist
from .render import render


def add_arguments(parser):
    parser.add_argument("branch", help="Ascend/pytorch branch: master, v2.12.0, v2.11.0 or v2.7.1")
    parser.add_argument("--ascend", metavar="DIR", required=True,
                        help="an Ascend/pytorch git checkout holding the branch (searched by ref, never checked out)")
    parser.add_argument("--results", default=os.path.join(".tox", "results"),
                        help="folder with the envs' results files (default: .tox/results)")
    parser.add_argument("--out", default="reports", help="folder to write pr-BRANCH.md and pr-BRANCH.json into "
                                                         "(default: reports, where export looks)")
    parser.add_argument("--kit", default=".", help="the kit checkout (test files, .tox envs; default: .)")
    parser.add_argument("--year", type=int, help="copyright year of the exported files (default: this year)")


def problems_of(document):
    """Everything that keeps the description from being pasted as it is."""
    problems = [f"missing: {gap}" for gap in document["gaps"]]
    # An env without results is already a gap; every other problem the report finds is listed as it says.
    problems += [problem for problem in document["report"]["problems"]
                 if not any(problem.startswith(f"{env}: no results") for env in document["envs"])]
    problems += [f"unticked: {item['item']} — {item['why']}" for item in document["checklist"] if not item["ticked"]]
    return list(dict.fromkeys(problems))


def main(args):
    command = ["python", "-m", "torch_npu_testing", "pr", args.branch, "--ascend", args.ascend,
               "--results", args.results, "--out", args.out]
    document = facts_module.gather(args.branch, args.ascend, args.results, kit_root=args.kit, year=args.year,
                                   command=command)
    document["checklist"] = checklist(document)
    document["problems"] = problems_of(document)
    markdown = os.path.join(args.out, description_name(args.branch))
    os.makedirs(args.out, exist_ok=True)
    output.write_text_atomic(os.path.splitext(markdown)[0] + ".json",
                             json.dumps(document, indent=1, ensure_ascii=False, default=str) + "\n")
    output.write_text_atomic(markdown, render(document))
    status = f"FAIL, {len(document['problems'])} item(s) not backed" if document["problems"] else "PASS"
    print(f"pr {args.branch}: {status}", file=sys.stderr)
    for problem in document["problems"]:
        print(f"  - {problem}", file=sys.stderr)
    print(markdown)
    return 1 if document["problems"] else 0
