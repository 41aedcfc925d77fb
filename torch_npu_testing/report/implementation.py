# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Implementation coverage in the evidence report: per API and env, the lines and branches of the API's
torch code its test file reached, and the lines it did not (see :mod:`torch_npu_testing.suite.coverage`).

The figures inform; they never fail the report. An env whose suite ran with ``--no-coverage`` (or
without coverage.py) shows "not measured" with the reason.
"""
from ..suite.coverage import api_line, coverage_of, figures_text
from .markdown import cell, code

MAX_RANGES = 80  # unreached ranges listed per API and env in the Markdown; all of them are in report.json
NOT_RUN_TEXT = "not measured: the suite ran with --no-coverage (or wrote no coverage)"


def _row(name, title, entry, torch_version):
    return {"name": name, "title": title or name, "status": entry.get("status"), "text": figures_text(entry),
            "line": api_line(entry, torch_version), "torch": torch_version, "lines": entry.get("lines"),
            "branches": entry.get("branches"), "unreached": entry.get("unreached") or [],
            "partial_branches": entry.get("partial_branches") or [], "regions": entry.get("regions") or []}


def implementation_coverage(data, manifest):
    """Rows in table order (then any other API the results name): ``name``, ``title``, ``status``, ``text``
    (``lines 40/52, branches 10/16``), ``line`` (the same ``on torch 2.12.0``), ``torch``, ``lines``,
    ``branches``, ``unreached``, ``partial_branches``, ``regions``."""
    block = coverage_of(data)
    torch_version = (block or {}).get("torch_version") or ((data.get("probe") or {}).get("torch") or {}).get(
        "version")
    found = (block or {}).get("apis") if isinstance((block or {}).get("apis"), dict) else {}
    titles = {api["name"]: api.get("title") for api in manifest}
    names = list(titles) + [name for name in found if name not in titles]
    rows = []
    for name in names:
        if block is None:
            entry = {"status": "not_measured", "note": NOT_RUN_TEXT[len("not measured: "):]}
        elif block.get("unavailable"):
            entry = {"status": "not_measured", "note": block["unavailable"]}
        else:
            entry = found.get(name) or {"status": "not_measured", "note": "not in the table this env ran with"}
        rows.append(_row(name, titles.get(name) or entry.get("title"), entry, torch_version))
    return rows


def implementation_summary(doc):
    """A table API x env of the figures, for the top of the report (no table when no env has rows)."""
    envs = [entry for entry in doc["envs"] if entry.get("implementation_coverage")]
    if not envs:
        return []
    lines = ["Implementation coverage (lines and branches of each API's torch code that its test file reached):",
             "", "| API | " + " | ".join(code(entry["name"]) for entry in envs) + " |",
             "| --- |" + " --- |" * len(envs)]
    names = []
    for entry in envs:
        names += [row["name"] for row in entry["implementation_coverage"] if row["name"] not in names]
    for name in names:
        cells, title = [], name
        for entry in envs:
            row = next((r for r in entry["implementation_coverage"] if r["name"] == name), None)
            cells.append(cell(row["text"]) if row else "—")
            title = row["title"] if row else title
        lines.append(f"| {code(title)} | " + " | ".join(cells) + " |")
    return lines + [""]


def _unreached_lines(row):
    lines = []
    for item in row["unreached"][:MAX_RANGES]:
        span = str(item["start"]) if item["start"] == item["end"] else f"{item['start']}-{item['end']}"
        lines.append(f"  - {code(item['file'])} {span} in {code(item['name'])}: {code(item['source'])}")
    extra = len(row["unreached"]) - MAX_RANGES
    if extra > 0:
        lines.append(f"  - ... {extra} more range(s) in report.json")
    for item in row["partial_branches"][:MAX_RANGES]:
        targets = ", ".join(str(to) for to in item["missing_to"])
        lines.append(f"  - branch never taken: {code(item['file'])} {item['line']} in {code(item['name'])} "
                     f"(to {targets}): {code(item['source'])}")
    return lines


def implementation_section(entry):
    """One env's figures per API, then per API the line ranges and branches no test reached."""
    rows = entry.get("implementation_coverage") or []
    lines = ["#### Implementation coverage (coverage.py, lines and branches)", ""]
    if not rows:
        return lines + ["Not recorded.", ""]
    lines += ["Counted inside the functions and classes the table names for each API, in this env's torch, "
              "from that API's own test file only.", "", "| API | figures | regions not in this torch |",
              "| --- | --- | --- |"]
    for row in rows:
        missing = [f"{region['file']}: {', '.join(region['missing'])}" for region in row["regions"]
                   if region.get("missing")]
        lines.append(f"| {code(row['title'])} | {cell(row['text'])} | {cell('; '.join(missing) or '—')} |")
    lines.append("")
    for row in rows:
        if row["unreached"] or row["partial_branches"]:
            lines += [f"- {code(row['title'])}: not reached by its tests ({row['text']})"] + _unreached_lines(row)
    return lines + [""]
