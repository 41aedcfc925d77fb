# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""The evidence of one branch's pull request, made by :mod:`torch_npu_testing.report` from that branch's envs.

Only the results of the branch's envs (:mod:`torch_npu_testing.common.table`) are read, and of them only
what the PR is about: the runs of its test files and the records of its APIs (``pr --api``), so the
evidence names no other target API. They are copied, so filtered, into a temporary folder for ``report``;
the upstream results only when the PR carries an upstream patch, and then only those of the branch's
torches. The report's own rules decide what is a problem.

The full evidence (per-case log, API-call and implementation-coverage tables) is the report's Markdown,
written by ``pr`` as ``evidence-BRANCH.md`` (+ ``.json``): the file to attach to the PR. The description
itself carries the compact log of :mod:`.log`.
"""
import json
import os
import tempfile

from ..common import results as results_model
from ..common import gaps, recordnames, table
from ..common.atomic import write_text_atomic
from ..report import collect as report_collect
from ..report.markdown import code
from ..report.render import render as report_render, upstream_section


def upstream_results_for(results_dir, torches):
    """The upstream results files of ``results_dir`` whose torch release is one of ``torches``."""
    if not os.path.isdir(results_dir):
        return []
    chosen = []
    for name in sorted(os.listdir(results_dir)):
        if not report_collect.is_upstream_file(name):
            continue
        if name == report_collect.UPSTREAM_FILE or any(name == f"upstream-{torch}.json"
                                                       or name.startswith(f"upstream-{torch}+") for torch in torches):
            chosen.append(os.path.join(results_dir, name))
    return chosen


def _only(mapping, names):
    return {key: value for key, value in mapping.items() if key in names} if isinstance(mapping, dict) else mapping


def filter_results(data, files, names):
    """A results document reduced to the runs of ``files`` and the records of the APIs ``names``."""
    data = dict(data)
    runs = [run for run in data.get("runs", []) if run.get("path") in files]
    data["runs"] = runs
    data["totals"] = results_model.add_counts([run.get("counts", {}) for run in runs])
    data["api_calls"] = _only(data.get("api_calls"), names)
    details = data.get("api_call_details")
    if isinstance(details, dict) and isinstance(details.get("apis"), dict):
        data["api_call_details"] = dict(details, apis=_only(details["apis"], names))
    data["grad_mode_isolation"] = [item for item in data.get("grad_mode_isolation") or []
                                   if item.get("path") in files]
    coverage = data.get("coverage")
    if isinstance(coverage, dict) and isinstance(coverage.get("apis"), dict):
        data["coverage"] = dict(coverage, apis=_only(coverage["apis"], names))
    return data


def _copy_env(results_dir, folder, env, files, names):
    source = os.path.join(results_dir, f"{env}.json")
    target = os.path.join(folder, f"{env}.json")
    try:
        with open(source, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        if os.path.exists(source):  # unreadable: let the report say what is wrong with it
            with open(source, "rb") as handle, open(target, "wb") as out:
                out.write(handle.read())
        return source
    if isinstance(data, dict) and isinstance(data.get("runs"), list):
        data = filter_results(data, files, names)
    with open(target, "w", encoding="utf-8") as handle:
        json.dump(data, handle)
    return source


def collect_branch(results_dir, branch, apis, files, with_upstream, command):
    """The report document for ``branch``'s envs, reduced to ``files`` and ``apis`` (manifest rows)."""
    envs = list(table.envs_for_branch(branch))
    results_dir = os.path.abspath(results_dir)
    torches = [table.env_torch(env) for env in envs]
    names = {api["name"] for api in apis}
    upstream = upstream_results_for(results_dir, torches) if with_upstream else []
    with tempfile.TemporaryDirectory(prefix="pr-results-") as folder:
        real = {os.path.join(folder, f"{env}.json"): _copy_env(results_dir, folder, env, set(files), names)
                for env in envs}
        # upstream results are read where they are (the folder holds only the narrowed env results)
        doc = report_collect.collect_results(folder, envs, apis, upstream or None, command=command)
    for item in doc["envs"]:
        if item.get("file") in real:
            item["file"] = real[item["file"]]
    doc["results_dir"] = results_dir
    if not with_upstream:
        doc["upstream"] = []
    return doc


def evidence_name(branch, api_names=None):
    """``evidence-BRANCH[--KEY].md``: the file to attach to the task's PR (:mod:`..common.recordnames`)."""
    return recordnames.name("evidence", branch, api_names, ".md")


def kit_files_lines(doc, verify=None):
    """The attachment's first lines: what it is evidence of. The kit suite ran the kit's own files (their
    SHA-256 listed), not the PR's; the PR's files (other bytes) are verify's, named with theirs."""
    kit = {}
    for entry in doc["envs"]:
        for run in (entry.get("results") or {}).get("runs", []) if entry["state"] == "ok" else []:
            kit.setdefault(run["path"], run["sha256"])
    lines = ["> 本附件 / this attachment: supporting evidence from the kit's own files, run by the kit's suite "
             "(implementation coverage, the API-call proof, per-case log). These are the kit's files, not the "
             "PR's: the PR's files were run whole in DEST by `verify` (【功能验证】).", ">"]
    lines += [f"> - kit file {code(path)}: SHA-256 {code(sha)}" for path, sha in sorted(kit.items())] or [
        "> - no kit suite results"]
    record = (verify or {}).get("record")
    if record:
        lines += [">", f"> The PR's files (verify, DEST {code(record['dest']['head'][:12])}):"]
        lines += [f"> - PR file {code(item['path'])}: SHA-256 {code(item['sha256'])}" for item in record["files"]]
    rows = ((verify or {}).get("device_gaps") or {}).get("rows")
    if rows:  # every one: the description may cut its table to fit
        lines += ["", "## 设备缺口 / every device gap verify's runs of the PR's files met", "",
                  gaps.render(rows, limit=len(rows))]
    return lines + [""]


def write_evidence(doc, out_dir, name, verify=None):
    """Write ``name`` (``evidence-BRANCH[--KEY].md``: the report's Markdown: per-case log, coverage tables,
    labelled as the kit's own files by :func:`kit_files_lines`) and ``.json``; return the Markdown's path."""
    base = os.path.join(out_dir, os.path.splitext(name)[0])
    write_text_atomic(base + ".json", json.dumps(doc, indent=1, ensure_ascii=False, default=str) + "\n")
    write_text_atomic(base + ".md", "\n".join(kit_files_lines(doc, verify)) + "\n" + report_render(doc))
    return base + ".md"


def upstream_lines(doc):
    return [line for upstream in doc["upstream"] for line in upstream_section(upstream)]


def coverage_lines(doc, apis):
    """One line per API and torch of the branch (master: two torches, two lines), from the results'
    ``coverage`` block (:mod:`torch_npu_testing.suite.coverage`); ``not measured`` with the reason otherwise."""
    try:
        from ..suite import coverage
    except ImportError as exc:  # the coverage helper is not in this kit
        coverage = None
        missing = f"not measured: implementation coverage is not available in this kit ({exc})"
    lines = []
    for api in apis:
        for entry in doc["envs"]:
            torch = table.env_torch(entry["name"])
            if coverage is None:
                text = missing
            elif entry["state"] != "ok":
                text = f"not measured: no results for env {entry['name']}"
            else:
                block = coverage.coverage_of(entry["results"]) or {}
                item = (block.get("apis") or {}).get(api["name"])
                torch = str(block.get("torch_version") or torch).split("+")[0]
                why = block.get("unavailable") or "the suite ran without coverage (--no-coverage, or a kit before it)"
                text = coverage.figures_text(item) if item else f"not measured: {why}"
            lines.append(f"- `{api['name']}`: {text} on torch {torch}" if text.startswith("lines ") else
                         f"- `{api['name']}` on torch {torch}: {text}")
    return lines
