# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Community task facts in the one table: the five APIs' tasks as the seed PRs give them, the shape checked
at load (null while unknown), and how 【合入来源】, its issue/工单 box and the report name them.
"""
import json

import pytest

from torch_npu_testing.common import table
from torch_npu_testing.pr import checklist, source
from torch_npu_testing.report import calls

FIRST = "7月社区任务一期 API 一致性"
SECOND_SOURCE = "【社区任务】7月社区任务第二期-Ascend for PyTorch API 一致性开发（31）"
SECOND_RESULT = "torch.autograd.grad_mode.set_grad_enabled.clone API 一致性补齐"
CLONE = "torch.autograd.grad_mode.set_grad_enabled.clone"
SEED_TASKS = {  # API: (task, [(role, issue)]), from the merged PRs !41387 and !42445
    "torch._functorch.aot_autograd.aot_compile_joint_with_descriptors": ("任务61", [("issue", 2684)]),
    "torch._functorch.aot_autograd.aot_export_joint_with_descriptors": ("任务62", [("issue", 2685)]),
    "torch._functorch.config.patch": ("任务64", [("issue", 2687)]),
    "torch._functorch.vmap._add_batch_dim": ("任务65", [("issue", 2688)]),
    CLONE: ("31", [("来源任务", 2954), ("结果", 3102)]),
}


def test_the_table_holds_the_seed_prs_tasks():
    tasks = {api["name"]: api["ascend_task_id"] for api in table.apis()}
    assert {name: (task["task"], [(i["role"], i["number"]) for i in task["issues"]])
            for name, task in tasks.items()} == SEED_TASKS
    for name in list(SEED_TASKS)[:4]:
        assert (tasks[name]["campaign"], tasks[name]["campaign_issue"]) == (FIRST, 2683)
        assert "#60" in tasks[name]["campaign_note"]
    assert [issue["title"] for issue in tasks[CLONE]["issues"]] == [SECOND_SOURCE, SECOND_RESULT]
    assert "campaign_issue" not in tasks[CLONE]


GOOD = {"task": "任务1", "campaign": "c", "issues": [{"role": "issue", "number": 1}]}


@pytest.mark.parametrize("task, problem", [
    ("Task-47", "must be an object, not str"),
    ({"campaign": "c", "issues": GOOD["issues"]}, "lacks 'task'"),
    (dict(GOOD, owner="x"), "has unknown key(s) owner (known: task, campaign, campaign_issue, campaign_note, issues)"),
    (dict(GOOD, issues=[]), "'issues' must be a non-empty list"),
    (dict(GOOD, task=""), "'task' must be a non-empty str"),
    (dict(GOOD, campaign_issue=True), "'campaign_issue' must be a positive int"),
    (dict(GOOD, campaign_issue=0), "'campaign_issue' must be a positive int"),
    (dict(GOOD, issues=["#1"]), "issue 1: must be an object, not str"),
    (dict(GOOD, issues=[GOOD["issues"][0], {"role": "issue"}]), "issue 2: lacks 'number'"),
    (dict(GOOD, issues=[{"role": "issue", "number": "1"}]), "issue 1: 'number' must be a positive int"),
    (dict(GOOD, issues=[{"role": "owner", "number": 1}]), "issue 1: role 'owner' is not one of issue, 来源任务, 结果"),
])
def test_a_malformed_task_is_refused_at_load_naming_the_api(tmp_path, task, problem):
    doc = json.loads(open(table.TABLE_PATH, encoding="utf-8").read())
    doc["apis"][1]["ascend_task_id"] = task
    path = tmp_path / "table.json"
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(ValueError) as caught:
        table.load_apis(str(path))
    assert str(caught.value) == f"{path}: {doc['apis'][1]['name']}: ascend_task_id {problem}"


def test_null_is_a_task_not_yet_known(tmp_path):
    doc = json.loads(open(table.TABLE_PATH, encoding="utf-8").read())
    doc["apis"][0]["ascend_task_id"] = None
    path = tmp_path / "table.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    assert table.load_apis(str(path))[0]["ascend_task_id"] is None
    assert table.task_problem(None) is None and table.task_label(None) is None


def test_labels():
    by_name = {api["name"]: api["ascend_task_id"] for api in table.apis()}
    assert table.task_label(by_name["torch._functorch.config.patch"]) == "任务64 (issue #2687)"
    assert table.task_label(by_name[CLONE]) == "31 (来源任务 #2954, 结果 #3102)"
    assert table.task_label("Task-47") == "Task-47"     # results written before the shape keep their text


def test_source_lines_name_the_tasks_as_the_seed_prs_do():
    url = "https://gitcode.com/Ascend/pytorch/issues/"
    lines = source.source_lines(table.apis() + [{"name": "torch.new_api", "ascend_task_id": None}])
    assert lines[:2] == [f"> 4 个 issue 出自「{FIRST}」（任务编号 #60 起，见 [#2683]({url}2683)）。", ""]
    assert f"- 关联 issue：[#2687]({url}2687) — `torch._functorch.config.patch`（任务64）" in lines
    assert lines[-3] == f"- 来源任务 Issue：[{SECOND_SOURCE}]({url}2954) — `{CLONE}`（31）"
    assert lines[-2] == f"- 结果 Issue：[{SECOND_RESULT}]({url}3102) — `{CLONE}`（31）"
    assert lines[-1] == "- `torch.new_api`: Ascend task **⚠ 缺少 / missing**"
    assert len(lines) == 2 + 4 + 2 + 1


def test_a_campaign_without_a_listing_issue_has_no_quoted_line():
    lines = source.source_lines([api for api in table.apis() if api["name"] == CLONE])
    assert len(lines) == 2 and not any(line.startswith(">") for line in lines)


def test_the_issue_box_names_every_task_or_what_is_missing():
    apis = table.apis()
    ticked, why = checklist.source_box("issue/工单", {"apis": apis})
    assert ticked and why == ("community task 任务64 (issue #2687); 任务65 (issue #2688); 任务62 (issue #2685); "
                              "任务61 (issue #2684); 31 (来源任务 #2954, 结果 #3102) (table.json)")
    ticked, why = checklist.source_box("issue/工单", {"apis": apis + [{"name": "torch.x", "ascend_task_id": None}]})
    assert not ticked and why == "no ascend_task_id in table.json for torch.x"


def test_the_report_names_the_task():
    task = table.api(CLONE)["ascend_task_id"]
    assert calls._task_text({"name": CLONE, "task": CLONE, "ascend_task_id": task}) == \
        "the API name; Ascend task 31 (来源任务 #2954, 结果 #3102)"
    assert calls._task_text({"name": CLONE, "task": CLONE, "ascend_task_id": None}) == \
        "the API name; Ascend task id not set"
