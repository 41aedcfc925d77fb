# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""API consistency of ``aot_export_joint_with_descriptors`` and ``aot_compile_joint_with_descriptors``.

Both live in ``torch._functorch.aot_autograd`` (torch >= 2.9; on older torch every class skips with the reason).
Export traces the joint forward+backward graph of a module into ``graph_module`` (a descriptor on each placeholder
and output), ``params_spec``, ``buffers_spec``, ``in_spec`` and ``out_spec``; compile turns it into a callable taking
``(*params, *buffers, *inputs, **kwargs)``. Every call of a compiled callable goes through one comparison with eager
(``assert_matches_eager``): each output leaf (a tensor subclass part by part) on dtype, shape, layout, strides,
conj/neg bits, requires_grad and values; each parameter and input gradient; each buffer and input after the call.

Spaces enumerated (a class each; table-driven cases carry a label):

- contract (...Export, ...Compile, ...Parameters): specs, descriptors and their ``expr()``/``is_*`` answers,
  ``fx_utils``' nine getters on every shared export (a subclass graph: all refuse), the joint graph; linear,
  multi-output, BatchNorm, keyword-input modules, inference graphs, repeated calls, changed parameters, a training
  graph under no_grad, grad mode right after export and compile; every keyword of both APIs;
- descriptor programs (...AliasesAndEffects): aliased inputs, one mutated (ViewBaseAOTInput); two outputs viewing one
  intermediate (IntermediateBaseAOTOutput); an effectful op (forward tokens, run once per call); dynamic shapes
  (SubclassSize/Stride, in ...Subclasses). functionalize_rng_ops needs CUDA's RNG state: refused on CPU and NPU
  hosts, so the Philox descriptors are not reached there;
- dtypes (...Dtypes): ``all_types_and_complex_and(half, bfloat16, bool)``, uint16/32/64 and the installed float8
  types as inputs, parameters and mutated buffers of one export, outputs of the input's dtype, float32, bool and
  int64 (argmax), gradients of the floating and complex ones; argmax raises upstream's type where eager has no
  kernel; mixed-dtype ops in one graph;
- layouts (...Layouts): rank-4/5 memory formats, transposed, step-sliced, expanded, conj and neg views as inputs and
  parameters, from contiguous and non-contiguous examples; sparse (...Sparse): COO/CSR/CSC/BSR/BSC inputs where eager
  takes them, COO examples (uncoalesced and hybrid stay so), compressed ones refused, COO leaves requiring grad;
  subclasses (...Subclasses): a TwoTensor per dtype, layout and size, a plain tensor in its place (pinned internals);
- sizes (...Sizes): distinct per dimension, values differing per position, a square transposed input, batches and
  inner dimensions of 0, 0-d inputs and outputs, size-1 dimensions;
- side effects (...SideEffects): buffers and inputs mutated once per call, outputs aliasing an input, no state
  across calls, export never running the module; bad input (...BadInput) to all three calls;
- torch subsystems (...Subsystems): higher order (the first gradient with ``create_graph=True`` is eager's, with
  history; a second backward, forward-mode AD, ``torch.func.grad``/``vmap`` raise upstream's errors), version counters
  of mutated inputs and buffers, a namedtuple and a dict in and ``torch.return_types`` out, hooks and pre-hooks of the
  module and a submodule, tied, frozen and non-persistent state, the user's subclass, eval mode, ``torch.autocast``
  and ``set_default_dtype``, dropout's RNG stream, ``copy.copy`` and pickling, warnings (none). Caches: these APIs
  take their compilers as arguments and keep no cache of their own (one compile per call: the recording compilers).

Not applicable: threads (no thread-local state; grad mode at export, the one thread-local input, is covered) and
vmap (batched tensors are no input here). ``mutate``'s generic catalogue leaves nothing a test could see: export's
inplace-dropped never fires (fake copies are traced); compile's result-resolved, result-cpu act on no tensor (it
returns a callable). Device faults left alive (``--device``) change nothing the APIs give: views of a synthetic base
a call makes and uses itself, a promoted copy written back in its buffer's dtype, a float64 x addmm refuses with the
CPU's error type, a dual input's parameters' zero tangents (jvp refused), export's rows of a bare-tensor args (arity):
torch._functorch.aot_autograd.aot_compile_joint_with_descriptors:aten.as_strided.default:dev-view-copy,
torch._functorch.aot_autograd.aot_compile_joint_with_descriptors:aten.copy.default:dev-promote,
torch._functorch.aot_autograd.aot_compile_joint_with_descriptors:aten.addmm.default:dev-dtype-refused,
torch._functorch.aot_autograd.aot_compile_joint_with_descriptors:aten.zeros_like.default:dev-shift,
torch._functorch.aot_autograd.aot_compile_joint_with_descriptors:aten.zeros_like.default:dev-promote,
torch._functorch.aot_autograd.aot_compile_joint_with_descriptors:aten.zeros_like.default:dev-result-cpu,
torch._functorch.aot_autograd.aot_compile_joint_with_descriptors:aten.zeros_like.default:dev-other-index,
torch._functorch.aot_autograd.aot_compile_joint_with_descriptors:aten.zeros_like.default:dev-nondeterministic,
torch._functorch.aot_autograd.aot_export_joint_with_descriptors:aten.unbind.int:dev-view-copy,
torch._functorch.aot_autograd.aot_export_joint_with_descriptors:aten.unbind.int:dev-result-cpu,
torch._functorch.aot_autograd.aot_export_joint_with_descriptors:aten.unbind.int:dev-other-index.

Release differences (read in each release's ``aot_autograd.py``, then measured): 2.9.1 export takes decompositions,
keep_inference_input_mutations, ignore_shape_env, fw_compiler and bw_compiler, compile none; 2.10 moves fw/bw_compiler
to compile with partition_fn, export gains disable_functionalization (ignored by 2.10) and _record_nn_module_stack;
2.11 adds export's _disable_torch_fn_metadata_mode and compile's serializable. 2.9.1's callable raises StopIteration
for a missing argument and ignores extra ones (2.10+: RuntimeError for both) and refuses a fake TwoTensor example;
2.14 adds inner tensors' sizes as primals and returns the gradient of a COO leaf read through to_dense() (None before).

On the CPU results are compared with eager CPU (bitwise); on an accelerator the callable runs on the device against
eager on CPU (exact for integer-valued data, float round-off else), on the examples' device index, and gives the same
bits when called again, with and without backward; a dtype whose eager run fails on the device must fail compiled
there with the same exception type. Eager on the device is the vehicle: where a device limit refuses it, the case
skips with the device's message (compressed sparse examples cannot be printed where float64 ``min`` is refused).
"""
from torch_npu_testing import (TestCase, run_tests, device_type, requires_api, torch_version_at_least,
                               skip_unless_vehicle, vehicle_refusal)

import collections
import contextlib
import copy
import functools
import importlib
import inspect
import math
import os
import pickle
import re
import sys
import tempfile
import types
import warnings

import torch
import torch.utils._pytree as pytree
from torch import nn
from torch._functorch import aot_autograd
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.testing._internal.common_dtype import all_types_and_complex_and
from torch.testing._internal.common_utils import set_default_dtype as default_dtype  # a context manager
from torch.fx.experimental.symbolic_shapes import ShapeEnv
from torch.testing._internal.two_tensor import TwoTensor  # torch's own traceable wrapper subclass

DEVICE = device_type()
EXPORT_API = "torch._functorch.aot_autograd.aot_export_joint_with_descriptors"
COMPILE_API = "torch._functorch.aot_autograd.aot_compile_joint_with_descriptors"
EXACT = {"atol": 0.0, "rtol": 0.0}
TOLERANCE = EXACT if DEVICE == "cpu" else {"atol": 1e-5, "rtol": 1e-5}  # random-valued float32 models

# Dtype spaces: torch's own list, then the limited-support dtypes of the installed release.
STANDARD_DTYPES = tuple(all_types_and_complex_and(torch.half, torch.bfloat16, torch.bool))
UNSIGNED_DTYPES = tuple(getattr(torch, f"uint{bits}") for bits in (16, 32, 64) if hasattr(torch, f"uint{bits}"))
FLOAT8_DTYPES = tuple(getattr(torch, name) for name in ("float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz",
                                                        "float8_e5m2fnuz", "float8_e8m0fnu") if hasattr(torch, name))
ALL_DTYPES = STANDARD_DTYPES + UNSIGNED_DTYPES + FLOAT8_DTYPES
GRAD_DTYPES = tuple(d for d in STANDARD_DTYPES if d.is_floating_point or d.is_complex)
# argmax of the input itself: upstream's exception type where CPU has no kernel (raised when the graph runs).
ARGMAX_REFUSED = {**{d: RuntimeError for d in (torch.bool, torch.complex64, torch.complex128)},
                  **{d: NotImplementedError for d in UNSIGNED_DTYPES + FLOAT8_DTYPES}}
SPARSE_LAYOUTS = {  # label: (conversion, exception type of an export from such an example, None: accepted)
    "COO": (lambda t: t.to_sparse(), None), "CSR": (lambda t: t.to_sparse_csr(), AssertionError),
    "CSC": (lambda t: t.to_sparse_csc(), AssertionError), "BSR": (lambda t: t.to_sparse_bsr((2, 2)), AssertionError),
    "BSC": (lambda t: t.to_sparse_bsc((2, 2)), AssertionError)}
SPARSE_EAGER_REFUSED = {"BSR": RuntimeError, "BSC": RuntimeError}  # CPU mm: no SparseBsc operand (BSR: in backward)

COMPILERS_ON_COMPILE = torch_version_at_least("2.10")
COMPILER_KEYWORDS = ("partition_fn",) * COMPILERS_ON_COMPILE + ("fw_compiler", "bw_compiler")
EXPORT_KEYWORDS = ["decompositions", "keep_inference_input_mutations", "ignore_shape_env"]
EXPORT_KEYWORDS += (["disable_functionalization", "_record_nn_module_stack"] if torch_version_at_least("2.10")
                    else ["fw_compiler", "bw_compiler"])
EXPORT_KEYWORDS += ["_disable_torch_fn_metadata_mode"] if torch_version_at_least("2.11") else []
SERIALIZABLE_ON_COMPILE = torch_version_at_least("2.11")
COMPILE_KEYWORDS = list(COMPILER_KEYWORDS) * COMPILERS_ON_COMPILE + ["serializable"] * SERIALIZABLE_ON_COMPILE
DISABLE_FUNCTIONALIZATION_APPLIES = BACKWARD_KEEPS_RNG = torch_version_at_least("2.11")  # 2.9/2.10: redraws dropout
CHECKS_ARGUMENT_COUNT = torch_version_at_least("2.10")
TOO_FEW_ERROR = RuntimeError if CHECKS_ARGUMENT_COUNT else StopIteration
PLAIN_FOR_SUBCLASS_ERROR = AssertionError if torch_version_at_least("2.12") else TOO_FEW_ERROR
NESTED_SUBCLASS_SIZES = torch_version_at_least("2.14")  # dynamic TwoTensor: inner tensors' sizes are primals too
TO_DENSE_DROPS_SPARSE_GRAD = not torch_version_at_least("2.14")  # the joint graph's gradient of a COO leaf: None


# --------------------------------------------------------------------------- data
def values(shape, dtype=torch.float32, start=0):
    """Integer values that differ per position, exact in ``dtype`` (float8_e8m0fnu: powers of two) from ``start``."""
    n = torch.arange(start, start + math.prod(shape), dtype=torch.float64).reshape(shape)
    if dtype == torch.bool:
        return n % 3 != 1
    if dtype.is_complex:
        return torch.complex(n % 7 - 3, 2 - n % 5).to(dtype)
    if dtype == getattr(torch, "float8_e8m0fnu", None):
        return (2.0 ** (n % 5 - 2)).to(dtype)
    if dtype in (torch.uint8,) + UNSIGNED_DTYPES:
        return (n % 13).to(dtype)
    return (n % 7 - 3).to(dtype)


# A fresh copy on DEVICE (``.to`` alone would alias a CPU tensor on a CPU run); fresh leaves requiring grad where
# the originals do (what a caller passes as parameters); position-dependent weights of the loss sum(out * weights).
def on_device(tensor): return tensor.detach().clone().to(DEVICE)
def home_device(): return torch.empty(0, device=DEVICE).device  # with its index, as every example
def leaf_copies(tensors): return [t.detach().clone().requires_grad_(t.requires_grad) for t in tensors]
def cotangent(output): return values(output.shape, output.dtype, start=1).to(output.device)
def beyond_float32(t): return t + (2 ** -12 + 2 ** -40) if t.dtype in (torch.float64, torch.complex128) else t


@contextlib.contextmanager
def captured_stdout():  # what the block writes to file descriptor 1 (C++ std::cout too), in the list it yields
    saved, box = sys.stdout.flush() or os.dup(1), []
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), 1)
        try:
            yield box
        finally:
            sys.stdout.flush()
            os.close(os.dup2(saved, 1) and saved)
            box.append(os.pread(sink.fileno(), 1 << 20, 0).decode())


def build_models(model_fn, seed=0):
    """A seeded CPU reference module (train mode) and an identical copy on DEVICE; the global RNG is untouched."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        reference = model_fn()
    return reference, copy.deepcopy(reference).to(DEVICE)


class Exported:
    """Export (grad mode ``grad``) and compile a fresh model on ``make(DEVICE)``'s examples (or fake ``examples``);
    ``list_and_keyword``: ``export(stack, mod, [*args], kwargs=kwargs)``. Tests never mutate its modules."""

    def __init__(self, model_fn, make, *, grad=True, list_and_keyword=False, examples=None, **options):
        self.reference, self.model = build_models(model_fn)
        self.make, (self.args, self.kwargs), self.grad = make, make(DEVICE), grad
        export, args = aot_autograd.aot_export_joint_with_descriptors, self.args if examples is None else examples
        with torch.set_grad_enabled(grad), contextlib.ExitStack() as stack:
            self.joint = (export(stack, self.model, list(args), kwargs=self.kwargs, **options) if list_and_keyword
                          else export(stack, self.model, args, self.kwargs, **options))
            self.grad_modes = [torch.is_grad_enabled()]  # right after each call, before the block restores the mode
            self.compiled = aot_autograd.aot_compile_joint_with_descriptors(self.joint)
            self.grad_modes.append(torch.is_grad_enabled())


def inputs(*tensors, grad=False, **kwargs):  # a make(device): fresh copies (floats requiring grad if ``grad``)
    return lambda device: (tuple(t.detach().clone().to(device).requires_grad_(grad and (
        t.is_floating_point() or t.is_complex())) for t in tensors), (
            {k: v.detach().clone().to(device) for k, v in kwargs.items()} if kwargs else None))


# --------------------------------------------------------------------------- models
class Model(nn.Module):
    """A module whose forward is ``fn(self, *args, **kwargs)``; submodules, then parameters (requiring grad where
    the dtype is in GRAD_DTYPES), then buffers are registered in the order given."""

    def __init__(self, fn, modules=(), params=(), buffers=()):
        super().__init__()
        self.fn = fn
        [self.add_module(name, module) for name, module in modules]
        [self.register_parameter(n, nn.Parameter(t, requires_grad=t.dtype in GRAD_DTYPES)) for n, t in params]
        [self.register_buffer(name, tensor) for name, tensor in buffers]

    def forward(self, *args, **kwargs):
        return self.fn(self, *args, **kwargs)


def multi_output_forward(m, x):
    narrow, wide = m.narrow(x), torch.tanh(m.wide(x))
    return narrow, {"wide": wide, "top": wide.argmax(1), "positive": narrow > 0, "count": (wide > 0).sum()}


def dtypes_forward(m, *xs):
    """Per input x: ``x * scale_i`` (also stored in buffer ``last_i``), ``float32(x) / 2``, ``x != 0`` and the
    argmax per row of x (of the float32 row where x's dtype has no argmax kernel)."""
    outs = []
    for i, x in enumerate(xs):
        y = x * getattr(m, f"scale_{i}")
        getattr(m, f"last_{i}").copy_(y)
        real = (x.real if x.is_complex() else x).to(torch.float32) * 0.5
        mask = x != 0
        outs.append((y, real, mask, (real if x.dtype in ARGMAX_REFUSED else x).argmax(1)))
    return outs


def dtypes_model(dtypes):
    return Model(dtypes_forward, params=[(f"scale_{i}", values((3,), d, start=2)) for i, d in enumerate(dtypes)],
                 buffers=[(f"last_{i}", torch.zeros(2, 3).to(d)) for i, d in enumerate(dtypes)])


def dtype_inputs(dtypes):  # one (2, 3) input per dtype (off the float32/16 grid if 64-bit); GRAD_DTYPES' need grad
    return lambda device: (tuple(beyond_float32(values((2, 3), d, start=i)).to(device).requires_grad_(d in GRAD_DTYPES)
                                 for i, d in enumerate(dtypes)), None)


@functools.lru_cache(maxsize=None)  # the dtype model's eager forward and backward on DEVICE
def eager_on_device(dtype): return backward(dtypes_model((dtype,)).to(DEVICE)(*dtype_inputs((dtype,))(DEVICE)[0]))


def device_dtypes():
    """ALL_DTYPES whose eager run (forward and backward) works on DEVICE (all of them on the CPU)."""
    return ALL_DTYPES if DEVICE == "cpu" else tuple(d for d in ALL_DTYPES if eager_error(
        lambda d=d: eager_on_device(d)) is None)


def eager_error(fn, message=False):
    """The exception type ``fn()`` raises (with ``message``: the pair (type, escaped message)), or None."""
    try:
        fn()
    except Exception as exc:
        return (type(exc), re.escape(str(exc))) if message else type(exc)


def layout_forward(m, image, volume, matrix, z):
    """A conv of a rank-4 image, channel and row scales of a rank-5 volume and a matrix (with its argmax and mask), a
    complex scale of z and the mask |z|^2 > 4 (one gradient path: a device may have no complex add)."""
    scaled = z * m.phase
    return (m.conv(image), image * 2, volume * m.channel, matrix * m.row, matrix.argmax(1), matrix > 0, scaled,
            (z * z.conj()).real > 4)


LAYOUT_SHAPES = ((2, 3, 4, 5), (2, 3, 2, 4, 5), (3, 4), (3, 4))
NONCONTIGUOUS_EXAMPLE = {0: lambda t: t.to(memory_format=torch.channels_last), 3: lambda t: t.conj(),
                         1: lambda t: t.to(memory_format=torch.channels_last_3d), 2: lambda t: t.t().contiguous().t()}
LAYOUT_CASES = {  # label: view per input (image, volume, matrix, z: by position) and parameter (by name)
    "contiguous": {}, "channels_last(_3d) image, volume and conv weight, transposed matrix, conj z and phase": {
        **NONCONTIGUOUS_EXAMPLE, "conv.weight": lambda t: t.to(memory_format=torch.channels_last),
        "phase": lambda t: t.conj()},
    "image, z and row sliced with step 2, expanded (stride 0) matrix and channel, neg view z and phase": {
        0: lambda t: torch.cat([t, t], -1)[..., ::2], 2: lambda t: t[:1].expand(3, 4),
        3: lambda t: torch._neg_view(torch.cat([t, t], -1)[:, ::2]), "row": lambda t: torch.cat([t, t])[::2],
        "channel": lambda t: t[:1].expand(3, 1, 1, 1), "phase": lambda t: torch._neg_view(t)},
    "matrix sliced with step 2, expanded z, conj of a transposed neg view z": {
        2: lambda t: torch.cat([t, t])[::2], 3: lambda t: torch._neg_view(t.t().contiguous()).t().conj()[1:2].expand(
            3, 4)}}


def layout_inputs(views):  # float32 image/volume/matrix, complex64 z viewed as ``views`` says, requiring grad
    dtypes = (torch.float32, torch.float32, torch.float32, torch.complex64)
    return lambda device: (tuple(views.get(i, lambda t: t)(values(shape, dtype, start=i).to(device)).requires_grad_(
        True) for i, (shape, dtype) in enumerate(zip(LAYOUT_SHAPES, dtypes))), None)


SPARSE_BASE = torch.tensor([[0.0, 1, 0, 2], [3, 0, 0, 0], [0, 0, 4, 5], [0, -6, 0, 0]])
SIZE_CASES = {  # label: CPU input
    "square, transposed": values((4, 4)).t(), "0-d input": values(()),
    "batch of 0": values((0, 3)), "inner dimension of 0": values((2, 0)), "size-1 dimensions": values((1, 3, 1))}


def side_effect_forward(m, x):
    m.calls.add_(1)
    x.mul_(2)
    return x, x[1:], x * m.weight + m.calls


def aliased_views(grad):
    """make(): views base[:4], base[2:] of a non-leaf base (a leaf's clone, requiring grad if grad); make.last."""
    def make(device):
        leaf = values((6,), start=1).to(device).requires_grad_(grad)
        with torch.set_grad_enabled(grad):  # whatever the caller's mode: base and views record autograd if grad
            make.last = (leaf, leaf.clone())
            return (make.last[1][:4], make.last[1][2:]), None
    return make


# Two outputs viewing one intermediate; an ordered-effect op (a token threads it); COO, invariants opted in (2.13 warns)
def halves(y): return y[:3], y[3:]
def with_argmax_and_mask(out): return out, out.argmax(1), out > 0
def weight_4x3(): return [("weight", values((4, 3)))]
def printing(x): return torch.ops.aten._print("aot effect") or x
def sparse_coo(i, v): return torch.sparse_coo_tensor(torch.tensor(i), torch.tensor(v), (4, 4), check_invariants=True)


UNCOALESCED = ([[0, 1, 0, 2], [1, 0, 1, 3]], [1.0, 2, 3, 4])  # indices, values: (0, 1) twice
MIXED_DTYPES = (torch.half, torch.bfloat16, torch.int64, torch.complex64)  # h, b, i, z
MIXED_PAIRS = ((0, 4), (1, 4), (2, 4), (0, 1), (2, 0), (3, 0), (0, 1))  # operands of the first 7 outputs (4: w)
SPARSE_VARIANTS = {  # label: a CPU COO example, (sparse_dim, dense_dim, nnz), all uncoalesced
    "uncoalesced (duplicate indices)": (lambda: sparse_coo(*UNCOALESCED), (2, 0, 4)),
    "hybrid (one dense dim)": (lambda: sparse_coo([[0, 2, 0]], [[1.0, 2, 0, 0], [0, 0, 3, 4], [5, 0, 0, 6]]),
                               (1, 1, 3))}
TWO_TENSOR_CASES = {  # label: (shape, dtype, view of each inner tensor); float/complex cases require grad
    **{str(d): ((2, 3), d, lambda t: t) for d in STANDARD_DTYPES},
    "channels_last": ((2, 3, 4, 5), torch.float32, lambda t: t.contiguous(memory_format=torch.channels_last)),
    "transposed": ((2, 3, 4, 5), torch.float32, lambda t: t.transpose(1, 3)),
    "sliced with step 2": ((2, 3, 4, 6), torch.float32, lambda t: t[..., ::2]),
    "expanded (stride 0)": ((1, 3), torch.float32, lambda t: t.expand(4, 3)),
    "batch of 0": ((0, 3), torch.float32, lambda t: t), "0-d": ((), torch.float32, lambda t: t),
    "size-1 dimensions": ((1, 3, 1), torch.float32, lambda t: t)}


def two_tensor_cases():  # TWO_TENSOR_CASES whose x * 2 (the model's op) the device computes (all on the CPU)
    return {k: c for k, c in TWO_TENSOR_CASES.items() if DEVICE == "cpu" or not vehicle_refusal(
        f"x * 2 in {c[1]} on {DEVICE}", lambda c=c: torch.ones(2, dtype=c[1], device=DEVICE) * 2)}


MODELS = {  # name: factory of the CPU reference module
    "linear": lambda: Model(lambda m, x: m.proj(x), [("proj", nn.Linear(3, 2))]),  # proj.weight before proj.bias
    "batchnorm": lambda: Model(lambda m, x: torch.tanh(m.norm(m.proj(x))),  # train mode: 3 buffers mutated
                               [("proj", nn.Linear(3, 4)), ("norm", nn.BatchNorm1d(4))]),
    "multi_output": lambda: Model(multi_output_forward, [("wide", nn.Linear(3, 4)), ("narrow", nn.Linear(3, 2))]),
    "keyword": lambda: Model(lambda m, x, *, scale, shift: m.proj(x) * scale + shift, [("proj", nn.Linear(3, 2))]),
    "dtypes": lambda: dtypes_model(device_dtypes()),
    "layout": lambda: Model(layout_forward, [("conv", nn.Conv2d(3, 2, kernel_size=2))], [
        ("channel", torch.tensor([1.0, -2.0, 0.5]).view(3, 1, 1, 1)), ("row", torch.tensor([1.0, -1.0, 2.0, 0.5])),
        ("phase", values((3, 4), torch.complex64, start=3))]),  # z's shape: no complex sum in backward
    "sparse": lambda: Model(lambda m, x: with_argmax_and_mask(torch.mm(x, m.weight)), params=weight_4x3()),  # any x
    "sizes": lambda: Model(  # Linear of a batch of 0, then (x * scale_i, its sum) per further input
        lambda m, empty, *xs: (m.proj(empty), [(x * getattr(m, f"scale_{i}"), (x * getattr(m, f"scale_{i}")).sum())
                                               for i, x in enumerate(xs)]),
        [("proj", nn.Linear(3, 2))], [(f"scale_{i}", torch.tensor(1.5)) for i in range(len(SIZE_CASES))]),
    "side_effect": lambda: Model(side_effect_forward, params=[("weight", torch.tensor([1.0, 2.0, 3.0]))],
                                 buffers=[("calls", torch.zeros(()))]),
    "input_mutation": lambda: Model(lambda m, x: x.mul_(2) * m.weight, params=[("weight", values((3,), start=4))]),
    "view_base": lambda: Model(lambda m, a, b: a.mul_(2) * m.weight + b, params=[("weight", values((4,), start=2))]),
    "intermediate": lambda: Model(lambda m, x: halves(x * m.weight), params=[("weight", values((6,), start=2))]),
    "tokens": lambda: Model(lambda m, x: printing(x) * m.weight, params=[("weight", values((3,), start=2))]),
    "mixed": lambda: Model(lambda m, h, b, i, z: (h + m.weight, b * m.weight, i * m.weight, h * b, i + h, z * h,
                                                  torch.where(i > 0, h, b), i // 2, h > b),
                           params=[("weight", values((3,), start=2) / 4)]),
    "sparse_variant": lambda: Model(lambda m, x: (x * m.scale, torch.mm(x.to_dense(), m.weight)),  # x's indices kept
                                    params=weight_4x3(), buffers=[("scale", torch.tensor(3.0))]),
    "two_tensor": lambda: Model(lambda m, *xs: [x * 2 for x in xs]),
    "sparse_mm": lambda: Model(lambda m, *xs: [torch.sparse.mm(x, m.weight) for x in xs], params=weight_4x3()),
    "to_dense": lambda: Model(lambda m, *xs: [torch.mm(x.to_dense(), m.weight) for x in xs], params=weight_4x3()),
    "scale": lambda: Model(lambda m, x: x * m.weight, params=[("weight", values((3,), start=1))]),
    "views": lambda: Model(lambda m, x, z: (x.t(), z.detach(), z.real, z.conj()))}  # outputs viewing the inputs
EXPORTS = {  # name: (model, make(device) of the example inputs, Exported keywords: grad mode, call form, options)
    "linear": ("linear", inputs(values((2, 3)) / 2), {}),
    "linear/inference": ("linear", inputs(values((2, 3)) / 2), {"grad": False}),
    "batchnorm": ("batchnorm", inputs(values((5, 3)) / 4), {}),
    "multi_output": ("multi_output", inputs(values((4, 3)) / 2, grad=True), {}),
    "keyword": ("keyword", inputs(values((4, 3)), scale=torch.tensor(2.0), shift=values((2,))),
                {"list_and_keyword": True}),
    "dtypes": ("dtypes", lambda device: dtype_inputs(device_dtypes())(device), {}),
    "layouts/contiguous": ("layout", layout_inputs({}), {}),
    "layouts/non-contiguous": ("layout", layout_inputs(NONCONTIGUOUS_EXAMPLE), {}),
    "sparse/dense": ("sparse", inputs(SPARSE_BASE), {}),
    "sizes": ("sizes", inputs(torch.zeros(0, 3), *SIZE_CASES.values(), grad=True), {}),
    **{f"side_effect/{m}": ("side_effect", inputs(torch.tensor([1.0, 2.0, 3.0])), {"grad": m == "training"})
       for m in ("training", "inference")},
    "input_mutation": ("input_mutation", inputs(torch.ones(3)), {"grad": False}),
    **{f"input_mutation/{k}": ("input_mutation", inputs(torch.ones(3)), {"grad": False, option: True})
       for k, option in (("keep", "keep_inference_input_mutations"), ("disable", "disable_functionalization"))},
    **{f"view_base/{m}": ("view_base", aliased_views(m == "training"), {"grad": m == "training"})
       for m in ("training", "inference")},
    "intermediate": ("intermediate", inputs(values((6,))), {}), "tokens": ("tokens", inputs(values((3,)) / 2), {}),
    "views": ("views", inputs(values((2, 3)), values((3, 2), torch.complex64).t()), {}),  # z transposed (kept by .to)
    "mixed": ("mixed", inputs(*(values((2, 3), d, start=i) * (1 if i == 2 else 0.25) for i, d in
                                enumerate(MIXED_DTYPES)), grad=True), {}),
    **{f"sparse/{label}": ("sparse_variant", inputs(example()), {}) for label, (example, _) in SPARSE_VARIANTS.items()},
    "two_tensor": ("two_tensor", lambda device: (tuple(TwoTensor(view(values(shape, d).to(device)), view(values(
        shape, d, start=5).to(device))).requires_grad_(d in GRAD_DTYPES) for shape, d, view in
        two_tensor_cases().values()), None), {}),
    "linear/two_tensor": ("linear", lambda device: ((TwoTensor(values((2, 3), start=1).to(device), values(
        (2, 3), start=4).to(device) / 2),), None), {})}


FX_GETTER_LAYOUTS = {  # name: assert_fx_getters keywords where placeholders lead or an output gets no tangent
    **{f"view_base/{m}": {"leading": 1, "plain_inputs": ()} for m in ("training", "inference")},  # base replaces both
    "intermediate": {"untangented": (0, 1)}, "tokens": {"leading": 1}}  # the base's tangent; the effect token
_SHARED = {}  # name in EXPORTS: its Exported


def shared(name):
    """The export + compile ``name`` of EXPORTS (in its context, if any; warnings recorded), paid once per run."""
    if name not in _SHARED:
        model, make, options, *context = EXPORTS[name]
        with warnings.catch_warnings(record=True) as caught, (context or [contextlib.nullcontext])[0]():
            warnings.simplefilter("always")
            _SHARED[name] = Exported(MODELS[model] if isinstance(model, str) else model, make, **options)
        _SHARED[name].warnings = [str(w.message) for w in caught]
    return _SHARED[name]


# --------------------------------------------------------------------------- graph helpers
# [(name, descriptor)] of the placeholders; descriptors of the outputs; call_function targets ("aten.mul.Tensor").
def placeholders(gm): return [(node.name, node.meta.get("desc")) for node in gm.graph.nodes if node.op == "placeholder"]
def output_descriptors(gm): return list([node for node in gm.graph.nodes if node.op == "output"][0].meta["desc"])
def graph_ops(gm): return [str(node.target) for node in gm.graph.nodes if node.op == "call_function"]
def parameter_names(model): return [name for name, _ in model.named_parameters()]
def buffer_names(model): return [name for name, _ in model.named_buffers()]
def aot_module(name): return importlib.import_module(f"torch._functorch._aot_autograd.{name}")  # only where the API is
# A tensor's (shape, dtype, True) if ``needed`` and it requires grad, else None; what export traces of an example's
# layout: strides and conj bit (sparse: the layout); a node's (shape, dtype, whether among pool's nodes), or None.
def wanted_meta(t, needed): return (tuple(t.shape), t.dtype, True) if needed and t.requires_grad else None
def traced_layout(t): return (t.layout, t.stride(), t.is_conj()) if t.layout == torch.strided else t.layout
def node_meta(n, pool): return None if n is None else (tuple(n.meta["val"].shape), n.meta["val"].dtype, n in pool)


# Upstream's documented answers per descriptor kind: expr() (a nested one by its own expr), the is_* that is True
DESCRIPTOR_FORMS = {  # (is_param/is_buffer/is_tangent/is_grad; a subclass part answers as its base)
    "ParamAOTInput": ("self.get_parameter({target!r})", "is_param"), "PlainAOTInput": ("args[{idx}]", None),
    "BufferAOTInput": ("self.get_buffer({target!r})", "is_buffer"), "PlainAOTOutput": ("output[{idx}]", None),
    "TangentAOTInput": ("__output_tangent({output})", "is_tangent"), "GradAOTOutput": ("__grad({grad_of})", "is_grad"),
    "InputMutationAOTOutput": ("__input_mutation({mutated_input})", None),
    "SubclassGetAttrAOTInput": ("{base}.{attr}", "base"), "SubclassGetAttrAOTOutput": ("{base}.{attr}", "base"),
    "SubclassSizeAOTInput": ("{base}.size({idx})", None), "SubclassStrideAOTInput": ("{base}.stride({idx})", None),
    "SubclassSizeAOTOutput": ("{base}.size({idx})", None), "ViewBaseAOTInput": ("{base_of}._base", None),
    "IntermediateBaseAOTOutput": ("__intermediate_base({base_of})", None),
    "ForwardTokenAOTInput": ("__forward_token{idx}", None), "ForwardTokenAOTOutput": ("__forward_token{idx}", None)}


def expected_answers(desc):
    """(expr(), the is_* query answering True) that upstream documents for ``desc`` ("base": the base's query)."""
    form, query = DESCRIPTOR_FORMS[type(desc).__name__]
    fields = {k: expected_answers(v)[0] if type(v).__name__ in DESCRIPTOR_FORMS else v for k, v in vars(desc).items()}
    return form.format(**fields), (expected_answers(desc.base)[1] if query == "base" else query)


def recording_compiler(stage, events):
    """An AOT compiler that logs when it compiles and when its compiled code runs, then runs the graph."""
    def compiler(graph_module, example_inputs):
        events.append((stage, "compile", graph_module, len(example_inputs)))
        return aot_autograd.make_boxed_func(lambda *args: events.append((stage, "run")) or graph_module(*args))
    return compiler


def backward(outputs):
    """Backpropagate ``sum(output * cotangent)`` over the strided outputs that require grad (real part)."""
    products = [o * cotangent(o) for o in pytree.tree_leaves(outputs)
                if isinstance(o, torch.Tensor) and o.requires_grad and o.layout == torch.strided]
    if products:  # the real part before the sum: a device may sum no complex
        torch.stack([(p.real if p.is_complex() else p).sum().float() for p in products]).sum().backward()


def run(exported, make, device, *, compiled, grad=True, calls=1, params=None, backprop=True):
    """Call the compiled callable (fresh parameter leaves and buffer copies on ``device``) or an eager copy of the
    reference (on ``device``) ``calls`` times with ``make(device)``'s inputs, backpropagating after each call.
    Returns the named results: outputs (last call), parameter and input gradients, buffers, inputs after the calls."""
    module = None if compiled else copy.deepcopy(exported.reference).to(device)
    names = parameter_names(exported.reference)
    if compiled:
        params = leaf_copies(exported.model.parameters()) if params is None else params
        for param in params:  # given leaves start without gradients
            param.grad = None
        buffers = [b.clone() for b in exported.model.buffers()]
    else:  # given parameters are swapped in with their layouts (views, memory formats) by functional_call
        params = list(module.parameters()) if params is None else [
            p.detach().to(device).requires_grad_(p.requires_grad) for p in params]
        buffers = list(module.buffers())
    args, kwargs = make(device)
    for _ in range(calls):
        with torch.set_grad_enabled(grad):
            out = (exported.compiled(*params, *buffers, *args, **(kwargs or {})) if compiled else
                   torch.func.functional_call(module, dict(zip(names, params)), args, kwargs or {}))
            if torch.is_grad_enabled() is not grad:
                raise AssertionError(f"a call under grad mode {grad} left grad mode {torch.is_grad_enabled()}")
        if backprop:
            with torch.enable_grad():
                backward(out)
    return ([("output", out)] + [(f"gradient of {n}", p.grad) for n, p in zip(names, params)]
            + [(f"buffer {n}", b) for n, b in zip(buffer_names(exported.reference), buffers)]
            + [(f"input {i}", a) for i, a in enumerate(args)]
            + [(f"gradient of input {i}", getattr(a, "grad", None) if getattr(a, "is_leaf", True) else None)
               for i, a in enumerate(args)] + [(f"keyword {k}", v) for k, v in (kwargs or {}).items()])


class AotTestCase(TestCase):
    """Builds its ``shared_exports`` in setUpClass (once per process); compares the compiled callable with eager."""

    shared_exports = ()

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        for name in cls.shared_exports:
            shared(name)

    def assert_same_leaf(self, what, got, want, tol):
        if not isinstance(want, torch.Tensor):
            self.assert_value(got, want, what)
            return
        if hasattr(want, "__tensor_flatten__"):  # a traceable subclass (TwoTensor): its type, then each inner tensor
            self.assertIs(type(got), type(want), f"{what}: tensor subclass")
            for name in want.__tensor_flatten__()[0]:
                self.assert_same_leaf(f"{what}.{name}", getattr(got, name), getattr(want, name), tol)
            return
        float8 = want.dtype.itemsize == 1 and want.dtype.is_floating_point  # assert_close: float8 compares bitwise only
        self.assert_tensor(got, want, what, device=DEVICE, **(EXACT if float8 else tol))
        self.assert_value(got.device, home_device(), f"{what}: device (the examples' index)")
        self.assert_value(got.requires_grad, want.requires_grad, f"{what}: requires_grad")
        if want.layout == torch.strided:
            self.assert_value((got.is_conj(), got.is_neg()), (want.is_conj(), want.is_neg()), f"{what}: conj/neg bits")
            # A device may choose other strides; its memory format must still be eager's.
            formats = [torch.contiguous_format] + [{4: torch.channels_last, 5: torch.channels_last_3d}.get(want.dim())]
            layout = (lambda t: t.stride()) if DEVICE == "cpu" else (
                lambda t: [t.is_contiguous(memory_format=f) for f in formats if f is not None])
            self.assert_value(layout(got), layout(want), f"{what}: strides (memory formats on an accelerator)")

    def assert_descriptors(self, label, gm, ins=None, outs=None):
        """Placeholders' and outputs' descriptors are ``ins``/``outs`` (where given); every one answers upstream's
        expr() and the is_* queries (a subclass part as its base, a size or a base of views none)."""
        if ins is not None:
            self.assert_value(([desc for _, desc in placeholders(gm)], output_descriptors(gm)), (ins, outs),
                              f"{label}: descriptors")
        for desc in [desc for _, desc in placeholders(gm)] + [o for o in output_descriptors(gm) if o is not None]:
            queries = ("is_grad",) if hasattr(desc, "is_grad") else ("is_param", "is_buffer", "is_tangent")
            want, true_query = expected_answers(desc)
            self.assert_value((desc.expr(), {q: getattr(desc, q)() for q in queries}), (want, {
                q: q == true_query for q in queries}), f"{label}: expr() and {'/'.join(queries)} of {desc!r}")

    def assert_fx_getters(self, label, exported, leading=0, plain_inputs=None, untangented=()):
        """``fx_utils``' seven named getters against named_parameters()/named_buffers() and the examples, never the
        graph: parameters, buffers, plain inputs (``plain_inputs``, default all) in order after ``leading`` placeholders
        with the examples' shapes, dtypes, layouts; gradients and tangents where eager's tensors require grad."""
        helpers, d, training = aot_module("fx_utils"), aot_module("descriptors"), exported.grad
        graph, model, (args, kwargs) = exported.joint.graph_module.graph, exported.model, exported.make("cpu")
        user, kwargs = list(args) + list((kwargs or {}).values()), kwargs or {}
        with torch.set_grad_enabled(training), captured_stdout():
            eager = pytree.tree_leaves(copy.deepcopy(exported.reference)(*args, **kwargs))
        params, buffers = list(model.named_parameters()), list(model.named_buffers())
        nodes, results = graph.find_nodes(op="placeholder"), list(graph.find_nodes(op="output")[0].args[0])
        plain = range(len(user)) if plain_inputs is None else plain_inputs
        primals = params + buffers + [(i, user[i]) for i in plain]
        at = {key: nodes[leading + k] for k, (key, _) in enumerate(primals)}
        pairs = [(k, n, node_meta(g, results)) for get in ("get_param_and_grad_nodes", "get_plain_input_and_grad_nodes")
                 for k, (n, g) in getattr(helpers, get)(graph).items()]
        for what, got, wanted in [
                ("named parameters, buffers", [list(helpers.get_named_param_nodes(graph).items()),
                                               list(helpers.get_named_buffer_nodes(graph).items())],
                 [[(n, at[n]) for n, _ in params], [(n, at[n]) for n, _ in buffers]]),
                ("parameter, buffer nodes", [helpers.get_param_nodes(graph), helpers.get_buffer_nodes(graph)],
                 [[at[n] for n, _ in params], [at[n] for n, _ in buffers]]),
                ("primal shapes, dtypes, layouts", [node_meta(n, nodes) + (traced_layout(n.meta["val"]),)
                                                    for n in at.values()],
                 [(tuple(t.shape), t.dtype, True, traced_layout(t)) for _, t in primals]),
                ("(param or plain input, node, gradient)", pairs, [
                    (d.ParamAOTInput(target=n) if isinstance(n, str) else d.PlainAOTInput(idx=n), at[n],
                     wanted_meta(t, training)) for n, t in params + primals[len(params) + len(buffers):]]),
                ("(plain output, node, tangent)", [(k, node_meta(n, results), node_meta(t, nodes)) for k, (n, t) in
                                                   helpers.get_plain_output_and_tangent_nodes(graph).items()],
                 [(d.PlainAOTOutput(idx=j), (tuple(o.shape), o.dtype, True),
                   wanted_meta(o, training and j not in untangented)) for j, o in enumerate(eager)]),
                ("grad mode right after export and compile", exported.grad_modes, [training, training])]:
            self.assert_value(got, wanted, f"{label}: {what}")

    def assert_same_results(self, label, got, want, tol=TOLERANCE):
        """Every named result (see :func:`run`) of ``got`` equals ``want``: structure, then leaf by leaf."""
        self.assert_value([what for what, _ in got], [what for what, _ in want], f"{label}: results")
        for (what, got_value), (_, want_value) in zip(got, want):
            self.assert_value(pytree.tree_structure(got_value), pytree.tree_structure(want_value),
                              f"{label}: structure of {what}")
            for i, (g, w) in enumerate(zip(pytree.tree_leaves(got_value), pytree.tree_leaves(want_value))):
                self.assert_same_leaf(f"{label}: {what} leaf {i}", g, w, tol)

    def assert_same_again(self, label, got, call):
        """On a device ``call()`` gives ``got``'s bits again: a device kernel may not be nondeterministic."""
        if DEVICE != "cpu":
            self.assert_same_results(f"{label}, again", call(), got, EXACT)

    def assert_matches_eager(self, label, exported, make=None, tol=TOLERANCE, eager_grad=None, **options):
        """On DEVICE the callable gives eager CPU's outputs, gradients, buffers, inputs (eager in eager_grad mode).
        Eager on DEVICE is the vehicle: where the device refuses it (a device limit) the case is not applicable."""
        make = make or exported.make
        if DEVICE != "cpu":
            skip_unless_vehicle(self, f"{label} eager on {DEVICE} ({self.id()})",
                                lambda: run(exported, make, DEVICE, compiled=False, **options))
        got = run(exported, make, DEVICE, compiled=True, **options)
        again = (lambda backprop: run(exported, make, DEVICE, compiled=True, backprop=backprop, **options))
        # With backward and without: an op's dispatches per call differ, so an alternating fault shows in one.
        for backprop in (True, False) if DEVICE != "cpu" else ():
            self.assert_same_again(label, got if backprop else again(False), lambda: again(backprop))
        options["grad"] = options.get("grad", True) if eager_grad is None else eager_grad
        self.assert_same_results(label, got, run(exported, make, "cpu", compiled=False, **options), tol)
        return got


@requires_api(EXPORT_API, since="2.9")
class TestAotExportJointWithDescriptors(AotTestCase):
    """aot_export_joint_with_descriptors: specs, descriptors and the joint graph itself."""

    shared_exports = ("linear/inference", "batchnorm", "multi_output", "keyword")

    def test_specs_descriptors_and_the_fx_helpers_that_read_them(self):
        """Specs: the module's names, ([*params, *buffers, *args], kwargs) for both call forms, eager's outputs.
        Placeholders: params, buffers, user inputs (kwargs too), then a tangent per float output (not int64/bool).
        Outputs: M buffer updates, the O forward outputs, then at M + O + i primal i's gradient where it requires grad,
        else None (inference: no tangents, no gradients). expr()/is_* as documented; fx_utils pairs these nodes."""
        d, helpers = aot_module("descriptors"), aot_module("fx_utils")
        for label, mutated in [("batchnorm", 3), ("multi_output", 0), ("keyword", 0), ("linear/inference", 0)]:
            with self.subTest(label):
                exported, gm, training = shared(label), shared(label).joint.graph_module, label != "linear/inference"
                params, buffers = parameter_names(exported.model), buffer_names(exported.model)
                (args, kwargs), joint, model = exported.make("cpu"), exported.joint, exported.model
                kwargs = kwargs or {}
                user, eager_out = list(args) + list(kwargs.values()), copy.deepcopy(exported.reference)(*args, **kwargs)
                in_spec = pytree.tree_structure(([*model.parameters(), *model.buffers(), *args], kwargs))
                self.assert_value((joint.params_spec, joint.buffers_spec, joint.in_spec, joint.out_spec,
                                   type(joint.params_spec), isinstance(gm, torch.fx.GraphModule)),
                                  (params, buffers, in_spec, pytree.tree_structure(eager_out), list, True), label)
                eager = pytree.tree_leaves(eager_out)
                primals = ([d.ParamAOTInput(target=n) for n in params] + [d.BufferAOTInput(target=n) for n in buffers]
                           + [d.PlainAOTInput(idx=i) for i in range(len(user))])
                needs_grad = [t.requires_grad for t in [*model.parameters(), *model.buffers(), *user] if training]
                floats = [j for j, leaf in enumerate(eager) if leaf.is_floating_point() and training]
                tangents = [d.TangentAOTInput(output=d.PlainAOTOutput(idx=j)) for j in floats]
                names = [f"primals_{i + 1}" if training else f"arg{i}_1" for i in range(len(primals))] + [
                    f"tangents_{i + 1}" for i in range(len(floats))]
                self.assert_value(placeholders(gm), list(zip(names, primals + tangents)), f"{label}: placeholders")
                mutations = [d.InputMutationAOTOutput(mutated_input=b) for b in primals[len(params):][:mutated]]
                forward = [d.PlainAOTOutput(idx=j) for j in range(len(eager))]
                self.assert_value(output_descriptors(gm), mutations + forward + [
                    d.GradAOTOutput(grad_of=p) if g else None for p, g in zip(primals, needs_grad)], label + " out")
                self.assert_descriptors(label, gm)
                nodes = [n for n in gm.graph.nodes if n.op == "placeholder"]
                outs = list(next(n for n in gm.graph.nodes if n.op == "output").args[0]) + [None] * len(nodes)
                grads = outs[len(mutations + forward):][:len(primals)] + [None] * len(tangents)
                tans = [None] * mutated + [dict(zip(floats, nodes[len(primals):])).get(j) for j in range(len(eager))]
                self.assert_value([list(helpers.get_all_input_and_grad_nodes(gm.graph).items()),
                                   list(helpers.get_all_output_and_tangent_nodes(gm.graph).items())],
                                  [list(zip(primals + tangents, zip(nodes, grads))),
                                   list(zip(mutations + forward, zip(outs, tans))) + [
                                       (d.GradAOTOutput(grad_of=p), (g, None)) for p, g in zip(primals, grads) if g]],
                                  f"{label}: fx_utils pairs (input, gradient) and (output, tangent)")

    def test_fx_utils_getters_on_every_exported_graph(self):
        """Every shared export but the subclass ones (which every getter refuses) and the subsystems' (tested there):
        see assert_fx_getters."""
        for name, (_, _, options, *_) in EXPORTS.items():
            if not name.startswith(("subsystems/", "two_tensor", "linear/two_tensor")) and set(options) - {
                    "grad", "list_and_keyword"} <= set(EXPORT_KEYWORDS):
                with self.subTest(name):
                    self.assert_fx_getters(name, shared(name), **FX_GETTER_LAYOUTS.get(name, {}))

    def test_joint_graph_computes_outputs_and_vector_jacobian_products(self):
        """graph_module(primals, tangents) returns (forward outputs, gradients) equal to eager autograd.grad."""
        exported = shared("multi_output")
        reference = copy.deepcopy(exported.reference)
        (x,) = exported.args
        with torch.enable_grad():
            x_ref = x.detach().cpu().clone().requires_grad_(True)
            ref_outs = pytree.tree_leaves(reference(x_ref))
            float_outs = [o for o in ref_outs if o.is_floating_point()]
            tangents = [cotangent(o) for o in float_outs]
            forward_outs, grads = exported.joint.graph_module(
                [p.detach() for p in exported.model.parameters()] + [x.detach()], [on_device(t) for t in tangents])
            ref_grads = torch.autograd.grad(float_outs, list(reference.parameters()) + [x_ref], tangents)
        self.assert_same_results("joint graph", [("outputs", list(forward_outs)), ("gradients", list(grads))],
                                 [("outputs", [o.detach() for o in ref_outs]), ("gradients", list(ref_grads))])


@requires_api(COMPILE_API, since="2.9")
class TestAotCompileJointWithDescriptors(AotTestCase):
    """aot_compile_joint_with_descriptors: the callable's outputs, gradients and buffer updates equal eager."""

    shared_exports = ("linear", "linear/inference", "batchnorm", "multi_output", "keyword")

    def test_outputs_gradients_and_updates_match_eager(self):
        """Float, int64 and bool outputs, gradients of parameters and inputs, buffers: eager's, for each model (an
        inference graph's outputs require no grad, even called with grad; a training graph called under no_grad
        records autograd as eager with grad does); the module's own parameters get no gradient and its buffers
        keep their values. Every call leaves the caller's grad mode as it was (checked in :func:`run`)."""
        new_keywords = inputs(values((4, 3), start=5), shift=-values((2,)), scale=torch.tensor(-3.0))
        for label, name, make, calls, grad in [
                ("linear", "linear", None, 1, True), ("multi-output, x requires grad", "multi_output", None, 1, True),
                ("BatchNorm, two calls", "batchnorm", inputs(values((5, 3), start=3) / 2), 2, True),
                ("keyword, new keyword values in another order", "keyword", new_keywords, 1, True),
                ("inference graph called with grad enabled", "linear/inference", None, 1, True),
                ("training graph called under no_grad: records autograd", "multi_output", None, 1, False)]:
            with self.subTest(label):
                exported = shared(name)
                self.assert_matches_eager(label, exported, make, calls=calls, grad=grad,
                                          eager_grad=not name.endswith("inference"))
                self.assert_value([n for n, p in exported.model.named_parameters() if p.grad is not None], [],
                                  f"{label}: module parameters that were not passed get no gradient")
                self.assert_value([n for (n, b), r in zip(exported.model.named_buffers(), exported.reference.buffers())
                                   if not torch.equal(b.cpu(), r)], [], f"{label}: module buffers keep their values")

    def test_changed_parameters_give_the_new_result(self):
        """The callable reads the parameters passed at each call: in-place edits and other tensors both show."""
        exported = shared("linear")
        params = leaf_copies(exported.model.parameters())
        with torch.no_grad():
            exported.compiled(*params, *exported.args)
            [param.mul_(-2.0).add_(0.5) for param in params]
        other = leaf_copies(build_models(MODELS["linear"], seed=7)[1].parameters())
        for label, given in [("parameters changed in place", params), ("other parameter tensors", other)]:
            with self.subTest(label):
                self.assert_matches_eager(label, exported, params=given)


@requires_api(EXPORT_API, since="2.9")
class TestAotJointWithDescriptorsAliasesAndEffects(AotTestCase):
    """Descriptor classes that need a particular program: aliased inputs, aliased outputs, effect tokens, RNG."""

    shared_exports = ("view_base/training", "view_base/inference", "intermediate", "tokens")

    def test_aliased_inputs_one_mutated_become_one_view_base_primal(self):
        """a = base[:4], b = base[2:], a mutated: one ViewBaseAOTInput(args[0]) placeholder, first, for both; the
        callable doubles base[:4] through the views; output, base, the leaf's and weight's gradients are eager's."""
        d = aot_module("descriptors")
        out, w, vb = d.PlainAOTOutput(idx=0), d.ParamAOTInput("weight"), d.ViewBaseAOTInput(base_of=d.PlainAOTInput(0))
        mutation = d.InputMutationAOTOutput(mutated_input=vb)
        for mode, ins, outs in [("training", [vb, w, d.TangentAOTInput(output=mutation), d.TangentAOTInput(output=out)],
                                 [mutation, out, d.GradAOTOutput(grad_of=vb), d.GradAOTOutput(grad_of=w)]),
                                ("inference", [vb, w], [mutation, out])]:
            with self.subTest(mode):
                exported = shared(f"view_base/{mode}")
                self.assert_descriptors(mode, exported.joint.graph_module, ins, outs)
                side = lambda device, compiled=True: run(exported, exported.make, device, compiled=compiled, grad=(
                    exported.grad)) + [("base", exported.make.last[1]), ("leaf grad", exported.make.last[0].grad)]
                sides = [side(DEVICE), side("cpu", False)]
                self.assert_same_again(mode, sides[0], lambda: side(DEVICE))  # the base's clone: the same bits
                self.assert_same_results(mode, *sides, EXACT)  # integer-valued: exact on any device
                self.assert_tensor(sides[0][-2][1], torch.cat([values((4,), start=1) * 2, values((2,), start=5)]),
                                   f"{mode}: base[:4] doubled", device=DEVICE)

    def test_outputs_viewing_one_intermediate_get_an_intermediate_base(self):
        """y = x * w; return y[:3], y[3:]: the graph also returns IntermediateBaseAOTOutput(output[0]), whose tangent
        replaces the two outputs' (none of their own); the callable's outputs are views of one base, as eager's."""
        d, exported = aot_module("descriptors"), shared("intermediate")
        weight, base = d.ParamAOTInput(target="weight"), d.IntermediateBaseAOTOutput(base_of=d.PlainAOTOutput(idx=0))
        self.assert_descriptors("intermediate base", exported.joint.graph_module, [
            weight, d.PlainAOTInput(idx=0), d.TangentAOTInput(output=base)],
            [d.PlainAOTOutput(idx=0), d.PlainAOTOutput(idx=1), base, d.GradAOTOutput(grad_of=weight), None])
        first, second = self.assert_matches_eager("intermediate base", exported, tol=EXACT)[0][1]
        self.assert_value((first._base is not None, first._base is second._base), (True, True), "views of one base")

    def test_an_effectful_op_threads_a_token_and_runs_once_per_call(self):
        """aten._print (an ordered effect): ForwardTokenAOTInput and ForwardTokenAOTOutput, first; export prints
        nothing (fake tensors), the callable prints once per call and otherwise matches eager."""
        d, exported = aot_module("descriptors"), shared("tokens")
        weight, out = d.ParamAOTInput(target="weight"), d.PlainAOTOutput(idx=0)
        self.assert_descriptors("tokens", exported.joint.graph_module, [
            d.ForwardTokenAOTInput(idx=0), weight, d.PlainAOTInput(idx=0), d.TangentAOTInput(output=out)],
            [d.ForwardTokenAOTOutput(idx=0), out, d.GradAOTOutput(grad_of=weight), None])
        with captured_stdout() as by_export:
            Exported(MODELS["tokens"], exported.make)
        with captured_stdout() as by_calls:
            got = run(exported, exported.make, DEVICE, compiled=True, calls=2)
        self.assert_value(by_export + by_calls, ["", "aot effect\n" * 2], "printed by export, by two calls")
        with captured_stdout():  # eager prints as well
            self.assert_same_results("tokens", got, run(exported, exported.make, "cpu", compiled=False, calls=2), EXACT)

    def test_functionalized_rng_needs_a_cuda_rng_state(self):
        """functorch config functionalize_rng_ops=True (the switch that adds Philox seed/offset primals) reads the
        CUDA RNG state: without CUDA export raises RuntimeError, training or inference, even with no random op."""
        from torch._functorch import config
        if torch.cuda.is_available():
            self.skipTest("a CUDA host would trace Philox descriptors: not measured on the kit's machines")
        for grad in (True, False):
            with self.subTest(f"grad {grad}"), config.patch(functionalize_rng_ops=True), torch.set_grad_enabled(grad):
                with contextlib.ExitStack() as stack, self.assert_raises_exactly(RuntimeError, "export", "CUDA"):
                    aot_autograd.aot_export_joint_with_descriptors(stack, shared("linear").model, shared("linear").args)
        self.assert_value(config.functionalize_rng_ops, False, "the switch after the patch")


def add_as_subtraction(calls):
    """A decomposition of ``aten.add.Tensor`` into ``sub(a, neg(b))`` (exact in IEEE arithmetic) that logs calls."""
    def decomposition(a, b, *, alpha=1):
        calls.append("aten.add.Tensor")
        return torch.ops.aten.sub.Tensor(a, torch.ops.aten.neg.default(b), alpha=alpha)
    return decomposition


@requires_api(EXPORT_API, since="2.9")
class TestAotJointWithDescriptorsParameters(AotTestCase):
    """Every keyword of export and compile on the installed torch takes effect (both call forms: shared exports)."""

    shared_exports = ("linear", "linear/inference", "keyword", "input_mutation")

    def test_keyword_options_of_the_installed_release(self):
        """export and compile take exactly the installed release's parameters, with their defaults."""
        for api, positional, keywords in [("export", ["stack", "mod", "args", "kwargs"], EXPORT_KEYWORDS),
                                          ("compile", ["jd"], COMPILE_KEYWORDS)]:
            params = inspect.signature(getattr(aot_autograd, f"aot_{api}_joint_with_descriptors")).parameters
            kinds = [(n, "POSITIONAL_OR_KEYWORD") for n in positional] + [(n, "KEYWORD_ONLY") for n in keywords]
            self.assert_value([(n, p.kind.name) for n, p in params.items()], kinds, f"{api} on {torch.__version__}")
            defaults = {n: None if n in ("decompositions", "kwargs") else False for n in params
                        if n in keywords + ["kwargs"] and n not in COMPILER_KEYWORDS}
            self.assert_value({n: params[n].default for n in defaults}, defaults, f"{api} defaults")

    def test_decompositions_replace_ops_in_the_joint_graph(self):
        """decompositions={aten.add.Tensor: sub(a, neg(b))}: no aten.add in the graph; results stay eager's."""
        calls = []
        self.assertIn("aten.add.Tensor", graph_ops(shared("keyword").joint.graph_module), "default graph has aten.add")
        exported = Exported(MODELS["keyword"], shared("keyword").make, list_and_keyword=True,
                            decompositions={torch.ops.aten.add.Tensor: add_as_subtraction(calls)})
        ops = graph_ops(exported.joint.graph_module)
        self.assertTrue(calls, "the decomposition function was called while tracing")
        self.assertNotIn("aten.add.Tensor", ops, "aten.add.Tensor left in the decomposed graph")
        self.assertTrue({"aten.sub.Tensor", "aten.neg.default"} <= set(ops), f"sub/neg in the graph: {ops}")
        self.assert_matches_eager("decomposed graph", exported)

    def test_input_mutation_keywords_shape_the_graph_and_apply_the_mutation_once(self):
        """keep_inference_input_mutations=True ends the graph in aten.copy_, returning no mutated input;
        disable_functionalization=True keeps aten.mul_ (2.11+; 2.10 ignores, 2.9.1 refuses it). Each callable
        doubles x once per call and returns 2x * weight, as eager does, over two calls."""
        d = aot_module("descriptors")
        mutated_x = d.InputMutationAOTOutput(mutated_input=d.PlainAOTInput(idx=0))
        for label, name, copy_op, mul_op in [
                ("default", "input_mutation", False, False),
                ("keep_inference_input_mutations=True", "input_mutation/keep", True, False),
                ("disable_functionalization=True", "input_mutation/disable", False, DISABLE_FUNCTIONALIZATION_APPLIES)]:
            with self.subTest(label):
                if name.endswith("disable") and "disable_functionalization" not in EXPORT_KEYWORDS:
                    with self.assert_raises_exactly(TypeError, f"{label} on {torch.__version__}", "disable_func"):
                        shared(name)
                    continue
                exported = shared(name)
                ops, outputs = graph_ops(exported.joint.graph_module), output_descriptors(exported.joint.graph_module)
                self.assert_value(("aten.copy_.default" in ops, "aten.mul_.Tensor" in ops), (copy_op, mul_op),
                                  f"{label}: (aten.copy_, aten.mul_) in the graph {ops}")
                if not name.endswith("disable"):
                    self.assert_value(mutated_x in outputs, not copy_op, f"{label}: the graph returns x's new value")
                self.assert_matches_eager(label, exported, inputs(torch.tensor([1.0, -2.0, 3.0])), grad=False, calls=2,
                                          tol=EXACT)

    def test_ignore_shape_env_keeps_int_inputs_out_of_the_shape_env(self):
        """With fake inputs under a ShapeEnv an int input becomes a SymInt placeholder, unless ignore_shape_env."""
        _, model = build_models(lambda: Model(lambda m, x, n: x * m.weight * n, params=[("weight", torch.ones(3))]))
        for ignore in (False, True):
            with self.subTest(f"ignore_shape_env={ignore}"):
                fake_x = FakeTensorMode(shape_env=ShapeEnv()).from_tensor(on_device(values((2, 3))), static_shapes=True)
                with torch.no_grad(), contextlib.ExitStack() as stack:
                    joint = aot_autograd.aot_export_joint_with_descriptors(stack, model, (fake_x, 3),
                                                                           ignore_shape_env=ignore)
                n_value = [n.meta.get("val") for n in joint.graph_module.graph.nodes if n.op == "placeholder"][-1]
                self.assert_value(isinstance(n_value, torch.SymInt), not ignore,
                                  f"ignore_shape_env={ignore}: the int input's placeholder is a SymInt ({n_value!r})")

    def test_private_tracing_flags_record_module_metadata(self):
        """_record_nn_module_stack=True (2.10+) tags every op with the module stack and the torch function;
        _disable_torch_fn_metadata_mode=True (2.11+) drops the torch-function tag. The ops are unchanged."""
        exported = shared("linear/inference")
        module_stack = [("", f"{Model.__module__}.{Model.__qualname__}"), ("proj", "torch.nn.modules.linear.Linear")]
        for label, options, expected in [
                ("default", {}, (None, None)),
                ("_record_nn_module_stack", {"_record_nn_module_stack": True},
                 (module_stack, "builtin_function_or_method.linear")),
                ("both", {"_record_nn_module_stack": True, "_disable_torch_fn_metadata_mode": True},
                 (module_stack, None))]:
            with self.subTest(label), torch.no_grad(), contextlib.ExitStack() as stack:
                unknown = [name for name in options if name not in EXPORT_KEYWORDS]
                export = aot_autograd.aot_export_joint_with_descriptors
                if unknown:
                    with self.assert_raises_exactly(TypeError, f"{label} on {torch.__version__}", "|".join(unknown)):
                        export(stack, exported.model, exported.args, **options)
                    continue
                joint = export(stack, exported.model, exported.args, **options)
                self.assert_value(graph_ops(joint.graph_module), graph_ops(exported.joint.graph_module), label)
                for node in (n for n in joint.graph_module.graph.nodes if n.op == "call_function"):
                    stack_meta, torch_fn = node.meta.get("nn_module_stack"), node.meta.get("torch_fn")
                    self.assert_value((None if stack_meta is None else list(stack_meta.values()),
                                       None if torch_fn is None else torch_fn[1]), expected,
                                      f"{label}: (nn_module_stack, torch_fn) of {node.name}")

    def test_compilers_and_partition_fn_are_called_and_their_results_used(self):
        """partition_fn (2.10+) splits the joint graph; fw_compiler/bw_compiler compile its two graphs and the
        callable runs the code they return. They are export keywords in 2.9.1, compile keywords from 2.10."""
        from torch._functorch.partitioners import default_partition
        events, partitions = [], []
        partition = (lambda *args, **kwargs: partitions.append(default_partition(*args, **kwargs)) or partitions[-1])
        options = {k: v for k, v in {"partition_fn": partition, "fw_compiler": recording_compiler("fw", events),
                                     "bw_compiler": recording_compiler("bw", events)}.items() if k in COMPILER_KEYWORDS}
        exported = shared("linear")
        _, model = build_models(MODELS["linear"])
        export = aot_autograd.aot_export_joint_with_descriptors
        with torch.enable_grad(), contextlib.ExitStack() as stack:
            if COMPILERS_ON_COMPILE:
                with self.assert_raises_exactly(TypeError, "compiler keywords given to export", "partition_fn"):
                    export(stack, model, exported.args, **options)
                joint = export(stack, model, exported.args)
            else:
                joint = export(stack, model, exported.args, **options)
                with self.assert_raises_exactly(TypeError, "compiler keywords given to compile", "fw_compiler"):
                    aot_autograd.aot_compile_joint_with_descriptors(joint, **options)
            compiled = aot_autograd.aot_compile_joint_with_descriptors(joint, **(
                options if COMPILERS_ON_COMPILE else {}))
        self.assert_value([e[:2] for e in events], [("fw", "compile"), ("bw", "compile")], "compiler calls")
        self.assert_value(events[0][3], 3, "example inputs of the forward compiler (2 params + x)")
        self.assert_value(events[1][3], len(placeholders(events[1][2])), "example inputs of the backward compiler")
        if COMPILERS_ON_COMPILE:
            self.assert_value(len(partitions), 1, "partition_fn calls while compiling")
            self.assert_value([graph_ops(events[0][2]), graph_ops(events[1][2])], [graph_ops(g) for g in partitions[0]],
                              "fw_compiler/bw_compiler compile partition_fn's forward/backward graphs")
        del events[:]
        self.assert_matches_eager("through user compilers", types.SimpleNamespace(**dict(vars(exported),
                                                                                         compiled=compiled)))
        self.assert_value(events, [("fw", "run"), ("bw", "run")] * (1 if DEVICE == "cpu" else 2) + [("fw", "run")] * (
            0 if DEVICE == "cpu" else 2), "the callable runs fw_compiler's then bw_compiler's (device: again, twice "
                          "without backward)")

    def test_serializable_requires_compilers_that_return_output_code(self):
        """serializable=True (2.11+) needs compilers returning an OutputCode: AssertionError with the defaults."""
        exported = shared("linear/inference")
        error, match = (AssertionError, "OutputCode") if SERIALIZABLE_ON_COMPILE else (TypeError, "serializable")
        with torch.no_grad(), contextlib.ExitStack() as stack:
            joint = aot_autograd.aot_export_joint_with_descriptors(stack, exported.model, exported.args)
            with self.assert_raises_exactly(error, f"serializable=True on {torch.__version__}", match):
                aot_autograd.aot_compile_joint_with_descriptors(joint, serializable=True)


@requires_api(EXPORT_API, since="2.9")
class TestAotJointWithDescriptorsDtypes(AotTestCase):
    """Every dtype of the space as input, parameter and mutated buffer; outputs of every dtype compared."""

    shared_exports = ("dtypes", "mixed")

    def test_every_dtype_gives_eager_outputs_gradients_and_buffers(self):
        """One export of all dtypes: per dtype, outputs of that dtype, float32, bool and int64 equal eager's, as do
        the gradients of the GRAD_DTYPES parameters and inputs and the buffers the forward writes."""
        exported = shared("dtypes")
        got = run(exported, exported.make, DEVICE, compiled=True)
        want = run(exported, exported.make, "cpu", compiled=False)
        self.assert_same_again("dtypes", got, lambda: run(exported, exported.make, DEVICE, compiled=True))
        self.assert_value([tuple(o.dtype for o in out) for out in got[0][1]], [(d, torch.float32, torch.bool,
                          torch.int64) for d in device_dtypes()], "output dtypes (x * scale, float32, mask, argmax)")
        self.assert_value([dict(got)[f"gradient of scale_{i}"] is not None for i in range(len(device_dtypes()))],
                          [d in GRAD_DTYPES for d in device_dtypes()], "parameters of the dtypes that get gradients")
        for i, dtype in enumerate(device_dtypes()):
            with self.subTest(str(dtype)):
                mine = (f"scale_{i}", f"last_{i}", f" {i}")
                got_i, want_i = ([(what, value[i] if what == "output" else value) for what, value in side
                                  if what == "output" or what.endswith(mine)] for side in (got, want))
                self.assert_same_results(str(dtype), got_i, want_i, EXACT)  # exact products: exact on any device
        for dtype in sorted(set(ALL_DTYPES) - set(device_dtypes()), key=str):
            with self.subTest(f"{dtype}: eager fails on {DEVICE}"):
                make = dtype_inputs((dtype,))
                error = eager_error(lambda: eager_on_device(dtype))
                with self.assert_raises_exactly(error, f"{dtype} compiled on {DEVICE}"):
                    run(Exported(lambda: dtypes_model((dtype,)), make), make, DEVICE, compiled=True)

    def test_mixed_dtype_ops_promote_and_backpropagate_as_eager(self):
        """float16, bfloat16, int64, complex64 inputs and a float32 weight in one graph: outputs of torch.promote_types
        of the operands (floor division int64, comparison bool); values and gradients (own dtypes) eager's."""
        exported = shared("mixed")
        got, dtypes = self.assert_matches_eager("mixed dtypes", exported, tol=EXACT), MIXED_DTYPES + (torch.float32,)
        self.assert_value([o.dtype for o in got[0][1]], [torch.promote_types(dtypes[a], dtypes[b]) for a, b in
                                                         MIXED_PAIRS] + [torch.int64, torch.bool], "output dtypes")
        self.assert_value([None if g is None else g.dtype for what, g in got if what.startswith("gradient")],
                          [torch.float32, torch.half, torch.bfloat16, None, torch.complex64], "gradient dtypes")

    def test_argmax_of_the_input_raises_upstreams_type_where_no_kernel_exists(self):
        """Running argmax of bool or complex raises RuntimeError, of unsigned or float8 NotImplementedError, as eager
        does (export accepted all of them in the test above: fake tensors need no kernel)."""
        exported = Exported(lambda: Model(lambda m, x: x.argmax(1)), inputs(values((2, 3))), grad=False)
        for dtype, error in ARGMAX_REFUSED.items():
            with self.subTest(str(dtype)):
                x = values((2, 3), dtype)
                self.assertIs(eager_error(lambda: x.argmax(1)), error, f"eager argmax of {dtype} on the CPU")
                error = error if DEVICE == "cpu" else eager_error(lambda: x.to(DEVICE).argmax(1))
                with self.assert_raises_exactly(error, f"compiled argmax of {dtype}"):
                    exported.compiled(x.to(DEVICE))


@requires_api(EXPORT_API, since="2.9")
class TestAotJointWithDescriptorsLayouts(AotTestCase):
    """Memory formats, strided views and conj/neg views of inputs and parameters; sparse ones in ...Sparse."""

    shared_exports = ("layouts/contiguous", "layouts/non-contiguous")

    def test_every_layout_matches_eager_from_either_example(self):
        """Each layout case on the export from contiguous examples, and the export from channels_last(_3d) /
        transposed / conj examples on those layouts: eager's values, strides, conj/neg bits and gradients."""
        for example, cases in [("contiguous", LAYOUT_CASES),
                               ("non-contiguous", {"its own layouts": NONCONTIGUOUS_EXAMPLE})]:
            for label, views in cases.items():
                with self.subTest(f"{label}, exported from {example} examples"):
                    exported = shared(f"layouts/{example}")
                    params = [views.get(n, lambda t: t)(p.detach().clone()).requires_grad_(True)
                              for n, p in exported.model.named_parameters()]
                    self.assert_matches_eager(label, exported, layout_inputs(views), params=params)
        args = shared("layouts/non-contiguous").args
        self.assert_value((args[0].is_contiguous(), args[0].is_contiguous(memory_format=torch.channels_last),
                           args[3].is_conj()), (False, True, True), "the non-contiguous example is what it says")


@requires_api(EXPORT_API, since="2.9")
class TestAotJointWithDescriptorsSparse(AotTestCase):
    """Sparse COO/CSR/CSC/BSR/BSC inputs: to a dense export's callable, and as export examples."""

    shared_exports = ("sparse/dense",) + tuple(f"sparse/{label}" for label in SPARSE_VARIANTS)

    def test_a_dense_export_takes_sparse_inputs_where_eager_does(self):
        """Every sparse layout: the callable gives eager's strided output, argmax, mask and weight gradient, or
        raises eager's exception and message (RuntimeError for BSC, and for BSR in backward: no CPU mm kernel)."""
        exported = shared("sparse/dense")
        for label, (convert, _) in SPARSE_LAYOUTS.items():
            with self.subTest(label):
                make = inputs(convert(SPARSE_BASE))
                error, message = eager_error(lambda: run(exported, make, DEVICE, compiled=False), True) or (None, None)
                if DEVICE == "cpu":
                    self.assertIs(error, SPARSE_EAGER_REFUSED.get(label), f"{label}: eager's refusal on CPU")
                if error is None:
                    self.assert_matches_eager(f"{label} input", exported, make, tol=EXACT)
                    continue
                with self.assert_raises_exactly(error, f"{label} input to the compiled callable", message):
                    run(exported, make, DEVICE, compiled=True)  # the same kernel refuses: eager's message

    def test_export_accepts_coo_examples_and_refuses_compressed_ones(self):
        """A COO example exports (training graph) and its callable matches eager; CSR/CSC/BSR/BSC examples raise
        AssertionError (fake tensors cannot be made of them)."""
        for label, (convert, error) in SPARSE_LAYOUTS.items():
            with self.subTest(label):
                make = inputs(convert(SPARSE_BASE))
                if error is None:
                    self.assert_matches_eager(f"{label} example", Exported(MODELS["sparse"], make), make, tol=EXACT)
                    continue
                # upstream's refusal prints the example: a device that cannot print it cannot form the message
                skip_unless_vehicle(self, f"printing a {label} example on {DEVICE}", lambda: repr(make(DEVICE)[0]))
                with self.assert_raises_exactly(error, f"export from a {label} example", "FakeTensor"):
                    Exported(MODELS["sparse"], make)

    def test_uncoalesced_and_hybrid_coo_examples_stay_uncoalesced(self):
        """Uncoalesced and hybrid COO examples export, compile and run: x * scale keeps eager's raw _indices()/_values()
        (nnz, is_coalesced() False; .indices() would refuse); 2.13's implicit sparse-invariants warning is an error."""
        for label, (example, dims) in SPARSE_VARIANTS.items():
            with self.subTest(label), warnings.catch_warnings():
                warnings.filterwarnings("error", "Sparse invariant checks are implicitly disabled")
                exported = shared(f"sparse/{label}")
                skip_unless_vehicle(self, f"{label} COO eager on {DEVICE}",
                                    lambda: run(exported, inputs(example()), DEVICE, compiled=False))
                sides = [run(exported, inputs(example()), d, compiled=c) for d, c in ((DEVICE, True), ("cpu", False))]
                self.assert_same_again(label, sides[0], lambda: run(exported, inputs(example()), DEVICE, compiled=True))
                got, want = (dict(side)["output"][0] for side in sides)
                self.assert_value((got.is_coalesced(), got.sparse_dim(), got.dense_dim(), got._nnz()),
                                  (False, *dims), f"{label}: the sparse output")
                self.assert_tensor(got._indices(), want._indices(), f"{label}: _indices()", device=DEVICE)
                self.assert_tensor(got._values(), want._values(), f"{label}: _values()", device=DEVICE)
                self.assert_same_results(label, *sides, EXACT)

    def check_sparse_leaves(self, model, examples):
        """MODELS[model] of COO leaves requiring grad: see test_sparse_inputs_requiring_grad."""
        d, dropped = aot_module("descriptors"), model == "to_dense" and TO_DENSE_DROPS_SPARSE_GRAD
        eager = types.SimpleNamespace(reference=build_models(MODELS[model])[0])  # all that an eager run reads
        skip_unless_vehicle(self, f"{model} of COO leaves eager on {DEVICE}",
                            lambda: run(eager, examples, DEVICE, compiled=False))
        gm = (exported := Exported(MODELS[model], examples)).joint.graph_module
        sides = [run(exported, examples, d, compiled=c) for d, c in [(DEVICE, True), ("cpu", False)]]
        self.assert_same_again(model, sides[0], lambda: run(exported, examples, DEVICE, compiled=True))
        for i, label in enumerate(("coalesced", "uncoalesced")):
            with self.subTest(f"{label}: {model}"):
                grad_x = output_descriptors(gm).index(d.GradAOTOutput(grad_of=d.PlainAOTInput(idx=i)))
                self.assert_value(gm.graph.find_nodes(op="output")[0].args[0][grad_x] is None, dropped, "no grad")
                got, want = (dict(side)[f"gradient of input {i}"] for side in sides)
                if dropped:
                    self.assert_value((got, want.layout), (None, torch.sparse_coo), f"{label}: x.grad, eager's")
                    continue
                self.assert_value((got.layout, got._nnz()), (torch.sparse_coo, want._nnz()), f"{label}: x.grad")
                self.assert_tensor(got._indices(), want._indices(), f"{label}: x.grad._indices()", device=DEVICE)
        self.assert_same_results(model, *(sides if not dropped else [side[:1] for side in sides]), EXACT)  # outputs

    def test_sparse_inputs_requiring_grad(self):
        """COO leaves requiring grad (coalesced, uncoalesced): eager's sparse gradients through sparse.mm, through
        to_dense() from 2.14 (None before: pinned); a sparse output refuses export; hybrid sparse.mm: eager's error."""
        examples = inputs(SPARSE_BASE.to_sparse(), sparse_coo(*UNCOALESCED), grad=True)
        for model in ("sparse_mm", "to_dense"):
            with self.subTest(model):
                self.check_sparse_leaves(model, examples)
        with self.subTest("sparse output"), self.assert_raises_exactly(NotImplementedError, "export", "as_strided"):
            Exported(MODELS["sparse_variant"], inputs(sparse_coo(*UNCOALESCED), grad=True))
        hybrid = inputs(SPARSE_VARIANTS["hybrid (one dense dim)"][0]())
        self.assertIs(eager_error(lambda: MODELS["sparse_mm"]()(*hybrid("cpu")[0])), RuntimeError, "eager, hybrid")
        with self.subTest("hybrid"), self.assert_raises_exactly(RuntimeError, "sparse.mm export, hybrid", "matrices"):
            Exported(MODELS["sparse_mm"], hybrid)


def subclass_primals(d, base, nested):
    """Primals of a dynamic (s, 3) TwoTensor ``base``: each inner tensor (with its sizes and stride if ``nested``),
    then the TwoTensor's own sizes and first stride."""
    sizes = (lambda of: [d.SubclassSizeAOTInput(base=of, idx=0), d.SubclassSizeAOTInput(base=of, idx=1),
                         d.SubclassStrideAOTInput(base=of, idx=0)])
    inner = [d.SubclassGetAttrAOTInput(base=base, attr=attr) for attr in "ab"]
    return [desc for part in inner for desc in [part] + (sizes(part) if nested else [])] + sizes(base)


@requires_api(EXPORT_API, since="2.9")
class TestAotJointWithDescriptorsSubclasses(AotTestCase):
    """A traceable tensor subclass (TwoTensor, two inner tensors) as input: one primal per inner tensor."""

    shared_exports = ("linear/two_tensor", "two_tensor")

    def test_a_two_tensor_input_is_desugared_per_inner_tensor_and_rebuilt(self):
        """Descriptors name args[0].a/.b and the .a/.b of the tangent and each gradient, answering as their base;
        every fx_utils getter refuses the graph (RuntimeError); the callable returns a TwoTensor, parts eager's."""
        d, exported = aot_module("descriptors"), shared("linear/two_tensor")
        gm, params = exported.joint.graph_module, [d.ParamAOTInput(target=n) for n in ("proj.weight", "proj.bias")]
        ins = [d.PlainAOTInput(idx=0), d.TangentAOTInput(output=d.PlainAOTOutput(idx=0))]
        outs = [d.PlainAOTOutput(idx=0)] + [d.GradAOTOutput(grad_of=p) for p in params]
        parts = (lambda kind, bases: [getattr(d, kind)(base=b, attr=a) for b in bases for a in "ab"])
        self.assert_descriptors("TwoTensor", gm, params + parts("SubclassGetAttrAOTInput", ins),
                                parts("SubclassGetAttrAOTOutput", outs) + [None])
        getters = [name for name in dir(aot_module("fx_utils")) if name.startswith("get_")]
        self.assert_value(len(getters), 9, f"fx_utils' getters: {getters}")
        for getter in getters:
            with self.assert_raises_exactly(RuntimeError, f"fx_utils.{getter} of a subclass graph", "Subclasses are"):
                getattr(aot_module("fx_utils"), getter)(gm.graph)
        self.assert_matches_eager("TwoTensor input", exported)

    def test_two_tensors_of_every_dtype_layout_and_size_match_eager(self):
        """One export of a TwoTensor per standard dtype, layout and size (TWO_TENSOR_CASES): two primals each; x * 2's
        dtype (bool: int64), parts, strides and gradients (floating and complex) are eager's."""
        cases = two_tensor_cases()
        primals = [n for n, _ in placeholders(shared("two_tensor").joint.graph_module) if n.startswith("primals")]
        self.assert_value(len(primals), 2 * len(cases), "two primals per TwoTensor input")
        got = self.assert_matches_eager("TwoTensor space", shared("two_tensor"), tol=EXACT)
        dtypes = [torch.int64 if case[1] == torch.bool else case[1] for case in cases.values()]
        self.assert_value([out.dtype for out in got[0][1]], dtypes, "output dtypes")
        for label in sorted(set(TWO_TENSOR_CASES) - set(cases)):  # not applicable on this device: said so per case
            with self.subTest(label):
                skip_unless_vehicle(self, f"x * 2 in {TWO_TENSOR_CASES[label][1]} on {DEVICE}", None)  # refused above

    def test_a_plain_tensor_where_a_two_tensor_was_exported_fails_by_accident(self):
        """A plain tensor in the TwoTensor's place fails where the implementation trips (2.9.1 StopIteration, 2.10-2.11
        RuntimeError, 2.12+ AssertionError): this pins internals, not a contract, so a port failing otherwise shows."""
        exported = shared("linear/two_tensor")
        for grad in (True, False):
            with self.subTest(f"grad {grad}"), torch.set_grad_enabled(grad), self.assert_raises_exactly(
                    PLAIN_FOR_SUBCLASS_ERROR, "a plain tensor for a TwoTensor"):
                exported.compiled(*leaf_copies(exported.model.parameters()), on_device(values((2, 3))))

    def test_dynamic_shapes_give_size_and_stride_descriptors(self):
        """Fake examples with a ShapeEnv, static_shapes=False: a plain batch becomes symbolic; a TwoTensor's sizes and
        strides become SubclassSize/Stride primals and outputs (see the docstring per release); other batches run."""
        d = aot_module("descriptors")
        for label, wrap in [("plain", lambda t: t), ("TwoTensor", lambda t: TwoTensor(t, t * 2 + 1))]:
            with self.subTest(label):
                make = (lambda n: lambda device: ((wrap(values((n, 3)).to(device)).requires_grad_(True),), None))
                fake = FakeTensorMode(shape_env=ShapeEnv()).from_tensor(make(4)(DEVICE)[0][0], static_shapes=False)
                refused = label == "TwoTensor" and not torch_version_at_least("2.10")  # its fake mode is not picked up
                with self.assert_raises_exactly(AssertionError, "a fake TwoTensor example on 2.9.1") if refused else \
                        contextlib.nullcontext():
                    exported = Exported(MODELS["scale"], make(4), examples=(fake,))
                if refused:
                    continue
                gm, base = exported.joint.graph_module, d.PlainAOTInput(idx=0)
                primals = [base] if label == "plain" else subclass_primals(d, base, NESTED_SUBCLASS_SIZES)
                self.assert_value([desc for _, desc in placeholders(gm)][1:len(primals) + 1], primals, "primals")
                self.assert_value(isinstance(gm.graph.find_nodes(op="placeholder")[1].meta["val"].shape[0],
                                             torch.SymInt), True, f"{label}: the batch size is symbolic")
                self.assert_value(d.SubclassSizeAOTOutput(base=d.PlainAOTOutput(idx=0), idx=0) in output_descriptors(
                    gm), label == "TwoTensor", "a SubclassSizeAOTOutput")
                self.assert_descriptors(label, gm)
                self.assert_matches_eager(f"{label}, batch 6 (exported at 4)", exported, make(6), tol=EXACT)


@requires_api(EXPORT_API, since="2.9")
class TestAotJointWithDescriptorsSizes(AotTestCase):
    """Distinct and equal sizes, zero-size dimensions, 0-d tensors and size-1 dimensions."""

    shared_exports = ("sizes",)

    def test_sizes_give_eager_shapes_values_and_gradients(self):
        """Per shape x * scale keeps the shape, the total is 0-d, the 0-d scale's gradient is eager's; a Linear
        on a batch of 0 gives a (0, 2) output and zero gradients."""
        got = self.assert_matches_eager("sizes", shared("sizes"), inputs(torch.zeros(0, 3), *(
            x * 2 for x in SIZE_CASES.values()), grad=True), tol=EXACT)
        for (label, x), (scaled, total) in zip(SIZE_CASES.items(), got[0][1][1]):
            self.assert_value((tuple(scaled.shape), tuple(total.shape)), (tuple(x.shape), ()), f"{label}: shapes")
        self.assert_tensor(got[0][1][0], torch.zeros(0, 2), "Linear on a batch of 0", device=DEVICE)


@requires_api(EXPORT_API, since="2.9")
class TestAotJointWithDescriptorsSideEffects(AotTestCase):
    """In-place updates of buffers and inputs, outputs aliasing an input, no state kept across calls."""

    shared_exports = ("side_effect/training", "side_effect/inference", "views")

    def test_mutations_apply_once_per_call_as_in_eager_and_never_at_export(self):
        """Export traces with fake tensors (module buffer and example untouched); over two calls x doubles and the
        passed buffer counts once per call, as in eager; the module's own buffer stays 0."""
        for label, grad in [("training", True), ("inference", False)]:
            with self.subTest(label):
                exported = shared(f"side_effect/{label}")
                self.assert_tensor(exported.args[0], torch.tensor([1.0, 2.0, 3.0]), f"{label}: example", device=DEVICE)
                got = self.assert_matches_eager(label, exported, inputs(torch.tensor([1.0, -2.0, 3.0])), grad=grad,
                                                calls=2, tol=EXACT)
                self.assert_tensor(dict(got)["buffer calls"], torch.tensor(2.0), f"{label}: calls", device=DEVICE)
                self.assert_tensor(exported.model.calls, torch.tensor(0.0), f"{label}: module buffer", device=DEVICE)

    def test_outputs_aliasing_the_input_are_the_input_and_a_view_of_it(self):
        """``return x, x[1:]``: x itself and a view of x; x.t(), z.detach(), z.real, z.conj(): eager's views too."""
        for label, grad in [("training", True), ("inference", False)]:
            with self.subTest(label):
                exported = shared(f"side_effect/{label}")
                x = on_device(torch.tensor([1.0, 2.0, 3.0]))
                with torch.set_grad_enabled(grad):
                    same, view, _ = exported.compiled(*leaf_copies(exported.model.parameters()),
                                                      on_device(torch.zeros(())), x)
                self.assertIs(same, x, f"{label}: first output is the input tensor itself")
                self.assertIs(view._base, x, f"{label}: second output is a view whose base is the input")
                with torch.no_grad():
                    view.add_(10)
                self.assert_tensor(x, torch.tensor([2.0, 14.0, 16.0]), f"{label}: writing through the view",
                                   device=DEVICE)
        (x, z), facts = shared("views").make(DEVICE)[0], lambda outs: [(
            o.untyped_storage().data_ptr(), o.dtype, o.shape, o.stride(), o.is_conj()) for o in outs]
        self.assert_value(facts(shared("views").compiled(x, z)), facts(MODELS["views"]()(x, z)),
                          "x.t(), z.detach(), z.real, z.conj() of a transposed z: eager's views of the inputs' storage")

    def test_repeated_calls_with_fresh_state_give_the_same_eager_result(self):
        """The passed buffers are updated in place (same storage); no hidden state: the next call with fresh buffers
        gives eager's one-step result."""
        exported = shared("batchnorm")
        buffers = [b.clone() for b in exported.model.buffers()]
        pointers = [b.data_ptr() for b in buffers]
        with torch.enable_grad():
            exported.compiled(*leaf_copies(exported.model.parameters()), *buffers, *exported.args)
        self.assert_value(([b.data_ptr() for b in buffers], int(buffers[2])), (pointers, 1), "buffers after a call")
        self.assert_matches_eager("BatchNorm, next call with fresh buffers", exported)


@requires_api(EXPORT_API, since="2.9")
class TestAotJointWithDescriptorsBadInput(AotTestCase):
    """Bad arguments to export, compile and the compiled callable raise upstream's exception types."""

    shared_exports = ("linear", "linear/inference", "batchnorm")

    def test_export_rejects_bad_arguments(self):
        """A non-module, non-sequence args, kwargs that are not a mapping, a missing stack, unknown keywords."""
        _, model = build_models(MODELS["linear"])
        x = on_device(values((2, 3)))
        export = aot_autograd.aot_export_joint_with_descriptors
        for label, error, match, call in [
                ("a function instead of a module", AttributeError, "named_parameters",
                 lambda stack: export(stack, lambda t: t, (x,))),
                ("args is a bare tensor", TypeError, None, lambda stack: export(stack, model, x)),
                ("args is None", TypeError, None, lambda stack: export(stack, model, None)),
                ("args too short", TypeError, "missing 1 required positional", lambda stack: export(stack, model, ())),
                ("args too long", TypeError, "but 3 were given", lambda stack: export(stack, model, (x, x))),
                ("a string for a tensor", TypeError, None, lambda stack: export(stack, model, ("x",))),
                ("wrong inner size", RuntimeError, None, lambda stack: export(stack, model, (on_device(x.t()),))),
                ("kwargs is a list", TypeError, "must be a mapping", lambda stack: export(stack, model, (x,), [x])),
                ("stack is None", AttributeError, "enter_context", lambda stack: export(None, model, (x,))),
                ("unknown keyword", TypeError, "'bogus'", lambda stack: export(stack, model, (x,), bogus=1))]:
            with self.subTest(label), torch.enable_grad(), contextlib.ExitStack() as stack:
                with self.assert_raises_exactly(error, f"export with {label}", match):
                    call(stack)
            self.assertIs(type(torch.ones(1) + 1), torch.Tensor, f"after {label}: no fake mode left behind")

    def test_compile_rejects_bad_arguments(self):
        """Compile of a module or None, with an unknown keyword, or of one export a second time."""
        exported = shared("linear/inference")
        compile_joint = aot_autograd.aot_compile_joint_with_descriptors
        for label, target in [("a module", exported.model), ("None", None)]:
            with self.assert_raises_exactly(AttributeError, f"compile of {label}", "_aot_state"):
                compile_joint(target)
        with torch.no_grad(), contextlib.ExitStack() as stack:
            joint = aot_autograd.aot_export_joint_with_descriptors(stack, exported.model, exported.args)
            with self.assert_raises_exactly(TypeError, "compile with an unknown keyword", "'bogus'"):
                compile_joint(joint, bogus=1)
            compile_joint(joint)
            with self.assert_raises_exactly(AssertionError, "compiling the same export a second time"):
                compile_joint(joint)

    def test_compiled_callable_rejects_wrong_arguments(self):
        """Too few or extra arguments, wrong types, shapes or dtypes, a keyword, parameters and buffers left out or
        reordered: upstream's exception types, no buffer updated (2.9.1 drops extra arguments: runs on the rest)."""
        lin, bn = shared("linear"), shared("batchnorm")
        params, bn_params = leaf_copies(lin.model.parameters()), leaf_copies(bn.model.parameters())
        buffers = [b.clone() for b in bn.model.buffers()]
        x, x5 = lin.args[0], bn.args[0]
        extra = RuntimeError if CHECKS_ARGUMENT_COUNT else None
        for label, error, call in [
                ("no arguments", TOO_FEW_ERROR, lambda: lin.compiled()),
                ("parameters only", TOO_FEW_ERROR, lambda: lin.compiled(*params)),
                ("one parameter left out", TOO_FEW_ERROR, lambda: lin.compiled(params[0], x)),
                *[(f"{kind} for x", RuntimeError, lambda v=v: lin.compiled(*params, v))
                  for kind, v in [("a string", "x"), ("None", None), ("an int", 3)]],
                ("a 1-d x", RuntimeError, lambda: lin.compiled(*params, x[0])),
                ("x of the wrong inner size", RuntimeError, lambda: lin.compiled(*params, x.t())),
                ("a float64 x", RuntimeError, lambda: lin.compiled(*params, x.double())),
                ("parameters in the wrong order", RuntimeError, lambda: lin.compiled(params[1], params[0], x)),
                ("an unexpected keyword", ValueError, lambda: lin.compiled(*params, x, y=x)),
                ("BatchNorm: parameters left out", IndexError, lambda: bn.compiled(*buffers, x5)),
                ("BatchNorm: buffers left out", IndexError, lambda: bn.compiled(*bn_params, x5)),
                ("BatchNorm: only the input", IndexError, lambda: bn.compiled(x5)),
                ("BatchNorm: buffers before parameters", RuntimeError, lambda: bn.compiled(*buffers, *bn_params, x5)),
                ("BatchNorm: one argument too many", extra, lambda: bn.compiled(*bn_params, *buffers, x5, x5)),
                ("BatchNorm: an extra int", extra, lambda: bn.compiled(*bn_params, *buffers, x5, 1))]:
            with self.subTest(label), torch.enable_grad():
                if error is None:
                    self.assert_tensor(call(), bn.compiled(*bn_params, *buffers, x5).detach(), label, **EXACT)
                    buffers[2].zero_()
                    continue
                with self.assert_raises_exactly(error, f"compiled callable with {label}"):
                    call()
                self.assert_value(int(buffers[2]), 0, f"{label}: num_batches_tracked after the failed call")


Pair = collections.namedtuple("Pair", "first second")


def pair_forward(m, pair, extra):  # a namedtuple and a dict in, a namedtuple holding torch.return_types out
    y = m.proj(pair.first) * pair.second + extra["shift"]
    return Pair(y, torch.max(y, 1))


class HookedModel(Model):
    """A user's subclass of Model: hooks here and on a submodule, tied, frozen, non-persistent."""

    def __init__(self):
        super().__init__(lambda m, x: m.tail(m.head(x)) * m.frozen + m.offset,
                         [("head", nn.Linear(3, 3)), ("tail", nn.Linear(3, 3, bias=False))],
                         params=[("frozen", torch.tensor([1.0, -2.0, 0.5]))])
        self.tail.weight = self.head.weight
        self.frozen.requires_grad_(False)
        self.register_buffer("offset", torch.tensor([0.5, 0.0, -1.0]), persistent=False)
        self.register_forward_pre_hook(lambda m, args: (args[0] * 2,))
        self.head.register_forward_hook(lambda m, args, out: out + 1)


def dropout_forward(m, x): return nn.functional.dropout(x * m.weight, 0.5), torch.native_dropout(x, 0.5, True)
def default_dtype_forward(m, x): return x * 1.5 + torch.full((), 0.25, device=x.device)  # default dtype


SUBSYSTEM_MODELS = {  # name: (CPU reference factory, make(device), Exported keywords[, context of export and calls])
    "containers": (lambda: Model(pair_forward, [("proj", nn.Linear(3, 3))]), lambda device: ((Pair(
        on_device(values((2, 3)) / 2).to(device).requires_grad_(), values((2, 3), start=2).to(device) / 4),
        {"shift": values((3,)).to(device)}), None), {}),
    "hooks": (HookedModel, inputs(values((2, 3)) / 2, grad=True), {}),
    "eval": (lambda: MODELS["batchnorm"]().eval(), inputs(values((5, 3)) / 4), {}),
    "autocast": (MODELS["linear"], inputs(values((2, 3)) / 2, grad=True), {}, lambda: autocast_here()),
    "default_dtype": (lambda: Model(default_dtype_forward), inputs(values((2, 3), torch.int64)), {},
                      lambda: default_dtype(torch.float64)),
    "dropout": (lambda: Model(dropout_forward, params=[("weight", values((64,), start=1) / 8)]), inputs(torch.ones(64)),
                {})}
EXPORTS.update({f"subsystems/{name}": entry for name, entry in SUBSYSTEM_MODELS.items()})


def autocast_here():  # torch.autocast(bfloat16) on the CPU (eager's reference) and on the device if it has autocast
    stack = contextlib.ExitStack()
    for device in [d for d in {"cpu", DEVICE} if torch.amp.is_autocast_available(d)]:
        stack.enter_context(torch.autocast(device, dtype=torch.bfloat16))
    return stack


@requires_api(EXPORT_API, since="2.9")
class TestAotJointWithDescriptorsSubsystems(AotTestCase):
    """Where the export and the callable meet other parts of torch (see the module docstring's subsystem item)."""

    shared_exports = ("linear", "batchnorm", "input_mutation")

    def test_higher_order_forward_mode_and_func_transforms_are_refused(self):
        """A first gradient with create_graph=True has history; a second backward, forward-mode AD and torch.func's
        grad and vmap of the callable raise upstream's errors (eager does all four)."""
        with torch.enable_grad():  # the file runs under either initial grad mode
            exported = shared("linear")
            params, x = leaf_copies(exported.model.parameters()), exported.args[0]
            leaf = x.detach().clone().requires_grad_()
            first, = torch.autograd.grad(exported.compiled(*params, leaf).sum(), params[0], create_graph=True)
            self.assertIsNotNone(first.grad_fn, "the first gradient with create_graph=True has history")
            reference = copy.deepcopy(exported.reference)
            want, = torch.autograd.grad(reference(leaf.detach().cpu()).sum(), reference.proj.weight, create_graph=True)
            self.assert_tensor(first, want, "the first gradient", device=DEVICE, **TOLERANCE)
            with self.assert_raises_exactly(RuntimeError, "second backward", match="does not currently support double"):
                torch.autograd.grad((first * first).sum(), leaf)
            import torch.autograd.forward_ad as fwad
            with fwad.dual_level(), self.assert_raises_exactly(NotImplementedError, "forward-mode AD", match="jvp"):
                exported.compiled(*params, fwad.make_dual(x, torch.ones_like(x)))
            for label, transform in (("torch.func.grad", lambda f: torch.func.grad(lambda t: f(t).sum())),
                                     ("torch.vmap", torch.vmap)):
                with self.subTest(label), self.assert_raises_exactly(RuntimeError, label, match="setup_context"):
                    transform(lambda t: exported.compiled(*params, t))(x)

    def test_version_counters_of_mutated_inputs_and_buffers(self):
        """Each call bumps every mutated input and buffer once (the write-back) and nothing else: an input doubled in
        place [1]; BatchNorm's running_mean, running_var, num_batches_tracked, input [1, 1, 1, 0] (eager's CPU
        kernel bumps [0, 0, 1, 0]: it writes the running statistics without a bump)."""
        for name, grad, wanted in (("input_mutation", False, [1]), ("batchnorm", True, [1, 1, 1, 0])):
            with self.subTest(name):
                exported = shared(name)
                tensors = [b.clone() for b in exported.model.buffers()] + list(exported.make(DEVICE)[0])
                before = [t._version for t in tensors]
                with torch.set_grad_enabled(grad):
                    exported.compiled(*leaf_copies(exported.model.parameters()), *tensors)  # buffers, then inputs
                self.assert_value([t._version - v for t, v in zip(tensors, before)], wanted,
                                  f"{name}: version bumps of buffers and inputs per call")

    def test_namedtuple_dict_and_return_types_in_and_out(self):
        """A namedtuple and a dict as inputs are in in_spec; the callable returns eager's namedtuple holding a
        torch.return_types.max, with eager's values and gradients."""
        exported = shared("subsystems/containers")
        got = self.assert_matches_eager("containers", exported)
        out = dict(got)["output"]
        self.assert_value((type(out), type(out.second)), (Pair, torch.return_types.max), "types of the outputs")
        model, args = exported.model, exported.make("cpu")[0]
        self.assert_value(exported.joint.in_spec, pytree.tree_structure(([*model.parameters(), *args], {})),
                          "in_spec: the namedtuple and the dict of the inputs")

    def test_module_hooks_tied_frozen_and_non_persistent(self):
        """Hooks of the module and its submodule are traced; params_spec lists a tied weight under both names
        (named_parameters(remove_duplicate=False)) and the callable takes it twice; the frozen parameter gets no
        gradient, the non-persistent buffer is a buffer; output and gradients as eager's (a subclass of Model)."""
        exported = shared("subsystems/hooks")
        names = [name for name, _ in exported.model.named_parameters(remove_duplicate=False)]
        self.assert_value((exported.joint.params_spec, exported.joint.buffers_spec, names), (names, ["offset"], [
            "frozen", "head.weight", "head.bias", "tail.weight"]), "params_spec, buffers_spec, parameter names")
        leaves = dict(zip(parameter_names(exported.model), leaf_copies(exported.model.parameters())))
        leaves["tail.weight"] = leaves["head.weight"]  # one leaf passed twice (Module.to of a device may untie them)
        got = self.assert_matches_eager("hooks, tied weight passed twice", exported, params=[leaves[n] for n in names])
        self.assert_value([what for what, grad in got if what.startswith("gradient of") and grad is not None],
                          ["gradient of head.weight", "gradient of head.bias", "gradient of input 0"],
                          "gradients (tied: summed; frozen none)")
        self.assertIsInstance(exported.model, HookedModel, "the exported module is the user's subclass")

    def test_eval_mode_autocast_and_default_dtype(self):
        """Eval BatchNorm: running statistics used, not updated; under torch.autocast the callable gives eager's
        bfloat16 (called inside autocast, and outside too: autocast is traced); under set_default_dtype(float64) an
        int64 input times 1.5 is float64 as eager's (called outside: float32, promotion reads the default per call)."""
        exported = shared("subsystems/eval")
        got = dict(self.assert_matches_eager("eval mode", exported))
        self.assert_tensor(got["buffer norm.running_mean"], torch.zeros(4), "running_mean in eval", device=DEVICE)
        tol = TOLERANCE if DEVICE == "cpu" else {"atol": 1e-2, "rtol": 1e-2}
        for name, context, dtype, outside_dtype in (("autocast", autocast_here, torch.bfloat16, torch.bfloat16), (
                "default_dtype", lambda: default_dtype(torch.float64), torch.float64, torch.float32)):
            with self.subTest(name):
                exported = shared(f"subsystems/{name}")
                with context():
                    got = dict(self.assert_matches_eager(name, exported, tol=tol))
                self.assertIs(got["output"].dtype, dtype, f"{name}: output dtype")
                params = leaf_copies(exported.model.parameters())
                outside = exported.compiled(*params, *exported.make(DEVICE)[0])
                self.assertIs(outside.dtype, outside_dtype, f"{name}: output dtype called outside the context")

    def test_dropout_draws_as_eager_and_advances_the_stream(self):
        """From one seed the callable's dropout output and gradients, and a second draw's output and bool mask
        (native_dropout's), equal eager's on the device, and the global stream's next draw is the same after both
        (before 2.11 after the forward alone: the compiled backward of native_dropout draws again there)."""
        exported = shared("subsystems/dropout")
        results, following = [], []
        for compiled in (True, False):
            with torch.random.fork_rng(devices=[] if DEVICE == "cpu" else None, device_type=DEVICE):
                torch.manual_seed(5)
                results.append(run(exported, exported.make, DEVICE, compiled=compiled, backprop=BACKWARD_KEEPS_RNG))
                following.append(torch.rand(4, device=DEVICE))
        self.assert_same_results("dropout, compiled vs eager on the device", results[0], results[1], EXACT)
        self.assert_tensor(following[0], following[1].cpu(), "next draw of the global stream", device=DEVICE)

    def test_copies_pickling_and_warnings(self):
        """copy.copy of the export and the callable work, pickling refuses (deepcopy is left out: upstream's copy of
        the fake-tensor state corrupts the heap at exit); exporting and compiling the subsystem models warned not."""
        exported, params = shared("linear"), leaf_copies(shared("linear").model.parameters())
        joint = copy.copy(exported.joint)
        self.assert_value((type(joint), joint.params_spec), (type(exported.joint), exported.joint.params_spec), "copy")
        self.assert_tensor(copy.copy(exported.compiled)(*params, *exported.args), exported.compiled(
            *params, *exported.args).detach().cpu(), "copy of the callable", device=DEVICE)
        for label, obj in (("export", exported.joint), ("callable", exported.compiled)):
            with self.subTest(label), self.assertRaises((AttributeError, pickle.PicklingError, TypeError)):
                pickle.dumps(obj)
        self.assert_value({name: shared(f"subsystems/{name}").warnings for name in SUBSYSTEM_MODELS},
                          {name: [] for name in SUBSYSTEM_MODELS}, "warnings of export and compile")


if __name__ == "__main__":
    run_tests()
