# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Which source each checkbox reads, said next to the box (``[source: ...]``).

The template's boxes (【合入来源】, 【CheckList】) and the kit's checks (自检 under 【功能验证】) are ticked by
:mod:`.checklist` and :mod:`.verified` from facts; a reviewer should see which facts: verify's record of
the PR's files in DEST, the kit suite's results of the kit's own files, the export plan, the one table,
search, docs, the upstream results. Matched by the box's words, as the checklist's rules are.
"""

VERIFY = "verify-BRANCH.json (the PR's files in DEST)"
SUITE = "the kit's suite results (.tox/results, the kit's own files)"
PLAN = "export's plan of the branch at its ref"
TEMPLATE_SOURCES = (("issue", "table.json (ascend_task_id)"), ("工单", "table.json (ascend_task_id)"),
                    ("注释", PLAN + " (the exported text)"), ("返回值", PLAN), ("空指针", PLAN),
                    ("标题", "set on the forge"), ("CI", "Ascend CI, after the PR is opened"),
                    ("资料", PLAN + " (the PR changes no docs)"))
BY_DESIGN = "none: not this PR's kind, or a step on the forge (see the reason)"
CHECK_SOURCES = (("verify", VERIFY), ("tests pass", SUITE), ("every target API is called", SUITE + ", --api-calls"),
                 ("grad-mode isolation probe passed", SUITE), ("upstream patch", "upstream results (tox -e upstream)"),
                 ("community tests searched", "search on the branch ref"), ("资料已补齐", "docs (read from master)"))


def source_of(text, rules):
    return next((source for words, source in rules if words in text), None)


def annotate(template_boxes, kit_checks):
    """Add ``source`` to every item that has a known one (in place)."""
    for items in template_boxes.values():
        for item in items:
            item.setdefault("source", source_of(item["item"], TEMPLATE_SOURCES) or BY_DESIGN)
    for item in kit_checks:
        item.setdefault("source", source_of(item["item"], CHECK_SOURCES) or "none")
