# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""The device gaps a run met, as one short table: what verify's record and pr's description carry.

A run on a device with ``$TORCH_NPU_TESTING_GAPS`` set appends JSON lines there: the test files' helper
(``runtime/carried_limits.py``: ``{"kind": "vehicle" | "API", "what", "documented", "message"}``) and the
simulated NPU with limits on (``{"op", "dtype", "message"}``). :func:`read` gives the rows, the same gap once,
the files' rows first (they say vehicle or API, documented or not); :func:`render` the Markdown table.
"""
import json

VARIABLE = "TORCH_NPU_TESTING_GAPS"
HEADER = ["| kind | what | documented | device's message |", "| --- | --- | --- | --- |"]


def read(path):
    """``[{"kind", "what", "documented", "message"}]`` from the JSON lines at ``path`` (absent: none); a line
    that is not a JSON object is skipped."""
    try:
        with open(path, encoding="utf-8") as handle:
            lines = handle.read().splitlines()
    except FileNotFoundError:
        return []
    rows, seen = [], set()
    for line in lines:
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if not isinstance(item, dict):
            continue
        row = {"kind": item.get("kind") or "device", "what": item.get("what") or f"{item.get('op')} "
               f"{item.get('dtype')}".strip(), "documented": item.get("documented"), "message": item.get("message")}
        if row["message"] not in seen or row["kind"] != "device":
            rows.append(row)
        seen.add(row["message"])
    files = [row for row in rows if row["kind"] != "device"]
    said = {row["message"] for row in files}
    return files + [row for row in rows if row["kind"] == "device" and row["message"] not in said]


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
