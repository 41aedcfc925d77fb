# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""``python -m torch_npu_testing adds API "TEXT"``: what the API's new tests add over the tests that already call
it (``adds_over_callers`` in the one table), written once; pr states it in 【社区用例检索与新增必要性】."""
from .tablerow import kit_option, set_fields


def add_arguments(parser):
    parser.add_argument("api", help="the API's name as in the table")
    parser.add_argument("text", help="what the new tests cover that the existing callers do not (one paragraph)")
    kit_option(parser)


def main(args):
    path = set_fields(args.kit, args.api, {"adds_over_callers": args.text})
    print(f"{args.api}: adds_over_callers set in {path}")
    return 0
