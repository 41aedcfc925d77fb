# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""The device fault catalogue: what a wrong NPU kernel of one aten op does, for one dispatch.

A device mutant replaces one op's device kernel with the right computation (:class:`Call`'s ``compute``:
on the simulated NPU the CPU kernel, tensors moved; in unit tests the op itself) plus one fault. Each fault
returns ``(result, verdict)``, or raises where the fault is an error (the verdict noted first): *changed*,
*no effect* (it acted and the result equals the right one: same dtype, shape, strides, device, bits, values,
storage), *not applicable* (it cannot act on this dispatch: the right result). A fault is chosen for an op
only when the baseline saw each feature it ``needs`` (:mod:`.device_ops`), and judged again on every call.

Every fault is a kernel bug a port has: :data:`.device_catalogue.DEVICE_FAULTS` lists them with the reason
each is realistic.
"""
import math

import torch

from . import device_ops, tensors
from .faults import CHANGED, NO_EFFECT, NOT_APPLICABLE

_ACL_DTYPE = {torch.int16: "DT_INT16", torch.int8: "DT_INT8", torch.uint8: "DT_UINT8", torch.float64: "DT_DOUBLE",
              torch.bool: "DT_BOOL", torch.complex64: "DT_COMPLEX64", torch.complex128: "DT_COMPLEX128"}


class Call:
    """One in-scope dispatch of the faulted op. ``real()`` is the right result (computed once; raises as the
    right kernel raises); ``state`` is the mutant's own (call counts, a private random stream)."""

    def __init__(self, op, args, kwargs, compute, state=None):
        self.op, self.args, self.kwargs, self.compute = op, tuple(args), dict(kwargs), compute
        self.state = state if state is not None else {}
        self._real = None

    def real(self):
        if self._real is None:
            self._real = self.compute(self.args, self.kwargs)
        return self._real

    def written(self):
        return device_ops.written_tensors(self.op, self.args, self.kwargs)


def _map(result, fn):
    if isinstance(result, torch.Tensor):
        return fn(result)
    if isinstance(result, (tuple, list)):
        return type(result)(_map(item, fn) for item in result)
    return result


def _combined(verdicts):
    for verdict in (CHANGED, NO_EFFECT, NOT_APPLICABLE):
        if verdict in verdicts:
            return verdict
    return NOT_APPLICABLE


def _outputs(call, transform, storage_matters=False):
    """The right result with ``transform(tensor) -> tensor | tensors.NOT_APPLICABLE`` applied to each output;
    an output the op wrote (in-place, ``out=``) gets the faulted values written into it."""
    result, verdicts = call.real(), []
    written = {id(t) for t in call.written()}

    def one(t):
        if t.layout is not torch.strided:
            verdicts.append(NOT_APPLICABLE)
            return t
        new = transform(t)
        if new is tensors.NOT_APPLICABLE:
            verdicts.append(NOT_APPLICABLE)
        elif tensors.same(t, new, storage_matters):
            verdicts.append(NO_EFFECT)
        elif id(t) not in written:
            verdicts.append(CHANGED)
            return new
        elif (new.dtype, new.shape, new.device) != (t.dtype, t.shape, t.device) or tensors.values_equal(t, new):
            verdicts.append(NOT_APPLICABLE)  # a written tensor keeps its dtype, shape, device and strides
        else:
            with torch.no_grad():
                t.copy_(new)
            verdicts.append(CHANGED)
        return t
    faulted = _map(result, one)
    return faulted, _combined(verdicts)


def _inputs(call, replace):
    """The op on arguments where ``replace(tensor)`` gives another tensor (or None: kept); judged against the
    right result. Not applicable where no argument is replaced or the replaced call raises."""
    replaced = []

    def one(x):
        if isinstance(x, torch.Tensor):
            new = replace(x)
            if new is not None:
                replaced.append(x)
                return new
            return x
        if isinstance(x, (tuple, list)):
            return type(x)(one(item) for item in x)
        return x
    args = tuple(one(a) for a in call.args)
    kwargs = {key: one(value) for key, value in call.kwargs.items()}
    if not replaced or call.written():
        return call.real(), NOT_APPLICABLE
    real = call.real()
    try:
        faulted = call.compute(args, kwargs)
    except Exception:  # noqa: BLE001 - the fault must not make the call raise where the right one does not
        return real, NOT_APPLICABLE
    same = [tensors.same(a, b) for a, b in zip(device_ops.tensor_leaves(real), device_ops.tensor_leaves(faulted))]
    return (real, NO_EFFECT) if all(same) else (faulted, CHANGED)


# ------------------------------------------------------------------------------------------- values, precision
def shift(call):
    return _outputs(call, lambda t: tensors.shift(t, ()))


def precision(dtype):
    def round_to(t):
        if t.dtype not in (torch.float32, torch.float64):
            return None
        return t.to(dtype).to(t.dtype)

    def run(call):
        inputs = _inputs(call, round_to) if not call.written() else (call.real(), NOT_APPLICABLE)
        result, verdict = inputs
        rounded, after = _outputs(Call(call.op, call.args, call.kwargs, lambda a, k: result), lambda t: round_to(
            t) if t.dtype in (torch.float32, torch.float64) else tensors.NOT_APPLICABLE)
        return rounded, _combined([v for v in (verdict, after) if v != NOT_APPLICABLE] or [NOT_APPLICABLE])
    return run


def dtype_changed(table):
    return lambda call: _outputs(call, lambda t: t.to(table[t.dtype]) if t.dtype in table else tensors.NOT_APPLICABLE)


def contiguous(call):
    return _outputs(call, lambda t: tensors.NOT_APPLICABLE if device_ops.is_contiguous_strides(t) else t.contiguous())


def bits_dropped(call):
    def raw(x):
        if x.is_conj():
            x = torch.conj(x)  # clears the bit: the memory read as it is
        if x.is_neg():
            x = torch._neg_view(x)
        return x if (x.is_conj(), x.is_neg()) == (False, False) else None
    return _inputs(call, lambda x: raw(x) if (x.is_conj() or x.is_neg()) else None)


# ------------------------------------------------------------------------------------------- side effects, views
def _snapshot(call):
    return [(t, t.detach().clone()) for t in call.written() if t.layout is torch.strided]


def _restore(saved):
    """Undo the writes of ``saved`` (tensor, values before); True when a write was undone."""
    changed = False
    with torch.no_grad():
        for tensor, before in saved:
            if tensor.shape == before.shape and not tensors.values_equal(tensor, before):
                tensor.copy_(before)
                changed = True
    return changed


def inplace_lost(call):
    saved = _snapshot(call)
    result = call.real()
    return result, CHANGED if _restore(saved) else (NO_EFFECT if saved else NOT_APPLICABLE)


def inplace_to_copy(call):
    saved = _snapshot(call)
    result = call.real()
    copies = _map(result, lambda t: t.detach().clone())
    if _restore(saved):
        return copies, CHANGED
    return result, NO_EFFECT if saved else NOT_APPLICABLE


def view_copy(call):
    if not device_ops.schema_facts(call.op)["view"]:
        return call.real(), NOT_APPLICABLE
    return _outputs(call, lambda t: t.clone(), storage_matters=True)


def on_cpu(call):
    return _outputs(call, lambda t: t.cpu())


def other_index(call):
    def move(t):
        count = torch.accelerator.device_count() if t.device.type != "cpu" else 0
        if count < 2:
            return tensors.NOT_APPLICABLE
        return t.to(torch.device(t.device.type, ((t.device.index or 0) + 1) % count))
    return _outputs(call, move)


# ------------------------------------------------------------------------------------------- errors
def refusal_message(op, dtype):
    """A torch_npu-shaped refusal: ``aclnnMul not implemented for DT_INT16``."""
    name = op._schema.name.split("::")[-1].rstrip("_")
    camel = "".join(part[:1].upper() + part[1:] for part in name.split("_"))
    return f"aclnn{camel} not implemented for {_ACL_DTYPE[dtype]}"


class Raise(Exception):
    """A fault's verdict with the exception the faulted kernel raises."""

    def __init__(self, exc):
        super().__init__(str(exc))
        self.exc = exc


def refused(call):
    for x in device_ops.tensor_leaves((call.args, call.kwargs)):
        if x.dtype in _ACL_DTYPE:
            raise Raise(RuntimeError(refusal_message(call.op, x.dtype)))
    return call.real(), NOT_APPLICABLE


def empty_refused(call):
    if any(x.numel() == 0 for x in device_ops.tensor_leaves((call.args, call.kwargs))):
        raise Raise(RuntimeError(f"{refusal_message(call.op, torch.int16).split(' ')[0]}: the tensor is empty "
                                 "(a zero-size dim is not supported)"))
    return call.real(), NOT_APPLICABLE


def swallowed(call):
    try:
        return call.real(), NOT_APPLICABLE
    except Exception:  # noqa: BLE001 - any error the right kernel raises
        written = call.written()
        if written:
            return written[0], CHANGED
        inputs = device_ops.tensor_leaves((call.args, call.kwargs))
        if not inputs:
            raise
        return torch.zeros_like(inputs[0]), CHANGED


# ------------------------------------------------------------------------------------------- shapes
def zero_dim(call):
    if call.written() or not any(x.dim() == 0 for x in device_ops.tensor_leaves((call.args, call.kwargs))):
        return call.real(), NOT_APPLICABLE
    return _outputs(call, lambda t: t.reshape(1) if t.dim() == 0 else tensors.NOT_APPLICABLE)


def broadcast(call):
    shapes = [tuple(t.shape) for t in device_ops.tensor_leaves(call.real())]
    if not shapes:
        return call.real(), NOT_APPLICABLE
    shape = max(shapes, key=lambda s: (len(s), math.prod(s)))
    total = math.prod(shape)

    def tiled(x):
        if x.dim() == 0 or x.numel() in (0, total) or total % x.numel() or tuple(x.shape) == shape:
            return None
        return x.reshape(-1).repeat(total // x.numel()).reshape(shape)
    return _inputs(call, tiled)


# ------------------------------------------------------------------------------------------- repeats, random
def nondeterministic(call):
    count = call.state["calls"] = call.state.get("calls", 0) + 1
    if count % 2:
        return call.real(), NOT_APPLICABLE
    return _outputs(call, lambda t: torch.nextafter(t, torch.full_like(t, math.inf))
                    if t.is_floating_point() and t.numel() else tensors.NOT_APPLICABLE)


def _generator_of(call):
    """``(fork, seed, get_state, set_state)`` of the default generator the dispatch draws from (its device's;
    ``seed`` seeds that generator alone)."""
    tensors_in = device_ops.tensor_leaves((call.args, call.kwargs))
    device = tensors_in[0].device if tensors_in else torch.device(call.kwargs.get("device") or "cpu")
    if device.type == "cpu":
        return ((lambda: torch.random.fork_rng(devices=[])), torch.default_generator.manual_seed,
                torch.get_rng_state, torch.set_rng_state)
    module = getattr(torch, device.type)
    index = device.index if device.index is not None else module.current_device()
    return ((lambda: torch.random.fork_rng(devices=[index], device_type=device.type)), module.manual_seed,
            lambda: module.get_rng_state(index), lambda state: module.set_rng_state(state, index))


def other_stream(call):
    """The random op draws from a stream of its own, seeded once, which ``torch.manual_seed`` never reaches."""
    if not device_ops.schema_facts(call.op)["random"] or call.kwargs.get("generator") is not None:
        return call.real(), NOT_APPLICABLE
    fork, seed, get_state, set_state = _generator_of(call)
    if "stream" not in call.state:
        with fork():
            seed(0x5EED)
            call.state["stream"] = get_state()
    with fork():
        set_state(call.state["stream"])
        try:
            faulted = call.compute(call.args, call.kwargs)
        finally:
            call.state["stream"] = get_state()
    return faulted, CHANGED


# ------------------------------------------------------------------------------------------- numerics of NPU cores
def nan_flushed(call):
    return _outputs(call, lambda t: torch.nan_to_num(t, nan=0.0, posinf=math.inf, neginf=-math.inf)
                    if (t.is_floating_point() or t.is_complex()) else tensors.NOT_APPLICABLE)


def _flush_subnormal(t):
    if not t.is_floating_point():
        return tensors.NOT_APPLICABLE
    return torch.where(t.abs() < torch.finfo(t.dtype).tiny, torch.zeros_like(t), t)


def ftz(call):
    result, before = _inputs(call, lambda x: _flush_subnormal(x) if x.is_floating_point() else None)
    flushed, after = _outputs(Call(call.op, call.args, call.kwargs, lambda a, k: result), _flush_subnormal)
    return flushed, _combined([v for v in (before, after) if v != NOT_APPLICABLE] or [NOT_APPLICABLE])


def int32_wrap(call):
    def wrap(x):
        return x.to(torch.int32).to(torch.int64) if x.dtype is torch.int64 else None
    result, before = _inputs(call, wrap)
    wrapped, after = _outputs(Call(call.op, call.args, call.kwargs, lambda a, k: result),
                              lambda t: wrap(t) if t.dtype is torch.int64 else tensors.NOT_APPLICABLE)
    return wrapped, _combined([v for v in (before, after) if v != NOT_APPLICABLE] or [NOT_APPLICABLE])


def strides_ignored(call):
    def as_dense(x):
        if x.layout is not torch.strided or device_ops.is_contiguous_strides(x):
            return None
        if x.storage_offset() + x.numel() > x.untyped_storage().nbytes() // x.element_size():
            return None  # reading it as dense would leave the storage (an expanded tensor)
        return x.as_strided(x.shape, torch.empty(x.shape, device="meta").stride(), x.storage_offset())
    return _inputs(call, as_dense)
