# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""The device fault catalogue (:data:`DEVICE_FAULTS`): each fault, what it needs, and why a port has it.

A fault is chosen for an op when the baseline saw every feature it ``needs`` on that op's in-scope device
dispatches (:func:`faults_for`); :func:`apply` runs it on one dispatch and notes its verdict. The behaviours
are in :mod:`.device_faults`.
"""
from dataclasses import dataclass
from typing import Callable, Tuple

import torch

from . import device_ops
from .device_faults import (Raise, bits_dropped, broadcast, contiguous, dtype_changed, empty_refused, ftz,
                            inplace_lost, inplace_to_copy, int32_wrap, nan_flushed, nondeterministic,
                            on_cpu, other_index, other_stream, precision, refused, shift, strides_ignored,
                            swallowed, view_copy, zero_dim)
from .faults import CHANGED


@dataclass(frozen=True)
class DeviceFault:
    code: str
    description: str
    needs: Tuple[str, ...]
    run: Callable
    why: str = ""


_FAULTS = (
    ("dev-shift", "floating and complex values moved by (|v| + 1) * 1e-3", ("floating out",), shift,
     "a kernel with a wrong constant, accumulation order or approximation: off relative to the magnitude"),
    ("dev-bf16", "float32/float64 computed at bfloat16 precision (inputs and result rounded)", ("float32/64",),
     precision(torch.bfloat16), "NPU cube units compute in bf16/fp16 by default unless told otherwise"),
    ("dev-fp16", "float32/float64 computed at float16 precision (inputs and result rounded)", ("float32/64",),
     precision(torch.float16), "as dev-bf16; float16 also overflows past 65504"),
    ("dev-narrow", "result dtype narrowed: float64->float32, int64->int32, complex128->complex64, bool->uint8",
     ("narrowable out",), dtype_changed(device_ops.NARROWER), "no double/int64 kernel: the port computes narrower"),
    ("dev-promote", "result dtype promoted otherwise: half->float32, float32->float64, int32->int64, ...",
     ("promotable out",), dtype_changed(device_ops.WIDER), "the port's own type promotion table differs from torch's"),
    ("dev-contiguous", "result made contiguous (strides and memory format lost)", ("strided out",), contiguous,
     "NPU kernels write dense outputs; the port forgets to restore channels_last or the view's strides"),
    ("dev-bits-dropped", "conj and neg bits of inputs ignored (the memory read as it is)", ("conj/neg in",),
     bits_dropped, "a kernel reading raw memory without resolving torch's lazy conj/neg views"),
    ("dev-inplace-lost", "the in-place or out= write lost", ("writes input",), inplace_lost,
     "the port computes into a temporary and forgets to copy back"),
    ("dev-inplace-copy", "the in-place or out= write made to a copy, which is returned", ("writes input",),
     inplace_to_copy, "a contiguous() or format cast before the kernel makes it write a copy"),
    ("dev-view-copy", "a view returned as a copy (storage not shared)", ("view",), view_copy,
     "a view op implemented by a kernel that materializes its result"),
    ("dev-result-cpu", "the result left on the CPU", ("tensor out",), on_cpu,
     "a host-side fallback that forgets to move the result back to the device"),
    ("dev-other-index", "the result on the other device index", ("tensor out",), other_index,
     "a kernel launched on the current device instead of the inputs' device"),
    ("dev-dtype-refused", "a dtype refused with torch_npu's RuntimeError (... not implemented for DT_INT16)",
     ("refusable dtype",), refused, "aclnn kernels support a dtype list; torch_npu's docs list the gaps"),
    ("dev-nondeterministic", "a different value on a repeated call (one ulp on every other call)",
     ("repeated", "floating out"), nondeterministic, "atomic adds make reductions depend on scheduling"),
    ("dev-0d-as-1d", "a 0-d result returned with shape (1,) when an input is 0-d", ("0-d in",), zero_dim,
     "kernels take a scalar as a one-element tensor and the port does not squeeze it back"),
    ("dev-empty-refused", "an input with a zero-size dim refused with a RuntimeError", ("empty in",),
     empty_refused, "aclnn kernels reject empty tensors unless the port short-cuts them"),
    ("dev-broadcast", "broadcasting by tiling an input's memory (right only along leading dims)", ("broadcast",),
     broadcast, "a hand-written broadcast that repeats the flattened input"),
    ("dev-error-swallowed", "the device returns a result where the CPU raises", ("raises",), swallowed,
     "the port skips torch's argument checks and the kernel computes on anything"),
    ("dev-rng-stream", "random ops draw from another stream (torch.manual_seed does not reach it)", ("random",),
     other_stream, "the device generator is its own, seeded apart from the CPU's"),
    ("dev-nan-flushed", "NaN results written as 0", ("nan out",), nan_flushed,
     "NPU saturation mode and max/min kernels that do not propagate NaN"),
    ("dev-ftz", "subnormal inputs and results flushed to zero", ("subnormal",), ftz,
     "AI cores flush denormals to zero"),
    ("dev-int64-as-int32", "int64 computed in int32 (values wrap)", ("int64 wide",), int32_wrap,
     "many NPU kernels cast int64 to int32 internally"),
    ("dev-strides-ignored", "a non-contiguous input read as if it were contiguous", ("non-contiguous in",),
     strides_ignored, "the port passes a view's memory to a kernel that assumes dense inputs"),
)
DEVICE_FAULTS = tuple(DeviceFault(code, text, needs, run, why) for code, text, needs, run, why in _FAULTS)
BY_CODE = {fault.code: fault for fault in DEVICE_FAULTS}


VIEW_FAULTS = ("dev-view-copy", "dev-contiguous", "dev-result-cpu", "dev-other-index", "dev-error-swallowed")


def faults_for(features):
    """The faults whose every needed feature is in ``features`` (a set of :data:`device_ops.FEATURES`).
    A view op (``features`` has "view") computes no value on a device, it only describes memory: it gets
    the :data:`VIEW_FAULTS` alone (storage, strides, device, checks), never a value fault."""
    chosen = [fault for fault in DEVICE_FAULTS if all(need in features for need in fault.needs)]
    if "view" in features:
        chosen = [fault for fault in chosen if fault.code in VIEW_FAULTS]
    return chosen


def apply(fault, call, tally):
    """Run ``fault`` on ``call``, note its verdict on ``tally`` (a :class:`.faults.Tally`), return or raise."""
    try:
        result, verdict = fault.run(call)
    except Raise as raised:
        tally.note(CHANGED)
        raise raised.exc from None
    tally.note(verdict)
    return result
