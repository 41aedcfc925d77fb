# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Set fields of one API's row in the kit's table, checked as loading checks the table: the ``task-id`` and
``adds`` commands.

    python -m torch_npu_testing task-id API --task 任务61 --campaign TITLE --issue 2684 [--issue 结果:3102:TITLE]
                                        [--campaign-issue N] [--campaign-note TEXT] [--kit DIR]
    python -m torch_npu_testing task-id API --clear [--kit DIR]
    python -m torch_npu_testing adds API "TEXT" [--kit DIR]

``task-id`` writes ``ascend_task_id`` (the community task pr's 【合入来源】 names); ``--issue`` is
``[ROLE:]NUMBER[:TITLE]`` with ROLE one of the table's roles (default ``issue``). ``adds`` writes
``adds_over_callers``: what the API's new tests add over the tests of the branch that already call it
(pr's 【社区用例检索与新增必要性】 states it; without it, existing callers are a gap). A value the table would
refuse, an unknown API or no table: one line, exit 2, nothing written. The table is written atomically.
"""
import os

from ..common import table
from ..common.atomic import write_text_atomic
from ..common.errors import UsageError
from ..common.layout import TABLE_REL
from . import locate


def kit_option(parser):
    parser.add_argument("--kit", default=locate.KIT_ROOT, help=f"the kit checkout (default: {locate.KIT_ROOT})")


def set_fields(kit, name, changes):
    """Write ``changes`` into API ``name``'s row of ``KIT/torch_npu_testing/common/table.json``; its path."""
    path = os.path.join(os.path.realpath(kit), TABLE_REL)
    if not os.path.isfile(path):
        raise UsageError(f"--kit {kit}: no {TABLE_REL} (give the kit checkout)")
    try:
        text = table.edit_api(path, name, changes)
    except KeyError as exc:
        raise UsageError(exc.args[0]) from None
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    write_text_atomic(path, text)
    table._load.cache_clear()
    return path


def parse_issue(text):
    """``[ROLE:]NUMBER[:TITLE]`` -> ``{"role", "number"[, "title"]}``; UsageError when malformed."""
    parts = text.split(":", 2)
    if parts[0] in table.TASK_ROLES:
        role, rest = parts[0], parts[1:]
    else:
        role, rest = "issue", parts[:1] + ([":".join(parts[1:])] if len(parts) > 1 else [])
    if not rest or not rest[0].isdigit() or int(rest[0]) <= 0:
        raise UsageError(f"--issue {text}: give [ROLE:]NUMBER[:TITLE], ROLE one of {', '.join(table.TASK_ROLES)}")
    issue = {"role": role, "number": int(rest[0])}
    if len(rest) > 1 and rest[1]:
        issue["title"] = rest[1]
    return issue
