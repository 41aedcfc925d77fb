# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Device strength: each API's ``device`` block in mutate's JSON, its line and its survivors.

An API's ``device`` block (format ``torch_npu_testing.mutate/3``) is either

- ``{"status": "scored", "device": TYPE, "ops": {op: {"calls", "features"}}, "strength": ...,
  "mutants": [...]}``: the aten overloads the API dispatched on the device within its in-scope calls, and
  one record per device mutant (``id`` ``API:op:code``, ``op``, ``code`` ``op:fault``, ``fault``,
  ``description``, ``outcome``, ``killed_by``, ``calls``, ``changed``, ``no_effect``, ``not_applicable``,
  ``explained``, ``wall_s``), counted as generic mutants are (:mod:`.score`); or
- ``{"status": "not applicable", "device": TYPE, "reason": ...}``: the API dispatched no device op of its
  own (a config patch, a grad-mode switch), so no device fault can act: stated, not a score; or
- ``{"status": "not reached", "device": TYPE, "reason": ...}``: the tests never called the API in scope.

The line is the generic strength line (:func:`.score.strength_line`, reach included) after ``device``, with
the number of device ops: ``device strength API: killed K of E (...); reach: ...; O device ops``.
"""
from . import score

NOT_APPLICABLE_REASON = "no device op of its own within its {calls} in-scope call(s)"
NOT_REACHED_REASON = "the tests never call it in scope"


def mutant_record(mutant, report, docstring, single_api):
    outcome, killed_by = score.outcome_of(report, mutant.api)
    tally = report.get("tallies", {}).get(mutant.api, {})
    code = f"{mutant.op}:{mutant.fault.code}"
    record = {"id": mutant.id, "op": mutant.op, "code": code, "fault": mutant.fault.code,
              "description": mutant.fault.description, "outcome": outcome, "killed_by": killed_by,
              "calls": tally.get("calls", 0), "changed": tally.get("changed", 0),
              "no_effect": tally.get("no effect", 0), "not_applicable": tally.get("not applicable", 0),
              "explained": None, "wall_s": report.get("wall_s")}
    if outcome == "survived":
        record["explained"] = score.explanation(docstring, mutant.id, code, single_api)
    return record


def block(api, device, baseline, records, timeout_kills=False):
    """The ``device`` block of one API (see the module docstring)."""
    ops = baseline.get("device", {}).get("ops", {}).get(api, {})
    if not ops:
        calls = baseline.get("api_calls", {}).get(api, 0)
        if not calls:
            return {"status": "not reached", "device": device, "reason": NOT_REACHED_REASON}
        return {"status": "not applicable", "device": device, "reason": NOT_APPLICABLE_REASON.format(calls=calls)}
    mine = [record for record in records if record["id"].startswith(api + ":")]
    return {"status": "scored", "device": device, "ops": ops, "strength": score.strength(mine, timeout_kills),
            "mutants": mine}


def line(api, device_block):
    if device_block["status"] != "scored":
        return f"device strength {api}: {device_block['status']} on {device_block['device']} ({device_block['reason']})"
    return f"device {score.strength_line(api, device_block['strength'])}; {len(device_block['ops'])} device ops"


def lines(api, device_block):
    """The device strength line, then its survivors (explained ones with their sentence)."""
    found = [line(api, device_block)]
    for record in device_block.get("mutants", []):
        if record["outcome"] == "survived":
            why = f" (explained: {record['explained']})" if record.get("explained") else ""
            found.append(f"  survived: {record['code']}: {record['description']}{why}")
    return found
