# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""API-consistency tests for ``torch._functorch.vmap._add_batch_dim``.

``_add_batch_dim(tensor, batch_dim, level)`` wraps a tensor into a functorch BatchedTensor: dimension
``batch_dim`` becomes the hidden batch dimension of vmap level ``level`` and the remaining dimensions
form the logical tensor that the vmapped function sees. ``torch.vmap`` is built on it (together with
``_remove_batch_dim``), so an NPU port must produce exactly upstream's batched tensors: the same
logical shape, stored batch dim and level, dtype and device, the same unwrapped value, and the same
results when a computation runs on them.

The tests call it directly under a real vmap level (entered with ``vmap_increment_nesting`` and always
left again) and next to ``torch.vmap``: each vmap test also builds the batched inputs by hand with
``_add_batch_dim`` and checks that vmap's inputs, the hand-built computation and an explicit Python
loop agree.

Version rule asserted for the installed release: from torch 2.11 the Python wrapper
``torch._functorch.vmap._add_batch_dim`` normalizes a negative ``batch_dim`` (``-1`` of a 2-D tensor
is stored as ``1``); in 2.7.1 (where the name is the C function) and for the C function
``torch._C._functorch._add_batch_dim`` the negative value is stored as is, and the logical shape then
drops physical dimension 0.

On a CPU box every contract point runs on the CPU. On an accelerator every tensor lives on the device
and each result is compared with the same computation done on the CPU (exactly: all inputs are small
integers or halves, so the arithmetic is exact).
"""
from torch_npu_testing import TestCase, run_tests, device_type, torch_version_at_least

import contextlib
import math

import torch
import torch._functorch.vmap as vmap_module
from torch._C import _functorch as functorch_c
from torch.func import functional_call, grad

DEVICE = device_type()

NEGATIVE_BATCH_DIM_NORMALIZED_SINCE = "2.11"
SHAPES = ((5,), (2, 3), (2, 3, 4))


# --------------------------------------------------------------------------- helpers
@contextlib.contextmanager
def vmap_level(batch_size):
    """Enter one real vmap level and always leave it (the state guard fails a test that leaks one)."""
    if hasattr(vmap_module, "vmap_increment_nesting"):
        with vmap_module.vmap_increment_nesting(batch_size, "error") as level:
            yield level
    else:  # pragma: no cover - every supported release has the context manager
        level = functorch_c._vmap_increment_nesting(batch_size, "error")
        try:
            yield level
        finally:
            functorch_c._vmap_decrement_nesting()


def add_batch_dim(tensor, batch_dim, level):
    """The API under test: torch._functorch.vmap._add_batch_dim, the name torch.vmap itself calls."""
    return vmap_module._add_batch_dim(tensor, batch_dim, level)


def remove_batch_dim(tensor, level, batch_size, out_dim):
    return vmap_module._remove_batch_dim(tensor, level, batch_size, out_dim)


def batch_meta(tensor):
    """What a BatchedTensor exposes: (is batched, level, stored batch dim, logical shape, dtype, device)."""
    return {
        "batched": functorch_c.is_batchedtensor(tensor),
        "level": functorch_c.maybe_get_level(tensor),
        "bdim": functorch_c.maybe_get_bdim(tensor),
        "shape": tuple(tensor.shape),
        "dtype": tensor.dtype,
        "device": tensor.device,
    }


def without_dim(shape, dim):
    return tuple(size for index, size in enumerate(shape) if index != dim)


def int_valued(shape, device=DEVICE, dtype=torch.float32, offset=0):
    """Deterministic small integers (exact in every float dtype and under any summation order)."""
    numel = math.prod(shape)
    values = (torch.arange(numel, dtype=torch.int64) * 7 + offset) % 11 - 5
    return values.reshape(shape).to(dtype=dtype, device=device)


def hand_vmap(func, args, in_dims, out_dims, batch_size):
    """torch.vmap rebuilt from the API under test: one level, _add_batch_dim per argument, _remove_batch_dim.

    ``in_dims`` holds one entry per argument (``None``: not batched); negative entries are normalized
    the way torch.vmap does before it calls _add_batch_dim. ``out_dims`` is an int or a tuple matching
    a tuple output.
    """
    with vmap_level(batch_size) as level:
        batched = [arg if dim is None else add_batch_dim(arg, dim % arg.dim(), level)
                   for arg, dim in zip(args, in_dims)]
        outputs = func(*batched)
        if isinstance(outputs, tuple):
            dims = out_dims if isinstance(out_dims, tuple) else (out_dims,) * len(outputs)
            return tuple(remove_batch_dim(out, level, batch_size, dim) for out, dim in zip(outputs, dims))
        return remove_batch_dim(outputs, level, batch_size, out_dims)


class AddBatchDimTestBase(TestCase):
    """Shared checks whose failure message names what differed."""

    def expect_equal(self, actual, expected, what):
        if actual != expected:
            self.fail(f"{what}: expected {expected!r}, got {actual!r}")

    def expect_meta(self, tensor, what, **expected):
        meta = batch_meta(tensor)
        wrong = {key: (want, meta[key]) for key, want in expected.items() if meta[key] != want}
        if wrong:
            self.fail(f"{what}: batched-tensor metadata differs (key: (expected, got)): {wrong!r}; full: {meta!r}")

    def expect_on_device_and_exact(self, actual, cpu_reference, what):
        """``actual`` was computed on DEVICE; it must equal the CPU reference exactly."""
        self.expect_equal(actual.device.type, DEVICE, f"{what}: device of the result")
        self.expect_equal(cpu_reference.device.type, "cpu", f"{what}: device of the reference")
        torch.testing.assert_close(actual.cpu(), cpu_reference, atol=0, rtol=0,
                                   msg=lambda message: f"{what} (on {DEVICE}) vs CPU reference: {message}")


# --------------------------------------------------------------------------- direct calls
class TestAddBatchDimDirect(AddBatchDimTestBase):
    """_add_batch_dim called by hand under a real vmap level."""

    def test_every_nonnegative_batch_dim_of_1d_2d_3d_tensors(self):
        """Batch dim b of shape S: logical shape S without b, stored bdim b, the given level, input unwrapped."""
        for shape in SHAPES:
            for batch_dim in range(len(shape)):
                x = int_valued(shape)
                with vmap_level(shape[batch_dim]) as level:
                    y = add_batch_dim(x, batch_dim, level)
                    what = f"_add_batch_dim(shape {shape}, batch_dim={batch_dim}, level={level})"
                    self.expect_meta(y, what, batched=True, level=level, bdim=batch_dim,
                                     shape=without_dim(shape, batch_dim), dtype=x.dtype, device=x.device)
                    self.expect_equal(y.dim(), len(shape) - 1, f"{what}: logical dim()")
                    self.assertIs(functorch_c.get_unwrapped(y), x,
                                  f"{what}: get_unwrapped must return the wrapped input itself (no copy)")
                self.expect_meta(x, f"input of {what} after the call", batched=False, level=-1, bdim=-1, shape=shape)

    def test_negative_batch_dim_follows_installed_version_rule(self):
        """Negative batch_dim: normalized by the wrapper from 2.11; stored as is (logical = shape[1:]) before."""
        normalizes = torch_version_at_least(NEGATIVE_BATCH_DIM_NORMALIZED_SINCE)
        for shape in SHAPES:
            ndim = len(shape)
            for batch_dim in range(-ndim, 0):
                x = int_valued(shape)
                positive = batch_dim + ndim
                with vmap_level(shape[positive]) as level:
                    y = add_batch_dim(x, batch_dim, level)
                    what = (f"torch {torch.__version__}: _add_batch_dim(shape {shape}, batch_dim={batch_dim}) "
                            f"({'normalizing' if normalizes else 'non-normalizing'} release)")
                    if normalizes:
                        self.expect_meta(y, what, batched=True, level=level, bdim=positive,
                                         shape=without_dim(shape, positive))
                        round_trip = remove_batch_dim(y * 2, level, shape[positive], positive)
                        self.expect_on_device_and_exact(round_trip, x.cpu() * 2, f"{what}: round trip of y * 2")
                    else:
                        self.expect_meta(y, what, batched=True, level=level, bdim=batch_dim, shape=shape[1:])

    def test_c_function_stores_negative_batch_dim_unchanged(self):
        """torch._C._functorch._add_batch_dim keeps a negative bdim on every release; agrees for bdim >= 0."""
        x = int_valued((2, 3, 4))
        with vmap_level(4) as level:
            for batch_dim in (-1, -2, -3):
                y = functorch_c._add_batch_dim(x, batch_dim, level)
                self.expect_meta(y, f"C _add_batch_dim(batch_dim={batch_dim})", batched=True, level=level,
                                 bdim=batch_dim, shape=(3, 4))
            for batch_dim in range(3):
                self.expect_equal(batch_meta(functorch_c._add_batch_dim(x, batch_dim, level)),
                                  batch_meta(add_batch_dim(x, batch_dim, level)),
                                  f"C function vs torch._functorch.vmap._add_batch_dim for batch_dim={batch_dim}")

    def test_dtype_and_device_are_kept(self):
        """float32, float64, int64 and bool inputs stay that dtype on that device; values survive an op."""
        cases = (
            (torch.float32, int_valued((2, 3), device="cpu")),
            (torch.float64, int_valued((2, 3), device="cpu", dtype=torch.float64)),
            (torch.int64, int_valued((2, 3), device="cpu", dtype=torch.int64)),
            (torch.bool, torch.tensor([[True, False, False], [False, True, True]])),
        )
        for dtype, x_cpu in cases:
            x = x_cpu.to(DEVICE)
            with vmap_level(3) as level:
                y = add_batch_dim(x, 1, level)
                what = f"_add_batch_dim({dtype} on {DEVICE}, batch_dim=1)"
                self.expect_meta(y, what, batched=True, level=level, bdim=1, shape=(2,), dtype=dtype, device=x.device)
                self.assertIs(functorch_c.get_unwrapped(y), x, f"{what}: unwrapped value must be the input")
                flipped = remove_batch_dim(y.flip(0), level, 3, 1)
            self.expect_on_device_and_exact(flipped, x_cpu.flip(0), f"{what}: flip of the logical dim 0")

    def test_round_trip_with_remove_batch_dim_to_every_out_dim(self):
        """_remove_batch_dim(_add_batch_dim(x, b), out_dim=o) == x.movedim(b, o) for every b and every o, +/-."""
        for shape in SHAPES:
            ndim = len(shape)
            x_cpu = int_valued(shape, device="cpu")
            x = x_cpu.to(DEVICE)
            for batch_dim in range(ndim):
                for out_dim in range(-ndim, ndim):
                    what = f"shape {shape}: add at batch_dim={batch_dim}, remove at out_dim={out_dim}"
                    with vmap_level(shape[batch_dim]) as level:
                        y = add_batch_dim(x, batch_dim, level)
                        plain = remove_batch_dim(y, level, shape[batch_dim], out_dim)
                        computed = remove_batch_dim(y * 3 - 1, level, shape[batch_dim], out_dim)
                    self.assertFalse(functorch_c.is_batchedtensor(plain), f"{what}: result is still batched")
                    self.expect_on_device_and_exact(plain, x_cpu.movedim(batch_dim, out_dim), what)
                    self.expect_on_device_and_exact(computed, (x_cpu * 3 - 1).movedim(batch_dim, out_dim),
                                                    f"{what}, through y * 3 - 1")

    def test_two_nested_levels_each_see_their_own_batch_dim(self):
        """Level 1 batches physical dim 2, level 2 batches logical dim 0; each wrapper keeps its level/bdim."""
        x_cpu = int_valued((2, 3, 4), device="cpu")
        x = x_cpu.to(DEVICE)
        with vmap_level(4) as outer:
            y1 = add_batch_dim(x, 2, outer)
            self.expect_meta(y1, "outer wrapper", batched=True, level=outer, bdim=2, shape=(2, 3))
            with vmap_level(2) as inner:
                self.expect_equal(inner, outer + 1, "level returned for the nested vmap level")
                y2 = add_batch_dim(y1, 0, inner)
                self.expect_meta(y2, "inner wrapper", batched=True, level=inner, bdim=0, shape=(3,))
                self.assertIs(functorch_c.get_unwrapped(y2), y1, "the inner wrapper must unwrap to the outer one")
                inner_out = remove_batch_dim(y2.sum(), inner, 2, 0)
            self.expect_meta(inner_out, "after leaving the inner level", batched=True, level=outer, shape=(2,))
            result = remove_batch_dim(inner_out, outer, 4, 0)
        self.expect_on_device_and_exact(result, x_cpu.sum(1).T, "two hand-built levels, sum per (i, j)")
        through_vmap = torch.vmap(torch.vmap(torch.sum, in_dims=0), in_dims=2)(x)
        self.expect_on_device_and_exact(through_vmap, x_cpu.sum(1).T, "nested torch.vmap of the same sum")

    def test_batched_tensor_outside_its_level_rejects_operations(self):
        """A wrapper used after its level was left (or created with no level entered) raises on use."""
        x = int_valued((2, 3))
        with vmap_level(2) as level:
            escaped = add_batch_dim(x, 0, level)
        self.assertIsNone(functorch_c.maybe_current_level(), "this check needs no functorch level entered")
        created_outside = add_batch_dim(x, 0, 1)  # level 1: the level the next vmap would get
        self.expect_meta(created_outside, "wrapper created with no vmap level entered", batched=True, bdim=0,
                         shape=(3,))
        for label, tensor in (("escaped", escaped), ("created outside", created_outside)):
            with self.assertRaisesRegex(RuntimeError, "escaped from inside a function being vmapped",
                                        msg=f"{label} batched tensor: an op must raise"):
                tensor.sum()


# --------------------------------------------------------------------------- through torch.vmap
class TestAddBatchDimThroughVmap(AddBatchDimTestBase):
    """torch.vmap's inputs are _add_batch_dim wrappers; hand-built wrappers give vmap's results."""

    def test_vmap_input_is_what_add_batch_dim_builds(self):
        """Inside torch.vmap(in_dims=d) the input has the metadata of _add_batch_dim(x, d mod ndim, level)."""
        normalizes = torch_version_at_least(NEGATIVE_BATCH_DIM_NORMALIZED_SINCE)
        x = int_valued((2, 3, 4))
        for in_dim in (0, 1, 2, -1, -3):
            seen = []

            def record(t, seen=seen):
                seen.append(batch_meta(t))
                return t * 2

            torch.vmap(record, in_dims=in_dim)(x)
            hand_vmap(record, (x,), (in_dim,), 0, x.shape[in_dim])
            self.expect_equal(len(seen), 2, f"in_dims={in_dim}: calls of the vmapped function")
            self.expect_equal(seen[0], seen[1],
                              f"in_dims={in_dim}: torch.vmap's input vs _add_batch_dim(x, {in_dim % 3}, level)")
            self.expect_equal(seen[0]["bdim"], in_dim % 3, f"in_dims={in_dim}: torch.vmap's stored bdim")
            if in_dim < 0:
                with vmap_level(x.shape[in_dim]) as level:
                    raw = batch_meta(add_batch_dim(x, in_dim, level))
                what = f"torch {torch.__version__}: _add_batch_dim(x, {in_dim}) vs torch.vmap's input"
                if normalizes:
                    self.expect_equal(raw, seen[0], what)
                else:
                    self.expect_equal(raw["bdim"], in_dim, what + " (negative bdim stored as is)")

    def test_in_dims_and_out_dims_other_than_zero(self):
        """in_dims/out_dims of 1, 2, -1, -2: torch.vmap == hand-built _add_batch_dim == Python loop."""
        def mix(t):  # logical-dim reduction makes a wrong batch dim visible in the values
            return t * 2 - t.sum(0, keepdim=True)

        x_cpu = int_valued((3, 4, 5), device="cpu")
        x = x_cpu.to(DEVICE)
        for in_dim, out_dim in ((1, 2), (2, 0), (-1, -2), (0, -1), (-2, 1)):
            what = f"in_dims={in_dim}, out_dims={out_dim}"
            loop = torch.stack([mix(x_cpu.select(in_dim, i)) for i in range(x_cpu.shape[in_dim])], dim=out_dim)
            via_vmap = torch.vmap(mix, in_dims=in_dim, out_dims=out_dim)(x)
            by_hand = hand_vmap(mix, (x,), (in_dim,), out_dim, x.shape[in_dim])
            self.expect_on_device_and_exact(via_vmap, loop, f"torch.vmap, {what}")
            self.expect_on_device_and_exact(by_hand, loop, f"hand-built _add_batch_dim, {what}")

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
        loop = (torch.stack([p[0] for p in pairs], dim=1), torch.stack([p[1] for p in pairs], dim=-1))

        seen = []

        def record(a_, b_, c_):
            seen.append(tuple(batch_meta(t)["bdim"] for t in (a_, b_, c_)))
            return combine(a_, b_, c_)

        via_vmap = torch.vmap(record, in_dims=in_dims, out_dims=out_dims)(a, b, c)
        by_hand = hand_vmap(record, (a, b, c), in_dims, out_dims, 4)
        self.expect_equal(seen, [(1, -1, 0), (1, -1, 0)], "stored bdims of (a, b, c): torch.vmap then by hand")
        for index in range(2):
            self.expect_on_device_and_exact(via_vmap[index], loop[index], f"torch.vmap output {index}")
            self.expect_on_device_and_exact(by_hand[index], loop[index], f"hand-built output {index}")

        nested = torch.vmap(lambda ab, c_: record(ab[0], ab[1], c_), in_dims=((1, None), 0), out_dims=out_dims)
        nested_out = nested((a, b), c)
        for index in range(2):
            self.expect_on_device_and_exact(nested_out[index], loop[index], f"pytree in_dims, output {index}")

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
        base = functorch_c.maybe_current_level() or 0
        expected_meta = (base + 2, 1, (3,), base + 1, 0)
        self.expect_equal(seen, [expected_meta, expected_meta],
                          "(inner level, inner bdim, logical shape, outer level, outer bdim): vmap then by hand")
        loop = torch.stack([torch.stack([square_minus_total(x_cpu[i, :, j]) for j in range(4)], dim=1)
                            for i in range(2)])
        self.expect_on_device_and_exact(via_vmap, loop, "nested torch.vmap")
        self.expect_on_device_and_exact(by_hand, loop, "two hand-built levels")

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

        loop = torch.stack([x_cpu[i] @ weight_cpu.T + bias_cpu for i in range(5)])
        via_vmap = torch.vmap(forward, in_dims=(None, 0))(params, x)
        with vmap_level(5) as level:
            xb = add_batch_dim(x, 0, level)
            self.expect_meta(xb, "hand-built module input", batched=True, level=level, bdim=0, shape=(3,))
            by_hand = remove_batch_dim(forward(params, xb), level, 5, 0)
        self.expect_on_device_and_exact(via_vmap, loop, "torch.vmap over inputs of functional_call(Linear)")
        self.expect_on_device_and_exact(by_hand, loop, "hand-built batch over inputs of functional_call(Linear)")

        stacked_cpu = {"weight": torch.stack([weight_cpu, -weight_cpu]), "bias": torch.stack([bias_cpu, 2 * bias_cpu])}
        stacked = {name: value.to(DEVICE) for name, value in stacked_cpu.items()}
        ensemble_loop = torch.stack([x_cpu @ stacked_cpu["weight"][e].T + stacked_cpu["bias"][e] for e in range(2)])
        via_vmap = torch.vmap(forward, in_dims=(0, None))(stacked, x)
        with vmap_level(2) as level:
            batched_params = {name: add_batch_dim(value, 0, level) for name, value in stacked.items()}
            by_hand = remove_batch_dim(forward(batched_params, x), level, 2, 0)
        self.expect_on_device_and_exact(via_vmap, ensemble_loop, "torch.vmap over stacked Linear parameters")
        self.expect_on_device_and_exact(by_hand, ensemble_loop, "hand-built batch over stacked Linear parameters")

    def test_per_sample_gradients_match_python_loop(self):
        """vmap(grad(loss), in_dims=(None, 0, 0)) == loop of grad(loss) == grad under a hand-built level.

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
            with mode():
                loop = torch.stack([grad(loss)(w_cpu, x_cpu[i], t_cpu[i]) for i in range(4)])
                via_vmap = torch.vmap(grad(loss), in_dims=(None, 0, 0))(w, x, t)
                with vmap_level(4) as level:
                    per_sample = grad(loss)(w, add_batch_dim(x, 0, level), add_batch_dim(t, 0, level))
                    self.expect_meta(per_sample, f"{mode_name}: gradient under the hand-built level",
                                     batched=True, level=level, bdim=0, shape=(3,))
                    by_hand = remove_batch_dim(per_sample, level, 4, 0)
            torch.testing.assert_close(
                loop, closed_form, atol=0, rtol=0,
                msg=lambda message, m=mode_name: f"{m}: CPU loop of grad vs closed form: {message}")
            self.expect_on_device_and_exact(via_vmap, closed_form, f"{mode_name}: vmap(grad(loss))")
            self.expect_on_device_and_exact(by_hand, closed_form, f"{mode_name}: grad under _add_batch_dim")

    def test_backward_through_vmap_matches_loop(self):
        """Autograd through torch.vmap and through hand-built wrappers gives the loop's input gradient."""
        def scaled_by_total(t):
            return t * t.sum()

        x_cpu = int_valued((3, 4), device="cpu")
        closed_form = (2 * x_cpu.sum(0, keepdim=True)).expand(3, 4)  # d/dc of sum(c * sum(c)) = 2 * sum(c)
        with torch.enable_grad():
            reference = x_cpu.clone().requires_grad_()
            torch.stack([scaled_by_total(reference[:, j]) for j in range(4)], dim=1).sum().backward()

            x_vmap = x_cpu.to(DEVICE, copy=True).requires_grad_()
            torch.vmap(scaled_by_total, in_dims=1, out_dims=1)(x_vmap).sum().backward()

            x_hand = x_cpu.to(DEVICE, copy=True).requires_grad_()
            with vmap_level(4) as level:
                out = remove_batch_dim(scaled_by_total(add_batch_dim(x_hand, 1, level)), level, 4, 1)
            out.sum().backward()
        torch.testing.assert_close(reference.grad, closed_form, atol=0, rtol=0,
                                   msg=lambda message: f"Python-loop reference gradient vs closed form: {message}")
        self.expect_on_device_and_exact(x_vmap.grad, reference.grad, "x.grad through torch.vmap")
        self.expect_on_device_and_exact(x_hand.grad, reference.grad, "x.grad through hand-built _add_batch_dim")


if __name__ == "__main__":
    run_tests()
