# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""The device gaps a run met, as one short table: what verify's record and pr's description carry.

Two sources: the skip reasons of a run's cases (the files' helper, ``runtime/carried_limits.py``: "device
limit, vehicle WHAT: MESSAGE", "device limit, documented for the API, WHAT: MESSAGE"; an undocumented API
refusal is a failure naming "Ascend's docs do not say so"), read by :func:`from_reasons`; and the JSON lines
the simulated NPU with limits on appends to ``$TORCH_NPU_TESTING_GAPS`` (``{"op", "dtype", "message"}``),
read by :func:`read`. :func:`merged` keeps each gap once, the files' rows first (they say vehicle or API,
documented or not); :func:`render` gives the Markdown table.
"""
import json
import re

REASON = re.compile(r"^device limit, (?:(vehicle) |documented for the (API), )(.*?): (.*)$")
UNDOCUMENTED = re.compile(r"^(.*?): the device refuses the API under test and Ascend's docs do not say so: (.*)$")

VARIABLE = "TORCH_NPU_TESTING_GAPS"
HEADER = ["| kind | what | documented | device's message |", "| --- | --- | --- | --- |"]


def from_reasons(texts):
    """Rows from skip reasons and failure messages of a run's cases (others are left out)."""
    rows = []
    for text in texts:
        found, failed = REASON.match(text or ""), UNDOCUMENTED.search(text or "")
        if found:
            vehicle, _, what, message = found.groups()
            rows.append({"kind": "vehicle" if vehicle else "API", "what": what,
                         "documented": None if vehicle else True, "message": message})
        elif failed:
            rows.append({"kind": "API", "what": failed.group(1), "documented": False, "message": failed.group(2)})
    return rows


def merged(*groups):
    """The rows once each (kind, what, message), files' rows before the device's own."""
    seen, rows = set(), []
    for row in sorted((row for group in groups for row in group), key=lambda row: row["kind"] == "device"):
        key = (row["kind"], row["what"], row["message"]) if row["kind"] != "device" else row["message"]
        said = {r["message"] for r in rows if r["kind"] != "device"}
        if key not in seen and not (row["kind"] == "device" and row["message"] in said):
            seen.add(key)
            rows.append(row)
    return rows


def read(path):
    """Rows ``{"kind": "device", "what": "op dtype", "documented": None, "message"}`` from the simulated NPU's
    JSON lines at ``path`` (absent: none); a line that is not a JSON object is skipped."""
    try:
        with open(path, encoding="utf-8") as handle:
            lines = handle.read().splitlines()
    except FileNotFoundError:
        return []
    rows = []
    for line in lines:
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if isinstance(item, dict):
            rows.append({"kind": "device", "what": f"{item.get('op')} {item.get('dtype')}", "documented": None,
                         "message": item.get("message")})
    return merged(rows)


def render(rows, limit=30):
    """The Markdown table of ``rows`` (at most ``limit``, then a line saying how many more)."""
    if not rows:
        return "No device gap met."
    lines = list(HEADER)
    for row in rows[:limit]:
        documented = "-" if row["documented"] is None else ("yes" if row["documented"] else "no")
        message = str(row["message"]).replace("|", "\\|")
        lines.append(f"| {row['kind']} | {row['what']} | {documented} | {message} |")
    if len(rows) > limit:
        lines.append(f"\n{len(rows) - limit} more gaps in the record.")
    return "\n".join(lines)
