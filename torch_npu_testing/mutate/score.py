# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Honest counting: one outcome per mutant, and the strength of the file per API.

Outcomes (:data:`OUTCOMES`):

- *killed*: the fault changed at least one call and a test failed; the first failing test is named
  (a child that died counts as killed by its death);
- *survived*: the fault changed calls and every test passed; *explained* when FILE's module docstring
  names the mutant (its id ``API:code``, or its code alone when the file has one API): an equivalent
  mutant, still in E;
- *timeout*: the child ran past ``--timeout``; apart from the kills, and in K and E only with
  ``--timeout-kills``;
- *no effect*: a result fault acted, and every faulted result equalled the real one on its call;
- *not applicable*: in-scope calls happened, but the fault could not apply to any;
- *not reached*: the fault never acted (the API was not called in scope, or the condition never arose).

Strength = K / E with E = killed + survived. *No effect* and *not reached* are listed, never survived:
they show where the file never looks.

Reach = K / (E + R), R the faults *not reached*: a catalogue fault no test reaches counts against the file
here, so deleting tests lowers it (it never lowers the strength). *No effect* and *not applicable* are in
neither figure.
"""
import re

OUTCOMES = ("killed", "survived", "timeout", "no effect", "not applicable", "not reached")


def outcome_of(report, api):
    """``(outcome, killed_by)`` of one mutant's child report for its API."""
    if report.get("timed_out"):
        return "timeout", None
    if report.get("died"):
        return "killed", f"(the child died: {report['died']})"
    if report.get("error"):
        return "killed", "(the child raised: " + report["error"].strip().splitlines()[-1] + ")"
    tally = report["tallies"].get(api, {})
    if tally.get("changed", 0):
        return ("killed", report["first_failure"]) if report.get("first_failure") else ("survived", None)
    if tally.get("no effect", 0):
        return "no effect", None
    if tally.get("not applicable", 0):
        return "not applicable", None
    return "not reached", None


def explanation(docstring, mutant_id, code, single_api):
    """The sentence of ``docstring`` that names the mutant, or None."""
    text = " ".join((docstring or "").split())
    keys = [mutant_id] + ([code] if single_api else [])
    for sentence in re.split(r"(?<=[.;])\s+", text):
        if any(re.search(r"(?<![\w:+-])" + re.escape(key) + r"(?![\w:+-])", sentence) for key in keys):
            return sentence
    return None


def strength(mutants, timeout_kills=False):
    """Counts of one API's mutant records (dicts with ``outcome``): killed, E, and each outcome."""
    counts = {outcome: sum(1 for m in mutants if m["outcome"] == outcome) for outcome in OUTCOMES}
    killed = counts["killed"] + (counts["timeout"] if timeout_kills else 0)
    scored = counts["killed"] + counts["survived"] + (counts["timeout"] if timeout_kills else 0)
    reach = scored + counts["not reached"]
    return {"killed": killed, "scored": scored, "counts": counts,
            "percent": round(100.0 * killed / scored, 1) if scored else None,
            "reach_scored": reach, "reach_percent": round(100.0 * killed / reach, 1) if reach else None,
            "survivors": [m["id"] for m in mutants if m["outcome"] == "survived"],
            "explained": [m["id"] for m in mutants if m["outcome"] == "survived" and m.get("explained")]}


def reach_scored(block):
    """E + R of a strength block (a ``mutate/1`` block has no ``reach_scored``: from its counts)."""
    return block.get("reach_scored", block["scored"] + block["counts"]["not reached"])


def strength_line(api, block):
    """``strength torch.x.y: killed K of E (S survived, T timeouts, N not reached, M no effect, A not applicable);
    reach: killed K of E + R``."""
    counts = block["counts"]
    return (f"strength {api}: killed {block['killed']} of {block['scored']} ({counts['survived']} survived, "
            f"{counts['timeout']} timeouts, {counts['not reached']} not reached, {counts['no effect']} no effect, "
            f"{counts['not applicable']} not applicable); reach: killed {block['killed']} of {reach_scored(block)} "
            f"({block['scored']} effective + {counts['not reached']} not reached)")


def total_percent(blocks, reach=False):
    """K / E over ``blocks`` (with ``reach``: K / (E + R)), in percent; None when the divisor is 0."""
    killed = sum(block["killed"] for block in blocks)
    scored = sum(reach_scored(block) if reach else block["scored"] for block in blocks)
    return round(100.0 * killed / scored, 1) if scored else None
