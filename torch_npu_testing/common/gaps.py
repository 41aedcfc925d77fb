# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""The device gaps a run met, as one short table: what verify's record and pr's description carry.

Two sources: the skip reasons of a run's cases (the files' helper, ``runtime/carried_limits.py``: "device
limit, vehicle WHAT: MESSAGE", "device limit, documented for the API, WHAT: MESSAGE"; an undocumented API
refusal is a failure naming "Ascend's docs do not say so"), read by :func:`from_reasons` and, counted per
case, :func:`from_cases`; and the JSON lines the simulated NPU with limits on appends to
``$TORCH_NPU_TESTING_GAPS`` (``{"op", "dtype", "message"}``), read by :func:`read` (a line that is not such
an object is a :class:`GapsFileError` naming the file and line: a gap list is never silently short).
:func:`merged` keeps each gap once, the files' rows first (they say vehicle or API, documented or not), the
device's own refusals only where no file row carries the same message; :func:`render` gives the Markdown
table. :func:`counts` gives, per file, the cases skipped for a device limit beside the cases that ran.

A row: ``kind`` (vehicle / API / device), ``what`` (the case's dtype or layout, or the device's op and
dtype), ``documented`` (True / False for the API; None: not asked), ``message`` (the device's), ``cases``
(how many cases met it; None for the device's own lines) and ``files`` (where).
"""
import json
import re

REASON = re.compile(r"^device limit, (?:(vehicle) |documented for the (API), )(.*?): (.*)$")
UNDOCUMENTED = re.compile(r"^(?:[\w.]+: )?(.*?): the device refuses the API under test and Ascend's docs do not "
                          r"say so: (.*)$")
LIMIT_SKIP = "device limit, "

VARIABLE = "TORCH_NPU_TESTING_GAPS"
HEADER = ["| kind | what | documented | device's message | cases |", "| --- | --- | --- | --- | --- |"]
NONE_MET = "No device gap met."
MESSAGE_CHARS = 200


class GapsFileError(ValueError):
    """A gaps JSON-lines file holds a line that is not a gap: one line saying which file and line."""


def _row(kind, what, documented, message, cases=None, files=()):
    return {"kind": kind, "what": what, "documented": documented, "message": message, "cases": cases,
            "files": sorted(set(files))}


def from_reasons(texts, file=None):
    """Rows from skip reasons and failure messages of a run's cases (others are left out); one row per text."""
    rows = []
    for text in texts:
        found, failed = REASON.match(text or ""), UNDOCUMENTED.match(text or "")
        if found:
            vehicle, _, what, message = found.groups()
            rows.append(_row("vehicle" if vehicle else "API", what, None if vehicle else True, message, 1,
                             [file] if file else []))
        elif failed:
            rows.append(_row("API", failed.group(1), False, failed.group(2), 1, [file] if file else []))
    return rows


def _field(case, name):
    return case.get(name) if isinstance(case, dict) else getattr(case, name, None)


def from_cases(cases):
    """The rows of ``cases`` (results-model dicts or :class:`~.results.Case`), once each, counted."""
    rows = []
    for case in cases:
        rows += from_reasons([_field(case, "reason")], _field(case, "file"))
    return merged(rows)


def merged(*groups):
    """The rows once each (kind, what, message; a device row by its message), files' rows before the device's
    own, which are left out where a file's row says the same message; ``cases`` summed, ``files`` joined."""
    kept = {}
    for row in sorted((row for group in groups for row in group), key=lambda row: row["kind"] == "device"):
        key = (row["kind"], row["what"], row["message"]) if row["kind"] != "device" else ("device", row["message"])
        if row["kind"] == "device" and any(k[0] != "device" and k[2] == row["message"] for k in kept):
            continue
        if key not in kept:
            kept[key] = dict(row, files=list(row.get("files") or []))
            continue
        into = kept[key]
        if row.get("cases") is not None:
            into["cases"] = (into.get("cases") or 0) + row["cases"]
        into["files"] = sorted(set(into["files"]) | set(row.get("files") or []))
    return list(kept.values())


def _device_row(item, path, number):
    if not isinstance(item, dict) or not {"op", "dtype", "message"} <= set(item):
        raise GapsFileError(f"{path}, line {number}: not a gap (a JSON object with op, dtype and message)")
    return _row("device", f"{item['op']} {item['dtype']}", None, item["message"])


def read(path):
    """Rows ``{"kind": "device", "what": "op dtype", "documented": None, "message", ...}`` from the simulated
    NPU's JSON lines at ``path`` (absent: none; blank lines ignored); :class:`GapsFileError` on any other line."""
    try:
        with open(path, encoding="utf-8") as handle:
            lines = handle.read().splitlines()
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError) as exc:
        raise GapsFileError(f"{path}: cannot be read ({exc})") from None
    rows = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except ValueError:
            raise GapsFileError(f"{path}, line {number}: not JSON ({line[:60]!r})") from None
        rows.append(_device_row(item, path, number))
    return merged(rows)


def counts(cases):
    """``{"ran", "device_limit", "other_skips"}`` of one file's cases: those that ran (every outcome but a
    skip), those skipped for a device limit (a vehicle or a documented API limit), and the other skips."""
    skipped = [_field(case, "reason") or "" for case in cases if str(_field(case, "outcome")) == "skipped"]
    limit = sum(1 for reason in skipped if reason.startswith(LIMIT_SKIP))
    return {"ran": len(cases) - len(skipped), "device_limit": limit, "other_skips": len(skipped) - limit}


def counts_text(numbers):
    """``12 ran, 3 skipped for a device limit, 1 other skip`` (other skips left out when none)."""
    other = numbers["other_skips"]
    return (f"{numbers['ran']} ran, {numbers['device_limit']} skipped for a device limit"
            + (f", {other} other skip{'s' if other != 1 else ''}" if other else ""))


def _cell(text, chars=MESSAGE_CHARS):
    text = " ".join(str(text).split()).replace("|", "\\|")
    return text if len(text) <= chars else text[:chars - 3] + "..."


def grouped(rows):
    """The rows that say the same (kind, documented, message) as one: their ``what`` joined by ``; ``, their
    cases summed (a device densifying eleven sparse layouts is one line of the table; the record keeps all)."""
    groups = {}
    for row in rows:
        key = (row["kind"], row["documented"], row["message"])
        if key not in groups:
            groups[key] = dict(row)
            continue
        into = groups[key]
        into["what"] = f"{into['what']}; {row['what']}"
        if row.get("cases") is not None:
            into["cases"] = (into.get("cases") or 0) + row["cases"]
    return list(groups.values())


def render(rows, limit=30):
    """The Markdown table of ``rows`` (:func:`grouped`; at most ``limit``, then a line saying how many more)."""
    if not rows:
        return NONE_MET
    lines, rows = list(HEADER), grouped(rows)
    for row in rows[:limit]:
        documented = "-" if row["documented"] is None else ("yes" if row["documented"] else "no")
        cases = "-" if row.get("cases") is None else row["cases"]
        lines.append(f"| {row['kind']} | {_cell(row['what'], 160)} | {documented} | {_cell(row['message'])} | "
                     f"{cases} |")
    if len(rows) > limit:
        lines.append(f"\n{len(rows) - limit} more gaps in the record.")
    return "\n".join(lines)
