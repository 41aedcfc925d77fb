# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""API consistency of the local grad-mode switches on the test device.

Validates ``torch.autograd.grad_mode.set_grad_enabled.clone`` together with the switches it belongs to:
``torch.no_grad``, ``torch.enable_grad``, ``torch.set_grad_enabled`` (the same class as
``torch.autograd.grad_mode.set_grad_enabled``) and ``no_grad().clone()`` / ``enable_grad().clone()``; as
context managers, as decorators (functions, generators, methods, classes), as plain calls, nested in every
combination and per thread.

Why it exists: the NPU port must behave exactly as upstream PyTorch. Grad mode is host-side state, but
whether a result computed on the device records autograd history (``requires_grad`` / ``grad_fn``), the
gradients that flow back and the values must not depend on the device. Expected values are closed forms
computed on the CPU in float64/complex128/int64 (exact for the values used), so on an accelerator
(``DEVICE != "cpu"``) every device result is compared with a CPU reference.

Every test establishes the starting grad mode it needs and asserts relative to it, so the file passes
whatever the process's initial grad mode is; the mode is checked right after each block or call returns.

The contract of ``set_grad_enabled.clone`` (the same in every release the kit runs, 2.7.1 to 2.14.1):
``clone()`` is ``set_grad_enabled(self.mode)``: a new object that switches the calling thread's grad mode
to ``mode`` at once and saves the mode current at ``clone()`` time, which its ``__exit__`` restores; the
original is not touched. Used as a decorator an object first restores its saved mode, then clones itself
for every call (and every generator step). ``no_grad``/``enable_grad`` switch only when entered.

Input classes and where they are tested:

- call forms: ``TestGradModeSwitchForms`` (construction, ``with ... as``, decorators with metadata, bare
  decorators, generators, every pair of the core switches nested, a decorated function that calls itself,
  one switch object re-entered inside itself) and ``TestSetGradEnabledClone`` (clone
  of originals built in either mode, by keyword or positionally, clone of a clone, the unbound form, repr,
  plain calls, methods and classes decorated, repeated use, an in-place update of a leaf, inference mode);
- dtypes, ``TestCloneRegionDtypes``: every dtype of ``all_types_and_complex_and(half, bfloat16, bool)``
  plus uint16/32/64 and the five float8 types. Per dtype: a same-dtype result (``x * k``; ``x.clone()`` for
  uint16/32/64 and float8, which upstream's CUDA has no arithmetic kernels for), a widened copy, a bool
  mask, an int64 count, an int64 argmax, int64 nonzero indices and the product with a float32 leaf (dtype
  by ``torch.promote_types``; float8 refuses to promote with RuntimeError), each compared on dtype, shape,
  layout and values; ``requires_grad``/``grad_fn`` only for floating/complex results under the enabled
  mode (integer and bool outputs never); gradients after the region; a leaf made in the region requires
  grad in either mode, and ``requires_grad=True`` is refused (RuntimeError) for integer and bool dtypes;
- layouts, ``TestCloneRegionLayouts``: contiguous, channels_last and channels_last_3d leaves, a transposed
  (non-contiguous) leaf, permuted, step-sliced and expanded (stride 0) views and a channels_last copy taken
  in the region (values and gradients from the view's closed form as size/stride/offset), conj and neg
  views of complex tensors; views taken under the disabled mode (they keep ``requires_grad`` but no
  gradient reaches the base; modifying one in place under the enabled mode is refused); sparse
  COO/CSR/CSC/BSR/BSC leaves in every dtype of ``all_types_and_complex_and(half, bfloat16, bool)`` (all
  five record history iff the mode for floating and complex leaves and give gradients of their own layout
  and dtype through ``autograd.grad``; accumulation into ``.grad`` is accepted for COO and CSR and refused
  with RuntimeError for CSC, BSR and BSC, as upstream does; integer and bool leaves refuse
  ``requires_grad_()`` and stay untracked; uint16/32/64 and float8 are left out: upstream's CPU lacks
  sparse kernels for them, e.g. ``to_sparse`` of uint16 and ``mul`` of a float8 CSR tensor raise
  NotImplementedError). The sparse leaves are built on the CPU and moved, so no conversion runs on the device;
  densifying there is the vehicle of the gradient half: where the device refuses it (``to_dense`` is ✘ on
  Atlas A2) that half skips with its message and ``s * 2`` (layout, dtype, values, history) still runs;
- sizes, ``TestCloneRegionSizes``: distinct sizes per dim, a square input, zero-size, 0-d and size-1;
- bad input, ``TestSetGradEnabledBadInput``: non-bool modes (numbers, None, str, list, 0-d tensors of
  every dtype above) raise TypeError at construction and through ``clone()``; wrong signatures too;
- threads, ``TestGradModeThreads``: each thread has its own mode (new threads start enabled); a clone in
  one thread never changes another's, also while both are inside clones at once (the two threads take
  turns through ``threading.Event`` hand-offs, so the interleaving is fixed); a decorator made in one
  thread applies in another;
- neighbouring modes, ``TestGradModeNeighbourModes``: each switch and its clone inside
  ``inference_mode()``, ``inference_mode()`` inside each, ``inference_mode(False)`` inside either (it turns
  grad mode on, also inside no_grad) and each switch inside ``inference_mode(False)``; before, inside and
  after every level: ``torch.is_inference_mode_enabled()``, ``torch.is_grad_enabled()`` and
  ``is_inference()`` / ``requires_grad`` of a result computed there;
- re-entrance: a function under ``@no_grad``, ``@enable_grad``, ``@set_grad_enabled(m)`` or a clone that
  calls itself runs in the mode at every level (each call enters a fresh clone); entering one
  ``no_grad()`` object inside itself overwrites the mode it saved, so grad mode is OFF after the outer
  block even when it started on (enable_grad likewise leaves it on), upstream's behaviour on 2.7.1 and
  2.13 alike, asserted and then undone; a re-entered ``set_grad_enabled`` object restores the mode saved
  at construction at both exits.

Torch subsystems the region's values pass through, ``TestCloneRegionSubsystems``: forward-mode AD (tangents
propagate in either mode), second-order gradients and ``torch.func.grad`` with a clone inside (also under an
outer no_grad); version counters of leaves and saved tensors updated in place, identity of the clone and of
``__enter__``'s None; containers a decorated function returns (dict, namedtuple, ``torch.return_types``,
nested lists: the very object); nn.Module forward pre-hooks and hooks on a module and its submodule, eval
mode, ``state_dict``, frozen and tied parameters; ``torch.autocast`` to bfloat16 and float16 on the CPU (and
on the device when it supports autocast) and ``set_default_dtype``; the global RNG stream (no draw), dropout
from one seed inside and outside, ``fork_rng`` and an explicit generator; a user's subclass (its clone is of
the subclass), copy/deepcopy/pickle, ``functools.partial``, callable objects, static and class methods; no warnings (bad
input messages: ``TestSetGradEnabledBadInput``). Caches keyed on grad mode (``torch.compile``'s guards)
belong to the compiler, not to this switch; the file compiles nothing, so they do not apply.

Not applicable: aliasing of outputs (``__enter__`` returns None and the API itself produces no tensors);
size or range arguments (the only parameter is ``mode``); vmap-style batching (the switch has no batch
rule). Strided layouts are not crossed with every dtype: the grad-mode code has no layout or dtype branch,
so each space is enumerated once against float32 (complex64 for conj/neg views); sparse leaves are crossed
with the dtype space, since sparse autograd kernels are per layout and dtype.

Release differences asserted: ``repr``/``str`` name the mode from torch 2.9 (an object repr on 2.7.1);
``torch.testing.assert_close`` cannot compare unequal float8 tensors on 2.7.1 (RuntimeError), so float8
values are compared in float64 after their dtype is checked.
"""
from torch_npu_testing import (TestCase, run_tests, device_type, run_in_thread, torch_version_at_least,
                               skip_unless_vehicle, vehicle_refusal)

import collections
import copy
import functools
import inspect
import itertools
import math
import pickle
import threading
import warnings

import torch
from torch.autograd import grad_mode
from torch.testing._internal.common_dtype import all_types_and_complex_and

DEVICE = device_type()
STARTS = (False, True)
MODES = (False, True)
FLOAT8_DTYPES = (torch.float8_e4m3fn, torch.float8_e5m2, torch.float8_e4m3fnuz, torch.float8_e5m2fnuz,
                 torch.float8_e8m0fnu)
# Upstream's CUDA has no arithmetic kernels for these ("mul_cuda" not implemented, measured on 2.11), so an
# accelerator port need not have them either: they are tested with copies, casts and comparisons only.
BAREBONES_DTYPES = (torch.uint16, torch.uint32, torch.uint64) + FLOAT8_DTYPES
ARITHMETIC_DTYPES = tuple(all_types_and_complex_and(torch.half, torch.bfloat16, torch.bool))
DTYPES = ARITHMETIC_DTYPES + BAREBONES_DTYPES


class Boom(Exception):
    """Raised inside a block or decorated function to check the restore-on-exception path."""


class Interrupt(BaseException):
    """Not an Exception (like KeyboardInterrupt): the restore must not depend on ``except Exception``."""


def unswitched(mode):
    """``set_grad_enabled(mode)`` with its construction-time switch undone: an original to clone from."""
    before = torch.is_grad_enabled()
    original = torch.set_grad_enabled(mode)
    torch.set_grad_enabled(before)
    return original


def cloned(mode):
    """``set_grad_enabled(mode).clone()``: switches to ``mode`` now and saves the mode that was current."""
    return unswitched(mode).clone()


def tracks():
    """Whether a result computed now on DEVICE from a leaf that requires grad records history."""
    return (torch.ones(2, device=DEVICE, requires_grad=True) * 2.0).requires_grad


def differentiable(dtype):
    """Upstream's rule: only floating point (float8 included) and complex tensors can require grad."""
    return dtype.is_floating_point or dtype.is_complex


def wide(dtype):
    return torch.complex128 if dtype.is_complex else torch.float64


def pattern(dtype, shape, salt=0):
    """CPU values of ``shape`` that differ per position (arange-based), exact in ``dtype`` and in products.

    Floats are 0 or signed powers of two in [1/4, 4] (positive only for float8_e8m0fnu, which has no zero
    and no sign); complex adds imaginary parts of +-1/2 and +-3/2; integers are small; bools alternate.
    """
    i = torch.arange(math.prod(shape), dtype=torch.float64).reshape(shape) + salt
    if dtype is torch.bool:
        return i % 3 == 1
    if not differentiable(dtype):
        return (i % 7 - 3 if dtype.is_signed else i % 5).to(dtype)
    power = torch.exp2(i % 5 - 2)
    if dtype is torch.float8_e8m0fnu:
        return power.to(dtype)
    real = power * (1 - 2 * (i % 2)) * (i % 6 != 0)
    return (torch.complex(real, i % 4 - 1.5) if dtype.is_complex else real).to(dtype)


def on_device(values, requires_grad):
    return values.to(DEVICE, copy=True).requires_grad_(requires_grad)


# Ways to switch grad mode: (label, factory called in place, mode it sets, switches when constructed).
# The first six are also nested pairwise; the last four are further spellings of the same switches.
SWITCHES = (
    ("no_grad()", lambda: torch.no_grad(), False, False),
    ("enable_grad()", lambda: torch.enable_grad(), True, False),
    ("set_grad_enabled(False)", lambda: torch.set_grad_enabled(False), False, True),
    ("set_grad_enabled(True)", lambda: torch.set_grad_enabled(True), True, True),
    ("set_grad_enabled(False).clone()", lambda: cloned(False), False, True),
    ("set_grad_enabled(True).clone()", lambda: cloned(True), True, True),
    ("no_grad().clone()", lambda: torch.no_grad().clone(), False, False),
    ("enable_grad().clone()", lambda: torch.enable_grad().clone(), True, False),
    ("set_grad_enabled(mode=False)", lambda: torch.set_grad_enabled(mode=False), False, True),
    ("grad_mode.set_grad_enabled(True)", lambda: grad_mode.set_grad_enabled(True), True, True),
)
NESTED_SWITCHES = SWITCHES[:6]

# Ways to decorate a function: (label, decorate(func) -> wrapped, mode inside the call).
DECORATORS = (("@no_grad", torch.no_grad, False), ("@enable_grad", torch.enable_grad, True)) + tuple(
    (f"@{label}", lambda func, make=make: make()(func), inside) for label, make, inside, _ in SWITCHES)
NESTED_DECORATORS = DECORATORS[:8]


def grad_level(label, make, mode):
    """A level of a nest of modes: (label, factory, the (inference, grad) state inside, from the state outside)."""
    return label, make, lambda state: (state[0], mode)


# Inference mode's two switches: inference_mode() turns inference on and grad off, inference_mode(False) turns
# inference off and grad ON (whatever the grad mode outside), as c10::InferenceMode(false) does.
INFERENCE_ON = ("inference_mode()", lambda: torch.inference_mode(), lambda state: (True, False))
INFERENCE_OFF = ("inference_mode(False)", lambda: torch.inference_mode(False), lambda state: (False, True))
# Orders of a grad switch S and the inference switches, outermost first.
NEIGHBOUR_NESTS = (
    ("S inside inference_mode()", lambda S: (INFERENCE_ON, S)),
    ("inference_mode() inside S", lambda S: (S, INFERENCE_ON)),
    ("inference_mode(False) inside S inside inference_mode()", lambda S: (INFERENCE_ON, S, INFERENCE_OFF)),
    ("inference_mode(False) inside inference_mode() inside S", lambda S: (S, INFERENCE_ON, INFERENCE_OFF)),
    ("S inside inference_mode(False) inside inference_mode()", lambda S: (INFERENCE_ON, INFERENCE_OFF, S)),
    ("inference_mode(False) inside S", lambda S: (S, INFERENCE_OFF)),
)


class GradModeCase(TestCase):
    """Shared checks; the concrete classes call them with the API under test."""

    def assert_mode(self, expected, what):
        self.assertIs(torch.is_grad_enabled(), expected, what)

    def assert_restored_after_raise(self, run, restored, what):
        """``run(exc_type)`` raises Boom, then Interrupt: each propagates as is and the mode is ``restored``."""
        for exc_type in (Boom, Interrupt):
            try:
                run(exc_type)
            except exc_type:
                self.assert_mode(restored, f"{what}: right after {exc_type.__name__} propagated")
            else:
                self.fail(f"{what}: {exc_type.__name__} did not propagate")

    def assert_same(self, got, expected, what):
        """Dtype, shape, layout, device type and exact values against the CPU reference ``expected``."""
        if expected.dtype in FLOAT8_DTYPES:
            self.assertIs(got.dtype, expected.dtype, f"{what}: dtype")
            got, expected = got.detach().to(torch.float64), expected.to(torch.float64)
        self.assert_tensor(got, expected, what, device=DEVICE)

    def assert_output(self, got, expected, tracked, what):
        """``got`` equals ``expected`` and records autograd history iff ``tracked``."""
        self.assert_same(got, expected, what)
        self.assertIs(got.requires_grad, tracked, f"{what}: requires_grad")
        self.assertIs(got.grad_fn is not None, tracked, f"{what}: has a grad_fn")

    def in_cloned_region(self, mode, compute, what):
        """``compute()`` inside ``with set_grad_enabled(mode).clone():`` entered from the other mode."""
        with torch.set_grad_enabled(not mode):
            with cloned(mode):
                self.assert_mode(mode, f"{what}: inside the cloned region")
                result = compute()
            self.assert_mode(not mode, f"{what}: right after the cloned region")
        return result

    def assert_untracked_backward_refused(self, output, leaf, what):
        with self.assert_raises_exactly(RuntimeError, f"{what}: gradient of an untracked result",
                                        match="does not require grad"):
            torch.autograd.grad(output, leaf, torch.ones_like(output))


class TestGradModeSwitchForms(GradModeCase):
    """Every switch as constructed object, context manager, decorator and generator decorator, and nested."""

    def test_construction_switches_only_set_grad_enabled(self):
        """Building set_grad_enabled(m) or its clone switches to m at once, and it stays after the object is
        dropped; building no_grad()/enable_grad() or their clones switches nothing."""
        for label, make, inside, switches in SWITCHES:
            for start in STARTS:
                with self.subTest(f"{label}, start={start}"), torch.set_grad_enabled(start):
                    made = make()
                    if switches:
                        self.assertIs(type(made), grad_mode.set_grad_enabled, f"type of {label}")
                        self.assertIs(made.mode, inside, f".mode of {label}")
                    del made
                    expected = inside if switches else start
                    self.assert_mode(expected, f"after building and dropping {label}")
                    self.assertIs(tracks(), expected, f"result on {DEVICE} records history after {label}")

    def test_context_manager_sets_mode_and_restores(self):
        """``with switch as bound``: bound is None, results follow the mode, the start is back on exit,
        also when an Exception or a BaseException leaves the block."""
        for label, make, inside, _ in SWITCHES:
            for start in STARTS:
                with self.subTest(f"{label}, start={start}"), torch.set_grad_enabled(start):
                    with make() as bound:
                        self.assertIsNone(bound, f"value bound by with {label} as ...")
                        self.assert_mode(inside, f"inside with {label}")
                        self.assertIs(tracks(), inside, f"result on {DEVICE} records history inside {label}")
                        made = torch.ones(2, device=DEVICE, requires_grad=True)
                        self.assertTrue(made.requires_grad and made.is_leaf, f"factory leaf inside {label}")
                    self.assert_mode(start, f"right after with {label}")

                    def raise_inside(exc_type):
                        with make():
                            raise exc_type

                    self.assert_restored_after_raise(raise_inside, start, f"with {label}")

    def test_decorator_runs_each_call_in_mode(self):
        """A decorated function: decorating changes nothing; each call runs in the mode with arguments,
        keywords and result passed through and metadata kept; the caller's mode (whichever it is at call
        time) is back after a return, an Exception or a BaseException."""
        for label, decorate, inside in DECORATORS:
            for start in STARTS:
                with self.subTest(f"{label}, start={start}"), torch.set_grad_enabled(start):
                    def scale(x, factor, *, offset=0.0):
                        """Scale x and shift it."""
                        return x * factor + offset, torch.is_grad_enabled()

                    decorated = decorate(scale)
                    self.assert_mode(start, f"right after decorating with {label}")
                    self.assertEqual(decorated.__name__, "scale")
                    self.assertEqual(decorated.__doc__, "Scale x and shift it.")
                    self.assertIs(decorated.__wrapped__, scale, f"__wrapped__ of a function decorated with {label}")
                    x = torch.tensor([0.5, -1.25, 2.0], device=DEVICE, requires_grad=True)
                    for caller in (start, not start):
                        with torch.set_grad_enabled(caller):
                            y, seen = decorated(x, 2.0, offset=1.0)
                            self.assert_mode(caller, f"right after a call made with grad={caller}")
                        self.assertIs(seen, inside, f"grad mode inside the function decorated with {label}")
                        self.assertIs(y.requires_grad, inside, f"requires_grad of the result of {label}")
                        self.assert_tensor(y, torch.tensor([2.0, -1.5, 5.0]), f"x * 2 + 1 from {label}", device=DEVICE)
                    y, _ = decorated(x, factor=3.0)
                    self.assert_tensor(y, torch.tensor([1.5, -3.75, 6.0]), f"x * 3 (keyword) from {label}",
                                       device=DEVICE)

                    def fail(exc_type):
                        self.assert_mode(inside, f"inside the raising function decorated with {label}")
                        raise exc_type

                    self.assert_restored_after_raise(decorate(fail), start, f"function decorated with {label}")

    def test_decorated_generator_runs_each_step_in_mode(self):
        """A decorated generator: every step (next, send, throw, close) runs in the mode, the caller's mode
        is back between steps, and the generator's return value is kept."""
        for label, decorate, inside in DECORATORS:
            for start in STARTS:
                with self.subTest(f"{label}, start={start}"), torch.set_grad_enabled(start):
                    seen = []

                    @decorate
                    def steps():
                        try:
                            received = yield tracks()
                            seen.append(("after send", torch.is_grad_enabled()))
                            try:
                                yield received
                            except Boom:
                                seen.append(("after throw", torch.is_grad_enabled()))
                            yield tracks()
                            return "done"
                        finally:
                            seen.append(("finally", torch.is_grad_enabled()))

                    gen = steps()
                    self.assertTrue(inspect.isgenerator(gen), f"{label} on a generator function gives a generator")
                    self.assert_mode(start, "after creating the generator")
                    self.assertIs(next(gen), inside, "requires_grad computed in the first step")
                    self.assert_mode(start, "between steps")
                    with torch.set_grad_enabled(not start):
                        self.assertEqual(gen.send("sent"), "sent")
                        self.assert_mode(not start, "between steps (the caller switched mode)")
                    self.assertIs(gen.throw(Boom), inside, "requires_grad computed after the thrown exception")
                    self.assert_mode(start, "between steps (after throw)")
                    with self.assertRaises(StopIteration) as caught:
                        next(gen)
                    self.assertEqual(caught.exception.value, "done")
                    closed = steps()
                    next(closed)
                    closed.close()
                    self.assert_mode(start, "after closing a generator")
                    self.assertEqual(seen, [("after send", inside), ("after throw", inside), ("finally", inside),
                                            ("finally", inside)])

    def test_nested_context_managers_in_every_combination(self):
        """The inner block sets its mode; leaving it (also by an exception) restores the outer one's."""
        for (outer, make_outer, outer_mode, _), (inner, make_inner, inner_mode, _) in itertools.product(
                NESTED_SWITCHES, NESTED_SWITCHES):
            for start in STARTS:
                with self.subTest(f"{outer} around {inner}, start={start}"), torch.set_grad_enabled(start):
                    with make_outer():
                        with make_inner():
                            self.assert_mode(inner_mode, "inside the inner block")
                            self.assertIs(tracks(), inner_mode, "result recorded in the inner block")
                        self.assert_mode(outer_mode, "right after the inner block")
                        with self.assert_raises_exactly(Boom, "Boom in the inner block"), make_inner():
                            raise Boom
                        self.assert_mode(outer_mode, "right after the inner block raised")
                    self.assert_mode(start, "right after the outer block")

    def test_nested_decorators_in_every_combination(self):
        """A decorated function calling another: each runs in its mode, each return restores the caller's."""
        for (outer, decorate_outer, outer_mode), (inner, decorate_inner, inner_mode) in itertools.product(
                NESTED_DECORATORS, NESTED_DECORATORS):
            for start in STARTS:
                with self.subTest(f"{outer} calling {inner}, start={start}"), torch.set_grad_enabled(start):
                    seen = []

                    @decorate_inner
                    def inner_call(fail):
                        seen.append(("inner", torch.is_grad_enabled()))
                        if fail:
                            raise Boom
                        return tracks()

                    @decorate_outer
                    def outer_call():
                        seen.append(("inner result", inner_call(False)))
                        seen.append(("after inner returned", torch.is_grad_enabled()))
                        with self.assert_raises_exactly(Boom, "the inner call raising"):
                            inner_call(True)
                        seen.append(("after inner raised", torch.is_grad_enabled()))
                        return tracks()

                    self.assertIs(outer_call(), outer_mode, "result recorded in the outer function")
                    self.assert_mode(start, "right after the outer function returned")
                    self.assertEqual(seen, [("inner", inner_mode), ("inner result", inner_mode),
                                            ("after inner returned", outer_mode), ("inner", inner_mode),
                                            ("after inner raised", outer_mode)])

    def test_recursive_decorated_function_keeps_the_mode_at_every_level(self):
        """A decorated function calling itself (each call enters a fresh clone of the decorator's object): every
        level runs in the mode, read after its inner call returned (or raised) and before it returns; the
        caller's mode is back after the outermost call."""
        for label, decorate, inside in DECORATORS:
            for start in STARTS:
                with self.subTest(f"{label}, start={start}"), torch.set_grad_enabled(start):
                    @decorate
                    def recurse(depth):
                        if depth == 0:
                            raise Boom
                        try:
                            seen = recurse(depth - 1)
                        except Boom:
                            seen = [("after the innermost raised", torch.is_grad_enabled())]
                        return seen + [(depth, torch.is_grad_enabled(), tracks())]

                    self.assert_value(recurse(3), [("after the innermost raised", inside), (1, inside, inside),
                                                   (2, inside, inside), (3, inside, inside)],
                                      f"(depth, grad mode, result tracked) per level of a function decorated with "
                                      f"{label}, read after its inner call")
                    self.assert_mode(start, f"right after the outermost call decorated with {label}")

    def test_reentering_one_switch_object_inside_itself(self):
        """``with s: with s:`` for one object. no_grad/enable_grad save the mode at each enter, so the inner enter
        overwrites the saved start: upstream leaves grad OFF after a re-entered no_grad that started on (and ON
        after a re-entered enable_grad that started off). set_grad_enabled and its clone saved the mode at
        construction: both exits restore the start, the inner one already while the outer block is open."""
        objects = (("no_grad()", torch.no_grad, lambda start: (False, False, False)),
                   ("no_grad().clone()", lambda: torch.no_grad().clone(), lambda start: (False, False, False)),
                   ("enable_grad()", torch.enable_grad, lambda start: (True, True, True)),
                   *((f"set_grad_enabled({mode})", lambda mode=mode: unswitched(mode),
                      lambda start, mode=mode: (mode, start, start)) for mode in MODES),
                   *((f"set_grad_enabled({mode}).clone()", lambda mode=mode: cloned(mode),
                      lambda start, mode=mode: (mode, start, start)) for mode in MODES))
        for label, make, modes in objects:
            for start in STARTS:
                with self.subTest(f"{label}, start={start}"), torch.set_grad_enabled(start):
                    switch, seen = make(), []
                    torch.set_grad_enabled(start)  # set_grad_enabled(m).clone() switched; its saved mode is start
                    try:
                        with switch:
                            with switch:
                                seen.append(torch.is_grad_enabled())
                            seen.append(torch.is_grad_enabled())
                        seen.append(torch.is_grad_enabled())
                    finally:
                        torch.set_grad_enabled(start)  # undo upstream's quirk before the next case
                    self.assert_value(tuple(seen), modes(start), f"grad mode (inside both, after the inner block, "
                                                                 f"after the outer block) of {label} re-entered")

    def test_plain_call_inside_block_is_undone_on_exit(self):
        """set_grad_enabled(m) called as a plain function inside a block is replaced on exit by the mode the
        block restores."""
        for label, make, inside, _ in SWITCHES:
            for start in STARTS:
                with self.subTest(f"{label}, start={start}"), torch.set_grad_enabled(start):
                    with make():
                        torch.set_grad_enabled(not inside)
                        self.assert_mode(not inside, "after the plain call inside the block")
                        self.assertIs(tracks(), not inside, "result recorded after the plain call")
                    self.assert_mode(start, f"right after with {label}")


class TestSetGradEnabledClone(GradModeCase):
    """torch.autograd.grad_mode.set_grad_enabled.clone: a new object that switches at once."""

    def test_clone_switches_at_construction_and_leaves_the_original_untouched(self):
        """For originals built positionally or by keyword, in either mode, cloned (method or unbound form)
        in either mode: clone() switches to .mode at once and returns a new set_grad_enabled with the same
        .mode; it restores the mode current at clone() time, a clone of it the mode current at that clone,
        and the original still restores the mode it was built in."""
        builds = (("positional", lambda mode: torch.set_grad_enabled(mode)),
                  ("keyword", lambda mode: torch.set_grad_enabled(mode=mode)))
        forms = (("original.clone()", lambda original: original.clone()),
                 ("set_grad_enabled.clone(original)", grad_mode.set_grad_enabled.clone))
        for mode, built_in, cloned_in, (build_label, build), (form, clone) in itertools.product(
                MODES, STARTS, STARTS, builds, forms):
            label = f"{build_label} mode={mode} built with grad={built_in}, {form} with grad={cloned_in}"
            with self.subTest(label), torch.set_grad_enabled(built_in):
                original = build(mode)
                self.assert_mode(mode, "right after building the original")
                torch.set_grad_enabled(cloned_in)
                copy = clone(original)
                self.assert_mode(mode, "right after clone()")
                self.assertIsNot(copy, original, "clone() returns a new object")
                self.assertIs(type(copy), grad_mode.set_grad_enabled, "type of the clone")
                self.assertIs(copy.mode, mode, ".mode of the clone")
                self.assertIs(original.mode, mode, ".mode of the original after clone()")
                again = copy.clone()
                self.assertIsNot(again, copy, "clone() of a clone returns a new object")
                self.assertIs(again.mode, mode, ".mode of the clone of a clone")
                torch.set_grad_enabled(not mode)
                with again:
                    self.assert_mode(mode, "inside the clone of a clone")
                self.assert_mode(mode, "after the clone of a clone: the mode current at its clone()")
                torch.set_grad_enabled(not cloned_in)
                with copy:
                    self.assert_mode(mode, "inside the clone")
                self.assert_mode(cloned_in, "after the clone: the mode current at clone()")
                torch.set_grad_enabled(not built_in)
                with original:
                    self.assert_mode(mode, "inside the original")
                self.assert_mode(built_in, "after the original: the mode it was built in")

    def test_no_grad_and_enable_grad_clones_switch_nothing(self):
        """no_grad().clone() / enable_grad().clone() are new objects of the same class (built as the class)."""
        for make in (torch.no_grad, torch.enable_grad):
            for start in STARTS:
                with self.subTest(f"{make.__name__}, start={start}"), torch.set_grad_enabled(start):
                    original = make()
                    copy = original.clone()
                    self.assertIsNot(copy, original, f"{make.__name__}().clone() returns a new object")
                    self.assertIs(type(copy), make, f"type of {make.__name__}().clone()")
                    self.assert_mode(start, f"after {make.__name__}().clone()")

    def test_identity_and_repr(self):
        """torch.set_grad_enabled is torch.autograd.grad_mode.set_grad_enabled, a class; repr/str name the
        mode from torch 2.9 (pytorch#155681), an object repr before."""
        self.assertIs(torch.set_grad_enabled, grad_mode.set_grad_enabled, "torch.set_grad_enabled")
        self.assertIs(torch.autograd.set_grad_enabled, grad_mode.set_grad_enabled, "torch.autograd.set_grad_enabled")
        self.assertTrue(inspect.isclass(grad_mode.set_grad_enabled), "set_grad_enabled is a class")
        for mode in MODES:
            with self.subTest(f"mode={mode}"), torch.set_grad_enabled(not mode):
                original = unswitched(mode)
                if torch_version_at_least("2.9"):
                    text = f"torch.autograd.grad_mode.set_grad_enabled(mode={mode})"
                    self.assertEqual((repr(original), str(original)), (text, text))
                    self.assertEqual(repr(original.clone()), text)
                else:
                    prefix = "<torch.autograd.grad_mode.set_grad_enabled object at 0x"
                    self.assertTrue(repr(original).startswith(prefix), f"repr on torch < 2.9: {original!r}")

    def test_repeated_use_does_not_accumulate(self):
        """Ten clone/enter/exit rounds, a clone entered three times and ten decorated calls from alternating
        caller modes each end in the caller's mode; the clones stay distinct and the original unchanged."""
        for mode in MODES:
            for start in STARTS:
                with self.subTest(f"mode={mode}, start={start}"), torch.set_grad_enabled(start):
                    original = unswitched(mode)
                    copies = []
                    for round_ in range(10):
                        with original.clone():
                            self.assert_mode(mode, f"inside round {round_}")
                        self.assert_mode(start, f"after round {round_}")
                        copies.append(original.clone())
                        torch.set_grad_enabled(start)
                    self.assertEqual(len(set(map(id, copies))), 10)
                    self.assertEqual([copy.mode for copy in copies], [mode] * 10)
                    reused = cloned(mode)
                    for round_ in range(3):
                        with reused:
                            self.assert_mode(mode, f"inside the reused clone, round {round_}")
                        self.assert_mode(start, f"after the reused clone, round {round_}")
                    decorated = original.clone()(torch.is_grad_enabled)
                    for round_, caller in enumerate([start, not start] * 5):
                        with torch.set_grad_enabled(caller):
                            self.assertIs(decorated(), mode, f"grad mode inside decorated call {round_}")
                            self.assert_mode(caller, f"after decorated call {round_}")
                    self.assertIs(original.mode, mode, ".mode of the original after all rounds")

    def test_decorated_methods_and_class(self):
        """A clone decorating an instance method, a staticmethod and a classmethod runs each call in mode;
        decorating a class warns (FutureWarning) and turns it into a function that constructs in mode."""
        for mode in MODES:
            with self.subTest(f"mode={mode}"), torch.set_grad_enabled(not mode):
                class Model:
                    factor = 2.0

                    @cloned(mode)
                    def method(self, x):
                        return x * self.factor, torch.is_grad_enabled()

                    @staticmethod
                    @cloned(mode)
                    def static(x):
                        return x * 3.0, torch.is_grad_enabled()

                    @classmethod
                    @cloned(mode)
                    def klass(cls, x):
                        return x * cls.factor * 2.0, torch.is_grad_enabled()

                    def __init__(self):
                        self.grad_mode = torch.is_grad_enabled()

                self.assert_mode(not mode, "right after the class body decorated three methods")
                for name, call, factor in (("method", Model().method, 2.0), ("staticmethod", Model.static, 3.0),
                                           ("classmethod", Model.klass, 4.0)):
                    y, inside = call(torch.tensor([0.5, -1.25], device=DEVICE, requires_grad=True))
                    self.assertIs(inside, mode, f"grad mode inside the decorated {name}")
                    self.assert_mode(not mode, f"right after calling the decorated {name}")
                    self.assertIs(y.requires_grad, mode, f"requires_grad of the {name}'s result")
                    self.assert_tensor(y, torch.tensor([0.5, -1.25]) * factor, f"the {name}'s result", device=DEVICE)
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    decorated = cloned(mode)(Model)
                self.assertEqual([w.category for w in caught], [FutureWarning])
                self.assertIn("Decorating classes is deprecated", str(caught[0].message))
                self.assert_mode(not mode, "right after decorating the class")
                self.assertFalse(inspect.isclass(decorated), "the decorated class is no longer a class")
                made = decorated()
                self.assertIs(type(made), Model, "type built by the decorated class")
                self.assertIs(made.grad_mode, mode, "grad mode inside the decorated class's __init__")
                self.assert_mode(not mode, "right after constructing")

    def test_in_place_update_of_a_leaf(self):
        """Under a disabled clone a leaf is updated in place exactly once and stays a leaf; an enabled clone
        refuses the update (RuntimeError) and the gradient is taken at the updated values."""
        for start in STARTS:
            with self.subTest(f"start={start}"), torch.set_grad_enabled(start):
                weight = torch.tensor([0.5, -1.25, 2.0], device=DEVICE, requires_grad=True)
                version = weight._version
                with cloned(False):
                    weight.mul_(2.0)
                self.assertEqual(weight._version, version + 1)
                self.assert_tensor(weight, torch.tensor([1.0, -2.5, 4.0]), "leaf after mul_(2)", device=DEVICE)
                self.assertTrue(weight.requires_grad and weight.is_leaf and weight.grad_fn is None, "still a leaf")
                with cloned(True):
                    with self.assert_raises_exactly(RuntimeError, "in-place update of a leaf under enabled grad",
                                                    match="leaf Variable that requires grad"):
                        weight.mul_(2.0)
                    y = weight * weight
                self.assertEqual(weight._version, version + 1)
                y.backward(torch.ones_like(y))
                self.assert_tensor(weight.grad, torch.tensor([2.0, -5.0, 8.0]), "gradient at the updated values",
                                   device=DEVICE)

    def test_clone_inside_inference_mode(self):
        """Inside inference_mode an enabled clone turns grad mode on but results stay untracked inference
        tensors; leaving inference_mode restores the mode it was entered with, also after a plain clone()."""
        for mode in MODES:
            for start in STARTS:
                with self.subTest(f"mode={mode}, start={start}"), torch.set_grad_enabled(start):
                    x = torch.tensor([0.5, -1.25], device=DEVICE, requires_grad=True)
                    with torch.inference_mode():
                        self.assert_mode(False, "inside inference_mode")
                        original = unswitched(mode)
                        with original.clone():
                            self.assert_mode(mode, "inside the clone inside inference_mode")
                            self.assertTrue(torch.is_inference_mode_enabled(), "inference mode inside the clone")
                            y = x * 2.0
                        self.assert_mode(False, "after the clone's block inside inference_mode")
                        original.clone()  # left switched: leaving inference_mode must undo it
                        self.assert_mode(mode, "after a plain clone() inside inference_mode")
                    self.assert_mode(start, "right after inference_mode (the mode it was entered with)")
                    self.assertFalse(torch.is_inference_mode_enabled(), "inference mode after its block")
                    self.assert_output(y, torch.tensor([1.0, -2.5]), False, "x * 2 inside inference_mode")
                    self.assertTrue(y.is_inference(), "the result is an inference tensor")


class TestGradModeNeighbourModes(GradModeCase):
    """Each switch and its clone nested with inference mode, in every order, inference_mode(False) included."""

    def assert_state(self, leaf, state, what):
        """Inference mode, grad mode, and a result computed now: an inference tensor iff inference mode, tracked
        iff grad mode outside inference mode."""
        result = leaf * 2.0
        self.assert_value((torch.is_inference_mode_enabled(), torch.is_grad_enabled(), result.is_inference(),
                           result.requires_grad), (*state, state[0], state[1] and not state[0]),
                          f"{what}: (inference mode, grad mode, result is inference, result requires grad)")

    def enter_all(self, leaf, levels, state, trail):
        """Enter ``levels`` one in another, checking the state before, inside, after the inner block and after."""
        if not levels:
            return
        label, make, effect = levels[0]
        where = f"{trail} > {label}" if trail else label
        self.assert_state(leaf, state, f"before entering {where}")
        with make():
            inside = effect(state)
            self.assert_state(leaf, inside, f"inside {where}")
            self.enter_all(leaf, levels[1:], inside, where)
            self.assert_state(leaf, inside, f"inside {where}, after its inner blocks")
        self.assert_state(leaf, state, f"after leaving {where}")

    def test_switches_nested_with_inference_mode_in_every_order(self):
        """no_grad, enable_grad, set_grad_enabled(m) and the clones inside inference_mode(), inference_mode()
        inside each, inference_mode(False) inside either (it turns grad on, also under no_grad) and each inside
        inference_mode(False): the state follows the innermost switch and every exit restores the outer state."""
        for (label, make, mode, _), (order, nest) in itertools.product(SWITCHES[:8], NEIGHBOUR_NESTS):
            for start in STARTS:
                with self.subTest(f"{order.replace('S', label)}, start={start}"), torch.set_grad_enabled(start):
                    leaf = torch.tensor([0.5, -1.25], device=DEVICE, requires_grad=True)
                    self.enter_all(leaf, nest(grad_level(label, make, mode)), (False, start), "")
                    self.assertFalse(leaf.is_inference(), "the leaf made outside inference mode")


def region_vehicle(values, factor, weight, dtype, arithmetic):
    """The helper ops of the dtype test on the device, outside any grad mode (its vehicle, not the API)."""
    x = values.to(DEVICE)
    widened = x.to(wide(dtype))
    nonzero = x != 0
    results = [x * factor.to(DEVICE) if arithmetic else x.clone(), nonzero.sum(), widened.real.argmax(),
               nonzero.nonzero()]
    if arithmetic:
        results.append(x * weight.to(DEVICE))
    return results


class TestCloneRegionDtypes(GradModeCase):
    """Results computed under a cloned mode, for every dtype: every output, history and gradients."""

    def test_outputs_and_gradients_per_dtype(self):
        """x * k (x.clone() for the barebones dtypes), x.to(wide), x != 0, its count, argmax and nonzero
        indices and x * w (w a float32 leaf) under set_grad_enabled(m).clone(): dtypes (x * w by
        torch.promote_types; float8 refuses to promote with RuntimeError) and values; history only for
        floating/complex outputs when m; gradients after the region; a leaf built in the region requires
        grad whatever m, and only for floating/complex dtypes."""
        shape = (2, 3, 4)
        coords = list(itertools.product(*map(range, shape)))
        weight = pattern(torch.float32, shape, salt=2)
        for dtype in DTYPES:
            grads, arithmetic = differentiable(dtype), dtype not in BAREBONES_DTYPES
            promoted = torch.promote_types(dtype, torch.float32) if arithmetic else None
            values, factor = pattern(dtype, shape), pattern(dtype, shape, salt=1)
            reference, reference_k = values.to(wide(dtype)), factor.to(wide(dtype))
            mask = [v != 0 for v in reference.flatten().tolist()]
            real = reference.real.flatten().tolist()
            expected = (
                ("x * k", (reference * reference_k).to(dtype), grads) if arithmetic else ("x.clone()", values, grads),
                ("x.to(wide)", reference, grads),
                ("x != 0", torch.tensor(mask).reshape(shape), False),
                ("(x != 0).sum()", torch.tensor(sum(mask)), False),
                ("x.to(wide).real.argmax()", torch.tensor(max(range(len(real)), key=real.__getitem__)), False),
                ("(x != 0).nonzero()", torch.tensor([c for c, m in zip(coords, mask) if m]).reshape(-1, 3), False),
                ("x * w", promoted and (reference * weight.to(reference.dtype)).to(promoted), True),
            )
            same_grad = torch.conj_physical(reference_k).to(dtype) if arithmetic else torch.ones(shape, dtype=dtype)
            for mode in MODES:
                what = f"{dtype}, mode={mode}"
                with self.subTest(what):
                    skip_unless_vehicle(self, f"the region's helper ops on {dtype}",
                                        lambda: region_vehicle(values, factor, weight, dtype, arithmetic))
                    k = factor.to(DEVICE)

                    def compute():
                        if grads:
                            made = torch.zeros(2, dtype=dtype, device=DEVICE, requires_grad=True)
                            self.assertTrue(made.requires_grad and made.is_leaf, "factory leaf in the region")
                        else:
                            with self.assert_raises_exactly(RuntimeError, f"{what}: requires_grad=True",
                                                            match="floating point"):
                                torch.zeros(2, dtype=dtype, device=DEVICE, requires_grad=True)
                            with self.assert_raises_exactly(RuntimeError, f"{what}: requires_grad_()",
                                                            match="floating point"):
                                torch.zeros(2, dtype=dtype, device=DEVICE).requires_grad_()
                        x, w = on_device(values, grads), on_device(weight, True)
                        widened = x.to(wide(dtype), copy=True)
                        nonzero = x != 0
                        outputs = (x * k if arithmetic else x.clone(), widened, nonzero, nonzero.sum(),
                                   widened.real.argmax(), nonzero.nonzero())
                        if promoted is not None:
                            return x, w, outputs + (x * w,)
                        if dtype in FLOAT8_DTYPES:  # refused before any kernel runs
                            with self.assert_raises_exactly(RuntimeError, f"{what}: x * w",
                                                            match="Promotion for Float8"):
                                x * w
                        return x, w, outputs

                    x, w, outputs = self.in_cloned_region(mode, compute, what)
                    for got, (name, want, tracked) in zip(outputs, expected):
                        self.assert_output(got, want, mode and tracked, f"{what}: {name}")
                    if not mode:
                        if grads:
                            self.assert_untracked_backward_refused(outputs[0], x, f"{what}: {expected[0][0]}")
                        if promoted is not None:
                            self.assert_untracked_backward_refused(outputs[-1], w, f"{what}: x * w")
                        continue
                    if grads:
                        gradient, = torch.autograd.grad(outputs[0], x, torch.ones_like(outputs[0]))
                        self.assert_same(gradient, same_grad, f"{what}: gradient of {expected[0][0]}")
                        gradient, = torch.autograd.grad(outputs[1], x, torch.ones_like(outputs[1]))
                        self.assert_same(gradient, torch.ones(shape, dtype=dtype), f"{what}: d(x.to(wide))/dx")
                    if promoted is not None:
                        gradient, = torch.autograd.grad(outputs[-1], w, torch.ones_like(outputs[-1]))
                        self.assert_same(gradient, reference.real.float(), f"{what}: d(x * w)/dw")


def empty_strided_like(strides):
    """A leaf factory: the values copied into a fresh (not a view) tensor with ``strides``."""
    return lambda values: torch.empty_strided(values.shape, strides, dtype=values.dtype).copy_(values)


def identity(x):
    return x


def product_case(shape, strided=None, salt=0):
    """float32 CPU values for a leaf of ``shape``, a factor k, and the closed forms of ``view(leaf) * k`` and
    of its gradient (k scattered back), where the view is given by its ``(size, stride, offset)`` on a
    contiguous tensor of ``shape`` (None: the leaf's own values), applied to an index map."""
    index = torch.arange(math.prod(shape)).reshape(shape)
    index = index if strided is None else index.as_strided(*strided)
    values, k = pattern(torch.float32, shape, salt), pattern(torch.float32, index.shape, salt + 1)
    expected_grad = torch.zeros(values.numel()).index_add_(0, index.flatten(), k.flatten()).reshape(shape)
    return values, k, values.flatten()[index] * k, expected_grad


# (label, leaf shape, leaf from contiguous CPU values, taken of the leaf in the region, memory format it has,
# the view as (size, stride, offset) of a contiguous tensor: the closed form of what it selects).
STRIDED_LAYOUTS = (
    ("contiguous leaf", (2, 3, 4), identity, identity, torch.contiguous_format, None),
    ("channels_last leaf", (2, 3, 4, 5), lambda v: v.contiguous(memory_format=torch.channels_last), identity,
     torch.channels_last, None),
    ("channels_last_3d leaf", (2, 3, 4, 5, 6), lambda v: v.contiguous(memory_format=torch.channels_last_3d),
     identity, torch.channels_last_3d, None),
    ("transposed leaf", (3, 4), empty_strided_like((1, 3)), identity, None, None),
    ("permuted view", (2, 3, 4), identity, lambda x: x.permute(2, 0, 1), None, ((4, 2, 3), (1, 12, 4), 0)),
    ("view sliced with steps", (2, 5, 4), identity, lambda x: x[:, ::2, 1::2], None, ((2, 3, 2), (20, 8, 2), 1)),
    ("expanded view (stride 0)", (2, 3, 4), identity, lambda x: x[:, :1].expand(2, 5, 4), None,
     ((2, 5, 4), (12, 0, 1), 0)),
    ("channels_last copy", (2, 3, 4, 5), identity, lambda x: x.contiguous(memory_format=torch.channels_last),
     torch.channels_last, None),
)
# (label, view of a complex leaf, dtype of k, closed forms of the view's values and of d(sum(view * k))/dx,
# flag the view carries).
COMPLEX_VIEWS = (
    ("conj view", lambda x: x.conj(), torch.complex64, torch.conj_physical, lambda k: k, torch.Tensor.is_conj),
    ("neg view", lambda x: x.conj().imag, torch.float32, lambda r: -r.imag, lambda k: -1j * k, torch.Tensor.is_neg),
)
# (label, dtype, shape, view): every view above.
VIEWS = tuple((label, torch.float32, shape, view) for label, shape, _, view, _, _ in STRIDED_LAYOUTS[4:7]) + tuple(
    (label, torch.complex64, (2, 3), view) for label, view, *_ in COMPLEX_VIEWS)
# (layout, conversion of a strided tensor, accumulates into .grad).
SPARSE_LAYOUTS = (
    (torch.sparse_coo, lambda t: t.to_sparse(), True),
    (torch.sparse_csr, lambda t: t.to_sparse_csr(), True),
    (torch.sparse_csc, lambda t: t.to_sparse_csc(), False),
    (torch.sparse_bsr, lambda t: t.to_sparse_bsr((1, 2)), False),
    (torch.sparse_bsc, lambda t: t.to_sparse_bsc((1, 2)), False),
)


class CloneRegionCase(GradModeCase):

    def check_product(self, mode, values, make_leaf, take, k, expected, expected_grad, what, check=None):
        """``take(leaf) * k`` under a cloned mode equals ``expected`` and records history iff ``mode``; when it
        does, backward after the region accumulates ``expected_grad`` into ``leaf.grad`` with the leaf's
        strides, otherwise it is refused. ``check(leaf, taken, result)`` adds layout checks."""
        def compute():
            leaf = make_leaf(values).to(DEVICE, copy=True).requires_grad_()
            taken = take(leaf)
            return leaf, taken, taken * k.to(DEVICE)

        leaf, taken, result = self.in_cloned_region(mode, compute, what)
        self.assertTrue(leaf.is_leaf and not leaf._is_view(), f"{what}: the leaf is a leaf, not a view")
        self.assert_output(result, expected, mode, f"{what}: result")
        if check is not None:
            check(leaf, taken, result)
        if not mode:
            self.assert_untracked_backward_refused(result, leaf, what)
            return
        result.backward(torch.ones_like(result))
        self.assert_same(leaf.grad, expected_grad, f"{what}: gradient")
        self.assertEqual(leaf.grad.stride(), leaf.stride())


class TestCloneRegionLayouts(CloneRegionCase):
    """Memory formats, strided and complex views, views taken under the disabled mode, sparse layouts."""

    def test_memory_formats_and_strided_views(self):
        """Leaves in every memory format of their rank and transposed; permuted, step-sliced and expanded
        views and a channels_last copy taken in the region: values (closed form through an index map),
        history iff mode, gradients scattered back in the leaf's strides; outputs keep the leaf's format."""
        for label, shape, make_leaf, take, memory_format, strided in STRIDED_LAYOUTS:
            values, k, expected, expected_grad = product_case(shape, strided)
            if take is identity:  # k in the leaf's layout: the elementwise result keeps that layout
                k = make_leaf(k)

            def check(leaf, taken, result, take=take, memory_format=memory_format, label=label,
                      strides=make_leaf(values).stride()):
                self.assertEqual(leaf.stride(), strides)
                if take is identity:
                    self.assertEqual(result.stride(), leaf.stride())
                if memory_format is not None:
                    self.assertTrue(taken.is_contiguous(memory_format=memory_format), f"{label} is {memory_format}")

            for mode in MODES:
                with self.subTest(f"{label}, mode={mode}"):
                    self.check_product(mode, values, make_leaf, take, k, expected, expected_grad,
                                       f"{label}, mode={mode}", check)

    def test_conj_and_neg_views(self):
        """Conj and neg views of a complex leaf taken in the region keep their flag; values and gradients
        follow the closed forms (conj: grad = k; neg = -imag: grad = -i*k), history iff mode."""
        values = pattern(torch.complex64, (2, 3))
        for label, take, k_dtype, value_of, grad_of, flag in COMPLEX_VIEWS:
            k = pattern(k_dtype, (2, 3), salt=1)
            expected = (value_of(values.to(torch.complex128)) * k.to(wide(k_dtype))).to(k_dtype)
            expected_grad = grad_of(k.to(torch.complex128)).to(torch.complex64)

            def check(leaf, taken, result, flag=flag, label=label):
                self.assertTrue(flag(taken), f"{label} has its flag set")

            for mode in MODES:
                with self.subTest(f"{label}, mode={mode}"):
                    self.check_product(mode, values, identity, take, k, expected, expected_grad,
                                       f"{label}, mode={mode}", check)

    def test_views_taken_under_disabled_mode(self):
        """A view of a leaf taken under a disabled clone keeps requires_grad without a grad_fn and no gradient
        reaches the leaf through it; a view of a non-leaf taken so is refused an in-place update under an
        enabled clone (RuntimeError), as upstream does."""
        for label, dtype, shape, take in VIEWS:
            for start in STARTS:
                with self.subTest(f"{label}, start={start}"), torch.set_grad_enabled(start):
                    leaf = on_device(pattern(dtype, shape), True)
                    with cloned(True):
                        base = leaf * 1  # a tracked non-leaf
                    with cloned(False):
                        view = take(leaf)
                        view_of_result = take(base)
                    self.assertTrue(view.requires_grad and view.grad_fn is None,
                                    f"{label} taken under disabled grad: requires_grad without grad_fn")
                    with cloned(True):
                        result = view * 2
                        self.assertTrue(result.requires_grad, f"{label}: an op on it under enabled grad records")
                        with self.assert_raises_exactly(RuntimeError, f"{label}: in-place update under enabled grad",
                                                        match="view was created in no_grad mode"):
                            view_of_result.mul_(2)
                    result.backward(torch.ones_like(result))
                    self.assertIsNone(leaf.grad, f"{label}: gradient reached the leaf through a no-grad view")

    def test_sparse_layouts(self):
        """COO/CSR/CSC/BSR/BSC leaves in every dtype of all_types_and_complex_and(half, bfloat16, bool): s * 2
        keeps the layout (bool promotes to int64) and (s * 2).to_dense() is strided, both tracked iff mode for
        floating/complex leaves; autograd.grad gives a gradient of the leaf's layout and dtype; .grad accumulates
        only for COO and CSR. Integer and bool leaves refuse requires_grad_() (RuntimeError) and stay untracked.
        Leaves are built on the CPU and moved; s * 2 and the densified half are subtests of their own."""
        dense = torch.tensor([[0.0, 1.0, 0.0, 0.0, 2.0, 0.0], [3.0, 0.0, 0.0, 0.0, 0.0, 4.0]])
        stored = dense != 0
        blocks = stored.reshape(2, 3, 2).any(-1, keepdim=True).expand(2, 3, 2).reshape(2, 6)
        # PyTorch's TestCase turns sparse invariant checks on for every test; they cost tens of ms per COO tensor
        # and check nothing of the grad mode, so this test runs without them whichever base class runs it.
        with torch.sparse.check_sparse_tensor_invariants(enable=False), warnings.catch_warnings():
            warnings.filterwarnings("ignore", "Sparse CSR tensor support is in beta", UserWarning)
            self.check_sparse_layouts(dense, stored, blocks)

    def check_sparse_layouts(self, dense, stored, blocks):
        for (layout, convert, accumulates), dtype, mode in itertools.product(SPARSE_LAYOUTS, ARITHMETIC_DTYPES, MODES):
            stored_at = (blocks if layout in (torch.sparse_bsr, torch.sparse_bsc) else stored).to(dtype) * 2
            grads, values = differentiable(dtype), dense.to(dtype)
            what, leaf, scaled, result = f"{layout} {dtype}, mode={mode}", None, None, None
            moved, densified = (f"a {layout} {dtype} leaf built on the CPU, moved to {DEVICE}",
                                f"a {layout} {dtype} tensor densified on {DEVICE}")

            def move():
                return convert(values).to(DEVICE)
            with self.subTest(f"{what}: s * 2"):
                skip_unless_vehicle(self, moved, move)
                densifies = not vehicle_refusal(densified, lambda: move().to_dense())

                def compute():
                    leaf = move()
                    if grads:
                        leaf.requires_grad_()
                    else:
                        with self.assert_raises_exactly(RuntimeError, f"{what}: requires_grad_()",
                                                        match="floating point"):
                            leaf.requires_grad_()
                    scaled = leaf * 2
                    return leaf, scaled, scaled.to_dense() if densifies else None

                leaf, scaled, result = self.in_cloned_region(mode, compute, what)
                self.assert_output(scaled, convert(values * 2), mode and grads, f"{what}: s * 2")
            with self.subTest(f"{what}: (s * 2).to_dense() and gradients"):
                skip_unless_vehicle(self, moved, move)
                skip_unless_vehicle(self, densified, lambda: move().to_dense())
                self.assertIsNotNone(result, f"{what}: (s * 2).to_dense() computed in the region (see 's * 2')")
                self.assert_output(result, values * 2, mode and grads, f"{what}: (s * 2).to_dense()")
                if not (mode and grads):
                    self.assert_untracked_backward_refused(result, leaf, what)
                    continue
                gradient, = torch.autograd.grad(result, leaf, torch.ones_like(result), retain_graph=True)
                self.assert_same(gradient, convert(stored_at), f"{what}: gradient (layout, dtype, values)")
                if accumulates:
                    result.backward(torch.ones_like(result))
                    self.assert_same(leaf.grad, convert(stored_at), f"{what}: .grad (layout, dtype, values)")
                else:
                    with self.assert_raises_exactly(RuntimeError, f"{what}: accumulation into .grad",
                                                    match="do not have is_contiguous"):
                        result.backward(torch.ones_like(result))


class TestCloneRegionSizes(CloneRegionCase):
    """Distinct, square, zero-size, 0-d and size-1 inputs under a cloned mode."""

    # (label, shape, taken of the leaf in the region, the view as (size, stride, offset), see STRIDED_LAYOUTS).
    SIZES = (
        ("distinct sizes (2, 3, 4)", (2, 3, 4), identity, None),
        ("square (3, 3), transposed", (3, 3), lambda x: x.t(), ((3, 3), (1, 3), 0)),
        ("zero-size (0,)", (0,), identity, None),
        ("inner dim 0 (2, 0, 3)", (2, 0, 3), identity, None),
        ("0-d", (), identity, None),
        ("size-1 (1, 1)", (1, 1), identity, None),
    )

    def test_sizes(self):
        """Result shape and values, history iff mode and the gradient's shape, for every size class."""
        for label, shape, take, strided in self.SIZES:
            values, k, expected, expected_grad = product_case(shape, strided, salt=1)
            for mode in MODES:
                with self.subTest(f"{label}, mode={mode}"):
                    self.check_product(mode, values, identity, take, k, expected, expected_grad,
                                       f"{label}, mode={mode}")


class TestSetGradEnabledBadInput(GradModeCase):
    """Wrong mode values and signatures raise TypeError and leave the grad mode as it was."""

    BAD_MODES = (("int 0", lambda: 0), ("int 1", lambda: 1), ("float 1.0", lambda: 1.0), ("None", lambda: None),
                 ("str 'yes'", lambda: "yes"), ("list [True]", lambda: [True])) + tuple(
        (f"0-d {dtype} tensor", lambda dtype=dtype: torch.ones((), dtype=dtype, device=DEVICE)) for dtype in DTYPES)

    def test_non_bool_mode_raises_type_error(self):
        """set_grad_enabled(v), set_grad_enabled(mode=v) and clone() of an object whose .mode was set to v
        raise TypeError for a non-bool v; the grad mode and the object stay as they were."""
        for label, make_value in self.BAD_MODES:
            for start in STARTS:
                with self.subTest(f"{label}, start={start}"), torch.set_grad_enabled(start):
                    skip_unless_vehicle(self, f"making a {label}", make_value)
                    value = make_value()
                    with self.assert_raises_exactly(TypeError, f"set_grad_enabled({label})", match="must be bool"):
                        torch.set_grad_enabled(value)
                    self.assert_mode(start, f"after set_grad_enabled({label}) raised")
                    with self.assert_raises_exactly(TypeError, f"set_grad_enabled(mode={label})", match="must be bool"):
                        torch.set_grad_enabled(mode=value)
                    self.assert_mode(start, f"after set_grad_enabled(mode={label}) raised")
                    original = unswitched(not start)
                    original.mode = value
                    with self.assert_raises_exactly(TypeError, f"clone() with .mode = {label}", match="must be bool"):
                        original.clone()
                    self.assert_mode(start, f"after clone() with .mode = {label} raised")
                    self.assertIs(original.mode, value, ".mode of the original after the failed clone()")

    def test_wrong_signatures_raise_type_error(self):
        """No mode, two modes, an unknown keyword, or an argument to clone(): TypeError, grad mode unchanged."""
        for start in STARTS:
            with torch.set_grad_enabled(start):
                original = unswitched(not start)
                calls = (
                    ("set_grad_enabled()", lambda: torch.set_grad_enabled()),
                    ("set_grad_enabled(True, False)", lambda: torch.set_grad_enabled(True, False)),
                    (f"set_grad_enabled(enabled={not start})", lambda: torch.set_grad_enabled(enabled=not start)),
                    (f"clone({not start})", lambda: original.clone(not start)),
                    (f"clone(mode={not start})", lambda: original.clone(mode=not start)),
                )
                for label, call in calls:
                    with self.subTest(f"{label}, start={start}"):
                        with self.assert_raises_exactly(TypeError, label):
                            call()
                        self.assert_mode(start, f"after {label} raised")


class TestGradModeThreads(GradModeCase):
    """Grad mode belongs to a thread: a switch in one thread is invisible to the others."""

    def test_each_thread_has_its_own_mode(self):
        """A worker starts with grad enabled whatever the main thread's mode; a switch left in place in the
        worker (plain call, clone, entered no_grad) never reaches the main thread, and the main thread's
        clone never reaches the worker."""
        def entered(mode):
            (torch.enable_grad() if mode else torch.no_grad()).__enter__()

        switches = (("plain call", torch.set_grad_enabled), ("clone()", cloned), ("entered, never left", entered))
        for main_mode in MODES:
            for worker_mode in MODES:
                for label, switch in switches:
                    with self.subTest(f"main {main_mode}, worker {label} {worker_mode}"), torch.set_grad_enabled(True):
                        cloned(main_mode)

                        def worker():
                            initial = torch.is_grad_enabled()
                            switch(worker_mode)
                            return initial, torch.is_grad_enabled(), tracks()

                        seen = run_in_thread(worker)
                        self.assertEqual(seen, (True, worker_mode, worker_mode))
                        self.assert_mode(main_mode, "in the main thread after the worker switched")
                        self.assertIs(tracks(), main_mode, "result recorded in the main thread")

    def test_worker_runs_while_the_main_thread_switches(self):
        """Worker and main thread take turns (threading.Event hand-offs, so the interleaving is fixed): the worker
        reads its mode while the main thread is inside a clone, enters its own clone while the main thread stays
        inside, and reads it again after the main thread left: neither thread ever sees the other's switch."""
        for main_mode, worker_mode in itertools.product(MODES, MODES):
            for start in STARTS:
                with self.subTest(f"main clone {main_mode}, worker clone {worker_mode}, start={start}"), \
                        torch.set_grad_enabled(start):
                    self.check_interleaving(main_mode, worker_mode, start)

    def check_interleaving(self, main_mode, worker_mode, start):
        # worker ready, main switched, worker switched, main left, worker finished (stands in for the join)
        turns = [threading.Event() for _ in range(5)]
        seen, errors = [], []

        def hand_over(mine, theirs):
            mine.set()
            if not theirs.wait(10):
                raise TimeoutError("the other thread did not take its turn within 10 s")

        def worker():
            try:
                seen.append(("worker at start", torch.is_grad_enabled(), tracks()))
                hand_over(turns[0], turns[1])
                seen.append(("worker, main inside its clone", torch.is_grad_enabled(), tracks()))
                with cloned(worker_mode):
                    hand_over(turns[2], turns[3])
                    seen.append(("worker inside its clone, main left", torch.is_grad_enabled(), tracks()))
                seen.append(("worker after its clone", torch.is_grad_enabled(), tracks()))
            except BaseException as exc:  # handed to the main thread
                errors.append(exc)
                for turn in turns[:4]:
                    turn.set()
            finally:
                turns[4].set()

        # run_in_thread (the one thread runner) with no time to wait: it starts the worker and, as the worker is
        # still running, returns at once by raising TimeoutError; the Events below order the two threads.
        with self.assert_raises_exactly(TimeoutError, "starting the worker without waiting for it"):
            run_in_thread(worker, timeout=0)
        self.assertTrue(turns[0].wait(10), "the worker reached its first turn")
        with cloned(main_mode):
            hand_over(turns[1], turns[2])
            seen.append(("main inside its clone, worker inside its own", torch.is_grad_enabled(), tracks()))
        seen.append(("main after its clone, worker still inside its own", torch.is_grad_enabled(), tracks()))
        turns[3].set()
        self.assertTrue(turns[4].wait(10), "the worker finished")
        if errors:
            raise errors[0]
        self.assert_value(seen, [("worker at start", True, True), ("worker, main inside its clone", True, True),
                                 ("main inside its clone, worker inside its own", main_mode, main_mode),
                                 ("main after its clone, worker still inside its own", start, start),
                                 ("worker inside its clone, main left", worker_mode, worker_mode),
                                 ("worker after its clone", True, True)],
                          "(turn, grad mode, result tracked) in the order the threads took them")

    def test_decorator_made_in_one_thread_applies_in_another(self):
        """A function decorated with a clone in one thread runs in the mode when called in another, both
        ways, and leaves the calling thread's mode as it was."""
        for mode in MODES:
            for start in STARTS:
                with self.subTest(f"mode={mode}, start={start}"), torch.set_grad_enabled(start):
                    decorated = cloned(mode)(lambda: (torch.is_grad_enabled(), tracks()))

                    def call_in_worker():
                        torch.set_grad_enabled(not mode)
                        return decorated(), torch.is_grad_enabled()

                    self.assertEqual(run_in_thread(call_in_worker), ((mode, mode), not mode))
                    self.assert_mode(start, "in the main thread after the worker called")

                    def decorate_in_worker():
                        torch.set_grad_enabled(not start)
                        made = cloned(mode)(torch.is_grad_enabled)
                        return made, torch.is_grad_enabled()

                    made, worker_after = run_in_thread(decorate_in_worker)
                    self.assertIs(worker_after, not start, "the worker's mode after decorating")
                    self.assert_mode(start, "in the main thread after the worker decorated")
                    self.assertIs(made(), mode, "grad mode inside the call in the main thread")
                    self.assert_mode(start, "in the main thread after the call")


# ----------------------------------------------------------------------------------------- torch subsystems
Pair = collections.namedtuple("Pair", "first second")


class SwitchSubclass(grad_mode.set_grad_enabled):
    """A user's subclass: its clone must be of the subclass (upstream clones with ``self.__class__``)."""


class Doubler:
    """A callable object that is not a function."""

    def __call__(self, x):
        return x * 2.0


class Statics:
    @staticmethod
    def static(x):
        return x * 2.0

    @classmethod
    def klass(cls, x):
        return x * 2.0


def hooked_model():
    """Sequential(Linear(3, 2), Tanh) with forward pre-hooks and hooks on it and on its Linear recording grad mode."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.Tanh()).to(DEVICE)
    seen = []
    for name, module in (("model", model), ("linear", model[0])):
        module.register_forward_pre_hook(lambda m, args, name=name: seen.append((name, "pre", torch.is_grad_enabled())))
        module.register_forward_hook(
            lambda m, args, out, name=name: seen.append((name, "post", torch.is_grad_enabled(), out.requires_grad)))
    return model, seen


class TestCloneRegionSubsystems(GradModeCase):
    """The torch subsystems a cloned region's values pass through: autograd beyond first order, version counters,
    containers, nn.Module, autocast and default dtype, RNG, Python-level callables and copies, warnings."""

    def test_forward_mode_ad_ignores_the_cloned_mode(self):
        """Tangents of torch.autograd.forward_ad propagate in either mode; reverse history only when enabled."""
        import torch.autograd.forward_ad as fwad
        for mode in MODES:
            with self.subTest(mode=mode), fwad.dual_level():
                x = on_device(torch.tensor([1.5, -2.0, 0.25]), True)
                dual = fwad.make_dual(x, torch.ones_like(x))
                out = self.in_cloned_region(mode, lambda: dual * dual, f"dual x * x, mode={mode}")
                self.assert_same(fwad.unpack_dual(out).tangent, torch.tensor([3.0, -4.0, 0.5]), "tangent 2x")
                self.assertIs(out.requires_grad, mode, "reverse-mode history of the dual result")

    def test_second_order_gradients_and_torch_func_grad(self):
        """create_graph=True inside an enabled clone gives d2(x^3) = 6x from a disabled start; torch.func.grad
        of a function with a clone inside sees the clone's mode, also under an outer no_grad."""
        x = on_device(torch.tensor([1.5, -2.0, 0.5]), True)

        def second():
            first, = torch.autograd.grad((x ** 3).sum(), x, create_graph=True)
            return torch.autograd.grad(first.sum(), x)[0]
        self.assert_same(self.in_cloned_region(True, second, "second order"), torch.tensor([9.0, -12.0, 3.0]),
                         "d2/dx2 of x^3 inside an enabled clone")
        for mode, outer in itertools.product(MODES, MODES):
            def f(t, mode=mode):
                with cloned(mode):
                    inner = t * t
                return (inner + t * t).sum()
            with self.subTest(mode=mode, outer=outer), torch.set_grad_enabled(outer):
                got = torch.func.grad(f)(x.detach())
                self.assert_same(got, torch.tensor([3.0, -4.0, 1.0]) * (2 if mode else 1), "torch.func.grad")
                self.assert_mode(outer, "after torch.func.grad")

    def test_in_place_updates_and_version_counters(self):
        """In a disabled clone a leaf that requires grad may be updated in place (its _version + 1); in an
        enabled one that is refused, and a saved tensor modified in place fails the backward by name."""
        with torch.enable_grad():  # the file runs under either initial grad mode
            leaf = on_device(torch.tensor([1.0, 2.0]), True)
            before = leaf._version
            self.in_cloned_region(False, lambda: leaf.mul_(2.0), "leaf.mul_ in a disabled clone")
            self.assert_value(leaf._version - before, 1, "version bumps of the leaf updated in a disabled clone")
            self.assert_same(leaf.detach(), torch.tensor([2.0, 4.0]), "the leaf updated in place")
            with self.assert_raises_exactly(RuntimeError, "leaf.add_ in an enabled clone", match="a leaf Variable"):
                self.in_cloned_region(True, lambda: leaf.add_(1.0), "leaf.add_ in an enabled clone")

            def saved_then_modified():
                mid = leaf * 1.0
                out = mid * mid
                version = mid._version
                mid.add_(1.0)
                return out, mid._version - version
            out, bumps = self.in_cloned_region(True, saved_then_modified, "a saved tensor modified in place")
            self.assert_value(bumps, 1, "version bumps of a saved non-leaf updated in place")
            with self.assert_raises_exactly(RuntimeError, "backward through the modified saved tensor",
                                            match="modified by an inplace operation"):
                out.sum().backward()
            original = unswitched(True)
            copy_ = original.clone()
            self.assertIsNot(copy_, original, "clone() returns a new object")
            self.assertIs(copy_.__enter__(), None, "__enter__ of a clone returns None")
            copy_.__exit__(None, None, None)

    def test_decorated_results_keep_their_containers(self):
        """A decorated function's result is returned as the very object: tuple, list, dict, namedtuple,
        torch.return_types and nested, with tensors tracked per mode."""
        for mode in MODES:
            def make(x):
                return {"max": torch.max(x * 2.0, 0), "pair": Pair(x * 1.0, [x * 3.0, (x,)])}
            holder = []
            decorated = cloned(mode)(lambda x: holder.append(make(x)) or holder[-1])
            with self.subTest(mode=mode), torch.set_grad_enabled(not mode):
                got = decorated(on_device(torch.tensor([[1.0, 4.0], [3.0, 2.0]]), True))
                self.assertIs(got, holder[-1], "the decorated result is the object the function returned")
                self.assertIs(type(got["max"]), torch.return_types.max, "torch.return_types.max kept")
                self.assertIs(type(got["pair"]), Pair, "the namedtuple kept")
                self.assert_same(got["max"].indices, torch.tensor([1, 0]), "indices")
                self.assertIs(got["max"].values.requires_grad, mode, "values tracked per mode")
                self.assertIs(got["pair"].second[0].requires_grad, mode, "a nested list's tensor tracked per mode")

    def test_module_hooks_state_and_parameters(self):
        """Forward pre-hooks and hooks of a module and its submodule run in the clone's mode; train/eval,
        state_dict and requires_grad of frozen, tied and trainable parameters are the region's business only."""
        with torch.enable_grad():  # the file runs under either initial grad mode
            for mode in MODES:
                with self.subTest(mode=mode):
                    model, seen = hooked_model()
                    model.eval()
                    model[0].bias.requires_grad_(False)  # frozen
                    state = {key: value.clone() for key, value in model.state_dict().items()}
                    out = self.in_cloned_region(mode, lambda: model(on_device(torch.ones(4, 3), False)), "module call")
                    self.assert_value(seen, [("model", "pre", mode), ("linear", "pre", mode),
                                             ("linear", "post", mode, mode), ("model", "post", mode, mode)],
                                      "hooks (module, kind, grad mode, output requires_grad) in call order")
                    self.assertIs(out.requires_grad, mode, "the module's output tracked per mode")
                    self.assert_value((model.training, model[0].training), (False, False), "eval mode kept")
                    self.assert_value([p.requires_grad for p in model.parameters()], [True, False], "requires_grad")
                    for key, value in model.state_dict().items():
                        self.assert_same(value, state[key].cpu(), f"state_dict {key} unchanged")
            tied = torch.nn.Linear(2, 2, bias=False).to(DEVICE)
            pair = torch.nn.ModuleList([tied, torch.nn.Linear(2, 2, bias=False).to(DEVICE)])
            pair[1].weight = tied.weight
            out = self.in_cloned_region(True, lambda: pair[1](pair[0](on_device(torch.ones(1, 2), False))), "tied")
            out.sum().backward()
            self.assert_value(len(list(pair.parameters())), 1, "a tied weight is one parameter")
            self.assertIsNotNone(tied.weight.grad, "the tied weight's gradient after an enabled clone")

    def test_autocast_and_default_dtype(self):
        """Under torch.autocast to bfloat16 and to float16 (CPU; the device when it supports autocast) a matmul in
        the region is autocast's dtype and tracked per mode, autocast stays on; under set_default_dtype(float64) new
        tensors are float64."""
        devices = ["cpu"] + ([DEVICE] if DEVICE != "cpu" and torch.amp.is_autocast_available(DEVICE) else [])
        for device, dtype, mode in itertools.product(devices, (torch.bfloat16, torch.float16), MODES):
            with self.subTest(device=device, dtype=dtype, mode=mode), torch.autocast(device, dtype=dtype):
                skip_unless_vehicle(self, f"a {dtype} matmul under autocast on {device}",
                                    lambda: torch.ones(2, 3, device=device) @ torch.ones(3, 2, device=device))
                a = torch.ones(2, 3, device=device, requires_grad=True)
                out = self.in_cloned_region(mode, lambda: a @ torch.ones(3, 2, device=device), "matmul")
                self.assert_value((out.dtype, out.requires_grad), (dtype, mode), "autocast dtype, tracked")
                self.assertTrue(torch.is_autocast_enabled(device), "autocast still on after the region")
        saved = torch.get_default_dtype()
        torch.set_default_dtype(torch.float64)
        try:
            for mode in MODES:
                made = self.in_cloned_region(mode, lambda: torch.tensor([1.5], device=DEVICE), "default dtype")
                self.assert_value((made.dtype, torch.get_default_dtype()), (torch.float64, torch.float64), "dtypes")
        finally:
            torch.set_default_dtype(saved)

    def test_rng_streams_are_untouched(self):
        """Making, cloning, entering and decorating draw nothing from the global stream; dropout in the region
        equals dropout outside it from the same seed, under fork_rng and with an explicit generator."""
        with torch.enable_grad():  # the file runs under either initial grad mode
            torch.manual_seed(7)
            state = torch.get_rng_state()
            original = unswitched(False)
            with original.clone():
                pass
            cloned(True)(lambda: None)()
            torch.set_grad_enabled(True)
            self.assertTrue(torch.equal(torch.get_rng_state(), state), "global RNG state after clone, with, decorator")
            x = on_device(torch.ones(64), True)
            for mode in MODES:
                with self.subTest(mode=mode):
                    torch.manual_seed(3)
                    eager = torch.nn.functional.dropout(x, 0.5)
                    torch.manual_seed(3)
                    with torch.random.fork_rng(devices=[]):
                        got = self.in_cloned_region(mode, lambda: torch.nn.functional.dropout(x, 0.5), "dropout")
                    after_fork = torch.rand(3)
                    torch.manual_seed(3)
                    self.assertTrue(torch.equal(after_fork, torch.rand(3)), "fork_rng restored the stream")
                    self.assert_same(got.detach(), eager.detach().cpu(), "dropout in the region vs outside")
                    gen = torch.Generator().manual_seed(5)
                    drawn = self.in_cloned_region(mode, lambda: torch.rand(3, generator=gen), "explicit generator")
                    self.assert_tensor(drawn, torch.rand(3, generator=torch.Generator().manual_seed(5)),
                                       "a CPU generator's draw in the region", device="cpu")

    def test_subclasses_copies_and_callables(self):
        """A subclass's clone is of the subclass; copy, deepcopy and pickle keep type, mode and saved mode
        without switching; partial, callable objects, static and class methods decorate like functions."""
        for mode, start in itertools.product(MODES, STARTS):
            with self.subTest(mode=mode, start=start), torch.set_grad_enabled(start):
                sub = SwitchSubclass(mode)
                torch.set_grad_enabled(start)
                made = sub.clone()
                self.assert_value((type(made), made.mode, torch.is_grad_enabled()), (SwitchSubclass, mode, mode),
                                  "type and mode of a subclass's clone, grad mode after it")
                torch.set_grad_enabled(not mode)
                for how, copy_of in (("copy", copy.copy), ("deepcopy", copy.deepcopy),
                                     ("pickle", lambda o: pickle.loads(pickle.dumps(o)))):
                    got = copy_of(made)
                    self.assert_value((type(got), got.mode, got.prev, torch.is_grad_enabled()),
                                      (SwitchSubclass, mode, start, not mode), f"{how}: type, mode, prev, grad mode")
        x = on_device(torch.tensor([1.0, 2.0]), True)
        for label, func in (("partial", functools.partial(torch.mul, other=2.0)), ("callable object", Doubler()),
                            ("staticmethod", Statics.static), ("classmethod", Statics.klass)):
            for mode in MODES:
                with self.subTest(label, mode=mode), torch.set_grad_enabled(not mode):
                    wrapped = cloned(mode)(func)
                    torch.set_grad_enabled(not mode)
                    out = wrapped(x)
                    self.assert_output(out, torch.tensor([2.0, 4.0]), mode, f"decorated {label}")
                    self.assertIs(wrapped.__wrapped__, func, f"__wrapped__ of the decorated {label}")
                    self.assert_mode(not mode, f"after the decorated {label} returned")

    def test_no_warnings(self):
        """Making, cloning, entering, exiting, decorating and calling give no warning."""
        with torch.enable_grad():  # the file runs under either initial grad mode
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                for mode in MODES:
                    with cloned(mode):
                        pass
                    cloned(mode)(lambda: None)()
            torch.set_grad_enabled(True)
            self.assert_value([str(w.message) for w in caught], [], "warnings")


if __name__ == "__main__":
    run_tests()
