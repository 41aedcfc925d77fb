# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""【合入来源】's task lines: each API's community task and its issues on Ascend's tracker, named as the
merged seed PRs name them (the functorch PR !41387 and the grad-mode PR !42445).

A campaign that lists its tasks in an issue opens with one quoted line (``> 4 个 issue 出自「...」（任务编号
#60 起，见 [#2683](...)）。``); then one line per issue of each API: its label (``关联 issue``, ``来源任务
Issue``, ``结果 Issue``), a link with the issue's title (else ``#N``), the API and its task. The facts are
the table's ``ascend_task_id`` (:func:`..common.table.task_problem` gives the shape); an API without one
says so in place.
"""
from ..common import table

ISSUE_URL = "https://gitcode.com/Ascend/pytorch/issues/{}"


def issue_link(number, title=None):
    return f"[{title or f'#{number}'}]({ISSUE_URL.format(number)})"


def _campaign_line(task, count):
    note = f"{task['campaign_note']}，" if task.get("campaign_note") else ""
    return f"> {count} 个 issue 出自「{task['campaign']}」（{note}见 {issue_link(task['campaign_issue'])}）。"


def source_lines(apis):
    """The task lines of 【合入来源】 for ``apis`` (dicts with ``name`` and ``ascend_task_id``), in order."""
    campaigns, lines = {}, []
    for api in apis:
        task = api.get("ascend_task_id")
        campaigns.setdefault(task["campaign"] if task else None, []).append(api)
    for campaign, members in campaigns.items():
        if campaign is None:
            lines += [f"- `{api['name']}`: Ascend task **⚠ 缺少 / missing**" for api in members]
            continue
        first = members[0]["ascend_task_id"]
        if first.get("campaign_issue"):
            count = len({issue["number"] for api in members for issue in api["ascend_task_id"]["issues"]})
            lines += [_campaign_line(first, count), ""]
        for api in members:
            task = api["ascend_task_id"]
            lines += [f"- {table.TASK_ROLES[issue['role']]}：{issue_link(issue['number'], issue.get('title'))} — "
                      f"`{api['name']}`（{task['task']}）" for issue in task["issues"]]
    return lines
