# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""【CheckList】: each item ticked only from a fact the kit checked, unticked with the reason otherwise.

An item is ``{"item", "ticked", "why"}``; ``why`` names the fact (or the missing fact) behind it.
"""
from ..export.plan import TEST_FILE
from ..common.layout import GRAD_MODE_FILES


def _item(text, ticked, why):
    return {"item": text, "ticked": bool(ticked), "why": why}


def header_and_docstring(facts):
    text = "每个测试文件有许可证头和模块说明 (license header and module docstring)"
    tests = [item for item in facts["plan"]["files"] if item["kind"] == TEST_FILE]
    if not tests:
        return _item(text, False, "the plan has no test file")
    bad = [item["path"] for item in tests if not (item.get("header") and item.get("docstring"))]
    return _item(text, not bad,
                 f"missing in {', '.join(bad)}" if bad else f"checked in the exported text of {len(tests)} file(s)")


def _usable_envs(facts):
    return [entry for entry in facts["report"]["envs"] if entry["state"] == "ok"]


def _no_results(facts):
    """Why an item that needs every env's results cannot be ticked (None when all envs have usable results)."""
    missing = [entry["name"] for entry in facts["report"]["envs"] if entry["state"] != "ok"]
    return f"no results for env {', '.join(missing)}" if missing else None


def _not_run(facts, tool):
    """Why an item that needs ``tool``'s document (search, docs) for every API cannot be ticked, else None."""
    missing = [api["name"] for api in facts["apis"] if not api.get(tool)]
    return f"{tool} did not run for {', '.join(missing)}" if missing else None


def tests_pass(facts):
    text = "测试在本分支的每个环境通过 (tests pass in every env of the branch)"
    missing = _no_results(facts)
    if missing:
        return _item(text, False, missing)
    failing = [problem for entry in _usable_envs(facts) for problem in entry["problems"]]
    return _item(text, not failing, "; ".join(failing[:3]) + (" ..." if len(failing) > 3 else "") if failing else
                 f"report: no problem in {', '.join(entry['name'] for entry in _usable_envs(facts))}")


def apis_called(facts):
    text = "每个目标 API 都被测试显式调用 (every target API is called by a test: api-calls coverage)"
    missing = _no_results(facts)
    if missing:
        return _item(text, False, missing)
    names = {api["name"] for api in facts["apis"]}
    rows = [(entry["name"], row) for entry in _usable_envs(facts) for row in entry.get("coverage", [])
            if row["name"] in names]
    if not rows:
        return _item(text, False, "no coverage recorded for the target APIs (suite ran without --api-calls?)")
    bad = [f"{env}: {row['name']}: {row['text']}" for env, row in rows if row["state"] not in ("called", "absent")]
    called = sorted({row["name"] for _, row in rows if row["state"] == "called"})
    uncovered = sorted(names - {row["name"] for _, row in rows if row["state"] in ("called", "absent")})
    if bad or uncovered:
        return _item(text, False, "; ".join(bad) or f"not measured for {', '.join(uncovered)}")
    return _item(text, True, f"report coverage: {len(called)} API(s) called by a test in every env where present")


def grad_mode_probe(facts):
    text = "梯度模式隔离探针通过 (grad-mode isolation probe passed)"
    carried = [item["path"] for item in facts["plan"]["files"] if item["path"] in GRAD_MODE_FILES]
    if not carried:
        return _item(text, True, "不涉及: the branch carries no grad-mode file (checked in the export plan)")
    missing = _no_results(facts)
    if missing:
        return _item(text, False, missing)
    seen, bad = 0, []
    for entry in _usable_envs(facts):
        for probe in entry["results"].get("grad_mode_isolation") or []:
            if probe.get("path") in carried:
                seen += 1
                if not probe.get("same"):
                    bad.append(f"{entry['name']}: {probe.get('path')} depends on the initial grad mode")
        bad += [problem for problem in entry["problems"] if "grad mode" in problem]
    if not seen:
        return _item(text, False, "the probe was not run in the branch's envs")
    why = "; ".join(bad) if bad else f"same outcomes with grad mode enabled and disabled at start ({seen} probe(s))"
    return _item(text, not bad, why)


def upstream_ran(facts):
    text = "upstream patch 已实跑 (the upstream patch ran)"
    if not facts["plan"]["patches"]:
        return _item(text, True, "不涉及: the branch's PR carries no upstream patch (checked in the export plan)")
    ran = [upstream for upstream in facts["report"]["upstream"] if upstream["state"] == "ran"]
    if not ran:
        return _item(text, False, "no upstream results for this branch's torch — run `tox -e upstream`")
    problems = [problem for problem in facts["report"]["problems"] if problem.startswith("upstream")]
    return _item(text, not problems, "; ".join(problems) if problems else
                 f"ran under torch {', '.join(str(upstream['torch']) for upstream in ran)}")


def community_search(facts):
    text = "已检索社区已有用例 (community tests searched on the branch)"
    missing = _not_run(facts, "search")
    if missing:
        return _item(text, False, missing)
    return _item(text, bool(facts["apis"]), f"search on {facts['ascend']['ref']} ({facts['ascend']['commit'][:7]}) "
                                            f"for {len(facts['apis'])} API(s)")


def docs_listed(facts):
    text = "资料已补齐 (every API is listed in the native-API docs of the branch's torch)"
    missing = _not_run(facts, "docs")
    if missing:
        return _item(text, False, missing)
    unlisted = [f"{api['name']} (torch {version['torch_version']})" for api in facts["apis"]
                for version in api["docs"]["versions"] if not version["listed"]]
    return _item(text, not unlisted and bool(facts["apis"]),
                 f"not listed: {', '.join(unlisted)} (entries to add are in 【资料变更】)" if unlisted
                 else "docs: listed for every torch version the branch ships")


def task_ids(facts):
    text = "合入来源填写任务编号 (task ids filled in)"
    missing = [api["name"] for api in facts["apis"] if not api.get("ascend_task_id")]
    return _item(text, not missing and bool(facts["apis"]),
                 f"no ascend_task_id in target_apis.json for {', '.join(missing)}" if missing
                 else "target_apis.json")


def checklist(facts):
    return [header_and_docstring(facts), task_ids(facts), tests_pass(facts), apis_called(facts),
            grad_mode_probe(facts), upstream_ran(facts), community_search(facts), docs_listed(facts)]
