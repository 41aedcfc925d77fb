# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Gather every fact the pull-request description of one branch states, each from its source.

=================================  ===========================================================
fact                               source
=================================  ===========================================================
the template's sections, boxes     ``.gitcode/PULL_REQUEST_TEMPLATE.md`` on master, through git
task ids, APIs and their files     the one table (:mod:`torch_npu_testing.common.table`)
files, actions, test counts        export's plan of the branch at its ref (:mod:`.planfacts`)
API definition                     ``locate`` under the interpreter of each of the branch's tox envs
tests and what they check          the kit's test files (AST: classes, tests, docstring first lines)
existing community tests           ``search`` on the branch ref (related tests by owner, home file)
docs                               ``docs`` (read from master through git) for the branch's torches
evidence (env, commands, logs)     ``report`` over the results of the branch's envs
implementation coverage            the ``coverage`` block of those results (one line per API, torch)
=================================  ===========================================================

A fact the kit could not get is recorded in ``gaps`` (``"<section>: <what> — <how to get it>"``); the
Markdown shows it where the fact would be and the checklists leave their items open with the reason.
"""
import datetime
import os

from ..common import table
from ..common.errors import UsageError
from ..export.describe import PR_FORMAT, commit_title
from ..report import strength as report_strength
from ..task import gitrefs
from . import evidence, planfacts, taskfacts, template as template_module


def check_api_names(names):
    """The table rows of ``names`` (None: every API); UsageError naming an unknown API."""
    if not names:
        return None
    for name in names:
        try:
            table.api(name)
        except KeyError as exc:
            raise UsageError(exc.args[0]) from None
    return list(dict.fromkeys(names))


def described_apis(test_files, names):
    """The APIs the description is about: exactly those asked for (``--api``; either aot API selects the aot
    file, yet only the API asked for is described), else every API of the selected files."""
    rows = [dict(api) for path in test_files for api in table.apis_of_file(path)]
    return rows if names is None else [row for row in rows if row["name"] in names]


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


def direct_calls_outside(search_document, files):
    """``path::test`` of the direct callers found by search outside the files the plan creates or updates."""
    ours = {item["path"] for item in files}
    return [f"{hit['path']}::{hit['test']}" for repo in (search_document or {}).get("repos", [])
            for branch in repo["branches"] for hit in branch["hits"]
            if hit["kind"] == "direct" and hit["path"] not in ours]


def tool_facts(api, ascend, ref, pythons, files):
    """Run locate, search and docs for one API (in place); return the gaps."""
    gaps, name = [], api["name"]
    api["locate"], why = taskfacts.locate(name, list(pythons.values())) if pythons else (None, None)
    api["locate_command"] = taskfacts.tool_command("locate", name, pythons=list(pythons.values()))
    if why:
        gaps.append(f"API 功能介绍: locate {name}: {why}")
    for row in (api["locate"] or {}).get("results", []):
        if not row.get("found") and not (api.get("since") and row.get("torch") and not table.api_present_in(
                api, row["torch"])):
            gaps.append(f"API 功能介绍: locate {name} under {row.get('python')}: not found "
                        f"({row.get('error') or 'absent in that torch'})")
    for tool, section in (("search", "社区用例检索"), ("docs", "资料变更")):
        api[tool], why = getattr(taskfacts, tool)(name, ascend, ref)
        api[f"{tool}_command"] = taskfacts.tool_command(tool, name, ascend, ref)
        if why:
            gaps.append(f"{section}: {tool} {name}: {why} — run `{api[tool + '_command']}`")
    outside = direct_calls_outside(api["search"], files)
    if outside and not api.get("adds_over_callers"):
        gaps.append(f"社区用例检索: {len(outside)} test(s) outside this PR's files call {name} directly on {ref} "
                    f"(first: {outside[0]}) — say once what the new tests add over them: `python -m "
                    f"torch_npu_testing adds {name} \"TEXT\"`")
    return gaps


def scope():
    return {"branches": {name: {"torches": table.branch_torches(name), "envs": list(table.envs_for_branch(name))}
                         for name in table.branches(include_maintenance=False)},
            "maintenance": [name for name in table.branches() if table.branch(name)["maintenance"]]}


def gather(branch, ascend, results_dir, kit_root=".", api_names=None, year=None, command=None):
    """The facts document of ``branch`` (format ``torch_npu_testing.pr/1``). Raises UsageError before
    anything is gathered when the branch, an API name or the checkout is wrong."""
    kit_root = os.path.abspath(kit_root)
    names = check_api_names(api_names)
    ascend = gitrefs.check_ascend(ascend)
    plan = planfacts.plan(kit_root, branch, ascend, names, year)
    tmpl, gap = template_module.read(ascend)
    gaps = [gap] if gap else []
    files = [planfacts.file_facts(target, kit_root) for target in plan.targets]
    test_files = [item["path"] for item in files if item["kind"] == planfacts.TEST_FILE]
    apis = described_apis(test_files, names)
    envs = list(table.envs_for_branch(branch))
    pythons, python_gaps = branch_pythons(kit_root, envs)
    gaps += python_gaps
    for api in apis:
        gaps += tool_facts(api, ascend, plan.ref, pythons, files)
    no_id = [api["name"] for api in apis if not api.get("ascend_task_id")]
    if no_id:
        gaps.append(f"合入来源: no ascend_task_id in torch_npu_testing/common/table.json for {', '.join(no_id)} — set "
                    f"its community task: `python -m torch_npu_testing task-id {no_id[0]} --task T --campaign C "
                    "--issue N`")
    patches = [item["path"] for item in files if item["kind"] == planfacts.UPSTREAM_PATCH]
    report = evidence.collect_branch(results_dir, branch, apis, test_files, bool(patches), command)
    gaps += [f"功能验证: no usable results for env {entry['name']} ({entry['message']}) — run "
             f"`tox -e {entry['name']}`" for entry in report["envs"] if entry["state"] != "ok"]
    return {
        "format": PR_FORMAT,
        "generated_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "command": command, "branch": branch, "api_names": names, "torches": table.branch_torches(branch),
        "envs": envs, "ascend": {"dir": ascend, "asked": branch, "ref": plan.ref, "commit": plan.commit},
        "template": tmpl, "kit": kit_root, "scope": scope(), "title": commit_title(branch, plan.targets),
        "plan": {"files": files, "left_out": dict(plan.left_out), "patches": patches,
                 "warnings": list(plan.warnings), "notes": list(plan.notes)},
        "apis": apis, "pythons": pythons, "report": report,
        "coverage": evidence.coverage_lines(report, apis), "gaps": gaps,
        "strength": report_strength.markdown_lines(report_strength.rows(results_dir, names)),
    }
