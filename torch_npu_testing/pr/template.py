# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Ascend's pull-request template, read from master through git, and where the task sections go.

The template is ``.gitcode/PULL_REQUEST_TEMPLATE.md`` on master (``master``, else ``origin/master``:
:func:`torch_npu_testing.task.gitrefs.master_ref`), whatever is checked out, so a template update is
followed without a kit change. Its sections are its ``# 【...】`` headings, in order, each with its hint
lines (``> ...``) and its checkboxes (``- [ ] ...``).

Community API-consistency PRs keep every template section and add task sections: 【分支范围】 after
【合入来源】; 【API 功能介绍】, 【测试方案】 and 【社区用例检索与新增必要性】 after 【修改方案】; 【upstream patch
实跑日志】 after 【功能验证】, which itself holds the test environment, commands and log. A task section whose
anchor the template lacks goes before the template's last section (said in the description).
"""
import re

from ..task import gitrefs

TEMPLATE_PATH = ".gitcode/PULL_REQUEST_TEMPLATE.md"
HEADING = re.compile(r"^(#{1,6})\s*(【[^】]+】)\s*$")
CHECKBOX = re.compile(r"^\s*[-*]\s*\[( |x|X)\]\s*(.+?)\s*$")
UPDATED = re.compile(r"更新日期[:：]\s*(\d{8})")
TASK_SECTIONS = {
    "【合入来源】": ("【分支范围】",),
    "【修改方案】": ("【API 功能介绍】", "【测试方案】", "【社区用例检索与新增必要性】"),
    "【功能验证】": ("【upstream patch 实跑日志】",),
}
# Used only when master has no template: the sections of the 20260203 template, said as a gap.
FALLBACK = ("【合入来源】", "【修改方案】", "【资料变更】", "【接口变更】", "【功能验证】", "【CheckList】")


def parse(text):
    """``[{"title", "level", "hints", "checkboxes"}]`` of a template's ``【...】`` sections, in order."""
    sections = []
    for line in text.splitlines():
        heading = HEADING.match(line.strip())
        if heading:
            sections.append({"title": heading.group(2), "level": len(heading.group(1)), "hints": [],
                             "checkboxes": []})
            continue
        if not sections:
            continue
        box = CHECKBOX.match(line)
        if box:
            sections[-1]["checkboxes"].append(box.group(2))
        elif line.lstrip().startswith(">"):
            sections[-1]["hints"].append(line.strip())
    return sections


def read(ascend):
    """``(template, gap)``: the parsed template of master in the checkout ``ascend``; a gap (str) instead of
    failing when master has no template (then the fallback sections, without checkboxes)."""
    ref, commit = gitrefs.master_ref(ascend)
    text = gitrefs.show(ascend, commit, TEMPLATE_PATH)
    template = {"ref": ref, "commit": commit, "path": TEMPLATE_PATH, "updated": None, "sections": []}
    if text is not None:
        found = UPDATED.search(text)
        template["updated"] = found.group(1) if found else None
        template["sections"] = parse(text)
    if not template["sections"]:
        template["sections"] = [{"title": title, "level": 1, "hints": [], "checkboxes": []} for title in FALLBACK]
        return template, (f"模板: no {TEMPLATE_PATH} with 【...】 sections on {ref} ({commit[:7]}): the sections "
                          "follow the 20260203 template, without its checkboxes")
    return template, None


def layout(template):
    """The section titles in order: the template's, with the task sections placed after their anchors."""
    order = []
    for section in template["sections"]:
        order += [section["title"], *TASK_SECTIONS.get(section["title"], ())]
    missing = [task for tasks in TASK_SECTIONS.values() for task in tasks if task not in order]
    if missing:
        at = len(order) - 1 if order else 0
        order[at:at] = missing
    return order
