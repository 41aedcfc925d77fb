# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Tensor result faults: what each does to one tensor, and whether it changed anything.

Each transform takes a plain strided tensor (and the call's tensor arguments) and returns the faulted
tensor, or :data:`NOT_APPLICABLE` when it cannot apply (a dtype it does not act on, an op the dtype lacks).
:func:`apply` also reaches inside a functorch BatchedTensor: the transform acts on the physical tensor and
the wrapper is rebuilt at the same batch dim and level. A tensor that cannot be rebuilt (a FakeTensor, a
TwoTensor or another subclass, a sparse tensor, another functorch wrapper) is not applicable.

:func:`same` judges a faulted tensor against the real one, on that call alone: same dtype, shape, strides,
device, ``requires_grad``, history (``grad_fn`` present or not), conj and neg bits and values (NaN equal to
NaN); for the view-to-copy fault, the same storage too. An unchanged result is returned as the real
object, so a fault with no effect is exactly the real behaviour.
"""
import torch

NOT_APPLICABLE = object()
_NARROW = {torch.float64: torch.float32, torch.int64: torch.int32, torch.complex128: torch.complex64,
           torch.bool: torch.uint8}
_PLAIN_TYPES = (torch.Tensor, torch.nn.Parameter)


def _is_integer(x):
    return not x.is_floating_point() and not x.is_complex() and x.dtype is not torch.bool


def shift(x, inputs):
    if not (x.is_floating_point() or x.is_complex()):
        return NOT_APPLICABLE
    return x + ((x.detach().abs() + 1) * 1e-3).to(x.dtype)


def first_plus_one(x, inputs):
    if not _is_integer(x) or x.numel() == 0:
        return NOT_APPLICABLE
    y = x.clone()
    y[(0,) * x.dim()] += 1
    return y


def bfloat16_rounding(x, inputs):
    if x.dtype not in (torch.float32, torch.float64):
        return NOT_APPLICABLE
    return x.to(torch.bfloat16).to(x.dtype)


def narrow_dtype(x, inputs):
    narrow = _NARROW.get(x.dtype)
    return NOT_APPLICABLE if narrow is None else x.to(narrow)


def contiguous(x, inputs):
    return x.contiguous()


def resolve_bits(x, inputs):
    return x.resolve_conj().resolve_neg()


def detach(x, inputs):
    return x.detach()


def _storage(x):
    try:
        return x.untyped_storage().data_ptr()
    except (RuntimeError, NotImplementedError):
        return None


def view_as_copy(x, inputs):
    own = _storage(x)
    if own is None or not any(_storage(t) == own for t in inputs):
        return NOT_APPLICABLE
    return x.clone()


def transpose_square(x, inputs):
    if x.dim() < 2 or x.size(-1) != x.size(-2) or x.size(-1) < 2:
        return NOT_APPLICABLE
    y = torch.empty_like(x)
    with torch.no_grad():
        y.copy_(x.transpose(-1, -2))
    return y.requires_grad_(x.requires_grad) if x.is_leaf and x.requires_grad else y


def to_cpu(x, inputs):
    return x.cpu()


def values_equal(a, b):
    """Same values (conj/neg bits resolved; NaN equal to NaN), whatever the strides."""
    a, b = a.detach().resolve_conj().resolve_neg(), b.detach().resolve_conj().resolve_neg()
    if torch.equal(a, b):
        return True
    if not (a.is_floating_point() or a.is_complex()):
        return False
    return torch.equal(a.isnan(), b.isnan()) and torch.equal(a.nan_to_num(), b.nan_to_num())


def same(real, faulted, storage_matters=False):
    """True when ``faulted`` is indistinguishable from ``real`` by the checks of the module docstring."""
    if faulted is real:
        return True
    if (real.dtype, real.shape, real.device) != (faulted.dtype, faulted.shape, faulted.device):
        return False
    if real.stride() != faulted.stride() or real.requires_grad != faulted.requires_grad:
        return False
    if (real.grad_fn is None) != (faulted.grad_fn is None):
        return False
    if (real.is_conj(), real.is_neg()) != (faulted.is_conj(), faulted.is_neg()):
        return False
    if storage_matters and _storage(real) != _storage(faulted):
        return False
    with torch.no_grad():
        return values_equal(real, faulted)


def _functorch():
    return getattr(torch._C, "_functorch", None)


def _physical(x):
    """``(physical tensor, rebuild)`` for a plain or batched tensor; ``(None, None)`` when not rebuildable."""
    functorch = _functorch()
    if functorch is not None and functorch.is_batchedtensor(x):
        level, bdim = functorch.maybe_get_level(x), functorch.maybe_get_bdim(x)
        inner, rebuild_inner = _physical(functorch.get_unwrapped(x))
        if inner is None:
            return None, None
        return inner, lambda t: functorch._add_batch_dim(rebuild_inner(t), bdim, level)
    if type(x) not in _PLAIN_TYPES or x.layout is not torch.strided:
        return None, None
    if functorch is not None and functorch.is_functorch_wrapped_tensor(x):
        return None, None
    return x, lambda t: t


def apply(transform, x, inputs, storage_matters=False):
    """``(tensor, verdict)``: verdict is "changed", "no effect" or "not applicable" (then ``x`` itself)."""
    inner, rebuild = _physical(x)
    if inner is None:
        return x, "not applicable"
    try:
        faulted = transform(inner, inputs)
        if faulted is NOT_APPLICABLE:
            return x, "not applicable"
        if same(inner, faulted, storage_matters):
            return x, "no effect"
        return rebuild(faulted), "changed"
    except (RuntimeError, NotImplementedError, TypeError):  # an op this dtype or device lacks
        return x, "not applicable"
