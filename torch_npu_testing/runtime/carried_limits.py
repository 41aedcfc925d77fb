# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Device limits in a test file: the vehicle apart from the API under test (carried, like :mod:`.carried`).

A case whose *vehicle* (the test's own helper ops: copies to the device, ``x * k``, comparisons, sparse
conversions) the device refuses is not applicable there: :func:`skip_unless_vehicle` probes the vehicle once
per ``what`` (a dtype, a layout) and skips with the device's message, never a pass and never a failure. The
*API under test* refusing inside :func:`api_limit` is expected (a labelled skip) when Ascend's docs document
that limit, and a failure when they do not; where the CPU refuses the same call too, it is the CPU's outcome.
A refusal is a ``RuntimeError`` in torch_npu's shapes (``aclnnMul not implemented for DT_DOUBLE``, ``... is
not supported on <product>``) or torch's own refusal of a device for a layout (2.7.1 checks compressed sparse
members against CPU, CUDA, XPU and Meta only: "device type of values (npu) must be CPU or CUDA or XPU or
Meta"): :data:`REFUSALS`, one pattern. Kept small: export carries it into every file that uses it. The gaps
a run met are its skip reasons ("device limit, ..."); ``common/gaps.py`` reads them from the results, and the
simulated NPU writes its own.
"""
# --- carried: begin
import contextlib
import re

REFUSALS = r"not implemented for DT_[A-Z0-9_]+|is not supported on |device type of \w+ \(\w+\) must be CPU"
DEVICE_VEHICLES = {}  # what -> the device's refusal (the first line of its message) of a vehicle, or None


def vehicle_refusal(what, probe):
    """The device's limit refusal of ``probe()`` (run once per ``what``: a dtype, a layout), else None."""
    if what not in DEVICE_VEHICLES:
        try:
            DEVICE_VEHICLES[what] = (probe(), None)[1]
        except RuntimeError as exc:
            if not re.search(REFUSALS, str(exc)):
                raise
            DEVICE_VEHICLES[what] = str(exc).strip().splitlines()[0]
    return DEVICE_VEHICLES[what]


def skip_unless_vehicle(test, what, probe):
    """Skip ``test`` where the device refuses its vehicle for ``what``: not applicable, with the message."""
    if vehicle_refusal(what, probe):
        test.skipTest(f"device limit, vehicle {what}: {DEVICE_VEHICLES[what]}")


@contextlib.contextmanager
def api_limit(test, what, documented, cpu_refuses=False):
    """The API under test refused by the device in the block: a documented limit skips, labelled; else fails.
    ``cpu_refuses``: the CPU refuses the same call, so the device's refusal is the same outcome (the block ends)."""
    try:
        yield
    except RuntimeError as exc:
        if not re.search(REFUSALS, str(exc)):
            raise
        if cpu_refuses:
            return
        refused = str(exc).strip().splitlines()[0]
        if not documented:
            test.fail(f"{what}: the device refuses the API under test and Ascend's docs do not say so: {refused}")
        test.skipTest(f"device limit, documented for the API, {what}: {refused}")
# --- carried: end
