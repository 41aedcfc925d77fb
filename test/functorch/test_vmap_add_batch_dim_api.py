# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""API-consistency tests for ``torch._functorch.vmap._add_batch_dim`` and the ``torch.vmap`` built on it.

``_add_batch_dim(tensor, batch_dim, level)`` wraps a tensor into a functorch BatchedTensor whose dim ``batch_dim`` is
the hidden batch dim of vmap level ``level``; ``torch.vmap`` calls it once per batched input (and ``_remove_batch_dim``
once per output). A port must build upstream's wrappers (logical shape, stored batch dim and level, dtype, layout,
device, the input itself unwrapped) and give upstream's results, side effects and errors. The tests call it by hand
under a real vmap level (always left again) and through ``torch.vmap``, against a Python loop over the batch
(``select``, then ``stack``) or a closed form on the CPU. Values are small integers that differ per position, so
comparisons are exact and a permuted dim shows. Every input class of a consistency test reaches the API through vmap's
arguments:

- dtypes: ``all_types_and_complex_and(half, bfloat16, bool)`` of torch.testing plus uint16/32/64 and the float8 types
  (e4m3fn, e5m2, e4m3fnuz, e5m2fnuz, e8m0fnu), all accepted by ``_add_batch_dim`` from 2.7.1; each through the wrapper,
  a round trip and vmap of ops with float, integer and bool outputs (sum, argmax, a mask, count_nonzero, a float
  promotion, a cat). An op the loop refuses must be refused by vmap with the loop's exception type (RuntimeError in
  2.7.1, NotImplementedError later, for a missing kernel);
- layouts, each at every batch dim: contiguous, transposed, permuted, sliced with a step, expanded (stride 0) along two
  dims, channels_last (4-d), channels_last_3d (5-d), the conj view of a complex tensor (also transposed), the neg view
  ``conj().imag``; sparse COO (accepted) and CSR/CSC/BSR/BSC (refused);
- dtype x layout: conj/neg views of complex32/64/128 x transposed/step-sliced, channels_last(_3d) x half and bfloat16,
  COO x integral_types_and(bool) and complex64/128 (ComplexHalf COO cannot be densified on the CPU);
- sparse variants: uncoalesced COO (a duplicate index) stays uncoalesced through the wrapper, the round trip and
  elementwise vmap (read by ``_indices()``/``_values()``), reductions coalesce; hybrid COO (a dense dim) is batched at
  its sparse dims only;
- other kinds: jagged nested tensors (dim 0 only; other dims, views and shape reads raise RuntimeError, not an internal
  assert); mkldnn and quantized tensors (not the packed quint4x2/quint2x4: no loop reference) are CPU-only, so they are
  tested on the CPU whatever the device: the device comparison does not apply;
- sizes: a distinct size per dim and per level, plus square inputs and nested levels of equal size; a batch of 0, inner
  dims of 0, 0-d examples, size-1 dims;
- call forms (every ``in_dims`` / ``out_dims`` of 1-d to 4-d tensors, ``None``, tuples, containers, dict out_dims,
  keywords, ``chunk_size`` and ``randomness``, also per nested level), side effects (in-place writes, aliasing, levels
  left behind), bad input (exact exception types), threads (per-thread levels).
- torch subsystems, ``TestVmapSubsystems``: forward-mode tangents of a dual input through a hand-built level, ``jvp`` of
  vmap and vmap of ``jvp``; second-order gradients (``create_graph``) through the wrapper of a non-leaf input and
  ``torch.func.hessian`` of vmap (first-order per-sample gradients: ``TestAddBatchDimAndVmap``); the input's
  ``_version`` untouched by wrapping, a new wrapper per call, a Parameter or Tensor subclass wrapped as a plain Tensor
  wrapper, ``copy.deepcopy`` of a wrapper refused as upstream (so pickling does not apply); ``torch.return_types`` and
  namedtuple outputs keep their type; forward pre-hooks and hooks of a module and its submodule see logical shapes,
  BatchNorm in train mode refused, eval mode as the loop; ``torch.autocast`` (CPU, and the device when it supports it)
  and ``set_default_dtype(float64)`` as the loop; the global RNG stream advances by B draws under "different" and one
  under "same"; partial, callable objects, bound, static and class methods. Caches do not apply: no cache is keyed on a
  vmap level or a wrapper.
Other layers' warnings (ComplexHalf, quantized deprecation, fallback performance) are filtered by message where they
arise; the hand-built COO passes check_invariants (2.13+ warns when unset); vmap must add no such warning.
``python -m torch_npu_testing mutate`` leaves no survivor on _add_batch_dim, _remove_batch_dim or torch.vmap; a CPU run
cannot see its "result on the CPU" faults, nor reach "in-place writes dropped" of _remove_batch_dim (it writes to no
argument). Against device faults (``mutate --device``) results are checked on the exact device, views as views with the
CPU's strides, computed layouts with the strides of the batch-first ops run eagerly on the device. Two survivors change
nothing vmap returns: aten._to_copy.default:dev-promote (autocast casts the widened result again before the matmul);
aten.movedim.int:dev-view-copy (a random batching rule's view of its own fresh draw: a copy has its values, strides).

Version rules asserted for the installed release:

- ``torch._functorch.vmap._add_batch_dim`` is the C function ``torch._C._functorch._add_batch_dim`` in 2.7.1 and a
  Python wrapper around it from 2.9;
- from 2.10 the wrapper normalizes a negative ``batch_dim`` (``-1`` of a 2-D tensor is stored as ``1``; read in 2.10.0's
  ``torch/_functorch/predispatch.py``); in 2.7.1 and 2.9.1, and for the C function on every release, it is stored as is
  and the logical shape then drops physical dimension 0;
- a non-tensor input with a negative ``batch_dim`` meets the normalizing wrapper's ``tensor.ndim`` first (AttributeError
  from 2.10; TypeError of the C function's argument check before);
- ``torch.vmap(f, chunk_size=k)`` over a batch of 0 runs no chunk: AssertionError in 2.7.1/2.9.1 (pytree's spec check),
  AttributeError in 2.10 (``None.num_leaves``), AssertionError from 2.11 (vmap checks first);
- a wrapper of a sparse COO tensor reports ``layout == torch.sparse_coo`` from 2.10 (sparse dispatch keys propagated to
  functorch wrappers, pytorch PR 165765, after the 2.9 branch) and ``torch.strided`` before; ``vmap(torch.sum)`` of a
  COO batch returns COO on every release (the loop stacks strided sums); ``vmap(Tensor.to_dense)`` of COO works up to
  2.13, fails an internal assert ("maybe_level.has_value()") from 2.14;
- ``vmap(torch.count_nonzero)`` (no dim) of uint16/32/64/float8 raises NotImplementedError up to 2.12, counts from 2.13.

On an accelerator every tensor lives on the device: vmap must succeed or raise as the loop does there (kernels differ
per device), its values equal the CPU loop's; chunks under randomness="same" rewind the CPU generator only
(``torch.get_rng_state``), so on a device the second chunk is the generator's next draw.
"""
from torch_npu_testing import (TestCase, run_tests, device_type, run_in_thread, torch_version_at_least,
                               skip_unless_vehicle, vehicle_refusal)

import collections
import contextlib
import copy
import functools
import itertools
import math
import unittest
import warnings

import torch
import torch._functorch.vmap as vmap_module
from torch._C import _functorch as functorch_c
from torch.func import functional_call, grad, grad_and_value, jvp
from torch.testing._internal.common_dtype import (
    all_types_and_complex_and, complex_types, complex_types_and, get_all_fp_dtypes, get_all_qint_dtypes,
    integral_types_and)

DEVICE = device_type()

PYTHON_WRAPPER_SINCE = "2.9"
NEGATIVE_BATCH_DIM_NORMALIZED_SINCE = "2.10"
PYTREE_READS_NONE_SPEC_IN = "2.10"  # only 2.10.x: from 2.11 vmap itself checks for "no chunk ran"
VMAP_CHECKS_EMPTY_CHUNKS_SINCE = "2.11"
WRAPPER_REPORTS_SPARSE_LAYOUT_SINCE = "2.10"
VMAP_COUNT_NONZERO_ANY_DTYPE_SINCE = "2.13"
VMAP_COO_TO_DENSE_ASSERTS_SINCE = "2.14"
SHAPES = ((5,), (2, 3), (2, 3, 4), (2, 3, 2, 3), (3, 3), (2, 2, 2))  # the last two: every dim the same size
DTYPES = tuple(all_types_and_complex_and(torch.half, torch.bfloat16, torch.bool)) + (
    torch.uint16, torch.uint32, torch.uint64, torch.float8_e4m3fn, torch.float8_e5m2, torch.float8_e4m3fnuz,
    torch.float8_e5m2fnuz, torch.float8_e8m0fnu)


# --------------------------------------------------------------------------- helpers
class VmapTestCase(TestCase):
    """The carried TestCase; results are expected on DEVICE unless told, on the very device ``.to(DEVICE)`` gives
    (``npu:0``): a result on another index (``npu:1``) fails too, not only one on another device type."""

    def assert_tensor(self, actual, expected, what, *, device=DEVICE, **tolerances):
        super().assert_tensor(actual, expected, what, device=device, **tolerances)
        self.assert_value(actual.device, torch.empty(0, device=device).device, f"{what}: device, index included")


def vmap_level(batch_size, randomness="error"):
    """Enter one real vmap level and always leave it (the state guard fails a test that leaks one)."""
    return vmap_module.vmap_increment_nesting(batch_size, randomness)


@contextlib.contextmanager
def seeded(seed=1234):
    """Fix the seed of the CPU and DEVICE generators for a block and give their state back afterwards (on a CPU box
    torch.manual_seed would also seed the absent CUDA generators)."""
    with torch.random.fork_rng(devices=[]) if DEVICE == "cpu" else torch.random.fork_rng(device_type=DEVICE):
        (torch.default_generator.manual_seed if DEVICE == "cpu" else torch.manual_seed)(seed)
        yield


def add_batch_dim(tensor, batch_dim, level):
    """The API under test: torch._functorch.vmap._add_batch_dim, the name torch.vmap itself calls."""
    return vmap_module._add_batch_dim(tensor, batch_dim, level)


def remove_batch_dim(tensor, level, batch_size, out_dim):
    return vmap_module._remove_batch_dim(tensor, level, batch_size, out_dim)


def batch_meta(t):
    """What a BatchedTensor exposes: is batched, level, stored batch dim, logical shape, dtype, device."""
    return dict(batched=functorch_c.is_batchedtensor(t), level=functorch_c.maybe_get_level(t),
                bdim=functorch_c.maybe_get_bdim(t), shape=tuple(t.shape), dtype=t.dtype, device=t.device)


def wrapped_meta(level, bdim, shape, like):
    """The batch_meta expected of a wrapper of ``like`` (same dtype and device) at ``level``/``bdim``."""
    return dict(batch_meta(like), batched=True, level=level, bdim=bdim, shape=tuple(shape))


def checked_wrapper(test, x, batch_dim, level, what, **attributes):
    """_add_batch_dim(x, batch_dim, level), checked: upstream's metadata, x itself inside, each named attribute."""
    y = add_batch_dim(x, batch_dim, level)
    test.assert_value(batch_meta(y), wrapped_meta(level, batch_dim, without_dim(x.shape, batch_dim), x), what)
    test.assertIs(functorch_c.get_unwrapped(y), x, f"{what}: the wrapper holds the input itself, not a copy")
    seen = {name: getattr(y, name) for name in attributes}  # a method (is_conj) is called
    test.assert_value({k: v() if callable(v) else v for k, v in seen.items()}, attributes, f"{what}: attributes")
    return y


def levels_of(tensor):
    """(level, stored bdim) of each wrapper around ``tensor``, innermost first."""
    if not functorch_c.is_batchedtensor(tensor):
        return []
    own = (functorch_c.maybe_get_level(tensor), functorch_c.maybe_get_bdim(tensor))
    return [own] + levels_of(functorch_c.get_unwrapped(tensor))


def on_cpu_and_device(shape, **kwargs):
    """int_valued(shape) on the CPU, and a copy of it on DEVICE."""
    cpu = int_valued(shape, device="cpu", **kwargs)
    return cpu, cpu.to(DEVICE)


def int_valued(shape, device=DEVICE, dtype=torch.float32, offset=0):
    """Deterministic small integers in -5..5 (exact in every float dtype and under any summation order)."""
    numel = math.prod(shape)
    values = (torch.arange(numel, dtype=torch.int64) * 7 + offset) % 11 - 5
    return values.reshape(shape).to(dtype=dtype, device=device)


def values_of(dtype, shape, device=DEVICE):
    """Small values that differ per position: -5..5 (0..10 unsigned, a pattern for bool, complex: re + im j)."""
    values = int_valued(shape, device="cpu", dtype=torch.int64)
    if dtype == torch.bool:
        values = values % 3 == 0
    elif dtype.is_complex:
        values = torch.complex(values.float(), int_valued(shape, device="cpu", offset=4)).to(dtype)
    elif not dtype.is_signed:
        values = values + 5
    return values.to(dtype=dtype, device=device)


def loop(func, args, in_dims, out_dim=0):
    """The reference: ``func`` applied to each example (``select`` along in_dims) and stacked at out_dim."""
    size = next(arg.shape[dim] for arg, dim in zip(args, in_dims) if dim is not None)
    rows = [func(*(arg if dim is None else arg.select(dim, i) for arg, dim in zip(args, in_dims))) for i in range(size)]
    if isinstance(rows[0], tuple):  # out_dim: one for every output, or a tuple of one per output
        dims = out_dim if isinstance(out_dim, tuple) else (out_dim,) * len(rows[0])
        return tuple(torch.stack([row[k] for row in rows], dim=dim) for k, dim in enumerate(dims))
    return torch.stack(rows, dim=out_dim)


def hand_vmap(func, args, in_dims, out_dims, batch_size, randomness="error"):
    """torch.vmap rebuilt from the API: one level, _add_batch_dim per batched argument, _remove_batch_dim per output."""
    with vmap_level(batch_size, randomness) as level:
        batched = [arg if dim is None else add_batch_dim(arg, dim % arg.dim(), level)
                   for arg, dim in zip(args, in_dims)]
        outputs = func(*batched)
        if isinstance(outputs, tuple):
            dims = out_dims if isinstance(out_dims, tuple) else (out_dims,) * len(outputs)
            return tuple(remove_batch_dim(out, level, batch_size, dim) for out, dim in zip(outputs, dims))
        return remove_batch_dim(outputs, level, batch_size, out_dims)


def outcome(func, *args):
    """("ok", result) or ("raises", exception type): what a call does, for comparing vmap with the loop."""
    try:
        return "ok", func(*args)
    except Exception as exc:  # the type is the observable; compared by the caller
        return "raises", type(exc)


def without_dim(shape, dim):
    return tuple(size for index, size in enumerate(shape) if index != dim)


def reference_outcome(op, x_cpu, x, in_dim=1):
    """The loop's outcome for vmap(op, in_dims=in_dim)(x): ok/raises as on x's device, values from the CPU loop."""
    on_cpu = outcome(loop, op, (x_cpu,), (in_dim,))
    on_device = on_cpu if x.device.type == "cpu" else outcome(loop, op, (x,), (in_dim,))
    return on_cpu if on_device[0] == on_cpu[0] == "ok" else on_device


def assert_same_outcome(test, got, expected, what):
    """vmap's outcome equals the loop's: both values (dtype, shape, layout, values) or the same exception type."""
    if expected[0] == got[0] == "ok":
        test.assert_tensor(got[1], expected[1], what)
    else:
        test.assert_value(got, expected, f"{what}: (outcome, result or exception type)")


class TestAddBatchDimAndVmap(VmapTestCase):
    """_add_batch_dim by hand under a real vmap level and as torch.vmap's input: the same wrappers and results."""

    def test_negative_batch_dim_follows_installed_version_rule(self):
        """Negative batch_dim: the wrapper normalizes it from 2.10 (before: stored as is, logical = shape[1:]); the C
        function stores it as is on every release and is itself the name vmap calls in 2.7.1 (a wrapper from 2.9)."""
        normalizes = torch_version_at_least(NEGATIVE_BATCH_DIM_NORMALIZED_SINCE)
        self.assertIs(vmap_module._add_batch_dim is functorch_c._add_batch_dim,
                      not torch_version_at_least(PYTHON_WRAPPER_SINCE),
                      f"torch {torch.__version__}: torch._functorch.vmap._add_batch_dim is the C function")
        for shape in SHAPES:
            ndim = len(shape)
            for batch_dim in range(-ndim, 0):
                positive, x = batch_dim + ndim, int_valued(shape)
                what = f"torch {torch.__version__}: shape {shape}, batch_dim={batch_dim}"
                with self.subTest(what):
                    with vmap_level(shape[positive]) as level:
                        y = add_batch_dim(x, batch_dim, level)
                        want = (positive, without_dim(shape, positive)) if normalizes else (batch_dim, shape[1:])
                        self.assert_value(batch_meta(y), wrapped_meta(level, *want, x), f"{what}: wrapper")
                        self.assert_value(batch_meta(functorch_c._add_batch_dim(x, batch_dim, level)),
                                          wrapped_meta(level, batch_dim, shape[1:], x), f"{what}: C function")
                        self.assert_value(batch_meta(functorch_c._add_batch_dim(x, positive, level)),
                                          batch_meta(add_batch_dim(x, positive, level)), f"{what}: C vs wrapper")
                        round_trip = remove_batch_dim(y * 2, level, shape[positive], positive) if normalizes else None
                    if normalizes:  # checked outside the level: its copy to the CPU is the test's, not vmap's
                        self.assert_tensor(round_trip, x.cpu() * 2, f"{what}: round trip of y * 2")

    def test_every_in_dim_and_out_dim_matches_hand_built_and_loop(self):
        """Every in_dims d >= 0 with every out_dims o (negative too), and every negative d, of 1-d..4-d and square
        tensors: the function sees _add_batch_dim(x, d mod ndim, 1) wrapping x itself; torch.vmap == hand-built
        level == Python loop, for the identity (a round trip, x.movedim(d, o)) and for a computed output."""
        def centred(t):  # a logical-dim reduction makes a wrong batch dim visible in the values
            return t * 2 - t.sum(0, keepdim=True) if t.dim() else t * 2

        for shape in SHAPES:
            ndim = len(shape)
            pairs = [(d, o) for d in range(ndim) for o in range(-ndim, ndim)] + [(d, -1 - d) for d in range(-ndim, 0)]
            with self.subTest(f"shape {shape}, in_dims and out_dims in [-{ndim}, {ndim})"):
                (x_cpu, x), seen, outs, expected = on_cpu_and_device(shape), [], [], []

                def record(t):
                    seen.append((batch_meta(t), functorch_c.get_unwrapped(t) is x))
                    return t, centred(t)

                rows = {d: loop(centred, (x_cpu,), (d,)) for d in range(-ndim, ndim)}  # stacked at 0, moved to o
                for d, o in pairs:
                    outs += [*torch.vmap(record, in_dims=d, out_dims=o)(x), *hand_vmap(record, (x,), (d,), o, shape[d])]
                    expected += [x_cpu.movedim(d, o), rows[d].movedim(0, o)] * 2
                want = [(wrapped_meta(1, d % ndim, without_dim(shape, d % ndim), x), True) for d, _ in pairs
                        for _ in "vh"]
                self.assert_value(seen, want, "(wrapper seen by the function, unwraps to x): vmap, by hand per (d, o)")
                self.assert_value([(functorch_c.is_batchedtensor(t), tuple(t.shape)) for t in outs],
                                  [(False, tuple(t.shape)) for t in expected], "(batched, shape) of every output")
                self.assert_tensor(torch.cat([t.flatten() for t in outs]), torch.cat([t.flatten() for t in expected]),
                                   "values: (identity, computed) by vmap then by hand, per (in_dim, out_dim)")

    def test_vmap_of_module_forward_through_functional_call(self):
        """vmap over inputs (shared params) and over stacked params (ensemble) equals per-sample module calls."""
        module = torch.nn.Linear(3, 2).to(DEVICE)
        weight, bias = torch.tensor([[1.0, -2.0, 0.5], [3.0, 0.0, -1.0]]), torch.tensor([0.5, -1.0])
        x_cpu = int_valued((5, 3), device="cpu")
        stacked = {"weight": torch.stack([weight, -weight]), "bias": torch.stack([bias, 2 * bias])}
        cases = (  # label, parameters, in_dims (parameters, inputs), batch size, per-sample reference
            ("over inputs, shared parameters", {"weight": weight, "bias": bias}, (None, 0), 5,
             torch.stack([x_cpu[i] @ weight.T + bias for i in range(5)])),
            ("over stacked parameters (ensemble)", stacked, (0, None), 2,
             torch.stack([x_cpu @ stacked["weight"][e].T + stacked["bias"][e] for e in range(2)])),
        )
        forward = lambda p, inputs: functional_call(module, p, (inputs,))
        for label, params_cpu, (param_dim, input_dim), size, expected in cases:
            params, x = {name: value.to(DEVICE) for name, value in params_cpu.items()}, x_cpu.to(DEVICE)
            via_vmap = torch.vmap(forward, in_dims=(param_dim, input_dim))(params, x)
            with vmap_level(size) as level:
                if param_dim is None:
                    x = add_batch_dim(x, 0, level)
                else:
                    params = {name: add_batch_dim(value, 0, level) for name, value in params.items()}
                by_hand = remove_batch_dim(forward(params, x), level, size, 0)
            self.assert_tensor(via_vmap, expected, f"torch.vmap {label}")
            self.assert_tensor(by_hand, expected, f"hand-built _add_batch_dim {label}")

    def test_gradients_through_vmap_match_closed_forms(self):
        """Per-sample grads: vmap(grad_and_value(loss)) and grad under a hand-built level give 2 (x.w - t) x per row
        (and vmap the losses (x.w - t)^2), under no_grad and enable_grad alike (torch.func.grad ignores the ambient
        mode); backward through vmap and through hand-built wrappers: d/dc sum(c * sum(c)) = 2 * sum(c)."""
        def loss(w, x, t):
            return ((x @ w - t) ** 2).sum()

        w_cpu, t_cpu = torch.tensor([1.0, -2.0, 0.5]), torch.tensor([1.0, 2.0, -1.0, 0.0])
        x_cpu = int_valued((4, 3), device="cpu")
        w, x, t = (v.to(DEVICE) for v in (w_cpu, x_cpu, t_cpu))
        closed_form = 2 * (x_cpu @ w_cpu - t_cpu)[:, None] * x_cpu
        for mode_name, mode in (("no_grad", torch.no_grad), ("enable_grad", torch.enable_grad)):
            with self.subTest(mode_name):
                with mode():
                    via_vmap, losses = torch.vmap(grad_and_value(loss), in_dims=(None, 0, 0))(w, x, t)
                    with vmap_level(4) as level:
                        per_sample = grad(loss)(w, add_batch_dim(x, 0, level), add_batch_dim(t, 0, level))
                        self.assert_value(batch_meta(per_sample), wrapped_meta(level, 0, (3,), x),
                                          f"{mode_name}: gradient under the hand-built level")
                        by_hand = remove_batch_dim(per_sample, level, 4, 0)
                self.assert_tensor(via_vmap, closed_form, f"{mode_name}: vmap(grad(loss))")
                self.assert_tensor(losses, (x_cpu @ w_cpu - t_cpu) ** 2, f"{mode_name}: vmapped losses")
                self.assert_tensor(by_hand, closed_form, f"{mode_name}: grad under _add_batch_dim")
        c_cpu = int_valued((3, 4), device="cpu")
        with torch.enable_grad():
            c_vmap, c_hand = (c_cpu.to(DEVICE, copy=True).requires_grad_() for _ in range(2))
            torch.vmap(lambda c: c * c.sum(), in_dims=1, out_dims=1)(c_vmap).sum().backward()
            with vmap_level(4) as level:
                c = add_batch_dim(c_hand, 1, level)
                out = remove_batch_dim(c * c.sum(), level, 4, 1)
            out.sum().backward()
        for label, got in (("torch.vmap", c_vmap.grad), ("hand-built _add_batch_dim", c_hand.grad)):
            self.assert_tensor(got, (2 * c_cpu.sum(0, keepdim=True)).expand(3, 4), f"c.grad through {label}")


# --------------------------------------------------------------------------- nested levels
def nested_vmap(func, in_dims, out_dims):
    """torch.vmap applied once per level; in_dims/out_dims list the levels outermost first."""
    for in_dim, out_dim in reversed(list(zip(in_dims, out_dims))):
        func = torch.vmap(func, in_dims=in_dim, out_dims=out_dim)
    return func


def nested_by_hand(func, x, in_dims, out_dims):
    """The same levels built with _add_batch_dim / _remove_batch_dim, one vmap level per entry."""
    if not in_dims:
        return func(x)
    size = x.shape[in_dims[0]]
    with vmap_level(size) as level:
        outputs = nested_by_hand(func, add_batch_dim(x, in_dims[0], level), in_dims[1:], out_dims[1:])
        return tuple(remove_batch_dim(out, level, size, out_dims[0]) for out in outputs)


def nested_loop(func, x, in_dims, out_dims):
    """The reference: one Python loop per level, outermost first."""
    if not in_dims:
        return func(x)
    return loop(lambda t: nested_loop(func, t, in_dims[1:], out_dims[1:]), (x,), (in_dims[0],), out_dims[0])


class TestVmapNestedLevels(VmapTestCase):
    """Nested levels, also of equal size: each level keeps its own batch dim, so swapping two levels shows."""

    def test_nested_levels_match_hand_built_levels_and_loop(self):
        """vmap(vmap(f)) == nested _add_batch_dim == nested loops for float, index, count, mask outputs; the innermost
        input carries one (level, bdim) per level. Equal-size levels hold different values at (i, j) and (j, i)."""
        def func(t):
            return t * 2 - t.flip(-1).cumsum(-1), t.argmax(-1), torch.count_nonzero(t > 0, -1), t > 0

        cases = (  # label, shape, in_dims outermost first, out_dims outermost first
            ("sizes 2 and 4", (2, 3, 4, 5), (0, 1), (0, 1)),
            ("equal sizes 3 and 3, in_dims (0, 0)", (3, 3, 2, 4), (0, 0), (0, 0)),
            ("equal sizes 3 and 3, in_dims (1, 0), out_dims (1, 0)", (3, 3, 2, 4), (1, 0), (1, 0)),
            ("equal sizes 3 and 3 behind an example dim, in_dims (2, 1)", (4, 3, 3, 2), (2, 1), (0, 1)),
            ("three levels of size 2", (2, 2, 2, 3), (0, 1, 0), (0, 1, 0)),
        )
        for label, shape, in_dims, out_dims in cases:
            with self.subTest(label):
                numel = math.prod(shape)  # 7 is coprime to every numel here: all values distinct
                x_cpu = ((torch.arange(numel) * 7) % numel - numel // 2).reshape(shape).float()
                x = x_cpu.to(DEVICE)
                seen = []

                def record(t):
                    seen.append(levels_of(t))
                    return func(t)

                via_vmap = nested_vmap(record, in_dims, out_dims)(x)
                by_hand = nested_by_hand(record, x, in_dims, out_dims)
                expected = nested_loop(func, x_cpu, in_dims, out_dims)
                chain = [(depth + 1, dim) for depth, dim in enumerate(in_dims)][::-1]
                self.assert_value(seen, [chain, chain], f"{label}: (level, bdim) innermost first: vmap, by hand")
                for (index, want), (name, got) in itertools.product(enumerate(expected), (
                        ("nested torch.vmap", via_vmap), ("nested _add_batch_dim", by_hand))):
                    self.assert_tensor(got[index], want, f"{label}: {name}, output {index}")

    def test_inputs_batched_at_two_levels_of_equal_size(self):
        """a batched at level 1 and b at level 2, both of size 3: out[i, j] = 10 a[i] + b[j] (not its transpose)."""
        a_cpu, b_cpu = torch.arange(3.0), torch.arange(3.0) * -2 + 1
        a, b = a_cpu.to(DEVICE), b_cpu.to(DEVICE)
        via_vmap = torch.vmap(lambda ai: torch.vmap(lambda bj: ai * 10 + bj)(b))(a)
        with vmap_level(3) as outer:
            ai = add_batch_dim(a, 0, outer)
            with vmap_level(3) as inner:
                bj = add_batch_dim(b, 0, inner)
                self.assert_value((levels_of(ai), levels_of(bj)), ([(outer, 0)], [(inner, 0)]),
                                  "(level, bdim) of a and of b")
                row = remove_batch_dim(ai * 10 + bj, inner, 3, 0)
            by_hand = remove_batch_dim(row, outer, 3, 0)
        for label, got in (("nested torch.vmap", via_vmap), ("hand-built levels", by_hand)):
            self.assert_tensor(got, a_cpu[:, None] * 10 + b_cpu[None, :], f"{label} over a, then b")

    def test_nested_randomness_draws_per_level(self):
        """vmap(vmap(rand_like, randomness=inner), randomness=outer) of (2, 3, 4) zeros: one seeded draw of shape
        (1 if 'same' else 2, 1 if 'same' else 3, 4) broadcast ('same' outside, 'different' inside: distinct per inner
        example); 'error' at either level raises. Chunked: a 'different' level's examples differ, a 'same' level's
        are equal (not on an accelerator when that level is chunked: chunks rewind only the CPU generator)."""
        x = torch.zeros(2, 3, 4, device=DEVICE)

        def nested(outer, inner, chunks=(None, None)):
            return torch.vmap(torch.vmap(torch.rand_like, randomness=inner, chunk_size=chunks[1]), randomness=outer,
                              chunk_size=chunks[0])(x)

        for outer, inner in (("same", "different"), ("different", "different"), ("same", "same"),
                             ("different", "same")):
            shape = (1 if outer == "same" else 2, 1 if inner == "same" else 3, 4)
            with self.subTest(f"outer {outer!r}, inner {inner!r}"), seeded():
                got = nested(outer, inner)
                with seeded():
                    want = torch.rand(*shape, device=DEVICE).cpu().expand(2, 3, 4)
                self.assert_tensor(got, want, f"outer {outer!r}, inner {inner!r}: one draw of {shape}")
                self.assert_value(len(set(got.cpu().flatten().tolist())), math.prod(shape), "distinct values")
            for chunks in ((1, None), (None, 2), (1, 2)):
                with self.subTest(f"outer {outer!r}, inner {inner!r}, chunk sizes {chunks}"):
                    got = nested(outer, inner, chunks).cpu()
                    for dim, mode, chunk in ((0, outer, chunks[0]), (1, inner, chunks[1])):
                        rows = {tuple(row.flatten().tolist()) for row in got.unbind(dim)}
                        if mode == "different" or DEVICE == "cpu" or chunk is None:
                            self.assert_value(len(rows), 1 if mode == "same" else got.shape[dim],
                                              f"chunk sizes {chunks}: distinct examples at the {mode!r} level {dim}")
        for modes in (("error", "different"), ("different", "error"), ("same", "error")):
            with self.subTest(f"randomness {modes}"), self.assert_raises_exactly(
                    RuntimeError, f"outer, inner randomness {modes}", match="randomness"):
                nested(*modes)

    def test_nested_chunk_sizes_chunk_each_level(self):
        """vmap(vmap(f, chunk_size=inner), chunk_size=outer) over (3, 4, 2): f runs once per (outer chunk, inner
        chunk), seeing those physical batch sizes at levels 1 and 2; the values equal the nested loop's."""
        x_cpu, x = on_cpu_and_device((3, 4, 2))
        func = lambda t: t * 2 - t.sum()
        expected = nested_loop(func, x_cpu, (0, 0), (0, 0))
        for chunks, calls in (((None, None), [(3, 4)]), ((2, None), [(2, 4), (1, 4)]), ((None, 3), [(3, 3), (3, 1)]),
                              ((2, 3), [(2, 3), (2, 1), (1, 3), (1, 1)])):
            seen = []

            def record(t):  # the physical batch sizes of levels 1 and 2: (outer chunk, inner chunk)
                inner = functorch_c.get_unwrapped(t)
                seen.append((functorch_c.get_unwrapped(inner).shape[functorch_c.maybe_get_bdim(inner)],
                             inner.shape[functorch_c.maybe_get_bdim(t)]))
                return func(t)

            got = torch.vmap(torch.vmap(record, chunk_size=chunks[1]), chunk_size=chunks[0])(x)
            self.assert_value(seen, calls, f"chunk sizes {chunks}: (outer, inner) examples per call")
            self.assert_tensor(got, expected, f"chunk sizes {chunks}: values")


# --------------------------------------------------------------------------- call forms
class TestVmapCallForms(VmapTestCase):
    """Every in_dims / out_dims / chunk_size / randomness form torch.vmap accepts, each shown to take effect."""

    def test_per_argument_in_dims_none_scalars_and_keywords(self):
        """in_dims=(1, None, 0, None), out_dims=(1, -1): each argument and output uses its own dim (vmap == by hand
        == loop); None passes a tensor (the same object) or a Python scalar as is; keyword arguments too."""
        a_cpu, b_cpu = int_valued((3, 4), device="cpu"), int_valued((3,), device="cpu", offset=3)
        c_cpu = int_valued((4, 2), device="cpu", offset=5)
        a, b, c = (t.to(DEVICE) for t in (a_cpu, b_cpu, c_cpu))
        in_dims, out_dims, seen = (1, None, 0, None), (1, -1), []
        combine = lambda a_, b_, c_, factor, *, shift: (a_ * b_ * factor + c_.sum() + shift, a_ - b_)

        def record(a_, b_, c_, factor, *, shift):
            seen.append((tuple(functorch_c.maybe_get_bdim(t) for t in (a_, b_, c_)), b_ is b, factor, shift is b))
            return combine(a_, b_, c_, factor, shift=shift)

        expected = loop(lambda a_, c_: combine(a_, b_cpu, c_, 3, shift=b_cpu), (a_cpu, c_cpu), (1, 0), out_dims)
        via_vmap = torch.vmap(record, in_dims=in_dims, out_dims=out_dims)(a, b, c, 3, shift=b)
        by_hand = hand_vmap(lambda *args: record(*args, shift=b), (a, b, c, 3), in_dims, out_dims, 4)
        self.assert_value(seen, [((1, -1, 0), True, 3, True)] * 2,
                          "(stored bdims of a, b, c; b as given; the scalar; the keyword as given): vmap, by hand")
        for index, (label, out) in itertools.product(range(2), (("torch.vmap", via_vmap), ("hand-built", by_hand))):
            self.assert_tensor(out[index], expected[index], f"{label} output {index}")

    def test_nested_container_inputs_with_per_leaf_in_dims(self):
        """Tuples, lists and dicts of tensors take one in_dim per leaf, or one int for the whole container."""
        a_cpu, b_cpu, c_cpu = (int_valued(s, device="cpu", offset=k) for k, s in enumerate(((4, 3), (3, 4), (3,))))
        a, b, c = (t.to(DEVICE) for t in (a_cpu, b_cpu, c_cpu))
        expected = torch.stack([a_cpu[i] * 2 + b_cpu[:, i] - c_cpu for i in range(4)])
        cases = (  # label, function, in_dims, arguments
            ("tuple, per leaf", lambda p: p[0] * 2 + p[1] - p[2], ((0, 1, None),), ((a, b, c),)),
            ("list, per leaf", lambda p: p[0] * 2 + p[1] - p[2], ([0, 1, None],), ([a, b, c],)),
            ("dict, per leaf", lambda d: d["a"] * 2 + d["b"] - d["c"], ({"a": 0, "b": 1, "c": None},),
             ({"a": a, "b": b, "c": c},)),
            ("dict, one int for the container", lambda d, ct: d["a"] * 2 + d["bt"] - ct, (0, None),
             ({"a": a, "bt": b.T}, c)),
            ("nested tuple in list", lambda p: p[0][0] * 2 + p[0][1] - p[1], ([(0, 1), None],), ([(a, b), c],)),
        )
        for label, func, in_dims, args in cases:
            with self.subTest(label):
                self.assert_tensor(torch.vmap(func, in_dims=in_dims)(*args), expected, f"{label}: in_dims={in_dims}")

    def test_out_dims_for_tuple_nested_dict_and_unbatched_outputs(self):
        """out_dims: an int for every output, a tuple per output, nested, dict, (d,) and None for unbatched."""
        x_cpu, x = on_cpu_and_device((2, 3))
        w = int_valued((4,), offset=3)
        stacked = lambda factor, dim: torch.stack([x_cpu[i] * factor for i in range(2)], dim=dim)
        cases = (  # label, func, out_dims, (path into the output, factor, dim of the stacked reference)
            ("out_dims=1 for both outputs", lambda t: (t, t * 2), 1, (((0,), 1, 1), ((1,), 2, 1))),
            ("out_dims=(0, -1)", lambda t: (t, t * 2), (0, -1), (((0,), 1, 0), ((1,), 2, -1))),
            ("nested out_dims ((0, 1), -1)", lambda t: ((t, t * 2), t * 3), ((0, 1), -1),
             (((0, 0), 1, 0), ((0, 1), 2, 1), ((1,), 3, -1))),
            ("dict out_dims", lambda t: {"p": t, "q": t * 2}, {"p": 1, "q": 0}, ((("p",), 1, 1), (("q",), 2, 0))),
            ("out_dims=(1,) for one tensor", lambda t: t * 3, (1,), (((), 3, 1),)),
            ("out_dims=(0, None)", lambda t: (t * 2, w), (0, None), (((0,), 2, 0),)),
        )
        for label, func, out_dims, checks in cases:
            with self.subTest(label):
                out = torch.vmap(func, out_dims=out_dims)(x)
                for path, factor, dim in checks:
                    got = out
                    for key in path:
                        got = got[key]
                    self.assert_tensor(got, stacked(factor, dim), f"{label}, output {path}")
        self.assertIs(torch.vmap(lambda t: (t * 2, w), out_dims=(0, None))(x)[1], w,
                      "out_dims=(0, None): the unbatched output is returned as is")
        self.assert_value(torch.vmap(lambda t: (t * 2, 7), out_dims=(0, None))(x)[1], 7,
                          "out_dims=(0, None): a non-tensor output is returned as is")

    def test_positional_and_keyword_parameters_agree(self):
        """torch.vmap(f, 1, 1, 'error') == torch.vmap(f, in_dims=1, out_dims=1); defaults are in_dims=out_dims=0."""
        x_cpu, x = on_cpu_and_device((3, 4))
        self.assertIs(torch.func.vmap, torch.vmap, "torch.func.vmap and torch.vmap")
        for label, vmapped, in_dim in (
                ("positional (1, 1, 'error')", torch.vmap(lambda t: t - t.sum(), 1, 1, "error"), 1),
                ("keywords", torch.vmap(lambda t: t - t.sum(), in_dims=1, out_dims=1, randomness="error",
                                        chunk_size=None), 1),
                ("defaults", torch.vmap(lambda t: t - t.sum()), 0)):
            self.assert_tensor(vmapped(x), loop(lambda t: t - t.sum(), (x_cpu,), (in_dim,), in_dim), label)

    def test_every_chunk_size_gives_the_same_result(self):
        """chunk_size None/1/2/5/8 over 5 examples: identical outputs, chunks as requested, in-place once."""
        (x_cpu, x), (w_cpu, w) = on_cpu_and_device((3, 5)), on_cpu_and_device((3,), offset=1)
        both = lambda t, weight: (t * weight - t.sum(), (t * 2).sum())
        expected = loop(lambda t: both(t, w_cpu), (x_cpu,), (1,), (1, 0))
        for chunk_size, chunks in ((None, [5]), (1, [1] * 5), (2, [2, 2, 1]), (5, [5]), (8, [5])):
            with self.subTest(f"chunk_size={chunk_size}"):
                seen = []

                def record(t, weight):
                    seen.append(functorch_c.get_unwrapped(t).shape[functorch_c.maybe_get_bdim(t)])
                    return both(t, weight)

                out = torch.vmap(record, in_dims=(1, None), out_dims=(1, 0), chunk_size=chunk_size)(x, w)
                self.assert_value(seen, chunks, f"chunk_size={chunk_size}: examples per call of the function")
                for index in range(2):
                    self.assert_tensor(out[index], expected[index], f"chunk_size={chunk_size}: output {index}")
        x_in_place = x_cpu.to(DEVICE, copy=True)
        torch.vmap(lambda t: t.add_(1), in_dims=1, out_dims=1, chunk_size=2)(x_in_place)
        self.assert_tensor(x_in_place, x_cpu + 1, "input after vmap(t.add_(1), chunk_size=2): +1 once per element")

    def test_error_mode_rejects_random_operations(self):
        """Under the default 'error', rand_like / rand / normal_ / dropout inside vmap raise RuntimeError."""
        x = int_valued((2, 3))
        cases = (
            ("torch.rand_like of the batched input", torch.rand_like),
            ("torch.rand of an unbatched shape", lambda t: t + torch.rand(3, device=t.device)),
            ("in-place normal_", lambda t: t.clone().normal_()),
            ("dropout in training mode", lambda t: torch.nn.functional.dropout(t, 0.5, training=True)),
        )
        for (label, func), mode in itertools.product(cases, ({}, {"randomness": "error"})):
            with self.subTest(f"{label}, {mode or 'default'}"), self.assert_raises_exactly(
                    RuntimeError, f"{label} under randomness={mode or 'default'}", match="randomness"):
                torch.vmap(func, **mode)(x)
        self.assert_tensor(torch.vmap(lambda t: torch.nn.functional.dropout(t, 0.5, training=False))(x), x.cpu(),
                           "dropout in eval mode is not random and works under 'error'")

    def test_different_and_same_draw_as_one_seeded_draw(self):
        """'different': one draw of shape (B, 3); 'same': one draw of (3,) for every row (also by hand, chunked), also
        for torch.rand(3) inside vmap; an in-place draw into a captured tensor raises under 'different'. Draws are
        compared with a seeded draw on the same device (the CPU's and an accelerator's generators differ); rows drawn
        under 'different' with a chunk_size only have to differ (chunking is device-specific). The 'different' draw
        follows the physical layout: in_dims=1 of x.t() gives the rows of in_dims=0 of x."""
        x = int_valued((4, 3))
        for mode, reference_shape in (("different", (4, 3)), ("same", (3,))):
            with seeded():
                reference = torch.rand(*reference_shape, device=DEVICE).cpu().expand(4, 3)
                second = torch.rand(*reference_shape, device=DEVICE).cpu()
            runs = (("torch.vmap", lambda: torch.vmap(torch.rand_like, randomness=mode)(x)),
                    ("by hand", lambda: hand_vmap(torch.rand_like, (x,), (0,), 0, 4, randomness=mode)),
                    ("in_dims=1 of the transpose",
                     lambda: torch.vmap(torch.rand_like, in_dims=1, randomness=mode)(x.t())))
            if mode == "same":
                runs += (("chunk_size=3", lambda: torch.vmap(torch.rand_like, randomness=mode, chunk_size=3)(x)),)
            for label, run in runs:
                on_device_chunked = DEVICE != "cpu" and "chunk" in label  # row 3: the next draw (see docstring)
                expected = torch.cat([reference[:3], second[None]]) if on_device_chunked else reference
                with seeded():
                    self.assert_tensor(run(), expected, f"randomness={mode!r}, {label}")
        chunked = torch.vmap(torch.rand_like, randomness="different", chunk_size=2)(x)
        self.assert_value(len({tuple(row.tolist()) for row in chunked.cpu()}), 4, "'different', chunk_size=2: rows")
        same = torch.vmap(lambda t: torch.rand(3, device=t.device), randomness="same")(x)
        self.assert_tensor(same, same[0].cpu().expand(4, 3), "'same': torch.rand(3) is one draw")
        different = torch.vmap(lambda t: torch.rand(3, device=t.device), randomness="different")(x)
        self.assert_value((different.dtype, tuple(different.shape), different.device.type,
                           len({tuple(row.tolist()) for row in different.cpu()})), (torch.float32, (4, 3), DEVICE, 4),
                          "'different' draw of torch.rand(3): dtype, shape, device, distinct rows")
        captured = torch.zeros(3, device=DEVICE)
        with self.assert_raises_exactly(RuntimeError, "'different': in-place random op on an unbatched tensor",
                                        match="randomness"):
            torch.vmap(lambda t: captured.normal_() + t, randomness="different")(x)


# --------------------------------------------------------------------------- dtypes
DTYPE_OPS = (  # label, op on one example of logical shape (3, 5); float, integer and bool outputs
    ("sum()", torch.sum), ("argmax(-1)", lambda t: t.argmax(-1)), ("mask t != t[:, :1]", lambda t: t != t[:, :1]),
    ("count_nonzero()", torch.count_nonzero), ("count_nonzero(dim=0)", lambda t: torch.count_nonzero(t, 0)),
    ("t * 0.5", lambda t: t * 0.5), ("cat of rotated columns", lambda t: torch.cat([t[:, 1:], t[:, :1]], 1)),
)


class TestAddBatchDimDtypes(VmapTestCase):
    """Every dtype of torch's lists goes through _add_batch_dim and vmapped ops exactly as the loop does."""

    def test_every_dtype_through_add_batch_dim_and_vmapped_ops(self):
        """Per dtype: the wrapper keeps dtype, device and the input itself, round trips (also through a cat); and
        vmap(op, in_dims=1) == stack of op per example (dtype, shape, values), or raises the loop's exception type.
        count_nonzero() of uint16/32/64/float8 works from 2.13: compared with count_nonzero over every dim."""
        counts_any_dtype = torch_version_at_least(VMAP_COUNT_NONZERO_ANY_DTYPE_SINCE)
        for dtype in DTYPES:
            x_cpu = values_of(dtype, (3, 4, 5), device="cpu")
            with self.subTest(f"{dtype} on {DEVICE}"):  # the copy there is the vehicle
                skip_unless_vehicle(self, f"{dtype} on {DEVICE}", lambda: x_cpu.to(DEVICE))
            if vehicle_refusal(f"{dtype} on {DEVICE}", lambda: x_cpu.to(DEVICE)):
                continue
            x = x_cpu.to(DEVICE)
            what = f"_add_batch_dim({dtype} on {DEVICE}, batch_dim=2)"
            looped = outcome(loop, lambda t: torch.cat([t[1:], t[:1]]), (x,), (2,))  # kernels differ per device
            with self.subTest(what):
                with vmap_level(5) as level:  # only vmap's own ops inside: the references and checks after it
                    y = checked_wrapper(self, x, 2, level, what)
                    back = remove_batch_dim(y, level, 5, 0)
                    got = outcome(lambda t: remove_batch_dim(torch.cat([t[1:], t[:1]]), level, 5, 1), y)
                self.assert_tensor(back, x_cpu.movedim(2, 0), f"{what}: removed at 0")
                self.assert_value(got[0], looped[0], f"{what}: cat of rotated rows succeeds iff the loop's cat does")
                if got[0] == "ok":
                    self.assert_tensor(got[1], torch.cat([x_cpu[1:], x_cpu[:1]]).movedim(2, 1),
                                       f"{what}: cat of rotated rows, removed at out_dim 1")
            for label, op in DTYPE_OPS:
                with self.subTest(f"{dtype}: {label}"):
                    what = f"torch {torch.__version__}: vmap({label}, in_dims=1) of {dtype} on {DEVICE}"
                    expected = reference_outcome(op, x_cpu, x)
                    if expected[0] == "raises" and label == "count_nonzero()" and counts_any_dtype:
                        expected = reference_outcome(lambda t: torch.count_nonzero(t, (0, 1)), x_cpu, x)
                    assert_same_outcome(self, outcome(torch.vmap(op, in_dims=1), x), expected, what)


# --------------------------------------------------------------------------- layouts
def layout_cases():
    """(label, tensor): every layout a strided input reaches vmap with (4-d/5-d: channels_last/_3d)."""
    z = torch.complex(int_valued((4, 3, 5)), int_valued((4, 3, 5), offset=4))
    return (
        ("contiguous", int_valued((4, 3, 5))), ("transposed", int_valued((5, 3, 4)).transpose(0, 2)),
        ("permuted", int_valued((3, 5, 4)).permute(2, 0, 1)), ("step-sliced", int_valued((8, 3, 10))[::2, :, 1::2]),
        ("expanded along dim 0 (stride 0)", int_valued((1, 3, 5)).expand(4, 3, 5)),
        ("expanded along dim 1 (stride 0)", int_valued((4, 1, 5)).expand(4, 3, 5)),
        ("channels_last 4-d", int_valued((4, 3, 2, 5)).contiguous(memory_format=torch.channels_last)),
        ("channels_last_3d 5-d", int_valued((2, 3, 4, 1, 5)).contiguous(memory_format=torch.channels_last_3d)),
        ("conj view of complex64", z.conj()),  # of transposed and step-sliced ones: cross_cases
        ("neg view (conj().imag)", z.conj().imag),
    )


COMPLEX_DTYPES = complex_types_and(torch.chalf)
HALF_FLOAT_DTYPES = tuple(dtype for dtype in get_all_fp_dtypes() if dtype.itemsize == 2)  # half, bfloat16


def cross_cases():
    """(label, tensor): conj/neg views of each complex dtype x transposed/step-sliced; channels_last(_3d) x the
    2-byte floats. Values as values_of (small integers), exact in every dtype."""
    for dtype in COMPLEX_DTYPES:
        if vehicle_refusal(f"{dtype} on {DEVICE}", lambda: values_of(dtype, (1,))):
            yield f"{dtype} on {DEVICE}", None  # the device cannot hold it: a skipped case
            continue
        for view, base in (("transposed", values_of(dtype, (5, 3, 4)).transpose(0, 2)),
                           ("sliced with a step", values_of(dtype, (8, 3, 10))[::2, :, 1::2])):
            yield f"conj view of {view} {dtype}", base.conj()
            yield f"neg view (conj().imag) of {view} {dtype}", base.conj().imag
    for dtype in HALF_FLOAT_DTYPES:
        yield f"channels_last {dtype}", values_of(dtype, (4, 3, 2, 5)).contiguous(memory_format=torch.channels_last)
        yield f"channels_last_3d {dtype}", values_of(dtype, (2, 3, 4, 1, 5)).contiguous(
            memory_format=torch.channels_last_3d)


LAYOUT_OPS = (  # label, op(example, b) where b = 1 runs it on the batch-first physical tensor (b leading dims)
    ("t * 2 - t[:1]", lambda t, b=0: t * 2 - t.narrow(b, 0, 1)),  # expose wrong strides or bits
    ("t.flip(-1) + t.sum(0).cumsum(-1)", lambda t, b=0: t.flip(-1) + t.sum(b, keepdim=True).cumsum(-1)),
    ("argmax(-1) of the real part", lambda t, b=0: (t.real if t.is_complex() else t).argmax(-1)),
    ("t != t[-1:]", lambda t, b=0: t != t.narrow(b, t.shape[b] - 1, 1)),
    ("count_nonzero(t - t[:, :1], -1)", lambda t, b=0: torch.count_nonzero(t - t.narrow(b + 1, 0, 1), -1)),
)
SPARSE_LAYOUTS = (torch.sparse_coo, torch.sparse_csr, torch.sparse_csc, torch.sparse_bsr, torch.sparse_bsc)


def coo_ops():
    """(label, op, layout of vmap's result (None: RuntimeError, see rules), dense reference per example)."""
    dense_layout = None if torch_version_at_least(VMAP_COO_TO_DENSE_ASSERTS_SINCE) else torch.strided
    return (("t * 2", lambda t: t * 2, torch.sparse_coo, lambda e: e * 2),
            ("to_dense()", lambda t: t.to_dense(), dense_layout, lambda e: e),
            ("sum(0)", lambda t: t.sum(0), torch.sparse_coo, lambda e: e.sum(0)),
            ("sum() (the loop stacks strided 0-d sums)", torch.sum, torch.sparse_coo, torch.sum))


def uncoalesced_coo():
    """A (3, 4, 3) COO tensor holding index (0, 1, 2) twice: uncoalesced, 5 stored entries, 4 distinct indices.
    check_invariants is given: left unset, the constructor warns "Sparse invariant checks are implicitly
    disabled" (measured on 2.13 and 2.14.1), which is the constructor's, not vmap's."""
    indices = torch.tensor([[0, 0, 1, 2, 0], [1, 1, 0, 3, 2], [2, 2, 1, 0, 2]])
    return torch.sparse_coo_tensor(indices, torch.tensor([1.0, 2.0, -3.0, 4.0, 5.0]), (3, 4, 3),
                                   check_invariants=True).to(DEVICE)


def stored(t):
    """What a COO tensor stores, read without coalescing (.indices() raises on an uncoalesced tensor)."""
    return t.layout, t.is_coalesced(), t._nnz(), t._indices().tolist(), t._values().tolist()


class TestAddBatchDimLayouts(VmapTestCase):
    """Batched views of every layout: the wrapper keeps the input as is; results equal the contiguous copy's."""

    def check_strided_layout(self, label, x):
        """At every batch dim: wrapper metadata, conj/neg bits kept; by hand and torch.vmap == loop over the
        resolved contiguous copy per op (or the loop's exception type), with the strides of the op run eagerly on
        the batch-first tensor on the device (what the batching rules run: so channels_last(_3d) kept as eager)."""
        x_cpu = x.cpu().resolve_conj().resolve_neg().contiguous()
        bits = (x.is_conj(), x.is_neg())
        for batch_dim in range(x.dim()):
            size = x.shape[batch_dim]
            what = f"{label} {tuple(x.shape)} strides {x.stride()}, batch_dim={batch_dim}"
            with self.subTest(what):
                with vmap_level(size) as level:
                    y = checked_wrapper(self, x, batch_dim, level, what, is_conj=bits[0], is_neg=bits[1])
                    same = remove_batch_dim(y, level, size, batch_dim)
                    by_hand = [outcome(lambda t: remove_batch_dim(op(t), level, size, 0), y) for _, op in LAYOUT_OPS]
                kept = torch.vmap(lambda t: t, in_dims=batch_dim, out_dims=batch_dim)(x)
                for how, got in (("round trip", same), ("torch.vmap(identity)", kept)):
                    self.assert_value((got.is_conj(), got.is_neg()), bits, f"{what}: bits after the {how}")
                    self.assert_tensor(got.resolve_conj().resolve_neg(), x_cpu, f"{what}: {how}")
                for (name, op), hand in zip(LAYOUT_OPS, by_hand):
                    eager = outcome(op, x.movedim(batch_dim, 0), 1)  # on the device, outside any level
                    expected = reference_outcome(op, x_cpu, x, batch_dim)
                    for how, got in (("by hand", hand), ("torch.vmap", outcome(torch.vmap(op, in_dims=batch_dim), x))):
                        assert_same_outcome(self, got, expected, f"{what}: {name} {how}")
                        if got[0] == eager[0] == "ok":
                            self.assert_value(got[1].stride(), eager[1].stride(), f"{what}: strides of {name} {how}")

    def check_coo(self, dense_cpu):
        """COO of dense_cpu at every batch dim: wrapper (layout per release), round trip and coo_ops as the loop."""
        x = dense_cpu.to_sparse().to(DEVICE)
        wrapper_layout = (torch.strided, torch.sparse_coo)[torch_version_at_least(WRAPPER_REPORTS_SPARSE_LAYOUT_SINCE)]
        for batch_dim in range(dense_cpu.dim()):
            size, what = dense_cpu.shape[batch_dim], f"COO {dense_cpu.dtype}, batch_dim={batch_dim}"
            with self.subTest(what):  # densifying on the device is how the cases read their results: the vehicle
                skip_unless_vehicle(self, f"COO {dense_cpu.dtype} densified on {DEVICE}", lambda: x.to_dense())
                with vmap_level(size) as level:
                    y = checked_wrapper(self, x, batch_dim, level, f"torch {torch.__version__}: {what}",
                                        layout=wrapper_layout)
                    back = remove_batch_dim(y, level, size, 0)
                self.assert_value(back.layout, torch.sparse_coo, f"{what}: layout of the round trip")
                self.assert_tensor(back.to_dense(), dense_cpu.movedim(batch_dim, 0), f"{what}: round trip")
                for label, op, out_layout, reference in coo_ops():
                    if out_layout is None:
                        with self.assert_raises_exactly(RuntimeError, f"torch {torch.__version__}: vmap({label}) "
                                                        f"of {what}", match="maybe_level.has_value"):
                            torch.vmap(op, in_dims=batch_dim)(x)
                        continue
                    got = outcome(torch.vmap(op, in_dims=batch_dim), x)
                    if got[0] == "ok":
                        self.assert_value(got[1].layout, out_layout, f"{what}: layout of vmap({label})")
                        got = ("ok", got[1].to_dense())
                    assert_same_outcome(self, got, outcome(loop, reference, (dense_cpu,), (batch_dim,)),
                                        f"{what}: vmap({label}), densified")

    def test_every_layout_and_batch_dim_matches_the_contiguous_copy(self):
        """Layout x batch dim (check_strided_layout): contiguous, transposed, permuted, step-sliced, expanded,
        channels_last(_3d), conj and neg views."""
        for label, x in layout_cases():
            self.check_strided_layout(label, x)

    def test_dtype_and_layout_crosses_match_the_contiguous_copy(self):
        """conj/neg views of complex32/64/128 x transposed/step-sliced, channels_last(_3d) x half/bfloat16, each
        at every batch dim (check_strided_layout); an op the loop refuses (ComplexHalf reductions: RuntimeError
        in 2.7.1, NotImplementedError later) is refused alike. ComplexHalf's 'experimental' warning is filtered."""
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", "ComplexHalf support is experimental", UserWarning)
            for label, x in cross_cases():
                if x is None:
                    with self.subTest(label):
                        skip_unless_vehicle(self, label, None)
                    continue
                self.check_strided_layout(label, x)

    def test_sparse_coo_is_batched_and_compressed_layouts_are_refused(self):
        """COO of float32, integral_types_and(bool) and complex_types() (not ComplexHalf: its COO tensors cannot be
        densified on the CPU, "cpublas_axpy_impl" is not implemented) at every batch dim (check_coo); CSR, CSC, BSR
        and BSC: _add_batch_dim and torch.vmap raise RuntimeError ("do not have strides") at every dim."""
        for dtype in (torch.float32,) + integral_types_and(torch.bool) + complex_types():
            self.check_coo(values_of(dtype, (3, 4, 6), device="cpu"))
        dense_cpu = int_valued((3, 4, 6), device="cpu")
        for layout in SPARSE_LAYOUTS[1:]:
            blocks = (2, 2) if layout in (torch.sparse_bsr, torch.sparse_bsc) else None
            sparse = dense_cpu.to_sparse(layout=layout, blocksize=blocks)
            for batch_dim in range(3):
                what = f"{layout}, batch_dim={batch_dim}"
                with self.subTest(what):
                    skip_unless_vehicle(self, f"{layout} moved to {DEVICE}", lambda: sparse.to(DEVICE))
                    x = sparse.to(DEVICE)
                    with vmap_level(dense_cpu.shape[batch_dim]) as level, self.assert_raises_exactly(
                            RuntimeError, f"_add_batch_dim of {what}", match="do not have strides"):
                        add_batch_dim(x, batch_dim, level)
                    with self.assert_raises_exactly(RuntimeError, f"torch.vmap over {what}",
                                                    match="do not have strides"):
                        torch.vmap(lambda t: t * 2, in_dims=batch_dim)(x)

    def test_uncoalesced_coo_stays_uncoalesced_and_reductions_coalesce(self):
        """COO with a duplicate index at every batch dim: wrapped as is; the round trip (index rows reordered) and
        vmap of elementwise ops keep its 5 stored entries uncoalesced, as eager does; sum(0) coalesces; no warning."""
        x = uncoalesced_coo()
        dense_cpu = x.cpu().to_dense()
        self.assert_value(stored(x)[1:3], (False, 5), "the input: (is_coalesced, _nnz)")
        elementwise = (("t * 2", lambda t: t * 2), ("neg", torch.neg), ("t + t", lambda t: t + t))
        for batch_dim in range(3):
            size, what = x.shape[batch_dim], f"uncoalesced COO, batch_dim={batch_dim}"
            order = [batch_dim] + [dim for dim in range(3) if dim != batch_dim]
            with self.subTest(what), warnings.catch_warnings(record=True) as caught:
                skip_unless_vehicle(self, f"uncoalesced COO densified on {DEVICE}", lambda: x.to_dense())
                warnings.simplefilter("always")
                with vmap_level(size) as level:
                    y = checked_wrapper(self, x, batch_dim, level, what)
                    moved = remove_batch_dim(y * 3, level, size, 0)
                    self.assertIs(remove_batch_dim(y, level, size, batch_dim), x, f"{what}: round trip to its dim")
                want = (torch.sparse_coo, False, 5, x._indices()[order].tolist(), (x._values() * 3).tolist())
                self.assert_value(stored(moved), want, f"{what}: stored entries of the round trip of y * 3 to 0")
                for label, op in elementwise:  # eager keeps every entry (on the CPU: all 5) uncoalesced
                    eager = stored(op(x))
                    self.assert_value((eager[1], stored(torch.vmap(op, in_dims=batch_dim, out_dims=batch_dim)(x))),
                                      (False, eager), f"{what}: stored entries of vmap({label}) (those of eager)")
                summed = torch.vmap(lambda t: t.sum(0), in_dims=batch_dim)(x)
                self.assert_value((summed.layout, summed.is_coalesced()), (torch.sparse_coo, True),
                                  f"{what}: vmap(sum(0)) coalesces")
                self.assert_tensor(summed.to_dense(), loop(lambda e: e.sum(0), (dense_cpu,), (batch_dim,)),
                                   f"{what}: values of vmap(sum(0))")
            self.assert_value([str(w.message) for w in caught if "invariant" in str(w.message)], [],
                              f"{what}: sparse-invariant warnings raised by vmap")

    def test_hybrid_coo_batches_at_sparse_dims_only(self):
        """COO with 2 sparse dims and a dense one: at a sparse dim round trip and vmap keep (sparse_dim, dense_dim)
        and values; at the dense dim the wrapper is built but its first op, a round trip to another dim and vmap
        raise RuntimeError (no permute between sparse and dense dims); vmap of the identity returns the input."""
        dense_cpu = int_valued((2, 3, 4), device="cpu")
        x = dense_cpu.to_sparse(2).to(DEVICE)
        refused = "transpositions between sparse and dense dimensions are not allowed"
        for batch_dim in range(3):
            size, what = dense_cpu.shape[batch_dim], f"hybrid COO (2 sparse, 1 dense dim), batch_dim={batch_dim}"
            with self.subTest(what):
                skip_unless_vehicle(self, f"hybrid COO densified on {DEVICE}", lambda: x.to_dense())
                with vmap_level(size) as level:
                    y = checked_wrapper(self, x, batch_dim, level, what)
                    uses = (("y * 2", lambda: y * 2), ("round trip to 0", lambda: remove_batch_dim(y, level, size, 0)))
                    if batch_dim == 2:
                        for label, use in uses:
                            with self.assert_raises_exactly(RuntimeError, f"{what}: {label}", match=refused):
                                use()
                    else:
                        back = remove_batch_dim(y * 2, level, size, 0)
                if batch_dim == 2:
                    with self.assert_raises_exactly(RuntimeError, f"{what}: torch.vmap(t * 2)", match=refused):
                        torch.vmap(lambda t: t * 2, in_dims=2)(x)
                    self.assertIs(torch.vmap(lambda t: t, in_dims=2, out_dims=2)(x), x, f"{what}: vmap(identity)")
                    continue
                for label, got, dims, want in (
                        ("round trip of y * 2", back, (2, 1), dense_cpu.movedim(batch_dim, 0) * 2),
                        ("vmap(t * 2)", torch.vmap(lambda t: t * 2, in_dims=batch_dim)(x), (2, 1),
                         dense_cpu.movedim(batch_dim, 0) * 2),
                        ("vmap(sum(0))", torch.vmap(lambda t: t.sum(0), in_dims=batch_dim)(x), (1, 1),
                         loop(lambda e: e.sum(0), (dense_cpu,), (batch_dim,)))):
                    self.assert_value((got.layout, got.sparse_dim(), got.dense_dim()), (torch.sparse_coo, *dims),
                                      f"{what}: (layout, sparse_dim, dense_dim) of {label}")
                    self.assert_tensor(got.to_dense(), want, f"{what}: values of {label}")


# get_all_qint_dtypes but the packed sub-byte quint4x2/quint2x4: their movedim views fail a storage bounds check on
# 2.7.1 to 2.12 and their copies are not implemented on 2.13+, so no loop reference exists
QUANTIZED_DTYPES = tuple(dtype for dtype in get_all_qint_dtypes() if dtype not in (torch.quint4x2, torch.quint2x4))


class TestAddBatchDimOtherTensorKinds(VmapTestCase):
    """Jagged nested tensors on the device; mkldnn and quantized tensors, CPU-only layouts, on the CPU."""

    def test_jagged_nested_tensor_batches_at_dim_0_only(self):
        """Jagged components (2, 3) and (4, 3): at dim 0 the wrapper holds it (its .shape raises RuntimeError) and
        round trips, vmap(identity) returns it, computed outputs are strided-layout nested tensors of the loop's
        components; other dims, view ops and shape reads raise RuntimeError (alike on 2.7.1 to 2.14.1)."""
        parts_cpu = [int_valued((2, 3), device="cpu"), int_valued((4, 3), device="cpu", offset=2)]
        nt = torch.nested.nested_tensor([part.to(DEVICE) for part in parts_cpu], layout=torch.jagged)
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", "There is a performance drop", UserWarning)
            with vmap_level(2) as level:
                y = add_batch_dim(nt, 0, level)
                self.assert_value(levels_of(y), [(level, 0)], "(level, bdim) of the wrapper at dim 0")
                self.assertIs(functorch_c.get_unwrapped(y), nt, "the wrapper holds the nested tensor itself")
                self.assertIs(remove_batch_dim(y, level, 2, 0), nt, "round trip at dim 0")
                for label, use in (("the wrapper's .shape", lambda: y.shape),
                                   ("_add_batch_dim at dim 1", lambda: add_batch_dim(nt, 1, level))):
                    with self.assert_raises_exactly(RuntimeError, label, match="[Nn]ested"):
                        use()
            self.assertIs(torch.vmap(lambda t: t)(nt), nt, "vmap(identity) returns the nested tensor")
            for label, op in (("t * 2", lambda t: t * 2), ("sum(-1)", lambda t: t.sum(-1)),
                              ("softmax(-1)", lambda t: t.softmax(-1))):
                got = torch.vmap(op)(nt)
                self.assert_value((got.is_nested, got.layout), (True, torch.strided), f"vmap({label}): kind")
                for index, (part, want) in enumerate(zip(got.unbind(), parts_cpu)):
                    self.assert_tensor(part, op(want), f"vmap({label}), component {index}")
            for label, kwargs, func in (("in_dims=1", {"in_dims": 1}, lambda t: t),
                                        ("out_dims=1", {"out_dims": 1}, lambda t: t),
                                        ("a view op (transpose)", {}, lambda t: t.transpose(0, 1)),
                                        ("the shape read inside", {}, lambda t: t * len(t.shape))):
                with self.subTest(label), self.assert_raises_exactly(RuntimeError, f"vmap, {label}", match="[Nn]ested"):
                    torch.vmap(func, **kwargs)(nt)

    @unittest.skipUnless(torch.backends.mkldnn.is_available(), "this torch is built without mkldnn")
    def test_mkldnn_tensor_on_the_cpu_batches_at_dim_0_only(self):
        """mkldnn is a CPU-only layout (no device comparison applies): at dim 0 the wrapper (reported strided)
        holds the input, y * 2 round trips and vmap(t * 2) returns mkldnn with the dense values; at dims 1
        and 2 the wrapper is built but its first op, vmap and the loop's select raise NotImplementedError."""
        dense = int_valued((2, 3, 4), device="cpu")
        x = dense.to_mkldnn()
        for batch_dim in range(3):
            size, what = dense.shape[batch_dim], f"mkldnn, batch_dim={batch_dim}"
            with self.subTest(what):
                with vmap_level(size) as level:
                    y = checked_wrapper(self, x, batch_dim, level, what, layout=torch.strided)
                    back = outcome(lambda t: remove_batch_dim(t * 2, level, size, 0), y)
                got = outcome(torch.vmap(lambda t: t * 2, in_dims=batch_dim), x)
                if batch_dim:
                    for label, result in (("y * 2", back), ("vmap(t * 2)", got), ("loop", outcome(x.select, 1, 0))):
                        self.assert_value(result, ("raises", NotImplementedError), f"{what}: {label}")
                    continue
                for label, (_, result) in (("round trip of y * 2", back), ("vmap(t * 2)", got)):
                    self.assert_value(result.layout, torch._mkldnn, f"{what}: layout of {label}")
                    self.assert_tensor(result.to_dense(), dense * 2, f"{what}: values of {label}", device="cpu")

    def test_quantized_tensors_on_the_cpu_as_the_loop(self):
        """QUANTIZED_DTYPES per tensor, CPU-only (no device comparison applies), at every batch dim: the wrapper
        keeps the dtype and the input, reports is_quantized False (2.7.1 to 2.14.1), round trips; vmap of each op ==
        the loop's (dtype, scale, zero point, values) or exception type, but t + t at dims 1 and 2 raises RuntimeError
        (vmap moves the batch dim: "empty_strided not supported on quantized tensors"), NotImplementedError looped."""
        dense = int_valued((2, 3, 4), device="cpu")
        ops = (("dequantize", torch.dequantize), ("int_repr", lambda t: t.int_repr()), ("relu", torch.relu),
               ("flip(0)", lambda t: t.flip(0)), ("clone", torch.clone), ("t * 2", lambda t: t * 2),
               ("t + t", lambda t: t + t), ("sum", torch.sum))

        def seen(result):  # ("ok", (dtype, [scale, zero point,] values)), or ("raises", exception type)
            if result[0] != "ok":
                return result
            t = result[1]
            if t.is_quantized:
                return "ok", (t.dtype, t.q_scale(), t.q_zero_point(), outcome(lambda: t.dequantize().tolist()))
            return "ok", (t.dtype, t.tolist())

        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", "quantize_per_tensor, torch.quantize_per_channel", UserWarning)
            warnings.filterwarnings("ignore", "There is a performance drop", UserWarning)
            for dtype in QUANTIZED_DTYPES:
                x = torch.quantize_per_tensor(dense, 0.5, 2, dtype)
                for batch_dim in range(3):
                    size, what = dense.shape[batch_dim], f"{dtype}, batch_dim={batch_dim}"
                    with self.subTest(what):
                        with vmap_level(size) as level:
                            y = checked_wrapper(self, x, batch_dim, level, what, is_quantized=False)
                            back = outcome(remove_batch_dim, y, level, size, 0)
                        self.assert_value(seen(back), seen(outcome(x.movedim, batch_dim, 0)), f"{what}: round trip")
                        for label, op in ops:
                            expected = seen(outcome(loop, op, (x,), (batch_dim,)))
                            if label == "t + t" and batch_dim:  # vmap moves the batch dim to 0 first: empty_strided
                                expected = ("raises", RuntimeError)
                            self.assert_value(seen(outcome(torch.vmap(op, in_dims=batch_dim), x)), expected,
                                              f"{what}: vmap({label})")


# --------------------------------------------------------------------------- sizes
class TestVmapSizes(VmapTestCase):
    """Zero-size batches and dims, 0-d examples, size-1 dims."""

    def test_zero_size_zero_dim_and_size_one_inputs(self):
        """A batch of 0, examples with a 0-size dim, 0-d examples, size-1 dims (a batch of 1, squeeze, broadcasting):
        wrappers and results of the right shape, dtype and values, by hand and through vmap. With a chunk_size a
        batch of 0 runs no chunk and vmap fails in its own concatenation (the type per release: module rules)."""
        zero_cpu = torch.zeros(0, 3, dtype=torch.int32)  # a batch of 0 examples
        empty_cpu = torch.zeros(2, 0, 3)  # examples with a 0-size dim
        scalars_cpu = int_valued((4,), device="cpu")  # 0-d examples
        one_cpu = int_valued((1, 1, 3), device="cpu")  # a batch of 1
        zero, empty, scalars, one = (t.to(DEVICE) for t in (zero_cpu, empty_cpu, scalars_cpu, one_cpu))
        by_hand = (  # input, batch_dim, logical shape, op, out_dim, expected
            (zero, 0, (3,), lambda t: t * 2, 0, zero_cpu), (empty, 2, (2, 0), lambda t: t + 1, 0, torch.zeros(3, 2, 0)),
            (scalars, 0, (), lambda t: t * t, 0, scalars_cpu * scalars_cpu),
            (one, 1, (1, 3), lambda t: t.sum(-1), 1, one_cpu.sum(-1)),
        )
        for tensor, batch_dim, logical, op, out_dim, expected in by_hand:
            what = f"_add_batch_dim({tuple(tensor.shape)}, batch_dim={batch_dim})"
            with vmap_level(tensor.shape[batch_dim]) as level:
                y = add_batch_dim(tensor, batch_dim, level)
                self.assert_value((batch_meta(y), y.numel()),
                                  (wrapped_meta(level, batch_dim, logical, tensor), math.prod(logical)), what)
                back = remove_batch_dim(op(y), level, tensor.shape[batch_dim], out_dim)
            self.assert_tensor(back, expected, f"{what}: round trip")
        a_cpu, b_cpu = int_valued((2, 1, 4), device="cpu"), int_valued((3, 1), device="cpu", offset=1)
        cases = (  # label, result, expected
            ("vmap(t * 2) over 0 examples", torch.vmap(lambda t: t * 2)(zero), zero_cpu),
            ("vmap(sum) over 0 examples", torch.vmap(torch.sum)(zero), torch.zeros(0, dtype=torch.int64)),
            ("out_dims=1 over 0 examples", torch.vmap(lambda t: t + 1, out_dims=1)(zero), zero_cpu.t()),
            ("vmap(t * 2) of (0, 3) examples", torch.vmap(lambda t: t * 2)(empty), empty_cpu),
            ("vmap(sum over the 0 dim)", torch.vmap(lambda t: t.sum(0))(empty), torch.zeros(2, 3)),
            ("vmap(sum), in_dims=2", torch.vmap(torch.sum, in_dims=2)(empty), torch.zeros(3)),
            ("stack of 0-d examples", torch.vmap(lambda t: torch.stack([t, t * 2]))(scalars),
             torch.stack([scalars_cpu, scalars_cpu * 2], dim=1)),
            ("unsqueeze of 0-d examples, out_dims=1", torch.vmap(lambda t: t.unsqueeze(0), out_dims=1)(scalars),
             scalars_cpu.unsqueeze(0)),
            ("sum of 0-d examples, out_dims=-1", torch.vmap(torch.sum, out_dims=-1)(scalars), scalars_cpu),
            ("squeeze() of (1, 3) examples in a batch of 1", torch.vmap(torch.squeeze)(one), one_cpu.reshape(1, 3)),
            ("squeeze() with in_dims on a size-1 dim", torch.vmap(torch.squeeze, in_dims=1)(one),
             one_cpu.reshape(1, 3)),
            ("(1, 4) example + unbatched (3, 1)",
             torch.vmap(lambda a, b: a + b, in_dims=(0, None))(a_cpu.to(DEVICE), b_cpu.to(DEVICE)),
             torch.stack([a_cpu[i] + b_cpu for i in range(2)])),
        )
        for label, got, expected in cases:
            self.assert_tensor(got, expected, label)
        in_pytree = torch_version_at_least(PYTREE_READS_NONE_SPEC_IN) and not torch_version_at_least(
            VMAP_CHECKS_EMPTY_CHUNKS_SINCE)
        with self.assert_raises_exactly(AttributeError if in_pytree else AssertionError,
                                        f"torch {torch.__version__}: chunk_size=2 over 0 examples (no chunk is run)"):
            torch.vmap(lambda t: t * 2, chunk_size=2)(zero)


# --------------------------------------------------------------------------- side effects
VIEW_OPS = (  # label, a view of one (3, 4) example (of a float32 input; complex64 for COMPLEX_VIEWS)
    ("identity", lambda t: t), ("t[1:]", lambda t: t[1:]), ("t[1]", lambda t: t[1]), ("t[...]", lambda t: t[...]),
    ("transpose(0, 1)", lambda t: t.transpose(0, 1)), ("movedim(0, 1)", lambda t: t.movedim(0, 1)),
    ("unsqueeze(1)", lambda t: t.unsqueeze(1)), ("view(3, 2, 2)", lambda t: t.view(3, 2, 2)),
    ("expand", lambda t: t.expand(2, 3, 4)), ("detach()", torch.Tensor.detach), ("view_as_real", torch.view_as_real),
    ("real", lambda t: t.real), ("conj()", torch.conj))
COMPLEX_VIEWS = ("view_as_real", "real", "conj()")


class TestVmapSideEffects(VmapTestCase):
    """In-place writes, aliasing outputs and the vmap level across repeated calls."""

    def test_in_place_op_writes_through_to_the_input_once(self):
        """t.add_(1) under vmap of an input or a strided view of it, at several in_dims, and mul_ on a wrapper write
        through once to exactly those elements; expanded inputs raise as eager; a captured tensor: once, or raises."""
        base_cpu = int_valued((3, 8), device="cpu")
        cases = (  # label, view of the base, in_dims (= out_dims), rows and columns written
            ("the input, in_dims=0", lambda b: b, 0, slice(None), slice(None)),
            ("the input, in_dims=1", lambda b: b, 1, slice(None), slice(None)),
            ("every other column, in_dims=1", lambda b: b[:, ::2], 1, slice(None), slice(None, None, 2)),
            ("transpose, in_dims=0", lambda b: b.t(), 0, slice(None), slice(None)),
            ("rows 1.., columns 1::3, in_dims=-1", lambda b: b[1:, 1::3], -1, slice(1, None), slice(1, None, 3)),
        )
        for label, view_of, in_dim, rows, cols in cases:
            with self.subTest(label):
                base = base_cpu.to(DEVICE, copy=True)
                version = base._version
                out = torch.vmap(lambda t: t.add_(1), in_dims=in_dim, out_dims=in_dim)(view_of(base))
                expected = base_cpu.clone()
                expected[rows, cols] += 1
                self.assert_tensor(base, expected, f"{label}: input after the in-place update")
                self.assert_tensor(out, view_of(expected), f"{label}: returned value")
                self.assertTrue(base._version > version, f"{label}: the input's version counter was bumped")
        for label, x in (("batch dim expanded", int_valued((1, 3)).expand(2, 3)),
                         ("inner dim expanded", int_valued((2, 1)).expand(2, 3))):
            before = x.cpu().clone()
            for name, update in (("eager", lambda: x.add_(1)), ("vmap", lambda: torch.vmap(lambda t: t.add_(1))(x))):
                with self.subTest(f"{name}, {label}"), self.assert_raises_exactly(
                        RuntimeError, f"{name} add_ on {label}", match="single memory location"):
                    update()
            self.assert_tensor(x, before, f"{label}: unchanged after the rejected updates")
        x_cpu = int_valued((2, 3), device="cpu")
        x = x_cpu.to(DEVICE, copy=True)
        with vmap_level(3) as level:
            add_batch_dim(x, 1, level).mul_(2)
        self.assert_tensor(x, x_cpu * 2, "input after mul_(2) on _add_batch_dim(x, 1)")

        counter, calls = torch.zeros(3, device=DEVICE), []

        def bump(t):
            calls.append(counter.add_(1))
            return t + counter

        out = torch.vmap(bump)(x)
        self.assert_value(len(calls), 1, "calls of the function per vmap call")
        self.assert_tensor(counter, torch.ones(3), "captured unbatched counter after one vmap call")
        self.assert_tensor(out, x_cpu * 2 + 1, "output of the counter function")
        with self.assert_raises_exactly(RuntimeError, "unbatched.add_(batched) inside vmap"):
            torch.vmap(lambda t: counter.add_(t))(x)
        self.assert_tensor(counter, torch.ones(3), "captured tensor after the rejected update")

    def test_outputs_alias_inputs_as_upstream(self):
        """vmap of a view (VIEW_OPS at in_dims 0 and 1 of a transposed input) is a view of the input as the CPU's
        vmap gives it: its storage, the CPU's strides, offset, conj bit and values, on the input's device; the
        identity at in_dims 0 is the input itself; writes through a view output reach the input; computed outputs
        do not share its storage; an unbatched output is the captured tensor expanded."""
        def storage(t):
            return t.untyped_storage().data_ptr()

        for (label, view), in_dim in itertools.product(VIEW_OPS, (0, 1)):
            dtype = torch.complex64 if label in COMPLEX_VIEWS else torch.float32
            x_cpu = values_of(dtype, (3, 2, 4) if in_dim == 0 else (2, 3, 4), device="cpu").transpose(0, 1)
            x, what = x_cpu.to(DEVICE), f"vmap({label}, in_dims={in_dim})"
            got, want = (torch.vmap(view, in_dims=in_dim)(t) for t in (x, x_cpu))
            self.assert_value((storage(got) == storage(x), got.stride(), got.storage_offset(), got.is_conj()),
                              (True, want.stride(), want.storage_offset(), want.is_conj()),
                              f"{what}: (shares the input's storage, strides, offset, conj bit)")
            self.assert_tensor(got, want, what)
        x, w = int_valued((2, 3)), int_valued((3,), offset=1)
        self.assertIs(torch.vmap(lambda t: t)(x), x, "vmap(identity) returns the input tensor itself")
        expected = x.cpu().clone()
        expected[:, 1:] *= 10
        torch.vmap(lambda t: t[1:])(x).mul_(10)
        self.assert_tensor(x, expected, "input after writing through the view output of vmap(t[1:])")
        self.assertFalse(storage(torch.vmap(lambda t: t * 1)(x)) == storage(x), "vmap(t * 1) is a new tensor")
        unbatched = torch.vmap(lambda t: w)(x)
        self.assert_value((storage(unbatched), unbatched.stride()), (storage(w), (0, 1)),
                          "an unbatched output is the captured tensor expanded over the batch (storage, strides)")

    def test_repeated_and_failing_calls_leave_no_level_behind(self):
        """Each vmap call runs at level 1 and leaves none, also when the function raises."""
        x, levels = int_valued((2, 3)), []
        vmapped = torch.vmap(lambda t: levels.append(functorch_c.maybe_current_level()) or t * 2)
        for call in range(3):
            vmapped(x)
            self.assertIs(functorch_c.maybe_current_level(), None, f"current level after call {call}")
        self.assert_value(levels, [1, 1, 1], "level inside each of three calls")

        def fail(t):
            raise KeyError("raised inside the vmapped function")

        with self.assert_raises_exactly(KeyError, "an error inside the function propagates unchanged"):
            torch.vmap(fail)(x)
        self.assertIs(functorch_c.maybe_current_level(), None, "current level after the failing call")
        with vmap_level(2) as level:
            self.assert_value(level, 1, "level of a hand-entered vmap after the calls")
        self.assertIs(functorch_c.maybe_current_level(), None, "current level after leaving the hand-entered one")


# --------------------------------------------------------------------------- bad input
class TestAddBatchDimBadInput(VmapTestCase):
    """Wrong types and out-of-range values raise upstream's exception type."""

    def test_out_of_range_batch_dim_and_wrong_level(self):
        """Unchecked batch_dim is stored and ops then fail; level -1 raises; a wrapper of a level not entered, left
        or created with no level entered fails on use. A batch_dim >= ndim is kept as given and the logical shape
        drops the last dim (measured the same on 2.7.1 to 2.14.1); the first op on it raises IndexError."""
        x = int_valued((2, 3))
        normalizes = torch_version_at_least(NEGATIVE_BATCH_DIM_NORMALIZED_SINCE)
        with vmap_level(3) as level:
            functions = (("wrapper", add_batch_dim), ("C function", functorch_c._add_batch_dim))
            for batch_dim, (name, func) in itertools.product((2, 5), functions):
                self.assert_value(batch_meta(func(x, batch_dim, level)), wrapped_meta(level, batch_dim, (2,), x),
                                  f"{name}, batch_dim={batch_dim} of a 2-d tensor")
            with self.assert_raises_exactly(IndexError, "sum() of a wrapper with batch_dim=2 of a 2-d tensor"):
                add_batch_dim(x, 2, level).sum()
            self.assert_value(functorch_c.maybe_get_bdim(add_batch_dim(x, -3, level)), -1 if normalizes else -3,
                              f"torch {torch.__version__}: stored bdim for batch_dim=-3 of a 2-d tensor")
            with self.assert_raises_exactly(RuntimeError, "_add_batch_dim(x, 0, level=-1)"):
                add_batch_dim(x, 0, -1)
            not_entered = add_batch_dim(x, 0, level + 1)
            self.assert_value(batch_meta(not_entered), wrapped_meta(level + 1, 0, (3,), x),
                              "wrapper for a level not entered")
            with self.assert_raises_exactly(RuntimeError, "sum() of a wrapper for a level not entered"):
                not_entered.sum()
            escaped = add_batch_dim(x, 0, level)
        self.assertIs(functorch_c.maybe_current_level(), None, "this check needs no functorch level entered")
        created_outside = add_batch_dim(x, 0, 1)  # level 1: the level the next vmap would get
        self.assert_value(batch_meta(created_outside), wrapped_meta(1, 0, (3,), x), "wrapper made with no level")
        for label, tensor in (("escaped", escaped), ("created outside", created_outside)):
            with self.assert_raises_exactly(RuntimeError, f"{label} batched tensor: an op must raise",
                                            match="escaped from inside a function being vmapped"):
                tensor.sum()

    def test_wrong_argument_types_raise(self):
        """Non-int batch_dim or level, non-tensor input: TypeError (or AttributeError, see rules); 0-d: ValueError."""
        x = int_valued((2, 3))
        reads_ndim = torch_version_at_least(NEGATIVE_BATCH_DIM_NORMALIZED_SINCE)  # the wrapper reads tensor.ndim
        with vmap_level(3) as level:
            ndim_error = AttributeError if reads_ndim else TypeError
            cases = (  # label, (tensor, batch_dim, level), error of the wrapper, error of the C function
                *((label, args, TypeError, TypeError) for label, args in (
                    ("batch_dim=1.0", (x, 1.0, level)), ("batch_dim='1'", (x, "1", level)),
                    ("batch_dim=None", (x, None, level)), ("level=1.5", (x, 1, 1.5)), ("level=None", (x, 1, None)),
                    ("a list as the tensor", ([1.0, 2.0], 0, level)), ("None as the tensor", (None, 0, level)),
                    ("an int as the tensor", (3, 0, level)))),
                ("a list as the tensor, batch_dim=-1", ([1.0, 2.0], -1, level), ndim_error, TypeError),
                ("None as the tensor, batch_dim=-1", (None, -1, level), ndim_error, TypeError),
                ("a 0-d tensor", (torch.tensor(3.0, device=DEVICE), 0, level), ValueError, ValueError),
            )
            for label, args, wrapper_error, c_error in cases:
                for name, func, error in (("_add_batch_dim", add_batch_dim, wrapper_error),
                                          ("C _add_batch_dim", functorch_c._add_batch_dim, c_error)):
                    with self.subTest(f"{name}, {label}"), self.assert_raises_exactly(
                            error, f"torch {torch.__version__}: {name}, {label}"):
                        func(*args)

    def test_vmap_rejects_bad_in_dims_outputs_and_out_dims(self):
        """in_dims of the wrong type, length or range, a non-tensor, unequal batch sizes, bad outputs or out_dims:
        ValueError; out_dims out of range: IndexError."""
        x = int_valued((2, 3))
        cases = (  # error, label, func, in_dims, out_dims, args, message
            (ValueError, "in_dims tuple shorter than inputs", lambda a, b: a + b, (0,), 0, (x, x), "not compatible"),
            (ValueError, "in_dims tuple longer than the inputs", lambda a: a, (0, 0), 0, (x,), "not compatible"),
            (ValueError, "in_dims as a list", lambda a, b: a + b, [0, 0], 0, (x, x), "expected `in_dims` to be int"),
            (ValueError, "in_dims float", lambda a: a, 0.0, 0, (x,), "expected `in_dims` to be int"),
            (ValueError, "in_dims None", lambda a: a, None, 0, (x,), "expected `in_dims` to be int"),
            (ValueError, "in_dims=2 of a 2-d input", lambda a: a, 2, 0, (x,), "expected in_dim to satisfy"),
            (ValueError, "in_dims=-3 of a 2-d input", lambda a: a, -3, 0, (x,), "expected in_dim to satisfy"),
            (ValueError, "in_dim 0 for a Python int", lambda a, n: a, (0, 0), 0, (x, 3), "cannot vmap over non-Tensor"),
            (ValueError, "in_dim 1.0 inside the tuple", lambda a: a, (1.0,), 0, (x,), "in_dim must be either"),
            (ValueError, "every in_dim None", lambda a: a, (None,), 0, (x,), "at least one Tensor"),
            (ValueError, "no inputs", lambda: x, 0, 0, (), "got no inputs"),
            (ValueError, "batch sizes 2 and 3 (in_dims=(0, 1) of one (2, 3) tensor)", lambda a, b: a, (0, 1), 0,
             (x, x), "same size"),
            (ValueError, "batch sizes 2 and 4", lambda a, b: a + b, 0, 0, (x, int_valued((4, 3))), "same size"),
            (ValueError, "a Python int returned", lambda t: 3, 0, 0, (x,), "must only return Tensors"),
            (ValueError, "a batched output with out_dims=None", lambda t: t, 0, None, (x,),
             "can not return a BatchedTensor"),
            (ValueError, "out_dims float", lambda t: t, 0, 0.0, (x,), "`out_dims` must be an int"),
            (ValueError, "out_dims tuple of 3 for 2 outputs", lambda t: (t, t), 0, (0, 0, 0), (x,), "not compatible"),
            (ValueError, "out_dims tuple of 2 for one tensor", lambda t: t, 0, (0, 0), (x,), "not compatible"),
            (ValueError, "out_dims list for a tuple output", lambda t: (t, t), 0, [0, 1], (x,), "not compatible"),
            (IndexError, "out_dims=2 for a 2-d output", lambda t: t, 0, 2, (x,), "out of range"),
            (IndexError, "out_dims=-3 for a 2-d output", lambda t: t, 0, -3, (x,), "out of range"),
        )
        for error, label, func, in_dims, out_dims, args, match in cases:
            with self.subTest(label), self.assert_raises_exactly(error, label, match=match):
                torch.vmap(func, in_dims=in_dims, out_dims=out_dims)(*args)

    def test_vmap_rejects_bad_randomness_and_chunk_size_when_built(self):
        """At vmap(): bad randomness RuntimeError, chunk_size <= 0 ValueError; a non-callable: TypeError when called."""
        for error, kwargs, match in ((RuntimeError, {"randomness": "bad"}, "Only allowed values for randomness"),
                                     (RuntimeError, {"randomness": "Same"}, "Only allowed values for randomness"),
                                     (ValueError, {"chunk_size": 0}, "chunk_size should be None or greater than 0"),
                                     (ValueError, {"chunk_size": -1}, "chunk_size should be None or greater than 0")):
            with self.subTest(str(kwargs)), self.assert_raises_exactly(error, f"torch.vmap(f, {kwargs})", match=match):
                torch.vmap(torch.neg, **kwargs)
        vmapped = torch.vmap(3)
        with self.assert_raises_exactly(TypeError, "torch.vmap(3) is built; calling it"):
            vmapped(int_valued((2, 3)))


# --------------------------------------------------------------------------- threads
class TestVmapThreads(VmapTestCase):
    """The vmap level stack is per thread: a level in one thread is invisible in the other."""

    def test_levels_are_per_thread_in_both_directions(self):
        """Main holds a level: a worker sees none and vmaps at level 1; a worker holding a level: another thread
        started from it sees none either, and main's level is untouched by both."""
        x_cpu, x = on_cpu_and_device((2, 3))

        def vmap_here():
            levels = []
            out = torch.vmap(lambda t: levels.append(functorch_c.maybe_current_level()) or t * 2)(x)
            return functorch_c.maybe_current_level(), levels, functorch_c.maybe_current_level(), out

        def hold_level_and_vmap_elsewhere():
            with vmap_level(3) as level:
                return [level], run_in_thread(vmap_here), functorch_c.maybe_current_level()

        with vmap_level(2) as main_level:
            *worker, worker_out = run_in_thread(vmap_here)
            self.assert_value(functorch_c.maybe_current_level(), main_level, "main thread's level after the worker")
        seen, (*other, other_out), level_after = run_in_thread(hold_level_and_vmap_elsewhere)
        self.assert_value(worker, [None, [1], None], "worker: level before, inside, after its vmap (main holds 1)")
        self.assert_value(seen + other + [level_after], [1, None, [1], None, 1],
                          "holder's level; the other thread's before, inside, after its vmap; holder's level after")
        self.assertIsNone(functorch_c.maybe_current_level(), "main thread holds no level afterwards")
        for label, out in (("worker's", worker_out), ("the other thread's (a worker holds a level)", other_out)):
            self.assert_tensor(out, x_cpu * 2, f"{label} vmap result")


# --------------------------------------------------------------------------- torch subsystems
Pair = collections.namedtuple("Pair", "doubled total")


class Tripler:
    """Callables that are not functions: an object, a bound method, a static and a class method."""

    def __call__(self, t):
        return t * 3

    method = __call__  # obj.method: a bound method
    static = staticmethod(lambda t: t * 3)
    klass = classmethod(lambda cls, t: t * 3)


class MarkedTensor(torch.Tensor):
    """A plain Python subclass of Tensor (no __torch_function__ override of its own)."""


class TestVmapSubsystems(VmapTestCase):
    """Where _add_batch_dim's wrappers meet other parts of torch: forward-mode and higher-order autograd, torch.func
    transforms, version counters, containers out of vmap, module hooks and train mode, autocast, the default dtype,
    the global RNG stream, callables that are not functions, subclasses, copies."""

    def test_forward_mode_tangents_through_hand_built_and_func_levels(self):
        """A dual tensor wrapped by _add_batch_dim keeps its tangent: d(x*x) = 2x*t by hand; jvp of vmap(sin) is
        cos(x)*t, vmap of jvp too."""
        import torch.autograd.forward_ad as fwad
        (x_cpu, x), (t_cpu, t) = on_cpu_and_device((2, 3)), on_cpu_and_device((2, 3), offset=3)
        with fwad.dual_level():
            with vmap_level(2) as level:
                wrapped = add_batch_dim(fwad.make_dual(x, t), 0, level)
                out = remove_batch_dim(wrapped * wrapped, level, 2, 0)
            tangent = fwad.unpack_dual(out).tangent
        self.assertIsNotNone(tangent, "the tangent of a dual input through _add_batch_dim")
        self.assert_tensor(tangent, 2 * x_cpu * t_cpu, "forward-mode tangent by hand")
        expected = (torch.sin(x_cpu.double()).float(), (torch.cos(x_cpu.double()) * t_cpu).float())
        for label, run in (("jvp of vmap", lambda: jvp(torch.vmap(torch.sin), (x,), (t,))),
                           ("vmap of jvp", lambda: torch.vmap(lambda a, b: jvp(torch.sin, (a,), (b,)))(x, t))):
            first, again = run(), run()
            for name, got, want, repeated in zip(("sin", "tangent"), first, expected, again):
                self.assert_tensor(got, want, f"{label}: {name}", atol=1e-6)
                self.assert_tensor(repeated, got, f"{label}: {name} of a repeated call, bit for bit")

    def test_second_order_gradients_through_the_wrapper(self):
        """create_graph through a hand-built level of a non-leaf input: d2(x^3) = 6x; torch.func.hessian of vmap."""
        x_cpu = int_valued((2, 3), device="cpu")
        with torch.enable_grad():
            leaf = x_cpu.to(DEVICE, copy=True).requires_grad_()
            mid = leaf * 1.0
            with vmap_level(2) as level:
                out = remove_batch_dim(add_batch_dim(mid, 0, level) ** 3, level, 2, 0)
            self.assert_tensor(out, x_cpu ** 3, "x ** 3 through the wrapper")
            first, = torch.autograd.grad(out.sum(), leaf, create_graph=True)
            self.assertIsNotNone(first.grad_fn, "the first gradient has history (create_graph=True)")
            second, = torch.autograd.grad(first.sum(), leaf)
        self.assert_tensor(second, 6 * x_cpu, "second derivative through _add_batch_dim")
        hessian = torch.func.hessian(lambda r: torch.vmap(lambda u: u ** 3)(r).sum())(x_cpu[0].to(DEVICE))
        self.assert_tensor(hessian, torch.diag(6 * x_cpu[0]), "hessian of vmap")

    def test_version_counters_and_identity(self):
        """_add_batch_dim writes nothing (the input's _version stays), returns a new object every call; a
        Parameter or a Tensor subclass is wrapped as a plain Tensor wrapper."""
        x = int_valued((2, 3))
        version = x._version
        with vmap_level(2) as level:
            first, second = add_batch_dim(x, 0, level), add_batch_dim(x, 0, level)
            self.assertIsNot(first, second, "each call returns a new wrapper")
            self.assert_value(x._version, version, "the input's version counter after wrapping it twice")
            for label, source in (("Parameter", torch.nn.Parameter(x.clone())), ("subclass", x.as_subclass(
                    MarkedTensor))):
                wrapped = add_batch_dim(source, 0, level)
                self.assert_value((type(wrapped), wrapped.requires_grad, batch_meta(wrapped)["bdim"]),
                                  (torch.Tensor, False, 0), f"{label}: type, requires_grad, bdim of the wrapper")
                if DEVICE == torch._C._get_privateuse1_backend_name():  # torch clones a storage-less PrivateUse1
                    self.assertIsNot(copy.deepcopy(wrapped), wrapped, f"deepcopy of a wrapper of a {label}")
                    continue
                with self.assert_raises_exactly(NotImplementedError, f"deepcopy of a wrapper of a {label}",
                                                match="storage of BatchedTensorImpl"):
                    copy.deepcopy(wrapped)

    def test_containers_out_of_vmap_keep_their_types(self):
        """torch.return_types and a namedtuple come out of vmap with their type and fields, as the loop's."""
        x_cpu = int_valued((4, 3), device="cpu")
        got = torch.vmap(lambda t: torch.max(t, 0))(x_cpu.to(DEVICE))
        self.assertIs(type(got), torch.return_types.max, "vmap of torch.max(t, 0)")
        self.assert_tensor(got.values, x_cpu.max(1).values, "values")
        self.assert_tensor(got.indices, x_cpu.max(1).indices, "indices")
        pair = torch.vmap(lambda t: Pair(t * 2, t.sum()))(x_cpu.to(DEVICE))
        self.assertIs(type(pair), Pair, "vmap of a function returning a namedtuple")
        self.assert_tensor(pair.total, x_cpu.sum(1), "the namedtuple's field")

    def test_module_hooks_and_train_mode_under_vmap(self):
        """Forward pre-hooks and hooks of a module and its submodule run once and see logical shapes; BatchNorm's
        running statistics in train mode are refused under vmap, eval mode equals the loop."""
        model = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.ReLU()).to(DEVICE)
        seen = []
        for name, module in (("model", model), ("linear", model[0])):
            module.register_forward_pre_hook(lambda m, args, name=name: seen.append((name, tuple(args[0].shape))))
            module.register_forward_hook(lambda m, args, out, name=name: seen.append((name, tuple(out.shape))))
        x = int_valued((5, 3))
        with torch.no_grad():
            self.assert_tensor(torch.vmap(model)(x), loop(model, (x,), (0,)).cpu(), "vmap(model)")
        self.assert_value(seen[:4], [("model", (3,)), ("linear", (3,)), ("linear", (2,)), ("model", (2,))],
                          "hooks under vmap: (module, logical shape) in call order, once each")
        norm = torch.nn.BatchNorm1d(3).to(DEVICE)
        batch = int_valued((2, 4, 3))
        with self.assert_raises_exactly(RuntimeError, "vmap of BatchNorm1d in train mode", match="vmap"):
            torch.vmap(norm)(batch)
        norm.eval()
        self.assert_tensor(torch.vmap(norm)(batch), loop(norm, (batch,), (0,)).detach().cpu(), "eval")

    def test_autocast_and_default_dtype_as_the_loop(self):
        """Under torch.autocast (CPU; the device when it supports it) a vmapped matmul has autocast's dtype and
        the loop's values (inputs k/32: a cast off by 1e-3 shows in bfloat16); under set_default_dtype(float64) an
        integer input times 1.5 is float64, as the loop."""
        x, w = int_valued((4, 3)) / 32, int_valued((3, 2), offset=1)
        devices = ["cpu"] + ([DEVICE] if DEVICE != "cpu" and torch.amp.is_autocast_available(DEVICE) else [])
        for device in devices:
            with self.subTest(device=device), torch.autocast(device, dtype=torch.bfloat16):
                skip_unless_vehicle(self, f"a bfloat16 matmul under autocast on {device}",
                                    lambda: x.to(device) @ w.to(device))
                a, b = x.to(device), w.to(device)
                self.assert_tensor(torch.vmap(lambda t: t @ b)(a), loop(lambda t: t @ b, (a,), (0,)).cpu(),
                                   f"vmap(matmul) under autocast on {device}", device=device)
        saved = torch.get_default_dtype()
        torch.set_default_dtype(torch.float64)
        try:
            ints = int_valued((4, 3), dtype=torch.int64)
            got = torch.vmap(lambda t: t * 1.5)(ints)
            self.assert_tensor(got, loop(lambda t: t * 1.5, (ints,), (0,)).cpu(), "int * 1.5 under float64 default")
            self.assertIs(got.dtype, torch.float64, "the default dtype reaches vmap's promotion")
        finally:
            torch.set_default_dtype(saved)

    def test_global_stream_advances_by_the_batch(self):
        """randomness='different' draws B examples from the global stream, 'same' one: the next draw equals the
        draw after torch.rand of (B, 3), respectively (3,), from the same seed."""
        x = int_valued((4, 3))
        for mode, drawn in (("different", (4, 3)), ("same", (3,))):
            with self.subTest(mode), seeded():
                torch.vmap(torch.rand_like, randomness=mode)(x)
                after = torch.rand(2, device=DEVICE)
                with seeded():
                    torch.rand(*drawn, device=DEVICE)
                    self.assert_tensor(after, torch.rand(2, device=DEVICE).cpu(), f"{mode}: next draw")

    def test_callables_that_are_not_functions(self):
        """vmap of a partial, a callable object, a bound, static and class method and an unbound Tensor method."""
        x_cpu, x = on_cpu_and_device((4, 3))
        obj = Tripler()
        for label, func, expected in (("partial", functools.partial(torch.mul, other=3.0), x_cpu * 3),
                                      ("callable object", obj, x_cpu * 3), ("bound method", obj.method, x_cpu * 3),
                                      ("staticmethod", Tripler.static, x_cpu * 3),
                                      ("classmethod", Tripler.klass, x_cpu * 3),
                                      ("Tensor.neg", torch.Tensor.neg, -x_cpu)):
            with self.subTest(label):
                self.assert_tensor(torch.vmap(func)(x), expected, f"vmap of a {label}")


if __name__ == "__main__":
    run_tests()
