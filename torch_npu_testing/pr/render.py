# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""The pull-request description in Markdown, in the Ascend template's section order, from the facts.

Nothing here looks anything up: every line comes from the facts document (:mod:`.facts`), the four
evidence sections from :mod:`torch_npu_testing.report`'s renderer. A missing fact is a visible line
``> ⚠ 缺少 / missing: ...`` in its section, and the description starts with the list of them.
"""
import re

from ..export.plan import TEST_FILE, UPSTREAM_PATCH
from ..task import callfinder
from . import evidence

SECTIONS = ("【合入来源】", "【分支范围】", "【修改方案】", "【API 功能介绍】", "【测试方案】", "【社区用例检索与新增必要性】",
            "【资料补齐检查结论】", "【资料变更】", "【测试环境】", "【测试命令】", "【测试日志】", "【upstream patch 实跑日志】",
            "【接口变更】", "【CheckList】")
ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+>")  # default values printed as <function f at 0x7f...>: not stable
ACTIONS = {"create": "新增 (new)", "replace": "替换 (replaces the file on the branch)", "unchanged": "不变 (unchanged)"}


def gap_lines(facts, prefix):
    lines = [f"> ⚠ 缺少 / missing: {gap.split(': ', 1)[1]}" for gap in facts["gaps"] if gap.startswith(prefix + ":")]
    return lines + [""] if lines else []


def code(text):
    return f"`{text}`"


def source_section(facts):
    lines = []
    for api in facts["apis"]:
        task_id = api.get("ascend_task_id")
        issue = api.get("ascend_issue")
        lines.append(f"- {code(api['name'])}: task {code(api.get('task') or api['name'])}, Ascend task id "
                     + (code(task_id) if task_id else "**⚠ 缺少 / missing**")
                     + (f", issue {issue}" if issue else ""))
    return lines + [""] + gap_lines(facts, "合入来源")


def scope_section(facts):
    branch, scope = facts["branch"], facts["scope"]
    lines = [f"- 本 PR / this PR: {code(branch)} (torch {facts['torch']}; tested by tox env "
             f"{', '.join(code(env) for env in facts['envs'])}; base {code(facts['ascend']['ref'])} "
             f"{code(facts['ascend']['commit'][:12])})"]
    others = [f"{code(name)} (torch {info['torch']})" for name, info in scope["branches"].items() if name != branch]
    if others:
        lines.append(f"- 同一批测试的其他分支 / the same tests go to: {', '.join(others)}, one PR each")
    if scope["maintenance"]:
        lines.append(f"- 不涉及 / out of scope: {', '.join(code(name) for name in scope['maintenance'])} — maintenance "
                     "branches, they take no new tests")
    return lines + [""]


def plan_section(facts):
    files = facts["plan"]["files"]
    tests = [item for item in files if item["kind"] == TEST_FILE]
    lines = [f"{len(tests)} test file(s) with {sum(item['tests'] for item in tests)} test(s)"
             + (f", {len(files) - len(tests)} upstream patch(es)" if len(files) > len(tests) else "") + ":", "",
             "| file | change | kind | tests |", "| --- | --- | --- | --- |"]
    for item in files:
        lines.append(f"| {code(item['path'])} | {ACTIONS.get(item['action'], item['action'])} | {item['kind']} | "
                     f"{item.get('tests', '-')} |")
    lines.append("")
    if facts["plan"]["left_out"]:
        lines += ["Left out on this branch:", ""]
        lines += [f"- {code(path)}: {why}" for path, why in facts["plan"]["left_out"].items()]
        lines.append("")
    lines.append("Test files carry their helpers inline (device choice, state guard, portable assertions); they "
                 "need only torch, torch_npu and the standard library.")
    return lines + [""]


def _locate_lines(api):
    rows = (api.get("locate") or {}).get("results") or []
    lines = []
    for row in rows:
        torch = row.get("torch") or "?"
        if not row.get("found"):
            lines.append(f"- torch {torch}: not found ({row.get('error') or 'absent'})")
            continue
        where = (f"{code('torch/' + row['file'] + ':' + str(row['first_line']) + '-' + str(row['last_line']))}"
                 if row.get("file") else "C builtin (no Python source)")
        public = "public" if row.get("public") else f"private ({row.get('private_reason') or 'underscore'})"
        lines.append(f"- torch {torch}: {row.get('kind')} ({row.get('implementation')}), {where}, {public}"
                     + (f"; signature {code(ADDRESS.sub('>', row['signature']))}" if row.get("signature") else ""))
    docs = sorted({row["doc"] for row in rows if row.get("doc")})
    lines += [f"- 说明 / docstring: {doc}" for doc in docs]
    return lines


def api_section(facts):
    lines = []
    for api in facts["apis"]:
        lines += [f"### {code(api['name'])}", ""]
        lines += _locate_lines(api) or ["> ⚠ 缺少 / missing: locate did not run for this API"]
        lines += ["", f"Command: {code(api['locate_command'])}", ""]
    return lines + gap_lines(facts, "API 功能介绍")


def test_plan_section(facts):
    lines = []
    for item in facts["plan"]["files"]:
        if item["kind"] != TEST_FILE:
            continue
        lines += [f"### {code(item['path'])}", "", item.get("docstring") or "> ⚠ 缺少 / missing: module docstring", ""]
        for group in item["outline"]:
            lines.append(f"- **{group['class']}**")
            lines += [f"  - {code(test['name'])}: {test['doc'] or '⚠ no docstring'}" for test in group["tests"]]
        lines.append("")
    patches = [item["path"] for item in facts["plan"]["files"] if item["kind"] == UPSTREAM_PATCH]
    if patches:
        lines += [f"- upstream patch {code(path)}: the upstream test file run on the device, assertions unchanged"
                  for path in patches] + [""]
    return lines


def search_section(facts):
    lines = []
    replaced = replaced_paths(facts)
    for api in facts["apis"]:
        lines += [f"### {code(api['name'])}", ""]
        document = api.get("search")
        if not document:
            lines += ["> ⚠ 缺少 / missing: search did not run", ""]
            continue
        for repo in document["repos"]:
            for branch in repo["branches"]:
                lines += ["```bash"] + branch["commands"] + ["```", ""]
                direct = [hit for hit in branch["hits"] if hit["kind"] == "direct"]
                for hit in direct[:10]:
                    note = " (in a file this PR replaces)" if hit["path"] in replaced else ""
                    lines.append(f"- {code(callfinder.test_id(hit))} "
                                 f"(line {hit['line']}): direct call{note}")
                if len(direct) > 10:
                    lines.append(f"- ... and {len(direct) - 10} more direct calls (in pr-{facts['branch']}.json)")
                lines += ["", f"结论 / result: {branch['summary']}."]
                outside = [hit for hit in direct if hit["path"] not in replaced]
                if not direct:
                    lines.append("新增必要性 / why new tests: no existing test calls this API directly on the branch.")
                elif not outside:
                    lines.append("新增必要性 / why new tests: the only tests that call it directly are in the files "
                                 "this PR replaces with the tests above.")
                else:
                    lines.append(f"{len(outside)} test(s) outside this PR's files call it directly (see the ⚠ below).")
                lines.append("")
    return lines + gap_lines(facts, "社区用例检索")


def replaced_paths(facts):
    return {item["path"] for item in facts["plan"]["files"] if item["action"] in ("replace", "unchanged")}


def docs_sections(facts):
    conclusion, changes = [], []
    for api in facts["apis"]:
        document = api.get("docs")
        if not document:
            conclusion.append(f"- {code(api['name'])}: > ⚠ 缺少 / missing: docs did not run")
            continue
        for version in document["versions"]:
            if version["listed"]:
                state = f"已列出 / listed in {code(version['file'] + ':' + str(version['line']))}"
            elif version.get("entry"):
                state = f"缺失 / missing: add to {code(version['target_file'])} (entry in 【资料变更】)"
                changes += [f"{code(api['name'])} → {code(version['target_file'])} (torch {version['torch_version']}):",
                            "", "```markdown", version["entry"].rstrip("\n"), "```", ""]
            else:
                state = f"缺失 / missing: {version.get('note') or 'no place to add it found'}"
            conclusion.append(f"- {code(api['name'])}, torch {version['torch_version']}: {state}")
        conclusion.append(f"  (command: {code(api['docs_command'])})")
    conclusion += [""] + gap_lines(facts, "资料补齐")
    if not changes:
        changes = ["不涉及 / none: every API is listed." if all(api.get("docs") for api in facts["apis"])
                   else "> ⚠ 缺少 / missing: docs did not run for every API, changes unknown", ""]
    else:
        changes = ["Entries to add (support values 待填写 / to fill in per hardware):", ""] + changes
    return conclusion, changes


def interface_section(facts):
    other = [item for item in facts["plan"]["files"]
             if item["kind"] not in (TEST_FILE, UPSTREAM_PATCH)
             or not item["path"].startswith(("test/", "test_upstream/"))]
    if not other:
        return ["不涉及 (the PR adds or changes only test files and test patches; checked in the export plan)", ""]
    return ["涉及 / changes:", ""] + [f"- {code(item['path'])} ({item['kind']})" for item in other] + [""]


def upstream_section(facts):
    if facts["plan"]["patches"]:
        return evidence.upstream_lines(facts["report"]) or ["> ⚠ 缺少 / missing: no upstream results", ""]
    why = [f"{path}: {reason}" for path, reason in facts["plan"]["left_out"].items()
           if path.startswith("test_upstream/")]
    return ["不涉及: this branch's PR carries no upstream patch" + (f" ({'; '.join(why)})" if why else ""), ""]


def checklist_section(items):
    return [f"- [{'x' if item['ticked'] else ' '}] {item['item']} — {item['why']}" for item in items] + [""]


def render(facts):
    report = facts["report"]
    conclusion, changes = docs_sections(facts)
    body = {
        "【合入来源】": source_section(facts),
        "【分支范围】": scope_section(facts),
        "【修改方案】": plan_section(facts),
        "【API 功能介绍】": api_section(facts),
        "【测试方案】": test_plan_section(facts),
        "【社区用例检索与新增必要性】": search_section(facts),
        "【资料补齐检查结论】": conclusion,
        "【资料变更】": changes,
        "【测试环境】": evidence.environment_lines(report) + gap_lines(facts, "测试日志"),
        "【测试命令】": evidence.command_lines(report),
        "【测试日志】": evidence.log_lines(report),
        "【upstream patch 实跑日志】": upstream_section(facts),
        "【接口变更】": interface_section(facts),
        "【CheckList】": checklist_section(facts["checklist"]),
    }
    lines = []
    if facts["problems"]:
        lines += [f"> ⚠ 本描述尚不完整 / not ready to paste: {len(facts['problems'])} item(s) not backed by a fact:", ">"]
        lines += [f"> - {problem}" for problem in facts["problems"]] + [""]
    for title in SECTIONS:
        lines += [f"## {title}", ""] + body[title]
    return "\n".join(lines).rstrip() + "\n"
