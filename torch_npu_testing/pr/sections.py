# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""The body of each section of the description, from the facts (template sections; task sections are in
:mod:`.task_sections`). ``options`` carry what :mod:`.fit` shortened."""
from . import evidence, source, task_sections, verification
from .planfacts import TEST_FILE, UPSTREAM_PATCH
from .task_sections import box_lines, code, gap_lines
from ..upstream import basefacts

ACTIONS = {"create": "新增 (new)", "update": "补充 (adds to the branch's file, their tests kept)",
           "unchanged": "不变 (unchanged)"}


def source_section(facts, options):
    lines = box_lines(facts["template_boxes"].get("【合入来源】", [])) + source.source_lines(facts["apis"])
    return lines + [""] + gap_lines(facts, "合入来源") + gap_lines(facts, "模板")


def plan_section(facts, options):
    files = facts["plan"]["files"]
    tests = [item for item in files if item["kind"] == TEST_FILE]
    lines = [f"1. {len(tests)} test file(s) with {sum(item['tests'] for item in tests)} new test(s)"
             + (f" and {len(files) - len(tests)} upstream patch(es)" if len(files) > len(tests) else "")
             + f", planned by `export` against {code(facts['ascend']['ref'])} "
               f"({code(facts['ascend']['commit'][:12])}):", "",
             "| file | change | kind | tests on the branch kept | tests added |", "| --- | --- | --- | --- | --- |"]
    for item in files:
        action = ACTIONS.get(item["action"], item["action"])
        if item["kind"] != TEST_FILE and item["action"] == "update":
            action = "替换 (replaces the branch's patch)"
        lines.append(f"| {code(item['path'])} | {action} | {item['kind']} | "
                     f"{item['their_tests'] if item['kind'] == TEST_FILE else '-'} | {item.get('tests', '-')} |")
    lines.append("")
    for path, why in facts["plan"]["left_out"].items():
        lines.append(f"- 不涉及 / left out: {code(path)}: {why}")
    for item in files:
        if item.get("renamed"):
            lines.append(f"- {code(item['path'])}: kit names renamed so the branch's own names stay: "
                         + ", ".join(f"{code(old)} → {code(new)}" for old, new in item["renamed"].items()))
    lines += [f"- ⚠ {warning}" for warning in facts["plan"]["warnings"]]
    lines += [f"- {note}" for note in facts["plan"]["notes"]]
    lines += ["2. Each test file carries its helpers inline (device choice, state guard, strict tensor checks) and "
              "imports only torch, torch_npu, the standard library and `torch.testing`: it runs standalone from "
              "`test/` as Ascend CI runs it.", ""]
    return lines


def docs_section(facts, options):
    conclusion, changes = ["资料检查 / docs check (native-API docs read from master through git):", ""], []
    for api in facts["apis"]:
        document = api.get("docs")
        if not document:
            conclusion.append(f"- {code(api['name'])}: ⚠ docs did not run")
            continue
        for version in document["versions"]:
            if version["listed"]:
                state = f"已列出 / listed in {code(version['file'] + ':' + str(version['line']))}"
            elif version.get("entry"):
                state = f"缺失 / missing: add to {code(version['target_file'])} (entry below)"
                changes += [f"{code(api['name'])} → {code(version['target_file'])} (torch {version['torch_version']}):",
                            "", "```markdown", version["entry"].rstrip("\n"), "```", ""]
            else:
                state = f"缺失 / missing: {version.get('note') or 'no place to add it found'}"
            conclusion.append(f"- {code(api['name'])}, torch {version['torch_version']}: {state}")
        conclusion.append(f"  (docs from {document.get('docs_from', 'master')}; command: {code(api['docs_command'])})")
    conclusion += [""] + gap_lines(facts, "资料变更")
    if not changes:
        return conclusion + (["不涉及: every API is listed; this PR changes no docs.", ""]
                             if all(api.get("docs") for api in facts["apis"]) else [])
    return conclusion + ["不涉及 in this PR (it changes only tests); entries to add (support values to fill in per "
                         "hardware):", ""] + changes


def interface_section(facts, options):
    other = [item for item in facts["plan"]["files"]
             if item["kind"] not in (TEST_FILE, UPSTREAM_PATCH)
             or not item["path"].startswith(("test/", "test_upstream/"))]
    if not other:
        return ["不涉及 (the PR adds or changes only test files and test patches; checked in the export plan)", ""]
    return ["涉及 / changes:", ""] + [f"- {code(item['path'])} ({item['kind']})" for item in other] + [""]


def verification_section(facts, options):
    """【功能验证】: verify's record of the PR's files in DEST (:mod:`.verification`)."""
    return verification.section(facts, options)


def upstream_section(facts, options):
    if facts["plan"]["patches"]:
        return basefacts.base_lines(facts["report"]["upstream"]) + (
            evidence.upstream_lines(facts["report"]) or ["> ⚠ 缺少 / missing: no upstream results", ""])
    why = [f"{path}: {reason}" for path, reason in facts["plan"]["left_out"].items()
           if path.startswith("test_upstream/")]
    return ["不涉及: this branch's PR carries no upstream patch (Ascend keeps upstream patches only on v2.11.0 and "
            "v2.12.0)" + (f"; {'; '.join(why)}" if why else ""), ""]


def checklist_section(facts, options):
    return box_lines(facts["template_boxes"].get("【CheckList】", []))


def unknown_section(facts, section):
    """A template section the kit does not know (a template update): its hints and boxes, left to fill in."""
    lines = [line for line in section["hints"]] + [""]
    lines += [f"- [ ] {text} —— the kit has no fact for this item (new in the template)" for text in
              section["checkboxes"]]
    return lines + ["", f"> ⚠ 缺少 / missing: {section['title']} is new in the template: fill it in by hand", ""]


WRITERS = {"【合入来源】": source_section, "【修改方案】": plan_section, "【资料变更】": docs_section,
           "【接口变更】": interface_section, "【功能验证】": verification_section,
           "【upstream patch 实跑日志】": upstream_section, "【CheckList】": checklist_section,
           **task_sections.WRITERS}
