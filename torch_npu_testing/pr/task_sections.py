# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""The task sections community API-consistency PRs add to Ascend's template: 【分支范围】, 【API 功能介绍】,
【测试方案】 and 【社区用例检索与新增必要性】 (the environment, commands and log are under 【功能验证】, in
:mod:`.sections`)."""
import re

from ..common import recordnames
from ..task import callfinder
from .planfacts import TEST_FILE

ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+>")  # default values printed as <function f at 0x7f...>: not stable


def code(text):
    return f"`{text}`"


def box_lines(items):
    """One line per box; ``[source: ...]`` names the facts it reads (:mod:`.boxsources`)."""
    return [f"- [{'x' if item['ticked'] else ' '}] {item['item']} —— {item['why']}"
            + (f" [source: {item['source']}]" if item.get("source") else "") for item in items] + [""]


def gap_lines(facts, prefix):
    lines = [f"> ⚠ 缺少 / missing: {gap.split(': ', 1)[1]}" for gap in facts["gaps"] if gap.startswith(prefix + ":")]
    return lines + [""] if lines else []


def scope_section(facts, options):
    branch, scope, ascend = facts["branch"], facts["scope"], facts["ascend"]
    resolved = f"{code(ascend['ref'])} {code(ascend['commit'][:12])}"
    lines = [f"- 本 PR / this PR: {code(branch)} (torch {', '.join(facts['torches'])}; tested by tox env "
             f"{', '.join(code(env) for env in facts['envs'])}; base {resolved})"]
    others = [f"{code(name)} (torch {', '.join(info['torches'])})" for name, info in scope["branches"].items()
              if name != branch]
    if others:
        lines.append(f"- 同一批测试的其他分支 / the same tests go to: {', '.join(others)}, one PR each")
    if scope["maintenance"]:
        lines.append(f"- 不涉及 / out of scope: {', '.join(code(name) for name in scope['maintenance'])} — maintenance "
                     "branches, they take no new tests")
    return lines + [""]


def _locate_lines(api):
    rows = (api.get("locate") or {}).get("results") or []
    lines = []
    for row in rows:
        torch = row.get("torch") or "?"
        if not row.get("found"):
            lines.append(f"- torch {torch}: not found ({row.get('error') or 'absent'})")
            continue
        where = (code(f"torch/{row['file']}:{row['first_line']}-{row['last_line']}") if row.get("file")
                 else "C builtin (no Python source)")
        public = "public" if row.get("public") else f"private ({row.get('private_reason') or 'underscore'})"
        lines.append(f"- torch {torch}: {row.get('kind')} ({row.get('implementation')}), {where}, {public}"
                     + (f"; signature {code(ADDRESS.sub('>', row['signature']))}" if row.get("signature") else ""))
    docs = sorted({row["doc"] for row in rows if row.get("doc")})
    return lines + [f"- 说明 / docstring: {doc}" for doc in docs]


def api_section(facts, options):
    lines = []
    for api in facts["apis"]:
        lines += [f"### {code(api['name'])}", ""]
        lines += _locate_lines(api) or ["> ⚠ 缺少 / missing: locate did not run for this API"]
        lines += ["", f"Command: {code(api['locate_command'])}", ""]
    return lines + gap_lines(facts, "API 功能介绍")


def _doc(doc, level):
    if level == "names":
        return ""
    doc = doc or "⚠ no docstring"
    return f": {doc[:59] + '…' if level == 'short' and len(doc) > 60 else doc}"


def test_plan_section(facts, options):
    level = options.get("plan_level", "docs")
    lines = []
    for item in facts["plan"]["files"]:
        if item["kind"] != TEST_FILE:
            continue
        lines += [f"### {code(item['path'])}", "", item.get("docstring") or "> ⚠ 缺少 / missing: module docstring", ""]
        for group in item["outline"]:
            if level == "classes":
                lines.append(f"- **{group['class']}**: {len(group['tests'])} test(s)")
                continue
            lines.append(f"- **{group['class']}**")
            lines += [f"  - {code(test['name'])}" + _doc(test["doc"], level) for test in group["tests"]]
        lines.append("")
    return lines


def _hit_line(hit, ours):
    note = " (in a file this PR adds to)" if hit["path"] in ours else ""
    return f"- {code(callfinder.hit_test_id(hit))} (line {hit['line']}): {callfinder.hit_text(hit)}{note}"


def _branch_search_lines(facts, api, branch, max_hits):
    ours = {item["path"] for item in facts["plan"]["files"]}
    lines = ["```bash"] + branch["commands"] + ["```", ""]
    home = branch.get("home")
    if home:
        target = api.get("test_file")
        if target == home["path"]:
            lines += [f"新增用例归属 / where the new tests belong: {code(home['path'])} ({home['why']}); this PR adds "
                      "its tests there.", ""]
        else:
            lines += [f"新增用例归属 / where the new tests are: {code(target)}, chosen with `new --path`; search's "
                      f"suggestion was {code(home['path'])} ({home['why']}).", ""]
    direct = [hit for hit in branch["hits"] if hit["kind"] == "direct"]
    related = [hit for hit in branch["hits"] if hit["kind"] != "direct"]
    lines += [_hit_line(hit, ours) for hit in direct[:max_hits]]
    lines += [_hit_line(hit, ours) for hit in related[:max_hits]]
    left = max(0, len(direct) - max_hits) + max(0, len(related) - max_hits)
    if left:
        record = recordnames.name("pr", facts["branch"], facts.get("api_names"))
        lines.append(f"- ... and {left} more (all in `{record}` and in the search command's output)")
    lines += ["", f"结论 / result: {branch['summary']}."]
    outside = [hit for hit in direct if hit["path"] not in ours]
    if not direct:
        lines.append("新增必要性 / why new tests: no existing test calls this API directly on the branch; the related "
                     "tests above exercise its owner or siblings, not the API itself.")
    elif not outside:
        lines.append("新增必要性 / why new tests: the only direct callers are in the files this PR adds to; the new "
                     "tests cover the call forms and edge cases listed in 【测试方案】.")
    elif api.get("adds_over_callers"):
        lines.append(f"新增必要性 / what the new tests add over the {len(outside)} existing direct caller(s): "
                     f"{api['adds_over_callers']}")
    else:
        lines.append(f"{len(outside)} test(s) outside this PR's files call it directly (see the ⚠ below).")
    return lines + [""]


def search_section(facts, options):
    lines, max_hits = [], options.get("max_hits", 10)
    for api in facts["apis"]:
        lines += [f"### {code(api['name'])}", ""]
        document = api.get("search")
        if not document:
            lines += ["> ⚠ 缺少 / missing: search did not run", ""]
            continue
        members = document.get("family", {}).get("members") or []
        if members:
            lines += ["Related by owner and siblings: " + ", ".join(
                f"{code(member['name'])} ({member['role']})" for member in members), ""]
        for repo in document["repos"]:
            for branch in repo["branches"]:
                lines += _branch_search_lines(facts, api, branch, max_hits)
    return lines + gap_lines(facts, "社区用例检索")


WRITERS = {"【分支范围】": scope_section, "【API 功能介绍】": api_section, "【测试方案】": test_plan_section,
           "【社区用例检索与新增必要性】": search_section}
