# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Gather every fact the pull-request description of one branch states, each from its source.

=================================  ===========================================================
fact                               source
=================================  ===========================================================
task / Ascend issue ids            ``target_apis.json`` (a missing id is a gap, never made up)
branches in scope, and why not     :mod:`torch_npu_testing.common.table` and ``export_branches.json``
files, actions, test counts        the export plan of the branch (converted bytes vs. the branch ref)
API definition                     ``locate`` under the interpreter of each of the branch's tox envs
tests and what they check          the kit's test files (AST: classes, tests, docstring first lines)
existing community tests           ``search`` on the branch ref of the Ascend checkout
docs                               ``docs`` for the torch versions the branch ref ships
evidence (env, commands, logs)     ``report`` over the results of the branch's envs
=================================  ===========================================================

A fact the kit could not get is recorded in ``gaps`` with the reason and the command that gets it; the
Markdown shows it where the fact would be and :mod:`.checklist` leaves its item unticked.
"""
import ast
import datetime
import hashlib
import os

from ..common import table as branches
from ..suite.api_calls import MANIFEST_PATH, load_manifest
from ..common.errors import UsageError
from ..export.branchmap import branch_entry, load_branch_map
from ..export.describe import PR_FORMAT
from ..export.plan import TEST_FILE, UPSTREAM_PATCH, convert_branch_files
from ..task import gitrefs
from . import evidence, taskfacts


def resolve_ref(ascend, branch):
    """``(ref, commit)`` of ``branch`` in the Ascend checkout: the local branch, else ``origin/<branch>``."""
    for ref in (branch, f"origin/{branch}"):
        commit = gitrefs.resolve_commit(ascend, ref)
        if commit:
            return ref, commit
    raise UsageError(f"branch {branch} is not a ref of {ascend} (neither {branch} nor origin/{branch}); "
                     "fetch it first")


def first_doc_line(node):
    """First line of ``node``'s docstring (module, class or function), None without one."""
    docstring = ast.get_docstring(node)
    return docstring.strip().splitlines()[0] if docstring else None


def test_outline(text):
    """``[{"class", "line", "tests": [{"name", "line", "doc"}]}]``: each test class and test, docstring line 1."""
    outline = []
    for node in ast.parse(text).body:
        if not isinstance(node, ast.ClassDef):
            continue
        tests = [{"name": item.name, "line": item.lineno, "doc": first_doc_line(item)}
                 for item in node.body if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))
                 and item.name.startswith("test")]
        if tests:
            outline.append({"class": node.name, "line": node.lineno, "tests": tests})
    return outline


def file_facts(target, ascend, ref, kit_root):
    """What the plan does with one file, and the checks on its exported text."""
    old = gitrefs.show(ascend, ref, target.rel_path)
    action = "create"
    if old is not None:
        action = "unchanged" if old.encode("utf-8", "surrogateescape") == target.content else "replace"
    facts = {"path": target.rel_path, "kind": target.kind, "action": action,
             "sha256": hashlib.sha256(target.content).hexdigest()}
    if target.kind == TEST_FILE:
        text = target.content.decode("utf-8")
        tree = ast.parse(text)
        with open(os.path.join(kit_root, target.rel_path), encoding="utf-8") as handle:
            facts["outline"] = test_outline(handle.read())
        facts["tests"] = sum(len(group["tests"]) for group in facts["outline"])
        leading = text.split('"""', 1)[0]
        facts["header"] = leading.startswith("# Copyright (c) ") and "BSD 3-Clause License" in leading
        facts["docstring"] = first_doc_line(tree)
    return facts


def direct_calls_outside(search_document, files):
    """``path::test`` of the direct callers found by search outside the files the plan creates or replaces."""
    ours = {item["path"] for item in files}
    return [f"{hit['path']}::{hit['test']}" for repo in (search_document or {}).get("repos", [])
            for branch in repo["branches"] for hit in branch["hits"]
            if hit["kind"] == "direct" and hit["path"] not in ours]


def branch_pythons(kit_root, envs):
    """``({env: python}, gaps)``: each env's ``.tox/<env>/bin/python``, a gap for each one missing."""
    found, gaps = {}, []
    for env in envs:
        python = os.path.join(kit_root, ".tox", env, "bin", "python")
        if os.path.isfile(python):
            found[env] = python
        else:
            gaps.append(f"API 功能介绍: no interpreter for env {env} ({python}) — run `tox -e {env}`")
    return found, gaps


def gather(branch, ascend, results_dir, kit_root=".", manifest_path=None, branch_map=None, year=None,
           command=None):
    """The facts document of ``branch`` (format ``torch_npu_testing.pr/1``). Raises UsageError."""
    kit_root = os.path.abspath(kit_root)
    branch_map = load_branch_map() if branch_map is None else branch_map
    entry = branch_entry(branch_map, branch)
    try:
        envs = list(branches.envs_for_branch(branch))
    except KeyError as exc:
        raise UsageError(str(exc).strip("'\"")) from None
    try:
        manifest = load_manifest(manifest_path or MANIFEST_PATH)
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot read the API manifest: {exc}") from None
    ascend = gitrefs.check_ascend(ascend)
    ref, commit = resolve_ref(ascend, branch)
    year = year or datetime.date.today().year
    targets = convert_branch_files(kit_root, branch, entry, year=year)

    gaps = []
    files = [file_facts(target, ascend, ref, kit_root) for target in targets]
    test_files = [target.rel_path for target in targets if target.kind == TEST_FILE]
    patches = [target.rel_path for target in targets if target.kind == UPSTREAM_PATCH]
    apis = [dict(api) for api in manifest if api.get("test_file") in test_files]
    for api in apis:
        if not api.get("ascend_task_id"):
            gaps.append(f"合入来源: no ascend_task_id for {api['name']} in target_apis.json — fill in the Ascend "
                        "tracker id")
    pythons, python_gaps = branch_pythons(kit_root, envs)
    gaps += python_gaps
    for api in apis:
        name = api["name"]
        if pythons:
            api["locate"], why = taskfacts.locate(name, list(pythons.values()))
            if why:
                gaps.append(f"API 功能介绍: locate {name}: {why}")
            for row in (api["locate"] or {}).get("results", []):
                if not row.get("found"):
                    gaps.append(f"API 功能介绍: locate {name} under {row.get('python')}: not found "
                                f"({row.get('error') or 'absent in that torch'})")
        else:
            api["locate"] = None
        api["locate_command"] = taskfacts.tool_command("locate", name, pythons=list(pythons.values()))
        api["search"], why = taskfacts.search(name, ascend, ref)
        api["search_command"] = taskfacts.tool_command("search", name, ascend, ref)
        if why:
            gaps.append(f"社区用例检索: search {name}: {why} — run `{api['search_command']}`")
        outside = direct_calls_outside(api["search"], files)
        if outside:
            gaps.append(f"社区用例检索: {len(outside)} test(s) outside this PR's files call {name} directly on {ref} "
                        f"(first: {outside[0]}) — say in the description what the new tests add")
        api["docs"], why = taskfacts.docs(name, ascend, ref)
        api["docs_command"] = taskfacts.tool_command("docs", name, ascend, ref)
        if why:
            gaps.append(f"资料补齐: docs {name}: {why} — run `{api['docs_command']}`")

    report = evidence.collect_branch(results_dir, branch, manifest, with_upstream=bool(patches), command=command)
    for env_entry in report["envs"]:
        if env_entry["state"] != "ok":
            gaps.append(f"测试日志: no usable results for env {env_entry['name']} ({env_entry['message']}) — run "
                        f"`tox -e {env_entry['name']}`")
    return {
        "format": PR_FORMAT,
        "generated_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "command": command,
        "branch": branch,
        "torch": entry.get("torch"),
        "envs": envs,
        "ascend": {"dir": ascend, "ref": ref, "commit": commit},
        "kit": kit_root,
        "scope": {"branches": {name: {"torch": value.get("torch"), "envs": list(branches.envs_for_branch(name))}
                               for name, value in branch_map["branches"].items()},
                  "maintenance": {name: list(branches.envs_for_branch(name)) for name in branches.branches()
                                  if branches.branch(name)["maintenance"]}},
        "plan": {"files": files, "left_out": dict(entry.get("left_out", {})), "patches": patches},
        "apis": apis,
        "pythons": pythons,
        "report": report,
        "gaps": gaps,
    }
