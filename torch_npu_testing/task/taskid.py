# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""``python -m torch_npu_testing task-id API --task T --campaign C --issue N ...``: set the API's community task
(``ascend_task_id`` in the one table), checked as the table checks it (:mod:`.tablerow`)."""
from ..common.errors import UsageError
from .tablerow import kit_option, parse_issue, set_fields


def add_arguments(parser):
    parser.add_argument("api", help="the API's name as in the table")
    parser.add_argument("--task", help="the task's name in its campaign, e.g. 任务61")
    parser.add_argument("--campaign", help="the campaign's title")
    parser.add_argument("--campaign-issue", type=int, help="the issue that lists the campaign's tasks")
    parser.add_argument("--campaign-note", help="a note on the campaign (e.g. 任务编号 #60 起)")
    parser.add_argument("--issue", action="append", metavar="[ROLE:]NUMBER[:TITLE]",
                        help="an issue of the task (repeatable; ROLE: issue, 来源任务 or 结果; default issue)")
    parser.add_argument("--clear", action="store_true", help="set it back to null (unknown)")
    kit_option(parser)


def main(args):
    if args.clear:
        if args.task or args.campaign or args.issue:
            raise UsageError("--clear takes no --task, --campaign or --issue")
        task = None
    else:
        if not (args.task and args.campaign and args.issue):
            raise UsageError("give --task, --campaign and at least one --issue (or --clear)")
        task = {"task": args.task, "campaign": args.campaign}
        if args.campaign_issue is not None:
            task["campaign_issue"] = args.campaign_issue
        if args.campaign_note is not None:
            task["campaign_note"] = args.campaign_note
        task["issues"] = [parse_issue(text) for text in args.issue]
    path = set_fields(args.kit, args.api, {"ascend_task_id": task})
    print(f"{args.api}: ascend_task_id {'cleared' if task is None else 'set'} in {path}")
    return 0
