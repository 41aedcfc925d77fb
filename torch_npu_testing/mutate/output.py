# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""What ``mutate`` prints and writes: progress lines, the per-API table, strength lines, the JSON.

The JSON (``--json``) is a document of format :data:`FORMAT`: ``file``, ``sha256``, ``torch_version``,
``mode`` (fork / fresh) with ``fresh_reasons``, ``jobs``, ``timeout_s``, ``timing`` (``parent_import_s``,
``baseline_test_s``, ``wall_s``, ``target_s``), and per API in ``apis``: ``status`` (present / absent with
``reason``), ``kind``, ``baseline_calls``, ``strength`` (:func:`score.strength`) and ``mutants`` (``id``,
``code``, ``description``, ``outcome``, ``killed_by``, ``calls``, ``changed``, ``no_effect``,
``not_applicable``, ``explained``, ``wall_s``). ``report`` and ``pr`` read it (report/strength.py).

Format 2 adds: ``percent`` beside ``reach_percent`` (killed of effective + not reached, over all APIs), per
API ``strength.reach_scored`` / ``strength.reach_percent`` and ``api_kind`` (:mod:`..task.apikind`), and
``passing_only`` (``--passing-only`` given), ``tests`` (FILE's tests) and ``left_out`` (``[test, reason]``
per failing test the run left out). Readers accept :data:`READABLE_FORMATS`: a format-1 document's reach is
computed from its counts (:func:`score.reach_scored`).

Format 3 adds, with ``--device``, a ``device`` block per API (:mod:`.device_output`) and a top-level
``device`` (type, ``baseline_test_s``, ``mutants``, the ``vehicles``' dispatch counts, ``percent``); without
it, ``device`` is null. ``only`` (the ``--only`` globs, ``[]`` without) and ``only_left_out`` (``generic``
and, with ``--device``, ``device``: the mutants they left out; the top-level ``device`` then has the device
``catalogue``'s size beside the ``mutants`` run) say when a document measures a part of the catalogue.
"""
import sys

from .score import strength_line

FORMAT = "torch_npu_testing.mutate/3"
READABLE_FORMATS = ("torch_npu_testing.mutate/1", "torch_npu_testing.mutate/2", FORMAT)
NAMED_AT_MOST = 20


class Progress:
    """One stderr line per finished mutant: n of N, outcome, elapsed, time left."""

    def __init__(self, total, started, quiet=False, stream=None):
        self.total, self.started, self.quiet = total, started, quiet
        self.stream = stream or sys.stderr
        self.done = 0

    def line(self, mutant_id, outcome, killed_by, now):
        self.done += 1
        if self.quiet:
            return
        elapsed = now - self.started
        left = elapsed / self.done * (self.total - self.done)
        detail = f" by {killed_by}" if killed_by else ""
        print(f"mutate: [{self.done}/{self.total}] {mutant_id}: {outcome}{detail} "
              f"({elapsed:.1f}s elapsed, ~{left:.0f}s left)", file=self.stream, flush=True)


def _fired(record):
    return record["changed"] + record["no_effect"]


def _effect(record):
    if record["changed"]:
        return f"changed {record['changed']}"
    if record["no_effect"]:
        return "none"
    return f"n/a {record['not_applicable']}" if record["not_applicable"] else "-"


def table(api_block):
    """The per-API table: mutant, in-scope calls of the API, calls the fault fired on (the API's or those of
    an object it returned), effect, outcome, killing test."""
    rows = [("mutant", "calls", "fired", "effect", "outcome", "killing test")]
    for record in api_block["mutants"]:
        outcome = record["outcome"] + (" (explained)" if record.get("explained") else "")
        rows.append((record["code"], str(record["calls"]), str(_fired(record)), _effect(record), outcome,
                     record.get("killed_by") or ""))
    widths = [max(len(row[column]) for row in rows) for column in range(5)]
    lines = [f"{api_block['name']} ({api_block['kind']}):"]
    for row in rows:
        lines.append("  " + "  ".join(cell.ljust(width) for cell, width in zip(row, widths)) + "  " + row[5])
    return "\n".join(line.rstrip() for line in lines)


def api_lines(api_block):
    """The strength line of one API, then its survivors (explained ones with their sentence)."""
    if api_block["status"] != "present":
        return [f"strength {api_block['name']}: absent in this torch ({api_block['reason']})"]
    lines = [strength_line(api_block["name"], api_block["strength"])]
    for record in api_block["mutants"]:
        if record["outcome"] == "survived":
            why = f" (explained: {record['explained']})" if record.get("explained") else ""
            lines.append(f"  survived: {record['code']}: {record['description']}{why}")
    return lines


def timing_line(timing, count, jobs):
    return (f"mutate: {count} mutants in {timing['wall_s']:.1f}s; target 1.25 x "
            f"(import {timing['parent_import_s']:.1f}s + {count} x {timing['baseline_test_s']:.2f}s / {jobs})"
            f" = {timing['target_s']:.1f}s")


def _names(tests):
    shown = ", ".join(tests[:NAMED_AT_MOST])
    return shown + (f" and {len(tests) - NAMED_AT_MOST} more" if len(tests) > NAMED_AT_MOST else "")


def refusal(baseline, test_count, how, failing, first):
    """The one line for a failing baseline: the failing tests, then the ways on. ``how`` and ``failing`` are
    :func:`session.failing_tests`'s; ``first`` is the first failure in words."""
    head = "the baseline fails (no mutant applied): "
    if how not in ("some", "every"):
        return head + first + "; --passing-only cannot leave this out (it is no failing test): mend it first"
    reasons = dict((test, reason) for test, reason in baseline.get("failures", []))
    detail = f" ({reasons[failing[0]]})" if reasons.get(failing[0]) else ""
    line = (f"{head}{len(failing)} of {test_count} tests fail: {failing[0]}{detail}"
            + (f", {_names(failing[1:])}" if failing[1:] else ""))
    if how == "every":
        return line + "; write them so they pass (--passing-only needs at least one passing test)"
    return line + ("; write them so they pass, or measure the passing tests only with --passing-only "
                   "(the output then names the tests it left out)")


def passing_only_line(document):
    """What ``--passing-only`` measured: the tests run and the failing ones left out, named."""
    left_out = [test for test, _ in document["left_out"]]
    measured = document["tests"] - len(left_out)
    if not left_out:
        return f"mutate --passing-only: every test passes; measured all {document['tests']}"
    return (f"mutate --passing-only: measured the {measured} passing tests of {document['tests']}; "
            f"left out {len(left_out)} failing: {_names(left_out)}")


def only_line(document):
    """What ``--only`` left out: the globs, the mutants run and left out, generic and device."""
    left = document["only_left_out"]
    device = document.get("device") or {}
    ran = sum(len(block["mutants"]) for block in document["apis"] if block["status"] == "present")
    parts = [f"{ran} generic of {ran + left['generic']}"]
    if "device" in left:
        parts.append(f"{device['mutants']} device of {device['catalogue']}")
    return (f"mutate --only {' '.join(document['only'])}: ran {', '.join(parts)}; left out "
            f"{sum(left.values())} mutants; the strengths below are of these mutants only")
