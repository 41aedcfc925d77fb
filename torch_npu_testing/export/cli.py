# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""``python -m torch_npu_testing export``: options, and the order of the stages.

select (table) -> plan (check everything, merge) -> write -> describe. Exit 0 when written (or planned,
with ``--dry-run``); 1 when written but the branch's PR description claims something no result backs, or
is stale; 2 (one line, nothing written) when a check refuses.
"""
import sys

from ..common import table
from ..common.errors import UsageError
from . import record
from .describe import describe, description_problems, find_description
from .plan import plan_export, select
from .write import write_plan


def add_arguments(parser):
    parser.add_argument("branch", nargs="?", help="Ascend/pytorch branch as on a clone: master, v2.12.0, v2.11.0, "
                                                  "v2.7.1 (local branch, else the one remote-tracking branch)")
    parser.add_argument("dest", nargs="?", help="top of an Ascend/pytorch git checkout with that branch checked out")
    parser.add_argument("--api", action="append", metavar="NAME",
                        help="export only the files of this API (repeatable; names as in the table)")
    parser.add_argument("--kit", default=".", help="the kit checkout holding test/ and test_upstream/ (default: .)")
    parser.add_argument("--report",
                        help="the PR description to name (default: KIT/reports/pr-BRANCH[--API].md, this task's)")
    parser.add_argument("--dry-run", action="store_true", help="check everything and show the plan; write nothing")
    parser.add_argument("--list", action="store_true", help="show which files each branch gets, then exit")
    parser.add_argument("--year", type=int, help="copyright year of a file the branch lacks (default: this year)")


def list_branches(api_names=None, kit_root="."):
    """``export --list``: each supported branch with its files and what is left out."""
    out = []
    for name in table.branches(include_maintenance=False):
        selection = select(name, api_names, kit_root)
        out.append(f"{name}:")
        out.extend(f"  {rel}" for rel in selection.test_files)
        out.extend(f"  {ascend}  (from {kit})" for kit, ascend in selection.patches)
        out.extend(f"  left out: {rel}: {why}" for rel, why in selection.left_out.items())
    return "\n".join(out)


def main(args):
    if args.list:
        print(list_branches(args.api, args.kit))
        return 0
    if not args.branch or not args.dest:
        raise UsageError("give BRANCH and DEST (or --list)")
    description = find_description(args.kit, args.branch, args.report, args.api)
    plan = plan_export(args.kit, args.branch, args.dest, args.api, year=args.year)
    if not args.dry_run:
        write_plan(plan)
        record.write(plan, args.api, args.kit)
    problems = description_problems(description, plan, args.api) if description else []
    print(describe(plan, dry_run=args.dry_run, description=description, problems=problems, api_names=args.api))
    sys.stdout.flush()
    return 1 if problems else 0
