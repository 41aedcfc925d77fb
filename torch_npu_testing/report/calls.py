# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Which test called each target API (``suite --api-calls``): judged per env, and rendered for the report.

An API counts as exercised in an env only when some test calls it directly; the rows are the env entry's
``coverage`` list (what the PR checklist reads).
"""
from ..common import table
from .markdown import cell, code


def api_coverage(data, manifest):
    """Per target API: ``{"name", "task", "ascend_task_id", "state", "text", "direct", "indirect", ...}``.

    ``state`` is ``called`` (a test called it directly), ``absent`` (not in this torch, as the manifest
    expects), or a failure: ``not_called``, ``indirect_only``, ``absent_unexpected``, ``error``,
    ``not_measured``.
    """
    calls = data.get("api_calls")
    details = data.get("api_call_details") or {}
    detail_apis = details.get("apis") if isinstance(details.get("apis"), dict) else {}
    names = [api["name"] for api in manifest]
    names += [name for name in list(detail_apis) + list(calls or {}) if name not in names]
    by_name = {api["name"]: api for api in manifest}
    torch_version = (data.get("probe", {}).get("torch") or {}).get("version")
    files_of = {}
    for run in data.get("runs", []):
        for case in run.get("cases", []):
            files_of.setdefault(case.get("id"), run.get("path"))
    rows = []
    for name in names:
        info, meta = detail_apis.get(name, {}), by_name.get(name, {})
        row = {"name": name, "task": info.get("task") or meta.get("task") or name,
               "ascend_task_id": info.get("ascend_task_id", meta.get("ascend_task_id")),
               "kind": info.get("kind"), "defined_at": info.get("defined_at"),
               "direct": [], "indirect": [], "threads": {}}
        if calls is None:
            row.update(state="not_measured", text="not measured: the suite ran without --api-calls")
        elif name not in calls and name not in detail_apis:
            row.update(state="not_measured", text="not measured: not in the manifest this env ran with")
        elif info.get("status") in ("absent", "error"):
            row.update(_unavailable(info, torch_version))
        else:
            _fill_calls(row, info.get("tests"), calls.get(name), files_of)
        rows.append(row)
    return rows


def _unavailable(info, torch_version):
    if info.get("status") == "error":
        return {"state": "error", "text": f"could not be watched: {info.get('reason')}"}
    since = info.get("since")
    if info.get("expected_absent"):
        return {"state": "absent", "text": f"absent in this torch ({torch_version}; added in {since})"}
    return {"state": "absent_unexpected",
            "text": f"absent in torch {torch_version}" + (f", expected since {since}" if since else "")
            + f": {info.get('reason')}"}


def _fill_calls(row, tests, test_ids, files_of):
    """Split the tests that called a present API into direct and indirect callers; set the row's state."""
    if not isinstance(tests, dict):  # only the plain mapping was recorded: no direct / indirect split
        tests = {test_id: {"direct": 1} for test_id in test_ids or []}
    for test_id, record in tests.items():
        for kind in ("direct", "indirect"):
            if record.get(kind):
                row[kind].append({"test": test_id, "file": files_of.get(test_id), "calls": record[kind],
                                  "sites": record.get(kind + "_sites") or []})
                break
        if record.get("threads"):
            row["threads"][test_id] = record["threads"]
    if row["direct"]:
        row.update(state="called", text=f"called by {len(row['direct'])} test(s)")
    elif row["indirect"]:
        row.update(state="indirect_only", text="no test calls it explicitly; only torch called it on a test's behalf")
    else:
        row.update(state="not_called", text="called by no test")


def _call_item(call):
    """``- `Class.test` at lines 12, 40`` (sites in the test's own file shortened to their line)."""
    prefix = (call.get("file") or "\0") + ":"
    lines = [site[len(prefix):] for site in call["sites"] if site.startswith(prefix) and site[len(prefix):].isdigit()]
    others = [site for site in call["sites"] if not (site.startswith(prefix) and site[len(prefix):].isdigit())]
    where = ([f"line{'s' if len(lines) > 1 else ''} {', '.join(lines)}"] if lines else []) + others
    count = f"{call['calls']} call{'s' if call.get('calls', 1) != 1 else ''}" if call.get("calls") else ""
    text = code(call["test"]) + (f" ({count})" if count else "")
    return f"  - {text}" + (": " + "; ".join(where) if where else "")


def _calls_by_file(calls, label):
    lines, files = [], []
    for call in calls:
        if call.get("file") not in files:
            files.append(call.get("file"))
    for path in files:
        lines.append(f"  - {label}" + (f" in {code(path)}:" if path else ":"))
        lines += ["  " + _call_item(call) for call in calls if call.get("file") == path]
    return lines


def _task_text(row):
    task = "the API name" if row["task"] == row["name"] else row["task"]
    ascend = table.task_label(row.get("ascend_task_id"))
    return f"{task}; Ascend task {ascend}" if ascend else f"{task}; Ascend task id not set"


def calls_section(entry):
    details = entry["results"].get("api_call_details") or {}
    lines = ["#### API coverage (measured while the tests ran)", ""]
    if details.get("mechanism"):
        lines += [f"Calls recorded with {details['mechanism']} while each test ran. A call is explicit when the "
                  "frame calling the API is outside torch; \"only through torch\" means torch called it on the "
                  "test's behalf (e.g. `torch.vmap` calling `_add_batch_dim`), which alone does not count.", ""]
    lines += ["| API | task | verdict | tests calling it explicitly | only through torch |",
              "| --- | --- | --- | --- | --- |"]
    for row in entry["coverage"]:
        verdict = {"called": "ok", "absent": row["text"] + " — not a failure"}.get(
            row["state"], f"**FAIL: {row['text']}**")
        lines.append(f"| {code(row['name'])} | {cell(_task_text(row))} | {cell(verdict)} | "
                     f"{len(row['direct'])} | {len(row['indirect'])} |")
    lines.append("")
    for row in entry["coverage"]:
        if not (row["direct"] or row["indirect"]):
            continue
        where = f" ({row['kind']}: {row['defined_at']})" if row.get("defined_at") else ""
        lines.append(f"- {code(row['name'])}{where}")
        lines += _calls_by_file(row["direct"], "called explicitly")
        lines += _calls_by_file(row["indirect"], "only through torch")
        for test_id, names in row["threads"].items():
            lines.append(f"  - {code(test_id)} called it from other threads: {', '.join(names)}")
    unmeasured = details.get("unmeasured_tests") or []
    if unmeasured:
        lines += ["", f"Not measured (another profiler was active): {', '.join(code(t) for t in unmeasured)}"]
    for error in details.get("recorder_errors") or []:
        lines += ["", f"Recorder error (calls may be missing): {cell(error)}"]
    return lines + [""]
