# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Checkboxes: the template's, ticked only from a fact (or left open with the reason), and the kit's checks.

An item is ``{"item", "ticked", "why"}``; ``why`` names the fact (or the missing fact) behind it. The
template's boxes are matched by their words (:data:`TEMPLATE_RULES`); a box the kit has no rule for (a
template update) stays open, saying so. The template asks to tick an item that passed *or does not apply*
(``自检通过或不涉及，均修改 [ ] 为 [x]``); a 不涉及 tick says why it does not apply.
"""
from ..common import table
from ..common.layout import GRAD_MODE_FILES
from .planfacts import TEST_FILE, UPSTREAM_PATCH


def _item(text, ticked, why, by_design=False):
    """``by_design``: open on purpose (another kind of PR, a step after opening it): not a gap."""
    return {"item": text, "ticked": bool(ticked), "why": why, "open_by_design": bool(by_design and not ticked)}


def _usable_envs(facts):
    return [entry for entry in facts["report"]["envs"] if entry["state"] == "ok"]


def _no_results(facts):
    missing = [entry["name"] for entry in facts["report"]["envs"] if entry["state"] != "ok"]
    return f"no results for env {', '.join(missing)} — run `tox -e {missing[0]}`" if missing else None


def _tests_only(facts):
    return all(item["kind"] in (TEST_FILE, UPSTREAM_PATCH) and item["path"].startswith(("test/", "test_upstream/"))
               for item in facts["plan"]["files"])


# ------------------------------------------------------------------------------- the template's boxes
def source_box(text, facts):
    """【合入来源】: the task comes from Ascend's tracker (an issue/工单) when every API has its task (the
    table's ``ascend_task_id``); the why names each task and its issues, as the lines under the boxes do."""
    if "issue" in text or "工单" in text:
        missing = [api["name"] for api in facts["apis"] if not api.get("ascend_task_id")]
        if missing:
            return False, f"no ascend_task_id in table.json for {', '.join(missing)}"
        labels = dict.fromkeys(table.task_label(api["ascend_task_id"]) for api in facts["apis"])
        return True, f"community task {'; '.join(labels)} (table.json)"
    if "资料" in text:
        return False, "this PR changes no docs (entries still to add, if any, are in 【资料变更】)", True
    return False, "not this PR's kind: it adds API-consistency tests for a community task", True


def code_box(text, facts):
    """【CheckList】 items, from facts where the kit has them."""
    if "注释" in text:
        bad = [item["path"] for item in facts["plan"]["files"] if item["kind"] == TEST_FILE
               and not (item.get("header") and item.get("docstring"))]
        undocumented = [f"{group['class']}.{test['name']}" for item in facts["plan"]["files"]
                        for group in item.get("outline", []) for test in group["tests"] if not test["doc"]]
        if bad or undocumented:
            return False, "missing header/module docstring in " + ", ".join(bad) if bad else \
                f"tests without a docstring: {', '.join(undocumented[:5])}"
        return True, "license header, module docstring and a docstring per test (checked in the exported files)"
    if "返回值" in text or "空指针" in text:
        if _tests_only(facts):
            return True, "不涉及: the PR adds or changes only test files and test patches (export plan)"
        return False, "the PR changes files outside test/: check by hand"
    if "标题" in text:
        return False, "set on the forge: use a type tag, e.g. `test: " + facts.get("title", "...") + "`", True
    if "CI" in text:
        return False, "Ascend CI runs once the PR is opened; locally: see 【功能验证】", True
    return False, "the kit has no fact for this item (new in the template): check it by hand"


TEMPLATE_RULES = {"【合入来源】": source_box, "【CheckList】": code_box}


def template_boxes(facts):
    """``{section title: [items]}`` for every checkbox of the template."""
    boxes = {}
    for section in facts["template"]["sections"]:
        rule = TEMPLATE_RULES.get(section["title"], lambda text, facts: (
            False, "the kit has no fact for this item (new in the template): check it by hand"))
        boxes[section["title"]] = [_item(text, *rule(text, facts)) for text in section["checkboxes"]]
    return boxes


# ------------------------------------------------------------------------------- the kit's checks
def tests_pass(facts):
    text = "测试在本分支的每个环境通过 (tests pass in every env of the branch)"
    missing = _no_results(facts)
    if missing:
        return _item(text, False, missing)
    failing = [problem for entry in _usable_envs(facts) for problem in entry["problems"]]
    return _item(text, not failing, "; ".join(failing[:3]) + (" ..." if len(failing) > 3 else "") if failing else
                 f"report: no problem in {', '.join(entry['name'] for entry in _usable_envs(facts))}")


def apis_called(facts):
    text = "每个目标 API 都被测试显式调用 (every target API is called by a test)"
    missing = _no_results(facts)
    if missing:
        return _item(text, False, missing)
    names = {api["name"] for api in facts["apis"]}
    rows = [(entry["name"], row) for entry in _usable_envs(facts) for row in entry.get("coverage", [])
            if row["name"] in names]
    if not rows:
        envs = ", ".join(entry["name"] for entry in _usable_envs(facts))
        return _item(text, False, f"no API calls recorded in {envs} — run `tox -e ENV` (its suite records them "
                                  "with --api-calls)")
    bad = [f"{env}: {row['name']}: {row['text']}" for env, row in rows if row["state"] not in ("called", "absent")]
    uncovered = sorted(names - {row["name"] for _, row in rows if row["state"] in ("called", "absent")})
    if bad or uncovered:
        return _item(text, False, "; ".join(bad) or f"not measured for {', '.join(uncovered)}")
    return _item(text, True, f"{len(names)} API(s) called by a test in every env where present")


def grad_mode_probe(facts):
    text = "梯度模式隔离探针通过 (grad-mode isolation probe passed)"
    carried = [item["path"] for item in facts["plan"]["files"] if item["path"] in GRAD_MODE_FILES]
    if not carried:
        return _item(text, True, "不涉及: the PR carries no grad-mode file (export plan)")
    missing = _no_results(facts)
    if missing:
        return _item(text, False, missing)
    probes = [(entry["name"], probe) for entry in _usable_envs(facts)
              for probe in entry["results"].get("grad_mode_isolation") or [] if probe.get("path") in carried]
    bad = [f"{env}: {probe.get('path')} depends on the initial grad mode" for env, probe in probes
           if not probe.get("same")]
    if not probes:
        return _item(text, False, "the probe was not run in the branch's envs — run `tox -e ENV` (its suite probes "
                                  "grad-mode files) for each env of the branch")
    return _item(text, not bad, "; ".join(bad) if bad else
                 f"same outcomes with grad mode enabled and disabled at start ({len(probes)} probe(s))")


def upstream_ran(facts):
    text = "upstream patch 已实跑 (the upstream patch ran)"
    if not facts["plan"]["patches"]:
        return _item(text, True, "不涉及: the PR carries no upstream patch (export plan)")
    ran = [upstream for upstream in facts["report"]["upstream"] if upstream["state"] == "ran"]
    if not ran:
        return _item(text, False, "no upstream results for this branch's torch — run `tox -e upstream`")
    problems = [problem for problem in facts["report"]["problems"] if problem.startswith("upstream")]
    return _item(text, not problems, "; ".join(problems) if problems else
                 f"ran under torch {', '.join(str(upstream['torch']) for upstream in ran)}")


def community_search(facts):
    text = "已检索社区已有用例 (community tests searched on the branch)"
    missing = [api["name"] for api in facts["apis"] if not api.get("search")]
    if missing:
        return _item(text, False, f"search did not run for {', '.join(missing)}")
    return _item(text, bool(facts["apis"]), f"search on {facts['ascend']['ref']} ({facts['ascend']['commit'][:7]}) "
                                            f"for {len(facts['apis'])} API(s)")


def docs_listed(facts):
    text = "资料已补齐 (every API is listed in the native-API docs of the branch's torch)"
    missing = [api["name"] for api in facts["apis"] if not api.get("docs")]
    if missing:
        return _item(text, False, f"docs did not run for {', '.join(missing)}")
    versions = [(api, version) for api in facts["apis"] for version in api["docs"]["versions"]]
    unlisted = [f"{api['name']} (torch {version['torch_version']})" for api, version in versions
                if not version["listed"] and version.get("folder")]
    no_list = sorted({version["torch_version"] for _, version in versions if not version.get("folder")})
    later = f"; Ascend has no native-API list for torch {', '.join(no_list)} yet" if no_list else ""
    return _item(text, not unlisted and bool(facts["apis"]),
                 f"not listed: {', '.join(unlisted)} (the entries to add are in 【资料变更】: `docs API --ascend DEST "
                 "--write` on master, in a docs PR)" if unlisted
                 else f"docs: listed for every torch version the branch ships that has a native-API list{later}")


def kit_checks(facts):
    return [tests_pass(facts), apis_called(facts), grad_mode_probe(facts), upstream_ran(facts),
            community_search(facts), docs_listed(facts)]
