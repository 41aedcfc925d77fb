# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""``python -m torch_npu_testing export``: options, and the order of the stages.

load the branch map -> find the PR description -> plan (check everything, convert) -> write -> describe.
Exit 0 when written (or planned, with ``--dry-run``); 1 when written but the branch's PR description
claims something no result backs, or is stale; 2 (one line, nothing written) when a check refuses.
"""
import sys

from ..common.errors import UsageError
from .branchmap import branch_entry, list_branches, load_branch_map
from .convert import DEFAULT_COPYRIGHT_HOLDER
from .describe import describe, description_problems, find_description
from .plan import plan_export
from .write import write_plan


def add_arguments(parser):
    parser.add_argument("branch", nargs="?", help="Ascend/pytorch branch: master, v2.12.0, v2.11.0 or v2.7.1")
    parser.add_argument("dest", nargs="?", help="top of an Ascend/pytorch git checkout (on that branch)")
    parser.add_argument("--kit", default=".", help="the kit checkout holding test/ and test_upstream/ (default: .)")
    parser.add_argument("--report", help="the PR description to name (default: KIT/reports/pr-BRANCH.md, "
                                         "written by the pr command)")
    parser.add_argument("--dry-run", action="store_true", help="check everything and show the plan; write nothing")
    parser.add_argument("--list", action="store_true", help="show which files each branch gets, then exit")
    parser.add_argument("--year", type=int, help="copyright year of the exported files (default: this year)")
    parser.add_argument("--copyright-holder", default=DEFAULT_COPYRIGHT_HOLDER,
                        help=f"copyright holder in the exported header (default: {DEFAULT_COPYRIGHT_HOLDER})")


def main(args):
    branch_map = load_branch_map()
    if args.list:
        print(list_branches(branch_map))
        return 0
    if not args.branch or not args.dest:
        raise UsageError("give BRANCH and DEST (or --list)")
    branch_entry(branch_map, args.branch)
    description = find_description(args.kit, args.branch, args.report)
    plan = plan_export(args.kit, args.branch, args.dest, branch_map, year=args.year, holder=args.copyright_holder)
    if not args.dry_run:
        write_plan(plan)
    problems = description_problems(description, plan) if description else []
    print(describe(plan, branch_map, dry_run=args.dry_run, description=description, problems=problems))
    sys.stdout.flush()
    return 1 if problems else 0
