# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""What one aten op does to its tensors, read from its schema and one dispatch: the facts device faults need.

:func:`schema_facts` reads an ``OpOverload``'s schema once: which arguments it writes (in-place and ``out=``
ops), whether its result is a view of an input (an alias it does not write), whether it draws random
numbers (the ``nondeterministic_seeded`` tag). :func:`dispatch_features` reads one dispatch (its arguments
and its result, or that it raised) and names the :data:`FEATURES` seen there; a device fault is chosen for
an op only when the baseline saw the feature it needs (no fault is guessed), and each call checks again.
"""
import torch

REFUSED_DTYPES = (torch.int16, torch.int8, torch.uint8, torch.float64, torch.bool, torch.complex64,
                  torch.complex128)
FEATURES = ("tensor out", "floating out", "float32/64", "narrowable out", "promotable out", "strided out",
            "conj/neg in", "writes input", "view", "refusable dtype", "repeated", "0-d in", "empty in",
            "broadcast", "raises", "random", "nan out", "subnormal", "int64 wide", "non-contiguous in")
NARROWER = {torch.float64: torch.float32, torch.int64: torch.int32, torch.complex128: torch.complex64,
            torch.bool: torch.uint8}
WIDER = {torch.float16: torch.float32, torch.bfloat16: torch.float32, torch.float32: torch.float64,
         torch.int32: torch.int64, torch.int16: torch.int32, torch.int8: torch.int16, torch.uint8: torch.int16,
         torch.complex64: torch.complex128}


def tensor_leaves(obj, depth=3):
    """The tensors of an argument or result structure (tuples, lists and dicts, a few levels deep)."""
    if isinstance(obj, torch.Tensor):
        return [obj]
    if depth == 0:
        return []
    items = obj.values() if isinstance(obj, dict) else obj if isinstance(obj, (tuple, list)) else ()
    return [leaf for item in items for leaf in tensor_leaves(item, depth - 1)]


def schema_facts(op):
    """``{"writes": [argument names written], "view": bool, "random": bool}`` of an ``OpOverload``."""
    schema = op._schema
    writes = [a.name for a in schema.arguments if a.alias_info is not None and a.alias_info.is_write]
    view = any(r.alias_info is not None and not r.alias_info.is_write for r in schema.returns)
    random = torch.Tag.nondeterministic_seeded in getattr(op, "tags", ())
    return {"writes": writes, "view": view, "random": random}


def written_tensors(op, args, kwargs):
    """The tensors the op writes (its in-place ``self``, its ``out=``), as passed."""
    names, found = schema_facts(op)["writes"], []
    for index, argument in enumerate(op._schema.arguments):
        if argument.name not in names:
            continue
        value = kwargs.get(argument.name) if argument.name in kwargs else (
            args[index] if index < len(args) and not argument.kwarg_only else None)
        found += tensor_leaves(value)
    return found


def is_contiguous_strides(x):
    return x.is_contiguous() or x.numel() <= 1


def _safely(check):
    """A value check that is False where the dtype lacks the op it needs (float8 has no comparison)."""
    def checked(x):
        try:
            return check(x)
        except (RuntimeError, NotImplementedError, TypeError):
            return False
    return checked


@_safely
def _has_subnormal(x):
    if not x.is_floating_point() or x.numel() == 0:
        return False
    tiny = torch.finfo(x.dtype).tiny
    values = x.detach().abs()
    return bool(((values > 0) & (values < tiny)).any())


@_safely
def _int64_wide(x):
    if x.dtype is not torch.int64 or x.numel() == 0:
        return False
    info = torch.iinfo(torch.int32)
    return bool(((x < info.min) | (x > info.max)).any())


@_safely
def _has_nan(x):
    return bool(x.detach().isnan().any())


def _output_features(outputs):
    found = set()
    for out in outputs:
        found.add("tensor out")
        if (out.is_floating_point() or out.is_complex()) and out.numel():
            found.add("floating out")
            if _has_nan(out):
                found.add("nan out")
        if out.dtype in NARROWER:
            found.add("narrowable out")
        if out.dtype in WIDER:
            found.add("promotable out")
        if not is_contiguous_strides(out):
            found.add("strided out")
        if _has_subnormal(out):
            found.add("subnormal")
        if _int64_wide(out):
            found.add("int64 wide")
    return found


def _input_features(inputs, outputs):
    found = set()
    shapes = {tuple(out.shape) for out in outputs}
    for x in inputs:
        if x.dtype in (torch.float32, torch.float64):
            found.add("float32/64")
        if x.is_conj() or x.is_neg():
            found.add("conj/neg in")
        if x.dtype in REFUSED_DTYPES:
            found.add("refusable dtype")
        if x.dim() == 0:
            found.add("0-d in")
        if x.numel() == 0:
            found.add("empty in")
        if x.layout is torch.strided and not is_contiguous_strides(x):
            found.add("non-contiguous in")
        if _has_subnormal(x):
            found.add("subnormal")
        if _int64_wide(x):
            found.add("int64 wide")
        if shapes and x.dim() and x.numel() > 1 and tuple(x.shape) not in shapes and any(
                len(shape) >= x.dim() and x.numel() < _numel(shape) for shape in shapes):
            found.add("broadcast")
    if any(out.dtype in (torch.float32, torch.float64) for out in outputs):
        found.add("float32/64")
    return found


def _numel(shape):
    count = 1
    for size in shape:
        count *= size
    return count


def dispatch_features(op, args, kwargs, result=None, raised=False):
    """The :data:`FEATURES` one dispatch shows (``result`` its output, ``raised`` when it raised)."""
    inputs = [x for x in tensor_leaves((args, kwargs)) if x.layout is torch.strided]
    outputs = [x for x in tensor_leaves(result) if x.layout is torch.strided]
    facts = schema_facts(op)
    found = _output_features(outputs) | _input_features(inputs, outputs)
    if facts["writes"]:
        found.add("writes input")
    if facts["view"]:
        found.add("view")
    if facts["random"]:
        found.add("random")
    if raised:
        found.add("raises")
    return found
