# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Device limits in a test file: the vehicle apart from the API under test (carried, like :mod:`.carried`).

A case whose *vehicle* (the test's own helper ops: copies to the device, ``x * k``, comparisons, sparse
conversions) the device refuses is not applicable there: :func:`skip_unless_vehicle` probes the vehicle once
per ``what`` (a dtype, a layout) and skips with the device's message, never a pass and never a failure. The
*API under test* refusing inside :func:`api_limit` is expected (a labelled skip) when Ascend's docs document
that limit, and a failure when they do not. A refusal is a ``RuntimeError`` in torch_npu's shapes
(``aclnnMul not implemented for DT_DOUBLE``, ``... is not supported on <product>``). The gaps a run met are
kept in ``DEVICE_GAPS``, printed as one table at exit and appended to ``$TORCH_NPU_TESTING_GAPS`` when set.
"""
# --- carried: begin
import atexit
import contextlib
import json
import os
import re
import sys

DEVICE_LIMIT = re.compile(r"not implemented for DT_[A-Z0-9_]+|is not supported on ")
DEVICE_GAPS = []  # (kind, what, documented or None, the device's message), in the order met
DEVICE_VEHICLES = {}  # what -> the device's refusal of its vehicle, or None


def device_limit(exc):
    """The first line of ``exc`` when it is a device's limit refusal, else None."""
    text = str(exc).strip()
    return text.splitlines()[0] if isinstance(exc, RuntimeError) and DEVICE_LIMIT.search(text) else None


def note_gap(kind, what, documented, message):
    if not DEVICE_GAPS:
        atexit.register(report_gaps)
    if (kind, what, documented, message) not in DEVICE_GAPS:
        DEVICE_GAPS.append((kind, what, documented, message))


def skip_unless_vehicle(test, what, probe):
    """Skip ``test`` (labelled, with the device's message) when the device refuses ``probe()``, the vehicle
    for ``what``; ``probe`` runs once per ``what`` in a run. Any other error is raised: it is no device limit."""
    if vehicle_refusal(what, probe):
        test.skipTest(f"device limit, vehicle {what}: {DEVICE_VEHICLES[what]}")


def vehicle_refusal(what, probe):
    """The device's refusal of ``probe()`` (run once per ``what``), or None: for code outside a test method."""
    if what not in DEVICE_VEHICLES:
        try:
            probe()
            DEVICE_VEHICLES[what] = None
        except RuntimeError as exc:
            DEVICE_VEHICLES[what] = device_limit(exc)
            if DEVICE_VEHICLES[what] is None:
                raise
            note_gap("vehicle", what, None, DEVICE_VEHICLES[what])
    return DEVICE_VEHICLES[what]


@contextlib.contextmanager
def api_limit(test, what, documented):
    """The API under test refused by the device in the block: skipped as a documented limit when
    ``documented`` (Ascend's docs exclude ``what``), else the test fails naming the device's message."""
    try:
        yield
    except RuntimeError as exc:
        refused = device_limit(exc)
        if refused is None:
            raise
        note_gap("API", what, bool(documented), refused)
        if not documented:
            test.fail(f"{what}: the device refuses the API under test and Ascend's docs do not say so: {refused}")
        test.skipTest(f"device limit, documented for the API, {what}: {refused}")


def report_gaps(stream=None):
    """The gaps met as one table on ``stream`` (stderr); appended as JSON lines to $TORCH_NPU_TESTING_GAPS."""
    if not DEVICE_GAPS:
        return
    if os.environ.get("TORCH_NPU_TESTING_GAPS"):
        with open(os.environ["TORCH_NPU_TESTING_GAPS"], "a", encoding="utf-8") as handle:
            for kind, what, documented, message in DEVICE_GAPS:
                handle.write(json.dumps({"kind": kind, "what": what, "documented": documented, "message": message},
                                        ensure_ascii=False) + "\n")
    print("\ndevice gaps met:\n| kind | what | documented | message |\n| --- | --- | --- | --- |",
          file=stream or sys.stderr)
    for kind, what, documented, message in DEVICE_GAPS:
        said = "-" if documented is None else "yes" if documented else "no"
        print(f"| {kind} | {what} | {said} | {message} |", file=stream or sys.stderr)
# --- carried: end
