# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""What the PR contains, from export's own planning: :func:`torch_npu_testing.export.plan.plan_at_ref`.

The plan is computed against the branch's committed files (the ref the branch name resolves to, see
:func:`torch_npu_testing.task.gitrefs.resolve_branch`), so nothing needs to be checked out, and the bytes
``pr`` describes are the bytes ``export`` writes (``export`` compares their SHA-256 with ``pr-BRANCH.json``).
"""
import ast
import os

from ..common.results import sha256_of_bytes
from ..export import plan as export_plan
from ..export.merge import test_methods

TEST_FILE = export_plan.TEST_FILE
UPSTREAM_PATCH = export_plan.UPSTREAM_PATCH


def plan(kit_root, branch, ascend, api_names=None, year=None):
    """Export's :class:`Plan` of ``branch`` (``api_names``: ``--api``) at its ref in ``ascend``."""
    return export_plan.plan_at_ref(kit_root, branch, ascend, api_names, year=year)


def first_doc_line(node):
    """First line of ``node``'s docstring (module, class or function), None without one."""
    docstring = ast.get_docstring(node)
    return docstring.strip().splitlines()[0] if docstring else None


def test_outline(text):
    """``[{"class", "line", "tests": [{"name", "line", "doc"}]}]``: each test class and test, docstring line 1."""
    outline = {}  # by class node: two classes of one name stay apart
    for cls, method in test_methods(ast.parse(text)):
        entry = outline.setdefault(cls, {"class": cls.name, "line": cls.lineno, "tests": []})
        entry["tests"].append({"name": method.name, "line": method.lineno, "doc": first_doc_line(method)})
    return list(outline.values())


def file_facts(target, kit_root):
    """What the plan does with one file, and the checks on its exported text."""
    facts = {"path": target.rel_path, "kit_path": target.kit_path, "kind": target.kind, "action": target.action,
             "sha256": sha256_of_bytes(target.content), "their_tests": len(target.their_ids or []),
             "renamed": dict(target.renamed or {})}
    if target.kind != TEST_FILE:
        return facts
    text = target.content.decode("utf-8")
    with open(os.path.join(kit_root, target.kit_path), encoding="utf-8") as handle:
        facts["outline"] = test_outline(handle.read())
    facts["tests"] = sum(len(group["tests"]) for group in facts["outline"])
    leading = text.lstrip()[:2000]
    facts["header"] = leading.startswith("# Copyright") and "License" in leading
    facts["docstring"] = first_doc_line(ast.parse(text))
    return facts
