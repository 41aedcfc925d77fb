# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""API-consistency tests for ``torch._functorch.vmap._add_batch_dim`` and the ``torch.vmap`` built on it.

``_add_batch_dim(tensor, batch_dim, level)`` wraps a tensor into a functorch BatchedTensor: dimension
``batch_dim`` becomes the hidden batch dimension of vmap level ``level`` and the remaining dimensions
form the logical tensor that the vmapped function sees. ``torch.vmap`` calls it once per batched input
(and ``_remove_batch_dim`` once per output), so an NPU port must produce exactly upstream's batched
tensors: the same logical shape, stored batch dim and level, dtype and device, the same unwrapped value,
and the same results, side effects and errors when a computation runs on them.

The tests call it directly under a real vmap level (entered with ``vmap_increment_nesting`` and always
left again) and through ``torch.vmap``; results are compared with an explicit Python loop (or a closed
form) computed on the CPU. All values are small integers, so every comparison is exact.

``TestAddBatchDimDirect`` and ``TestAddBatchDimThroughVmap`` check the main contract (metadata, round
trips, nesting, modules, gradients). Every input class of a consistency test applies to this API and
has its own test class:

- call forms (``TestVmapCallForms``, ``TestVmapChunkSize``, ``TestVmapRandomness``): every valid
  ``batch_dim`` / ``in_dims`` / ``out_dims`` of 1-d to 4-d tensors, positive and negative; ``None``
  in_dims; per-argument tuples; nested tuple/list/dict inputs with per-leaf in_dims and prefix
  broadcasting; tuple, nested, dict and ``None`` out_dims; keyword arguments; ``chunk_size`` None, 1, 2,
  the batch size and more; ``randomness`` "error", "different" and "same";
- dtypes (``TestAddBatchDimDtypes``): float32, float64, float16, bfloat16, int64, int32, uint8, bool;
- layouts (``TestAddBatchDimLayouts``): transposed, permuted, sliced with a step, expanded (stride 0),
  channels_last, a batch dim that is not the outermost;
- sizes (``TestVmapSizes``): a batch of 0, inner dims of 0, 0-d examples, size-1 dims;
- side effects (``TestVmapSideEffects``): in-place writes through to the input exactly once, outputs
  that alias inputs, no level left behind by repeated or failing calls;
- bad input (``TestAddBatchDimBadInput``): exact exception types of ``_add_batch_dim`` and ``torch.vmap``;
- threads (``TestVmapThreads``): the vmap level stack is per thread, so a level entered in one thread
  must be invisible in another, in both directions.

No dtype case is skipped on any device. Random draws are compared with a seeded draw of the same
shape on the same device (the generators of the CPU and of an accelerator differ), and rows drawn
under "different" with a chunk_size are only required to differ, since how a generator advances per
chunk is device-specific.

Version rules asserted for the installed release:

- ``torch._functorch.vmap._add_batch_dim`` is the C function ``torch._C._functorch._add_batch_dim``
  in 2.7.1 and a Python wrapper around it from 2.9;
- from torch 2.10 the wrapper normalizes a negative ``batch_dim`` (``-1`` of a 2-D tensor is stored as
  ``1``; read in 2.10.0's ``torch/_functorch/predispatch.py``); in 2.7.1 and 2.9.1, and for the C
  function on every release, the negative value is stored as is and the logical shape then drops
  physical dimension 0;
- a non-tensor input with a negative ``batch_dim`` meets the normalizing wrapper's ``tensor.ndim``
  first (AttributeError from 2.10; TypeError of the C function's argument check before);
- ``torch.vmap(f, chunk_size=k)`` over a batch of 0 runs no chunk and fails while concatenating the
  (absent) chunk outputs: AssertionError in 2.7.1 and 2.9.1 (pytree asserts the spec's type),
  AttributeError in 2.10 (pytree reads ``None.num_leaves``), AssertionError from 2.11 (vmap checks
  first). Without a chunk_size a batch of 0 returns empty results on every release.

On a CPU box every contract point runs on the CPU. On an accelerator every tensor lives on the device
and each result is compared with the CPU reference (exactly; random draws are compared with the same
seeded draw on the device).
"""
from torch_npu_testing import TestCase, run_tests, device_type, torch_version_at_least

import contextlib
import math
import threading

import torch
import torch._functorch.vmap as vmap_module
from torch._C import _functorch as functorch_c
from torch.func import functional_call, grad

DEVICE = device_type()

PYTHON_WRAPPER_SINCE = "2.9"
NEGATIVE_BATCH_DIM_NORMALIZED_SINCE = "2.10"
PYTREE_READS_NONE_SPEC_IN = "2.10"  # only 2.10.x: from 2.11 vmap itself checks for "no chunk ran"
VMAP_CHECKS_EMPTY_CHUNKS_SINCE = "2.11"
SHAPES = ((5,), (2, 3), (2, 3, 4), (2, 3, 2, 3))
DTYPES = (torch.float32, torch.float64, torch.float16, torch.bfloat16,
          torch.int64, torch.int32, torch.uint8, torch.bool)
FLOAT_DTYPES = (torch.float32, torch.float64, torch.float16, torch.bfloat16)


# --------------------------------------------------------------------------- helpers
@contextlib.contextmanager
def vmap_level(batch_size, randomness="error"):
    """Enter one real vmap level and always leave it (the state guard fails a test that leaks one)."""
    with vmap_module.vmap_increment_nesting(batch_size, randomness) as level:
        yield level


@contextlib.contextmanager
def seeded(seed=1234):
    """Fix the seed of the CPU and DEVICE generators for a block and give their state back afterwards."""
    if DEVICE == "cpu":
        with torch.random.fork_rng(devices=[]):
            torch.default_generator.manual_seed(seed)  # torch.manual_seed would also seed (absent) CUDA
            yield
    else:
        with torch.random.fork_rng(device_type=DEVICE):
            torch.manual_seed(seed)
            yield


def add_batch_dim(tensor, batch_dim, level):
    """The API under test: torch._functorch.vmap._add_batch_dim, the name torch.vmap itself calls."""
    return vmap_module._add_batch_dim(tensor, batch_dim, level)


def remove_batch_dim(tensor, level, batch_size, out_dim):
    return vmap_module._remove_batch_dim(tensor, level, batch_size, out_dim)


def batch_meta(tensor):
    """What a BatchedTensor exposes: is batched, level, stored batch dim, logical shape, dtype, device."""
    return {
        "batched": functorch_c.is_batchedtensor(tensor),
        "level": functorch_c.maybe_get_level(tensor),
        "bdim": functorch_c.maybe_get_bdim(tensor),
        "shape": tuple(tensor.shape),
        "dtype": tensor.dtype,
        "device": tensor.device,
    }


def wrapped_meta(level, bdim, shape, like):
    """The batch_meta expected of a wrapper of ``like`` (same dtype and device) at ``level``/``bdim``."""
    return {"batched": True, "level": level, "bdim": bdim, "shape": tuple(shape), "dtype": like.dtype,
            "device": like.device}


def plain_meta(shape, like):
    """The batch_meta of an ordinary (not batched) tensor of ``shape`` with ``like``'s dtype and device."""
    return {"batched": False, "level": -1, "bdim": -1, "shape": tuple(shape), "dtype": like.dtype,
            "device": like.device}


def without_dim(shape, dim):
    return tuple(size for index, size in enumerate(shape) if index != dim)


def int_valued(shape, device=DEVICE, dtype=torch.float32, offset=0):
    """Deterministic small integers in -5..5 (exact in every float dtype and under any summation order)."""
    numel = math.prod(shape)
    values = (torch.arange(numel, dtype=torch.int64) * 7 + offset) % 11 - 5
    return values.reshape(shape).to(dtype=dtype, device=device)


def values_of(dtype, shape, device=DEVICE, offset=0):
    """Small values exact in ``dtype``: -5..5, 0..10 for uint8, a True/False pattern for bool."""
    numel = math.prod(shape)
    values = (torch.arange(numel, dtype=torch.int64) * 7 + offset) % 11
    if dtype == torch.bool:
        values = values % 3 == 0
    elif dtype != torch.uint8:
        values = values - 5
    return values.reshape(shape).to(dtype=dtype, device=device)


def loop(func, args, in_dims, out_dim=0):
    """The reference: ``func`` applied to each example (``select`` along in_dims) and stacked at out_dim."""
    size = next(arg.shape[dim] for arg, dim in zip(args, in_dims) if dim is not None)
    rows = [func(*(arg if dim is None else arg.select(dim, i) for arg, dim in zip(args, in_dims)))
            for i in range(size)]
    return torch.stack(rows, dim=out_dim)


def hand_vmap(func, args, in_dims, out_dims, batch_size, randomness="error"):
    """torch.vmap rebuilt from the API under test: one level, _add_batch_dim per argument, _remove_batch_dim.

    ``in_dims`` holds one entry per argument (``None``: not batched); negative entries are normalized
    the way torch.vmap does before it calls _add_batch_dim. ``out_dims`` is an int or a tuple matching
    a tuple output.
    """
    with vmap_level(batch_size, randomness) as level:
        batched = [arg if dim is None else add_batch_dim(arg, dim % arg.dim(), level)
                   for arg, dim in zip(args, in_dims)]
        outputs = func(*batched)
        if isinstance(outputs, tuple):
            dims = out_dims if isinstance(out_dims, tuple) else (out_dims,) * len(outputs)
            return tuple(remove_batch_dim(out, level, batch_size, dim) for out, dim in zip(outputs, dims))
        return remove_batch_dim(outputs, level, batch_size, out_dims)


def run_in_thread(func):
    """Run ``func`` in a new thread; re-raise what it raised in the calling thread."""
    errors = []

    def target():
        try:
            func()
        except BaseException as exc:  # noqa: B902 - handed back to the test thread
            errors.append(exc)

    thread = threading.Thread(target=target)
    thread.start()
    thread.join(timeout=60)
    if thread.is_alive():
        raise RuntimeError("worker thread did not finish within 60 s")
    if errors:
        raise errors[0]


# --------------------------------------------------------------------------- direct calls
class TestAddBatchDimDirect(TestCase):
    """_add_batch_dim called by hand under a real vmap level."""

    def test_every_nonnegative_batch_dim_of_1d_to_4d_tensors(self):
        """Batch dim b of shape S: logical shape S without b, stored bdim b, the given level, input unwrapped."""
        for shape in SHAPES:
            for batch_dim in range(len(shape)):
                with self.subTest(f"shape {shape}, batch_dim={batch_dim}"):
                    x = int_valued(shape)
                    with vmap_level(shape[batch_dim]) as level:
                        y = add_batch_dim(x, batch_dim, level)
                        what = f"_add_batch_dim(shape {shape}, batch_dim={batch_dim}, level={level})"
                        logical_shape = without_dim(shape, batch_dim)
                        self.assert_value(batch_meta(y), wrapped_meta(level, batch_dim, logical_shape, x), what)
                        self.assert_value(y.dim(), len(shape) - 1, f"{what}: logical dim()")
                        self.assert_is(functorch_c.get_unwrapped(y), x,
                                       f"{what}: get_unwrapped must return the wrapped input itself (no copy)")
                    self.assert_value(batch_meta(x), plain_meta(shape, x), f"input of {what} after the call")

    def test_negative_batch_dim_follows_installed_version_rule(self):
        """Negative batch_dim: normalized by the wrapper from 2.10; stored as is (logical = shape[1:]) before."""
        normalizes = torch_version_at_least(NEGATIVE_BATCH_DIM_NORMALIZED_SINCE)
        for shape in SHAPES:
            ndim = len(shape)
            for batch_dim in range(-ndim, 0):
                with self.subTest(f"shape {shape}, batch_dim={batch_dim}"):
                    x = int_valued(shape)
                    positive = batch_dim + ndim
                    with vmap_level(shape[positive]) as level:
                        y = add_batch_dim(x, batch_dim, level)
                        what = (f"torch {torch.__version__}: _add_batch_dim(shape {shape}, batch_dim={batch_dim}) "
                                f"({'normalizing' if normalizes else 'non-normalizing'} release)")
                        if normalizes:
                            self.assert_value(batch_meta(y),
                                              wrapped_meta(level, positive, without_dim(shape, positive), x), what)
                            round_trip = remove_batch_dim(y * 2, level, shape[positive], positive)
                            self.assert_tensor(round_trip, x.cpu() * 2, f"{what}: round trip of y * 2",
                                               device=DEVICE)
                        else:
                            self.assert_value(batch_meta(y), wrapped_meta(level, batch_dim, shape[1:], x), what)

    def test_c_function_stores_negative_batch_dim_unchanged(self):
        """The C function keeps a negative bdim on every release and agrees with the name vmap calls for bdim >= 0.

        torch._functorch.vmap._add_batch_dim is the C builtin in 2.7.1 and a Python wrapper from 2.9.
        """
        what = f"torch {torch.__version__}: torch._functorch.vmap._add_batch_dim"
        if torch_version_at_least(PYTHON_WRAPPER_SINCE):
            self.assert_is_not(vmap_module._add_batch_dim, functorch_c._add_batch_dim, what)
            self.assert_true(hasattr(vmap_module._add_batch_dim, "__code__"), f"{what} is a Python function")
        else:
            self.assert_is(vmap_module._add_batch_dim, functorch_c._add_batch_dim, what)
        x = int_valued((2, 3, 4))
        with vmap_level(4) as level:
            for batch_dim in (-1, -2, -3):
                y = functorch_c._add_batch_dim(x, batch_dim, level)
                self.assert_value(batch_meta(y), wrapped_meta(level, batch_dim, (3, 4), x),
                                  f"C _add_batch_dim(batch_dim={batch_dim})")
            for batch_dim in range(3):
                self.assert_value(batch_meta(functorch_c._add_batch_dim(x, batch_dim, level)),
                                  batch_meta(add_batch_dim(x, batch_dim, level)),
                                  f"C function vs torch._functorch.vmap._add_batch_dim for batch_dim={batch_dim}")

    def test_round_trip_with_remove_batch_dim_to_every_out_dim(self):
        """_remove_batch_dim(_add_batch_dim(x, b), out_dim=o) == x.movedim(b, o) for every b and every o, +/-."""
        for shape in SHAPES:
            ndim = len(shape)
            x_cpu = int_valued(shape, device="cpu")
            x = x_cpu.to(DEVICE)
            for batch_dim in range(ndim):
                what = f"shape {shape}: add at batch_dim={batch_dim}, remove at every out_dim in [-{ndim}, {ndim})"
                with self.subTest(what):
                    plain, computed = [], []
                    for out_dim in range(-ndim, ndim):
                        with vmap_level(shape[batch_dim]) as level:
                            y = add_batch_dim(x, batch_dim, level)
                            plain.append(remove_batch_dim(y, level, shape[batch_dim], out_dim))
                            computed.append(remove_batch_dim(y * 3 - 1, level, shape[batch_dim], out_dim))
                    expected = [x_cpu.movedim(batch_dim, out_dim) for out_dim in range(-ndim, ndim)]
                    self.assert_value([(functorch_c.is_batchedtensor(t), tuple(t.shape)) for t in plain + computed],
                                      [(False, tuple(t.shape)) for t in expected + expected],
                                      f"{what}: (still batched, shape) of each result")
                    self.assert_tensor(torch.cat([t.flatten() for t in plain]),
                                       torch.cat([t.flatten() for t in expected]), f"{what}: values, in out_dim order",
                                       device=DEVICE)
                    self.assert_tensor(torch.cat([t.flatten() for t in computed]),
                                       torch.cat([(t * 3 - 1).flatten() for t in expected]),
                                       f"{what}: values through y * 3 - 1, in out_dim order", device=DEVICE)

    def test_two_nested_levels_each_see_their_own_batch_dim(self):
        """Level 1 batches physical dim 2, level 2 batches logical dim 0; each wrapper keeps its level/bdim."""
        x_cpu = int_valued((2, 3, 4), device="cpu")
        x = x_cpu.to(DEVICE)
        expected = x_cpu.sum(1).T  # [k, j] = sum of x[j, :, k]
        with vmap_level(4) as outer:
            y1 = add_batch_dim(x, 2, outer)
            self.assert_value(batch_meta(y1), wrapped_meta(outer, 2, (2, 3), x), "outer wrapper")
            with vmap_level(2) as inner:
                self.assert_value(inner, outer + 1, "level returned for the nested vmap level")
                y2 = add_batch_dim(y1, 0, inner)
                self.assert_value(batch_meta(y2), wrapped_meta(inner, 0, (3,), x), "inner wrapper")
                self.assert_is(functorch_c.get_unwrapped(y2), y1, "the inner wrapper must unwrap to the outer one")
                inner_out = remove_batch_dim(y2.sum(), inner, 2, 0)
            self.assert_value(batch_meta(inner_out), wrapped_meta(outer, 0, (2,), x), "after leaving the inner level")
            result = remove_batch_dim(inner_out, outer, 4, 0)
        self.assert_tensor(result, expected, "two hand-built levels, sum per (i, j)", device=DEVICE)
        through_vmap = torch.vmap(torch.vmap(torch.sum, in_dims=0), in_dims=2)(x)
        self.assert_tensor(through_vmap, expected, "nested torch.vmap of the same sum", device=DEVICE)

    def test_batched_tensor_outside_its_level_rejects_operations(self):
        """A wrapper used after its level was left (or created with no level entered) raises on use."""
        x = int_valued((2, 3))
        with vmap_level(2) as level:
            escaped = add_batch_dim(x, 0, level)
        self.assert_is(functorch_c.maybe_current_level(), None, "this check needs no functorch level entered")
        created_outside = add_batch_dim(x, 0, 1)  # level 1: the level the next vmap would get
        self.assert_value(batch_meta(created_outside), wrapped_meta(1, 0, (3,), x),
                          "wrapper created with no vmap level entered")
        for label, tensor in (("escaped", escaped), ("created outside", created_outside)):
            self.assert_raises_exactly(RuntimeError, f"{label} batched tensor: an op must raise", tensor.sum,
                                       match="escaped from inside a function being vmapped")


# --------------------------------------------------------------------------- through torch.vmap
class TestAddBatchDimThroughVmap(TestCase):
    """torch.vmap's inputs are _add_batch_dim wrappers; hand-built wrappers give vmap's results."""

    def test_vmap_input_is_what_add_batch_dim_builds(self):
        """Inside torch.vmap(in_dims=d) the input has the metadata of _add_batch_dim(x, d mod ndim, level)."""
        normalizes = torch_version_at_least(NEGATIVE_BATCH_DIM_NORMALIZED_SINCE)
        x = int_valued((2, 3, 4))
        for in_dim in (0, 1, 2, -1, -3):
            with self.subTest(f"in_dims={in_dim}"):
                seen = []

                def record(t, seen=seen):
                    seen.append(batch_meta(t))
                    return t * 2

                torch.vmap(record, in_dims=in_dim)(x)
                hand_vmap(record, (x,), (in_dim,), 0, x.shape[in_dim])
                self.assert_value(len(seen), 2, f"in_dims={in_dim}: calls of the vmapped function")
                self.assert_value(seen[0], seen[1],
                                  f"in_dims={in_dim}: torch.vmap's input vs _add_batch_dim(x, {in_dim % 3}, level)")
                self.assert_value(seen[0]["bdim"], in_dim % 3, f"in_dims={in_dim}: torch.vmap's stored bdim")
                if in_dim < 0:
                    with vmap_level(x.shape[in_dim]) as level:
                        raw = batch_meta(add_batch_dim(x, in_dim, level))
                    what = f"torch {torch.__version__}: _add_batch_dim(x, {in_dim}) vs torch.vmap's input"
                    if normalizes:
                        self.assert_value(raw, seen[0], what)
                    else:
                        self.assert_value(raw["bdim"], in_dim, what + " (negative bdim stored as is)")

    def test_in_dims_and_out_dims_other_than_zero(self):
        """in_dims/out_dims of 1, 2, -1, -2: torch.vmap == hand-built _add_batch_dim == Python loop."""
        def mix(t):  # logical-dim reduction makes a wrong batch dim visible in the values
            return t * 2 - t.sum(0, keepdim=True)

        x_cpu = int_valued((3, 4, 5), device="cpu")
        x = x_cpu.to(DEVICE)
        for in_dim, out_dim in ((1, 2), (2, 0), (-1, -2), (0, -1), (-2, 1)):
            what = f"in_dims={in_dim}, out_dims={out_dim}"
            with self.subTest(what):
                expected = loop(mix, (x_cpu,), (in_dim,), out_dim)
                via_vmap = torch.vmap(mix, in_dims=in_dim, out_dims=out_dim)(x)
                by_hand = hand_vmap(mix, (x,), (in_dim,), out_dim, x.shape[in_dim])
                self.assert_tensor(via_vmap, expected, f"torch.vmap, {what}", device=DEVICE)
                self.assert_tensor(by_hand, expected, f"hand-built _add_batch_dim, {what}", device=DEVICE)

    def test_per_argument_in_dims_and_out_dims_tuples(self):
        """in_dims=(1, None, 0) and out_dims=(1, -1): each argument/output uses its own dim; None is unbatched."""
        def combine(a, b, c):
            return a * b + c.sum(), a - b

        a_cpu = int_valued((3, 4), device="cpu")
        b_cpu = int_valued((3,), device="cpu", offset=3)
        c_cpu = int_valued((4, 2), device="cpu", offset=5)
        a, b, c = (t.to(DEVICE) for t in (a_cpu, b_cpu, c_cpu))
        in_dims, out_dims = (1, None, 0), (1, -1)
        pairs = [combine(a_cpu[:, i], b_cpu, c_cpu[i]) for i in range(4)]
        expected = (torch.stack([p[0] for p in pairs], dim=1), torch.stack([p[1] for p in pairs], dim=-1))

        seen = []

        def record(a_, b_, c_):
            seen.append(tuple(batch_meta(t)["bdim"] for t in (a_, b_, c_)))
            return combine(a_, b_, c_)

        via_vmap = torch.vmap(record, in_dims=in_dims, out_dims=out_dims)(a, b, c)
        by_hand = hand_vmap(record, (a, b, c), in_dims, out_dims, 4)
        self.assert_value(seen, [(1, -1, 0), (1, -1, 0)], "stored bdims of (a, b, c): torch.vmap then by hand")
        for index in range(2):
            self.assert_tensor(via_vmap[index], expected[index], f"torch.vmap output {index}", device=DEVICE)
            self.assert_tensor(by_hand[index], expected[index], f"hand-built output {index}", device=DEVICE)

        nested = torch.vmap(lambda ab, c_: record(ab[0], ab[1], c_), in_dims=((1, None), 0), out_dims=out_dims)
        nested_out = nested((a, b), c)
        for index in range(2):
            self.assert_tensor(nested_out[index], expected[index], f"pytree in_dims, output {index}", device=DEVICE)

    def test_nested_vmap_matches_two_hand_built_levels_and_loop(self):
        """vmap(vmap(f, in_dims=1, out_dims=1), in_dims=0): inner input is level 2 wrapping a level-1 wrapper."""
        def square_minus_total(t):
            return t * t - t.sum()

        x_cpu = int_valued((2, 3, 4), device="cpu")
        x = x_cpu.to(DEVICE)
        seen = []

        def record(t):
            outer = functorch_c.get_unwrapped(t)
            seen.append((batch_meta(t)["level"], batch_meta(t)["bdim"], tuple(t.shape),
                         batch_meta(outer)["level"], batch_meta(outer)["bdim"]))
            return square_minus_total(t)

        via_vmap = torch.vmap(torch.vmap(record, in_dims=1, out_dims=1), in_dims=0)(x)
        with vmap_level(2) as outer_level:
            y1 = add_batch_dim(x, 0, outer_level)
            with vmap_level(4) as inner_level:
                inner_out = remove_batch_dim(record(add_batch_dim(y1, 1, inner_level)), inner_level, 4, 1)
            by_hand = remove_batch_dim(inner_out, outer_level, 2, 0)
        expected_meta = (2, 1, (3,), 1, 0)
        self.assert_value(seen, [expected_meta, expected_meta],
                          "(inner level, inner bdim, logical shape, outer level, outer bdim): vmap then by hand")
        expected = torch.stack([torch.stack([square_minus_total(x_cpu[i, :, j]) for j in range(4)], dim=1)
                                for i in range(2)])
        self.assert_tensor(via_vmap, expected, "nested torch.vmap", device=DEVICE)
        self.assert_tensor(by_hand, expected, "two hand-built levels", device=DEVICE)

    def test_vmap_of_module_forward_through_functional_call(self):
        """vmap over inputs (shared params) and over stacked params (ensemble) equals per-sample module calls."""
        module = torch.nn.Linear(3, 2).to(DEVICE)
        weight_cpu = torch.tensor([[1.0, -2.0, 0.5], [3.0, 0.0, -1.0]])
        bias_cpu = torch.tensor([0.5, -1.0])
        params = {"weight": weight_cpu.to(DEVICE), "bias": bias_cpu.to(DEVICE)}
        x_cpu = int_valued((5, 3), device="cpu")
        x = x_cpu.to(DEVICE)

        def forward(p, inputs):
            return functional_call(module, p, (inputs,))

        expected = torch.stack([x_cpu[i] @ weight_cpu.T + bias_cpu for i in range(5)])
        via_vmap = torch.vmap(forward, in_dims=(None, 0))(params, x)
        with vmap_level(5) as level:
            xb = add_batch_dim(x, 0, level)
            self.assert_value(batch_meta(xb), wrapped_meta(level, 0, (3,), x), "hand-built module input")
            by_hand = remove_batch_dim(forward(params, xb), level, 5, 0)
        self.assert_tensor(via_vmap, expected, "torch.vmap over inputs of functional_call(Linear)", device=DEVICE)
        self.assert_tensor(by_hand, expected, "hand-built batch over inputs of functional_call(Linear)",
                           device=DEVICE)

        stacked_cpu = {"weight": torch.stack([weight_cpu, -weight_cpu]), "bias": torch.stack([bias_cpu, 2 * bias_cpu])}
        stacked = {name: value.to(DEVICE) for name, value in stacked_cpu.items()}
        ensemble = torch.stack([x_cpu @ stacked_cpu["weight"][e].T + stacked_cpu["bias"][e] for e in range(2)])
        via_vmap = torch.vmap(forward, in_dims=(0, None))(stacked, x)
        with vmap_level(2) as level:
            batched_params = {name: add_batch_dim(value, 0, level) for name, value in stacked.items()}
            by_hand = remove_batch_dim(forward(batched_params, x), level, 2, 0)
        self.assert_tensor(via_vmap, ensemble, "torch.vmap over stacked Linear parameters", device=DEVICE)
        self.assert_tensor(by_hand, ensemble, "hand-built batch over stacked Linear parameters", device=DEVICE)

    def test_per_sample_gradients_match_closed_form(self):
        """vmap(grad(loss), in_dims=(None, 0, 0)) and grad under a hand-built level give 2 (x.w - t) x per row.

        torch.func.grad does not depend on the ambient grad mode, so the check runs under no_grad and
        under enable_grad and both must give the same per-sample gradients.
        """
        def loss(w, x, t):
            return ((x @ w - t) ** 2).sum()

        w_cpu = torch.tensor([1.0, -2.0, 0.5])
        x_cpu = int_valued((4, 3), device="cpu")
        t_cpu = torch.tensor([1.0, 2.0, -1.0, 0.0])
        w, x, t = (v.to(DEVICE) for v in (w_cpu, x_cpu, t_cpu))
        closed_form = 2 * (x_cpu @ w_cpu - t_cpu)[:, None] * x_cpu
        for mode_name, mode in (("no_grad", torch.no_grad), ("enable_grad", torch.enable_grad)):
            with self.subTest(mode_name):
                with mode():
                    via_vmap = torch.vmap(grad(loss), in_dims=(None, 0, 0))(w, x, t)
                    with vmap_level(4) as level:
                        per_sample = grad(loss)(w, add_batch_dim(x, 0, level), add_batch_dim(t, 0, level))
                        self.assert_value(batch_meta(per_sample), wrapped_meta(level, 0, (3,), x),
                                          f"{mode_name}: gradient under the hand-built level")
                        by_hand = remove_batch_dim(per_sample, level, 4, 0)
                self.assert_tensor(via_vmap, closed_form, f"{mode_name}: vmap(grad(loss))", device=DEVICE)
                self.assert_tensor(by_hand, closed_form, f"{mode_name}: grad under _add_batch_dim", device=DEVICE)

    def test_backward_through_vmap_matches_closed_form(self):
        """Autograd through torch.vmap and through hand-built wrappers: d/dc sum(c * sum(c)) = 2 * sum(c)."""
        def scaled_by_total(t):
            return t * t.sum()

        x_cpu = int_valued((3, 4), device="cpu")
        closed_form = (2 * x_cpu.sum(0, keepdim=True)).expand(3, 4)
        with torch.enable_grad():
            x_vmap = x_cpu.to(DEVICE, copy=True).requires_grad_()
            torch.vmap(scaled_by_total, in_dims=1, out_dims=1)(x_vmap).sum().backward()

            x_hand = x_cpu.to(DEVICE, copy=True).requires_grad_()
            with vmap_level(4) as level:
                out = remove_batch_dim(scaled_by_total(add_batch_dim(x_hand, 1, level)), level, 4, 1)
            out.sum().backward()
        self.assert_tensor(x_vmap.grad, closed_form, "x.grad through torch.vmap", device=DEVICE)
        self.assert_tensor(x_hand.grad, closed_form, "x.grad through hand-built _add_batch_dim", device=DEVICE)


# --------------------------------------------------------------------------- call forms
class TestVmapCallForms(TestCase):
    """Every form of in_dims / out_dims that torch.vmap accepts, each one shown to take effect."""

    def test_every_in_dim_and_out_dim_of_1d_to_4d_tensors(self):
        """in_dims / out_dims = every valid d (negative too) of 1-d..4-d tensors: bdim d mod ndim, loop's values."""
        def centred(t):
            return t * 2 - t.sum()

        for shape in SHAPES:
            ndim = len(shape)
            dims = range(-ndim, ndim)
            with self.subTest(f"shape {shape}, in_dims and out_dims in [-{ndim}, {ndim})"):
                x_cpu = int_valued(shape, device="cpu")
                x = x_cpu.to(DEVICE)
                bdims = []
                outs = [torch.vmap(lambda t: bdims.append(functorch_c.maybe_get_bdim(t)) or centred(t), in_dims=d)(x)
                        for d in dims]
                outs += [torch.vmap(centred, out_dims=d)(x) for d in dims]
                expected = [loop(centred, (x_cpu,), (d,)) for d in dims] + [loop(centred, (x_cpu,), (0,), d)
                                                                            for d in dims]
                self.assert_value(bdims, [d % ndim for d in dims], "bdim given to _add_batch_dim per in_dim")
                self.assert_value([tuple(t.shape) for t in outs], [tuple(t.shape) for t in expected],
                                  "output shape per in_dim, then per out_dim")
                self.assert_tensor(torch.cat([t.flatten() for t in outs]), torch.cat([t.flatten() for t in expected]),
                                   "values per in_dim, then per out_dim", device=DEVICE)

    def test_none_in_dims_and_keyword_arguments_stay_unbatched(self):
        """in_dims None passes a tensor (the same object) or a Python scalar as is; keyword arguments too."""
        x_cpu, w_cpu = int_valued((4, 3), device="cpu"), int_valued((3,), device="cpu", offset=2)
        x, w = x_cpu.to(DEVICE), w_cpu.to(DEVICE)
        seen = []

        def scale(t, weight, factor, *, shift):
            seen.append((weight is w, functorch_c.is_batchedtensor(weight), factor, shift is w,
                         functorch_c.is_batchedtensor(shift)))
            return t * weight * factor + shift

        out = torch.vmap(scale, in_dims=(0, None, None))(x, w, 3, shift=w)
        self.assert_value(seen, [(True, False, 3, True, False)],
                          "(None arg is the caller's tensor, is batched, scalar, keyword is the caller's, is batched)")
        self.assert_tensor(out, x_cpu * w_cpu * 3 + w_cpu, "in_dims=(0, None, None), shift=w", device=DEVICE)
        out = torch.vmap(scale, in_dims=(None, 0, None))(w, x, 2, shift=w)
        self.assert_tensor(out, x_cpu * w_cpu * 2 + w_cpu, "in_dims=(None, 0, None): batched second argument",
                           device=DEVICE)

    def test_nested_container_inputs_with_per_leaf_in_dims(self):
        """Tuples, lists and dicts of tensors take one in_dim per leaf, or one int for the whole container."""
        a_cpu = int_valued((4, 3), device="cpu")
        b_cpu = int_valued((3, 4), device="cpu", offset=1)
        c_cpu = int_valued((3,), device="cpu", offset=2)
        a, b, c = (t.to(DEVICE) for t in (a_cpu, b_cpu, c_cpu))
        expected = torch.stack([a_cpu[i] * 2 + b_cpu[:, i] - c_cpu for i in range(4)])
        cases = (
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
                out = torch.vmap(func, in_dims=in_dims)(*args)
                self.assert_tensor(out, expected, f"{label}: in_dims={in_dims}", device=DEVICE)

    def test_out_dims_for_tuple_nested_dict_and_unbatched_outputs(self):
        """out_dims: an int for every output, a tuple per output, nested, dict, (d,) and None for unbatched."""
        x_cpu = int_valued((2, 3), device="cpu")
        x = x_cpu.to(DEVICE)
        w = int_valued((4,), offset=3)
        rows = [(x_cpu[i], x_cpu[i] * 2, x_cpu[i] * 3) for i in range(2)]

        def stacked(index, dim):
            return torch.stack([row[index] for row in rows], dim=dim)

        out = torch.vmap(lambda t: (t, t * 2), out_dims=1)(x)
        self.assert_tensor(out[0], stacked(0, 1), "out_dims=1 for both outputs, output 0", device=DEVICE)
        self.assert_tensor(out[1], stacked(1, 1), "out_dims=1 for both outputs, output 1", device=DEVICE)
        out = torch.vmap(lambda t: (t, t * 2), out_dims=(0, -1))(x)
        self.assert_tensor(out[0], stacked(0, 0), "out_dims=(0, -1), output 0", device=DEVICE)
        self.assert_tensor(out[1], stacked(1, -1), "out_dims=(0, -1), output 1", device=DEVICE)
        out = torch.vmap(lambda t: ((t, t * 2), t * 3), out_dims=((0, 1), -1))(x)
        self.assert_tensor(out[0][0], stacked(0, 0), "nested out_dims ((0, 1), -1), output [0][0]", device=DEVICE)
        self.assert_tensor(out[0][1], stacked(1, 1), "nested out_dims ((0, 1), -1), output [0][1]", device=DEVICE)
        self.assert_tensor(out[1], stacked(2, -1), "nested out_dims ((0, 1), -1), output [1]", device=DEVICE)
        out = torch.vmap(lambda t: {"p": t, "q": t * 2}, out_dims={"p": 1, "q": 0})(x)
        self.assert_value(sorted(out), ["p", "q"], "keys of the dict output")
        self.assert_tensor(out["p"], stacked(0, 1), "dict out_dims, output p", device=DEVICE)
        self.assert_tensor(out["q"], stacked(1, 0), "dict out_dims, output q", device=DEVICE)
        out = torch.vmap(lambda t: t * 3, out_dims=(1,))(x)
        self.assert_tensor(out, stacked(2, 1), "out_dims=(1,) for a single tensor output", device=DEVICE)
        out = torch.vmap(lambda t: (t * 2, w), out_dims=(0, None))(x)
        self.assert_tensor(out[0], stacked(1, 0), "out_dims=(0, None), batched output", device=DEVICE)
        self.assert_is(out[1], w, "out_dims=(0, None): the unbatched output is returned as is")
        out = torch.vmap(lambda t: (t * 2, 7), out_dims=(0, None))(x)
        self.assert_value(out[1], 7, "out_dims=(0, None): a non-tensor output is returned as is")

    def test_positional_and_keyword_parameters_agree(self):
        """torch.vmap(f, 1, 1, 'error') == torch.vmap(f, in_dims=1, out_dims=1); defaults are in_dims=out_dims=0."""
        x_cpu = int_valued((3, 4), device="cpu")
        x = x_cpu.to(DEVICE)

        def centred(t):
            return t - t.sum()

        self.assert_is(torch.func.vmap, torch.vmap, "torch.func.vmap and torch.vmap")
        expected = loop(centred, (x_cpu,), (1,), 1)
        self.assert_tensor(torch.vmap(centred, 1, 1, "error")(x), expected, "positional (1, 1, 'error')",
                           device=DEVICE)
        self.assert_tensor(torch.vmap(centred, in_dims=1, out_dims=1, randomness="error", chunk_size=None)(x),
                           expected, "keywords in_dims=1, out_dims=1", device=DEVICE)
        self.assert_tensor(torch.vmap(centred)(x), loop(centred, (x_cpu,), (0,), 0), "defaults", device=DEVICE)


class TestVmapChunkSize(TestCase):
    """chunk_size splits the batch into chunks of that many examples; the result never changes."""

    def test_every_chunk_size_gives_the_same_result(self):
        """chunk_size None/1/2/5/8 over 5 examples: identical outputs, chunks as requested, in-place once."""
        x_cpu = int_valued((3, 5), device="cpu")
        w_cpu = int_valued((3,), device="cpu", offset=1)
        x, w = x_cpu.to(DEVICE), w_cpu.to(DEVICE)

        def both(t, weight):
            return t * weight - t.sum(), (t * 2).sum()

        expected = (loop(lambda t: both(t, w_cpu)[0], (x_cpu,), (1,), 1),
                    loop(lambda t: both(t, w_cpu)[1], (x_cpu,), (1,), 0))
        for chunk_size, chunks in ((None, [5]), (1, [1] * 5), (2, [2, 2, 1]), (5, [5]), (8, [5])):
            with self.subTest(f"chunk_size={chunk_size}"):
                seen = []

                def record(t, weight):
                    seen.append(functorch_c.get_unwrapped(t).shape[functorch_c.maybe_get_bdim(t)])
                    return both(t, weight)

                out = torch.vmap(record, in_dims=(1, None), out_dims=(1, 0), chunk_size=chunk_size)(x, w)
                self.assert_value(seen, chunks, f"chunk_size={chunk_size}: examples per call of the function")
                self.assert_tensor(out[0], expected[0], f"chunk_size={chunk_size}: output 0 (out_dims=1)",
                                   device=DEVICE)
                self.assert_tensor(out[1], expected[1], f"chunk_size={chunk_size}: output 1 (out_dims=0)",
                                   device=DEVICE)

        x_in_place = x_cpu.to(DEVICE, copy=True)
        torch.vmap(lambda t: t.add_(1), in_dims=1, out_dims=1, chunk_size=2)(x_in_place)
        self.assert_tensor(x_in_place, x_cpu + 1, "input after vmap(t.add_(1), chunk_size=2): +1 once per element",
                           device=DEVICE)


class TestVmapRandomness(TestCase):
    """randomness: 'error' rejects random ops, 'different' draws per example, 'same' draws once."""

    def test_error_mode_rejects_random_operations(self):
        """Under the default 'error', rand_like / rand / normal_ / dropout inside vmap raise RuntimeError."""
        x = int_valued((2, 3))
        cases = (
            ("torch.rand_like of the batched input", torch.rand_like),
            ("torch.rand of an unbatched shape", lambda t: t + torch.rand(3, device=t.device)),
            ("in-place normal_", lambda t: t.clone().normal_()),
            ("dropout in training mode", lambda t: torch.nn.functional.dropout(t, 0.5, training=True)),
        )
        for label, func in cases:
            with self.subTest(label):
                self.assert_raises_exactly(RuntimeError, f"{label} under randomness='error' (default)",
                                           torch.vmap(func), x, match="randomness")
                self.assert_raises_exactly(RuntimeError, f"{label} under randomness='error' (explicit)",
                                           torch.vmap(func, randomness="error"), x, match="randomness")
        out = torch.vmap(lambda t: torch.nn.functional.dropout(t, 0.5, training=False))(x)
        self.assert_tensor(out, x.cpu(), "dropout in eval mode is not random and works under 'error'",
                           device=DEVICE)

    def test_different_and_same_draw_as_one_seeded_draw(self):
        """'different': one draw of shape (B, 3); 'same': one draw of (3,) for every row (also by hand, chunked).

        The 'different' draw follows the physical layout of the batched input: vmap over dim 1 of the
        transpose of a contiguous (B, 3) tensor gives the same rows as over dim 0 of the tensor itself.
        """
        x = int_valued((4, 3))
        with seeded():
            reference = torch.rand(4, 3, device=DEVICE).cpu()
        with seeded():
            out = torch.vmap(torch.rand_like, randomness="different")(x)
        with seeded():
            by_hand = hand_vmap(torch.rand_like, (x,), (0,), 0, 4, randomness="different")
        with seeded():
            transposed = torch.vmap(torch.rand_like, in_dims=1, randomness="different")(x.t())
        self.assert_tensor(out, reference, "vmap(rand_like, randomness='different')", device=DEVICE)
        self.assert_tensor(by_hand, reference, "rand_like on _add_batch_dim under a 'different' level",
                           device=DEVICE)
        self.assert_tensor(transposed, reference, "vmap(rand_like, in_dims=1, 'different') of the (3, 4) view",
                           device=DEVICE)
        chunked = torch.vmap(torch.rand_like, randomness="different", chunk_size=2)(x)
        for i in range(4):
            for j in range(i):
                self.assert_false(torch.equal(out[i], out[j]), f"'different': rows {i} and {j} must differ")
                self.assert_false(torch.equal(chunked[i], chunked[j]),
                                  f"'different', chunk_size=2: rows {i} and {j} must differ")

        with seeded():
            reference = torch.rand(3, device=DEVICE).cpu().expand(4, 3)
        with seeded():
            out = torch.vmap(torch.rand_like, randomness="same")(x)
        with seeded():
            by_hand = hand_vmap(torch.rand_like, (x,), (0,), 0, 4, randomness="same")
        with seeded():
            chunked = torch.vmap(torch.rand_like, randomness="same", chunk_size=3)(x)
        self.assert_tensor(out, reference, "vmap(rand_like, randomness='same')", device=DEVICE)
        self.assert_tensor(by_hand, reference, "rand_like on _add_batch_dim under a 'same' level", device=DEVICE)
        self.assert_tensor(chunked, reference, "vmap(rand_like, randomness='same', chunk_size=3)", device=DEVICE)

    def test_random_values_of_unbatched_shape(self):
        """torch.rand(3) inside vmap: one draw for every row under 'same', one per row under 'different'."""
        x = int_valued((2, 3))
        same = torch.vmap(lambda t: torch.rand(3, device=t.device), randomness="same")(x)
        self.assert_tensor(same, same[0].cpu().expand(2, 3), "'same': both rows are one draw", device=DEVICE)
        different = torch.vmap(lambda t: torch.rand(3, device=t.device), randomness="different")(x)
        self.assert_tensor_meta(different, "'different' draw of torch.rand(3)", dtype=torch.float32, shape=(2, 3),
                                device=DEVICE)
        self.assert_false(torch.equal(different[0], different[1]), "'different': the two rows must differ")
        captured = torch.zeros(3, device=DEVICE)
        self.assert_raises_exactly(
            RuntimeError, "'different': in-place random op on an unbatched tensor",
            torch.vmap(lambda t: captured.normal_() + t, randomness="different"), x, match="randomness")


# --------------------------------------------------------------------------- dtypes
class TestAddBatchDimDtypes(TestCase):
    """Every dtype goes through _add_batch_dim and a vmapped computation unchanged (no silent casts)."""

    def test_add_batch_dim_keeps_every_dtype(self):
        """float32/64/16, bfloat16, int64/32, uint8, bool: wrapper keeps dtype and device; values round-trip."""
        for dtype in DTYPES:
            with self.subTest(str(dtype)):
                x_cpu = values_of(dtype, (2, 3), device="cpu")
                x = x_cpu.to(DEVICE)
                with vmap_level(3) as level:
                    y = add_batch_dim(x, 1, level)
                    what = f"_add_batch_dim({dtype} on {DEVICE}, batch_dim=1)"
                    self.assert_value(batch_meta(y), wrapped_meta(level, 1, (2,), x), what)
                    self.assert_is(functorch_c.get_unwrapped(y), x, f"{what}: unwrapped value must be the input")
                    flipped = remove_batch_dim(y.flip(0), level, 3, 1)
                self.assert_tensor(flipped, x_cpu.flip(0), f"{what}: flip of the logical dim 0", device=DEVICE)

    def test_vmapped_ops_keep_or_promote_dtype_as_eager(self):
        """vmap of t * 2 + 1 (~t for bool) keeps the dtype; sum() of ints/bool is int64; t * 0.5 of ints is float32."""
        def op(t):
            return ~t if t.dtype == torch.bool else t * 2 + 1

        def half(t):
            return t * 0.5

        for dtype in DTYPES:
            with self.subTest(str(dtype)):
                x_cpu = values_of(dtype, (3, 4), device="cpu")
                x = x_cpu.to(DEVICE)
                is_float = dtype in FLOAT_DTYPES
                cases = (("t * 2 + 1 (~t for bool), in_dims=1", op, 1, dtype, (4, 3)),
                         ("sum()", torch.sum, 0, dtype if is_float else torch.int64, (3,)),
                         ("t * 0.5", half, 0, dtype if is_float else torch.float32, (3, 4)))
                for label, func, in_dim, result_dtype, shape in cases:
                    out = torch.vmap(func, in_dims=in_dim)(x)
                    self.assert_tensor_meta(out, f"vmap({label}) of {dtype}", dtype=result_dtype, shape=shape,
                                            device=DEVICE)
                    self.assert_tensor(out, loop(func, (x_cpu,), (in_dim,)), f"vmap({label}) of {dtype}",
                                       device=DEVICE)


# --------------------------------------------------------------------------- layouts
def layout_variants():
    """(label, tensor) pairs of non-contiguous layouts; each equals its .contiguous() copy in values."""
    return (
        ("contiguous", int_valued((4, 3, 5))),
        ("transposed", int_valued((5, 3, 4)).transpose(0, 2)),
        ("permuted", int_valued((3, 5, 4)).permute(2, 0, 1)),
        ("sliced with a step", int_valued((8, 3, 10))[::2, :, 1::2]),
        ("expanded along dim 0 (stride 0)", int_valued((1, 3, 5)).expand(4, 3, 5)),
        ("expanded along dim 1 (stride 0)", int_valued((4, 1, 5)).expand(4, 3, 5)),
        ("channels_last 4-d", int_valued((4, 3, 2, 5)).contiguous(memory_format=torch.channels_last)),
    )


class TestAddBatchDimLayouts(TestCase):
    """Batched views of strided inputs: the wrapper keeps the input's strides; results equal the contiguous copy's."""

    def test_every_layout_and_batch_dim_matches_the_contiguous_copy(self):
        """Layout x batch dim: logical shape/values right, input wrapped as is, results == loop over contiguous copy."""
        def mixed(t):  # reductions and a scan over logical dims expose wrong strides
            return t * 2 - t.sum(0, keepdim=True) + t.flip(-1).cumsum(-1)

        for label, x in layout_variants():
            x_cpu = x.cpu().contiguous()
            with self.subTest(f"{label} {tuple(x.shape)} strides {x.stride()}"):
                logical, by_hand, via_vmap, expected = [], [], [], []
                for batch_dim in range(x.dim()):
                    size = x.shape[batch_dim]
                    what = f"{label}, batch_dim={batch_dim}"
                    with vmap_level(size) as level:
                        y = add_batch_dim(x, batch_dim, level)
                        logical_shape = without_dim(tuple(x.shape), batch_dim)
                        self.assert_value(batch_meta(y), wrapped_meta(level, batch_dim, logical_shape, x), what)
                        self.assert_is(functorch_c.get_unwrapped(y), x, f"{what}: the input is wrapped, not copied")
                        logical.append(remove_batch_dim(y, level, size, 0).flatten())
                        by_hand.append(remove_batch_dim(mixed(y), level, size, 0).flatten())
                    via_vmap.append(torch.vmap(mixed, in_dims=batch_dim)(x).flatten())
                    expected.append(loop(mixed, (x_cpu,), (batch_dim,)).flatten())
                all_dims = "every batch_dim, in order"
                self.assert_tensor(torch.cat(logical),
                                   torch.cat([x_cpu.movedim(b, 0).flatten() for b in range(x.dim())]),
                                   f"{label}: logical values, {all_dims}", device=DEVICE)
                self.assert_tensor(torch.cat(by_hand), torch.cat(expected), f"{label}: by hand, {all_dims}",
                                   device=DEVICE)
                self.assert_tensor(torch.cat(via_vmap), torch.cat(expected), f"{label}: torch.vmap, {all_dims}",
                                   device=DEVICE)

    def test_in_place_through_strided_views_writes_the_right_elements(self):
        """t.mul_(2) under vmap of strided views changes exactly those base elements; expanded inputs raise as eager."""
        base_cpu = int_valued((3, 8), device="cpu")
        cases = (
            ("every other column, in_dims=1", lambda b: b[:, ::2], 1, slice(None), slice(None, None, 2)),
            ("transpose, in_dims=0", lambda b: b.t(), 0, slice(None), slice(None)),
            ("rows 1.., columns 1::3, in_dims=-1", lambda b: b[1:, 1::3], -1, slice(1, None), slice(1, None, 3)),
        )
        for label, view_of, in_dim, rows, cols in cases:
            with self.subTest(label):
                base = base_cpu.to(DEVICE, copy=True)
                torch.vmap(lambda t: t.mul_(2), in_dims=in_dim, out_dims=in_dim)(view_of(base))
                expected = base_cpu.clone()
                expected[rows, cols] *= 2
                self.assert_tensor(base, expected, f"{label}: base after the in-place update", device=DEVICE)
        for label, x in (("batch dim expanded", int_valued((1, 3)).expand(2, 3)),
                         ("inner dim expanded", int_valued((2, 1)).expand(2, 3))):
            with self.subTest(label):
                before = x.cpu().clone()
                self.assert_raises_exactly(RuntimeError, f"eager add_ on {label}", x.add_, 1,
                                           match="single memory location")
                self.assert_raises_exactly(RuntimeError, f"vmap add_ on {label}", torch.vmap(lambda t: t.add_(1)),
                                           x, match="single memory location")
                self.assert_tensor(x, before, f"{label}: unchanged after the rejected updates", device=DEVICE)


# --------------------------------------------------------------------------- sizes
class TestVmapSizes(TestCase):
    """Zero-size batches and dims, 0-d examples, size-1 dims."""

    def test_zero_size_batch_and_zero_size_examples(self):
        """A batch of 0 and examples with a 0-size dim give empty results of the right shape and dtype.

        By hand the logical shape drops the batch dim. With a chunk_size no chunk runs and vmap fails
        inside its own concatenation (the exception type depends on the release, see the module rules).
        """
        x = torch.zeros(0, 3, dtype=torch.int32, device=DEVICE)  # a batch of 0 examples
        out = torch.vmap(lambda t: t * 2)(x)
        self.assert_tensor(out, torch.zeros(0, 3, dtype=torch.int32), "vmap(t * 2) over 0 examples", device=DEVICE)
        total = torch.vmap(torch.sum)(x)
        self.assert_tensor(total, torch.zeros(0, dtype=torch.int64), "vmap(sum) over 0 examples", device=DEVICE)
        moved = torch.vmap(lambda t: t + 1, out_dims=1)(x)
        self.assert_tensor(moved, torch.zeros(3, 0, dtype=torch.int32), "out_dims=1 over 0 examples", device=DEVICE)
        with vmap_level(0) as level:
            y = add_batch_dim(x, 0, level)
            self.assert_value(batch_meta(y), wrapped_meta(level, 0, (3,), x), "_add_batch_dim of a (0, 3) tensor")
            back = remove_batch_dim(y * 2, level, 0, 0)
        self.assert_tensor(back, torch.zeros(0, 3, dtype=torch.int32), "round trip of 0 examples", device=DEVICE)
        in_pytree = torch_version_at_least(PYTREE_READS_NONE_SPEC_IN) and not torch_version_at_least(
            VMAP_CHECKS_EMPTY_CHUNKS_SINCE)
        self.assert_raises_exactly(AttributeError if in_pytree else AssertionError,
                                   f"torch {torch.__version__}: chunk_size=2 over 0 examples (no chunk is run)",
                                   torch.vmap(lambda t: t * 2, chunk_size=2), x)
        empty = torch.zeros(2, 0, 3, device=DEVICE)  # examples with a 0-size dim
        self.assert_tensor(torch.vmap(lambda t: t * 2)(empty), torch.zeros(2, 0, 3), "vmap(t * 2) of (0, 3) examples",
                           device=DEVICE)
        self.assert_tensor(torch.vmap(lambda t: t.sum(0))(empty), torch.zeros(2, 3), "vmap(sum over the 0 dim)",
                           device=DEVICE)
        self.assert_tensor(torch.vmap(torch.sum, in_dims=2)(empty), torch.zeros(3), "vmap(sum), in_dims=2",
                           device=DEVICE)
        with vmap_level(3) as level:
            y = add_batch_dim(empty, 2, level)
            self.assert_value(batch_meta(y), wrapped_meta(level, 2, (2, 0), empty),
                              "_add_batch_dim((2, 0, 3), batch_dim=2)")
            back = remove_batch_dim(y + 1, level, 3, 0)
        self.assert_tensor(back, torch.zeros(3, 2, 0), "round trip of an empty example", device=DEVICE)

    def test_zero_dim_examples_and_size_one_dims(self):
        """0-d examples of a 1-d input; batch size 1, a size-1 batch dim, squeeze() and broadcasting with size 1."""
        x_cpu = int_valued((4,), device="cpu")  # 0-d examples
        x = x_cpu.to(DEVICE)
        with vmap_level(4) as level:
            y = add_batch_dim(x, 0, level)
            self.assert_value(batch_meta(y), wrapped_meta(level, 0, (), x), "_add_batch_dim of a 1-d tensor")
            self.assert_value((y.dim(), y.numel()), (0, 1), "logical dim() and numel() of a 0-d example")
            back = remove_batch_dim(y * y, level, 4, 0)
        self.assert_tensor(back, x_cpu * x_cpu, "round trip of y * y", device=DEVICE)
        pair = torch.vmap(lambda t: torch.stack([t, t * 2]))(x)
        self.assert_tensor(pair, torch.stack([x_cpu, x_cpu * 2], dim=1), "stack of 0-d examples", device=DEVICE)
        self.assert_tensor(torch.vmap(lambda t: t.unsqueeze(0), out_dims=1)(x), x_cpu.unsqueeze(0),
                           "unsqueeze of 0-d examples, out_dims=1", device=DEVICE)
        self.assert_tensor(torch.vmap(torch.sum, out_dims=-1)(x), x_cpu, "sum of 0-d examples, out_dims=-1",
                           device=DEVICE)
        one_cpu = int_valued((1, 1, 3), device="cpu")  # a batch of 1
        one = one_cpu.to(DEVICE)
        self.assert_tensor(torch.vmap(lambda t: t.squeeze())(one), one_cpu.reshape(1, 3),
                           "squeeze() of (1, 3) examples in a batch of 1", device=DEVICE)
        self.assert_tensor(torch.vmap(lambda t: t.squeeze(), in_dims=1)(one), one_cpu.reshape(1, 3),
                           "squeeze() with in_dims on a size-1 dim", device=DEVICE)
        with vmap_level(1) as level:
            y = add_batch_dim(one, 1, level)
            self.assert_value(batch_meta(y), wrapped_meta(level, 1, (1, 3), one),
                              "_add_batch_dim((1, 1, 3), batch_dim=1)")
            back = remove_batch_dim(y.sum(-1), level, 1, 1)
        self.assert_tensor(back, one_cpu.sum(-1), "round trip of a sum with batch size 1", device=DEVICE)
        a_cpu = int_valued((2, 1, 4), device="cpu")
        b_cpu = int_valued((3, 1), device="cpu", offset=1)
        out = torch.vmap(lambda a, b: a + b, in_dims=(0, None))(a_cpu.to(DEVICE), b_cpu.to(DEVICE))
        self.assert_tensor(out, torch.stack([a_cpu[i] + b_cpu for i in range(2)]),
                           "(1, 4) example + unbatched (3, 1)", device=DEVICE)


# --------------------------------------------------------------------------- side effects
class TestVmapSideEffects(TestCase):
    """In-place writes, aliasing outputs and the vmap level across repeated calls."""

    def test_in_place_op_writes_through_to_the_input_once(self):
        """x.add_(1) under vmap / on a wrapper writes through once; a captured tensor: updated once, or raises."""
        x_cpu = int_valued((2, 3), device="cpu")
        for in_dim in (0, 1, -1):
            with self.subTest(f"vmap, in_dims={in_dim}"):
                x = x_cpu.to(DEVICE, copy=True)
                version = x._version
                out = torch.vmap(lambda t: t.add_(1), in_dims=in_dim, out_dims=in_dim)(x)
                self.assert_tensor(x, x_cpu + 1, f"input after vmap(add_(1), in_dims={in_dim})", device=DEVICE)
                self.assert_tensor(out, x_cpu + 1, "returned value", device=DEVICE)
                self.assert_true(x._version > version, "the input's version counter was bumped")
        x = x_cpu.to(DEVICE, copy=True)
        with vmap_level(3) as level:
            add_batch_dim(x, 1, level).mul_(2)
        self.assert_tensor(x, x_cpu * 2, "input after mul_(2) on _add_batch_dim(x, 1)", device=DEVICE)

        counter = torch.zeros(3, device=DEVICE)
        calls = []

        def bump(t):
            calls.append(1)
            counter.add_(1)
            return t + counter

        out = torch.vmap(bump)(x)
        self.assert_value(len(calls), 1, "calls of the function per vmap call")
        self.assert_tensor(counter, torch.ones(3), "captured unbatched counter after one vmap call", device=DEVICE)
        self.assert_tensor(out, x_cpu * 2 + 1, "output of the counter function", device=DEVICE)
        self.assert_raises_exactly(RuntimeError, "unbatched.add_(batched) inside vmap",
                                   torch.vmap(lambda t: counter.add_(t)), x)
        self.assert_tensor(counter, torch.ones(3), "captured tensor after the rejected update", device=DEVICE)

    def test_outputs_alias_inputs_as_upstream(self):
        """Identity and view outputs share the input's storage; computed outputs do not; unbatched ones expand."""
        x = int_valued((2, 3))
        w = int_valued((3,), offset=1)

        def storage(t):
            return t.untyped_storage().data_ptr()

        identity = torch.vmap(lambda t: t)(x)
        self.assert_is(identity, x, "vmap(identity) returns the input tensor itself")
        moved = torch.vmap(lambda t: t, in_dims=1, out_dims=0)(x)
        self.assert_value((storage(moved), moved.stride()), (storage(x), (1, 3)),
                          "vmap(identity, in_dims=1): a transposed view of the input (storage, strides)")
        sliced = torch.vmap(lambda t: t[1:])(x)
        self.assert_value(storage(sliced), storage(x), "vmap(t[1:]) is a view of the input")
        expected = x.cpu().clone()
        expected[:, 1:] *= 10
        sliced.mul_(10)
        self.assert_tensor(x, expected, "input after writing through the view output", device=DEVICE)
        computed = torch.vmap(lambda t: t * 1)(x)
        self.assert_false(storage(computed) == storage(x), "vmap(t * 1) is a new tensor")
        unbatched = torch.vmap(lambda t: w)(x)
        self.assert_value((storage(unbatched), unbatched.stride()), (storage(w), (0, 1)),
                          "an unbatched output is the captured tensor expanded over the batch (storage, strides)")

    def test_repeated_and_failing_calls_leave_no_level_behind(self):
        """Each vmap call runs at level 1 and leaves none, also when the function raises; the input is untouched."""
        x = int_valued((2, 3))
        levels = []
        vmapped = torch.vmap(lambda t: levels.append(functorch_c.maybe_current_level()) or t * 2)
        for call in range(3):
            vmapped(x)
            self.assert_is(functorch_c.maybe_current_level(), None, f"current level after call {call}")
        self.assert_value(levels, [1, 1, 1], "level inside each of three calls")

        def fail(t):
            raise KeyError("raised inside the vmapped function")

        self.assert_raises_exactly(KeyError, "an error inside the function propagates unchanged",
                                   torch.vmap(fail), x)
        self.assert_is(functorch_c.maybe_current_level(), None, "current level after the failing call")
        with vmap_level(2) as level:
            self.assert_value(level, 1, "level of a hand-entered vmap after the calls")
        self.assert_is(functorch_c.maybe_current_level(), None, "current level after leaving the hand-entered one")

        x = int_valued((3, 4)).t()
        before = (x.data_ptr(), x.stride(), tuple(x.shape), x._version, functorch_c.is_batchedtensor(x))
        with vmap_level(3) as level:
            y = add_batch_dim(x, 1, level)
            self.assert_value(functorch_c.get_unwrapped(y).stride(), (1, 4), "strides of the wrapped tensor")
        after = (x.data_ptr(), x.stride(), tuple(x.shape), x._version, functorch_c.is_batchedtensor(x))
        self.assert_value(after, before, "(data_ptr, stride, shape, version, batched) of an _add_batch_dim input")


# --------------------------------------------------------------------------- bad input
class TestAddBatchDimBadInput(TestCase):
    """Wrong types and out-of-range values raise upstream's exception type."""

    def test_out_of_range_batch_dim_and_wrong_level(self):
        """Unchecked batch_dim is stored and ops then fail; level -1 raises; a level not entered fails on use.

        A batch_dim >= ndim is kept as given and the logical shape is the physical one without its last
        dim (measured the same on 2.7.1 to 2.14.1); the first op on it raises IndexError.
        """
        x = int_valued((2, 3))
        normalizes = torch_version_at_least(NEGATIVE_BATCH_DIM_NORMALIZED_SINCE)
        with vmap_level(3) as level:
            for batch_dim in (2, 5):
                with self.subTest(f"batch_dim={batch_dim}"):
                    for name, func in (("wrapper", add_batch_dim), ("C function", functorch_c._add_batch_dim)):
                        y = func(x, batch_dim, level)
                        self.assert_value(batch_meta(y), wrapped_meta(level, batch_dim, (2,), x),
                                          f"{name}, batch_dim={batch_dim} of a 2-d tensor")
            y = add_batch_dim(x, 2, level)
            self.assert_raises_exactly(IndexError, "sum() of a wrapper with batch_dim=2 of a 2-d tensor", y.sum)
            stored = functorch_c.maybe_get_bdim(add_batch_dim(x, -3, level))
            self.assert_value(stored, -1 if normalizes else -3,
                              f"torch {torch.__version__}: stored bdim for batch_dim=-3 of a 2-d tensor")
            self.assert_raises_exactly(RuntimeError, "_add_batch_dim(x, 0, level=-1)", add_batch_dim, x, 0, -1)
            not_entered = add_batch_dim(x, 0, level + 1)
            self.assert_value(batch_meta(not_entered), wrapped_meta(level + 1, 0, (3,), x),
                              "wrapper for a level not entered")
            self.assert_raises_exactly(RuntimeError, "sum() of a wrapper for a level not entered", not_entered.sum)

    def test_wrong_argument_types_raise(self):
        """Non-int batch_dim or level, non-tensor input: TypeError (or AttributeError, see rules); 0-d: ValueError."""
        x = int_valued((2, 3))
        reads_ndim = torch_version_at_least(NEGATIVE_BATCH_DIM_NORMALIZED_SINCE)  # the wrapper reads tensor.ndim
        with vmap_level(3) as level:
            cases = (
                # label, (tensor, batch_dim, level), error of the wrapper, error of the C function
                ("batch_dim=1.0", (x, 1.0, level), TypeError, TypeError),
                ("batch_dim='1'", (x, "1", level), TypeError, TypeError),
                ("batch_dim=None", (x, None, level), TypeError, TypeError),
                ("level=1.5", (x, 1, 1.5), TypeError, TypeError),
                ("level=None", (x, 1, None), TypeError, TypeError),
                ("a list as the tensor", ([1.0, 2.0], 0, level), TypeError, TypeError),
                ("None as the tensor", (None, 0, level), TypeError, TypeError),
                ("an int as the tensor", (3, 0, level), TypeError, TypeError),
                ("a list as the tensor, batch_dim=-1", ([1.0, 2.0], -1, level),
                 AttributeError if reads_ndim else TypeError, TypeError),
                ("None as the tensor, batch_dim=-1", (None, -1, level),
                 AttributeError if reads_ndim else TypeError, TypeError),
                ("a 0-d tensor (no dim to batch)", (torch.tensor(3.0, device=DEVICE), 0, level), ValueError,
                 ValueError),
            )
            for label, args, wrapper_error, c_error in cases:
                with self.subTest(label):
                    self.assert_raises_exactly(wrapper_error, f"torch {torch.__version__}: _add_batch_dim, {label}",
                                               add_batch_dim, *args)
                    self.assert_raises_exactly(c_error, f"C _add_batch_dim, {label}", functorch_c._add_batch_dim,
                                               *args)

    def test_vmap_rejects_bad_in_dims(self):
        """in_dims of the wrong type, length or range, for a non-tensor, or unequal batch sizes: ValueError."""
        x = int_valued((2, 3))
        cases = (
            ("in_dims tuple shorter than the inputs", lambda a, b: a + b, (0,), (x, x), "not compatible"),
            ("in_dims tuple longer than the inputs", lambda a: a, (0, 0), (x,), "not compatible"),
            ("in_dims as a list", lambda a, b: a + b, [0, 0], (x, x), "expected `in_dims` to be int"),
            ("in_dims float", lambda a: a, 0.0, (x,), "expected `in_dims` to be int"),
            ("in_dims None", lambda a: a, None, (x,), "expected `in_dims` to be int"),
            ("in_dims=2 of a 2-d input", lambda a: a, 2, (x,), "expected in_dim to satisfy"),
            ("in_dims=-3 of a 2-d input", lambda a: a, -3, (x,), "expected in_dim to satisfy"),
            ("in_dim 0 for a Python int", lambda a, n: a, (0, 0), (x, 3), "cannot vmap over non-Tensor"),
            ("in_dim 1.0 inside the tuple", lambda a: a, (1.0,), (x,), "in_dim must be either"),
            ("every in_dim None", lambda a: a, (None,), (x,), "at least one Tensor"),
            ("no inputs", lambda: x, 0, (), "got no inputs"),
            ("batch sizes 2 and 3 (in_dims=(0, 1) of one (2, 3) tensor)", lambda a, b: a, (0, 1), (x, x), "same size"),
            ("batch sizes 2 and 4", lambda a, b: a + b, 0, (x, int_valued((4, 3))), "same size"),
        )
        for label, func, in_dims, args, match in cases:
            with self.subTest(label):
                self.assert_raises_exactly(ValueError, label, torch.vmap(func, in_dims=in_dims), *args, match=match)

    def test_vmap_rejects_bad_outputs_and_out_dims(self):
        """Bad outputs or out_dims (non-tensor, batched for None, type, structure): ValueError; range: IndexError."""
        x = int_valued((2, 3))
        cases = (
            (ValueError, "a Python int returned with out_dims=0", lambda t: 3, 0, "must only return Tensors"),
            (ValueError, "a batched output with out_dims=None", lambda t: t, None, "can not return a BatchedTensor"),
            (ValueError, "out_dims float", lambda t: t, 0.0, "`out_dims` must be an int"),
            (ValueError, "out_dims tuple of 3 for 2 outputs", lambda t: (t, t), (0, 0, 0), "not compatible"),
            (ValueError, "out_dims tuple of 2 for one tensor", lambda t: t, (0, 0), "not compatible"),
            (ValueError, "out_dims list for a tuple output", lambda t: (t, t), [0, 1], "not compatible"),
            (IndexError, "out_dims=2 for a 2-d output", lambda t: t, 2, "out of range"),
            (IndexError, "out_dims=-3 for a 2-d output", lambda t: t, -3, "out of range"),
        )
        for error, label, func, out_dims, match in cases:
            with self.subTest(label):
                self.assert_raises_exactly(error, label, torch.vmap(func, out_dims=out_dims), x, match=match)

    def test_vmap_rejects_bad_randomness_and_chunk_size_when_built(self):
        """At vmap(): bad randomness RuntimeError, chunk_size <= 0 ValueError; a non-callable: TypeError when called."""
        def double(t):
            return t * 2

        self.assert_raises_exactly(RuntimeError, "randomness='bad'", torch.vmap, double, randomness="bad",
                                   match="Only allowed values for randomness")
        self.assert_raises_exactly(RuntimeError, "randomness='Same' (case matters)", torch.vmap, double,
                                   randomness="Same", match="Only allowed values for randomness")
        for chunk_size in (0, -1):
            with self.subTest(f"chunk_size={chunk_size}"):
                self.assert_raises_exactly(ValueError, f"chunk_size={chunk_size}", torch.vmap, double,
                                           chunk_size=chunk_size, match="chunk_size should be None or greater than 0")
        self.assert_raises_exactly(TypeError, "torch.vmap(3) is built; calling it", torch.vmap(3), int_valued((2, 3)))


# --------------------------------------------------------------------------- threads
class TestVmapThreads(TestCase):
    """The vmap level stack is per thread: a level in one thread is invisible in the other."""

    def test_levels_are_per_thread_in_both_directions(self):
        """Main holds a level: a worker sees none and vmaps at level 1; and the reverse, with a waiting worker."""
        x_cpu = int_valued((2, 3), device="cpu")
        x = x_cpu.to(DEVICE)
        seen = {}

        def vmap_here(key):
            levels = []
            seen[key] = (functorch_c.maybe_current_level(),
                         torch.vmap(lambda t: levels.append(functorch_c.maybe_current_level()) or t * 2)(x),
                         levels, functorch_c.maybe_current_level())

        with vmap_level(2) as main_level:
            run_in_thread(lambda: vmap_here("worker"))
            self.assert_value(functorch_c.maybe_current_level(), main_level, "main thread's level after the worker")
        before, out, inside, after = seen["worker"]
        self.assert_value((before, inside, after), (None, [1], None),
                          "worker: level before, inside and after its vmap while main holds level 1")
        self.assert_tensor(out, x_cpu * 2, "worker's vmap result", device=DEVICE)

        entered, release = threading.Event(), threading.Event()

        def hold_level():
            with vmap_level(3) as level:
                seen["worker level"] = level
                entered.set()
                release.wait(timeout=30)

        holder = threading.Thread(target=hold_level)
        holder.start()
        try:
            self.assert_true(entered.wait(timeout=30), "worker entered its level")
            vmap_here("main")
        finally:
            release.set()
            holder.join(timeout=30)
        before, out, inside, after = seen["main"]
        self.assert_value((seen["worker level"], before, inside, after), (1, None, [1], None),
                          "(worker's level, main before, inside, after its vmap) while the worker holds a level")
        self.assert_tensor(out, x_cpu * 2, "main's vmap result while the worker holds a level", device=DEVICE)


if __name__ == "__main__":
    run_tests()
