# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""API consistency of the local grad-mode switches on the test device.

Validates ``torch.no_grad``, ``torch.enable_grad``, ``torch.set_grad_enabled`` (the same class as
``torch.autograd.grad_mode.set_grad_enabled``) and ``torch.autograd.grad_mode.set_grad_enabled.clone``
(plus ``no_grad().clone()`` / ``enable_grad().clone()``): as context managers, as decorators (of plain
functions and of generators) and, for ``set_grad_enabled``, as a plain call; nested in every
combination; and per thread.

Why it exists: the NPU port must behave exactly as upstream PyTorch. Grad mode is host-side state, but
whether a result computed on the device records autograd history (``requires_grad`` / ``grad_fn``) and
the values it holds must not depend on the device.

On a CPU box the whole contract is checked with computations on the CPU (values against exact
expectations). On an accelerator (``DEVICE != "cpu"``) every computation runs on the device and its
values and gradients are also compared with the same computation on the CPU.

Every test establishes the starting grad mode it needs (``with torch.set_grad_enabled(start)``) and
asserts relative to it, so the file passes whatever the process's initial grad mode is. The grad
mode is checked immediately after each ``with`` block or decorated call returns, never only after an
outer context has restored it.

The contract of ``set_grad_enabled.clone`` (the same in every release the kit runs, 2.7.1 to 2.14.1):
``clone()`` is ``set_grad_enabled(self.mode)``, so it builds a new object, switches the calling thread's
grad mode to ``mode`` at once, and saves the mode current at ``clone()`` time as the one its ``__exit__``
restores; the original is not touched. Using an object as a decorator first restores its saved mode,
then clones it again for every call (and every generator step).

Input classes where device ports break, and where they are tested:

- call forms and parameters, ``TestSetGradEnabledCloneCallForms``: ``mode`` positional and by keyword,
  clone of objects built in either mode, clone of a clone, the unbound ``set_grad_enabled.clone(obj)``,
  ``with ... as`` (binds None), decorating a function (arguments, keywords, return value and metadata
  pass through), a generator function (its return value too), methods (plain, static, class) and a class
  (deprecated: a FutureWarning, and the class becomes a function that constructs under the mode);
- dtypes, ``TestSetGradEnabledCloneDtypes``: the computation under the cloned mode for float32, float64,
  float16 and bfloat16 leaves (result dtype, values, ``requires_grad``/``grad_fn``, gradients taken after
  the region), integer and bool tensors (never require grad; an integer/bool leaf with
  ``requires_grad=True`` raises RuntimeError), and an integer tensor times a float leaf;
- layouts, ``TestSetGradEnabledCloneLayouts``: transposed, permuted, sliced with a step, expanded
  (stride 0), channels_last, and a non-contiguous leaf; results equal those of the contiguous copy;
- sizes, ``TestSetGradEnabledCloneSizes``: zero-size (``(0,)``, ``(2, 0)``), 0-d and size-1 tensors;
- side effects, ``TestSetGradEnabledCloneSideEffects``: the switch at ``clone()`` time, the original left
  as it was, repeated clone/enter/exit and calls not accumulating, restore on exceptions (also
  BaseException), an in-place update of a leaf allowed exactly once under the disabled mode and refused
  under the enabled one;
- bad input, ``TestSetGradEnabledBadInput``: a non-bool ``mode`` (0, 1, 1.0, None, a string, a list, bool
  tensors and float tensors on the device) raises TypeError at construction and through ``clone()``,
  leaving the grad mode unchanged; wrong signatures raise TypeError;
- threads, ``TestSetGradEnabledCloneThreads``: ``clone()`` in a worker leaves the main thread's mode alone
  and vice versa; a decorator made in one thread applies in another, both ways;
- inference mode, ``TestSetGradEnabledCloneInferenceMode``: inside ``torch.inference_mode()`` a clone of
  ``set_grad_enabled(True)`` turns grad mode on but results still record nothing (they are inference
  tensors), and leaving inference mode restores the grad mode it was entered with.

Not applicable: aliasing of outputs (``__enter__`` returns None and the API produces no tensors); size
or range arguments (the only parameter is ``mode``); complex dtypes are not exercised (the grad-mode code
has no dtype branch, and NPU complex arithmetic support varies).

Release differences asserted: ``repr``/``str`` name the mode from torch 2.9 (an object repr on 2.7.1).
"""
from torch_npu_testing import TestCase, run_tests, device_type, torch_version_at_least

import inspect
import threading
import warnings

import torch
from torch.autograd import grad_mode

DEVICE = device_type()

STARTS = (False, True)
MODES = (False, True)
# Values whose products and sums are exact in float16/bfloat16 too, so results compare with zero tolerance.
VALUES = (0.5, -1.25, 2.0, 3.0)
EXPECTED_VALUES = [v * v + 3.0 * v for v in VALUES]
EXPECTED_GRADS = [2.0 * v + 3.0 for v in VALUES]
# A 2x3 input for the layout cases, with its x*x + 3x and d/dx (2x + 3), also exact in every float dtype.
BASE_2D = [[0.5, -1.25, 2.0], [3.0, 1.0, -2.0]]
EXPECTED_2D = [[v * v + 3.0 * v for v in row] for row in BASE_2D]
GRADS_2D = [[2.0 * v + 3.0 for v in row] for row in BASE_2D]
FLOAT_DTYPES = (torch.float32, torch.float64, torch.float16, torch.bfloat16)
INTEGER_DTYPES = (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64)
THREAD_TIMEOUT_S = 30.0


def leaf(device, dtype=torch.float32):
    return torch.tensor(VALUES, dtype=dtype, device=device, requires_grad=True)


def polynomial(x):
    """x*x + 3x: differentiable, exact for VALUES."""
    return x * x + 3.0 * x


def set_grad_enabled_without_side_effect(mode):
    """A ``set_grad_enabled(mode)`` object whose construction-time change of grad mode is undone.

    Used to obtain an original to ``.clone()`` from without leaving the grad mode changed; its saved
    previous mode is the mode current when it was built.
    """
    before = torch.is_grad_enabled()
    original = torch.set_grad_enabled(mode)
    torch.set_grad_enabled(before)
    return original


def cloned(mode):
    """``set_grad_enabled(mode).clone()`` of an original built without side effect.

    Like ``set_grad_enabled(mode)`` it switches grad mode to ``mode`` when built and saves the mode that
    was current, so ``with cloned(mode):`` and ``@cloned(mode)`` are the clone's own context/decorator.
    """
    return set_grad_enabled_without_side_effect(mode).clone()


# Ways to enter a grad mode with ``with``: (label, factory called inside the with statement, mode inside).
CONTEXT_MANAGERS = (
    ("no_grad()", lambda: torch.no_grad(), False),
    ("enable_grad()", lambda: torch.enable_grad(), True),
    ("set_grad_enabled(False)", lambda: torch.set_grad_enabled(False), False),
    ("set_grad_enabled(True)", lambda: torch.set_grad_enabled(True), True),
    ("set_grad_enabled(False).clone()", lambda: cloned(False), False),
    ("set_grad_enabled(True).clone()", lambda: cloned(True), True),
)

# Ways to decorate a function: (label, decorate(func) -> wrapped, mode inside the call).
DECORATORS = (
    ("@no_grad", lambda func: torch.no_grad(func), False),
    ("@no_grad()", lambda func: torch.no_grad()(func), False),
    ("@enable_grad", lambda func: torch.enable_grad(func), True),
    ("@enable_grad()", lambda func: torch.enable_grad()(func), True),
    ("@set_grad_enabled(False)", lambda func: torch.set_grad_enabled(False)(func), False),
    ("@set_grad_enabled(True)", lambda func: torch.set_grad_enabled(True)(func), True),
    ("@set_grad_enabled(False).clone()", lambda func: cloned(False)(func), False),
    ("@set_grad_enabled(True).clone()", lambda func: cloned(True)(func), True),
)


class Boom(Exception):
    """Raised inside a block or decorated function to check the restore-on-exception path."""


class Interrupt(BaseException):
    """Not an Exception (like KeyboardInterrupt): the restore must not depend on ``except Exception``."""


class GradModeTestCase(TestCase):
    """Shared checks; concrete classes call them with the API under test."""

    def check_computation(self, expect_history):
        """A result computed on DEVICE now records history iff ``expect_history``; values match CPU."""
        x = leaf(DEVICE)
        y = polynomial(x)
        self.assert_tensor_meta(y, "x*x + 3x on the device", requires_grad=expect_history)
        self.assert_is(y.grad_fn is not None, expect_history, "x*x + 3x has a grad_fn")
        self.assert_tensor(y, torch.tensor(EXPECTED_VALUES), "x*x + 3x", device=DEVICE)
        reference_x = leaf("cpu")
        reference = polynomial(reference_x)
        if DEVICE != "cpu":
            self.assert_tensor(y, reference.detach(), "x*x + 3x against the CPU", device=DEVICE)
        if expect_history:
            y.sum().backward()
            self.assert_tensor(x.grad, torch.tensor(EXPECTED_GRADS), "gradient of sum(x*x + 3x)", device=DEVICE)
            if DEVICE != "cpu":
                reference.sum().backward()
                self.assert_tensor(x.grad, reference_x.grad, "gradient against the CPU", device=DEVICE)

    def check_cloned_region(self, mode, make_leaf, compute, expected, expected_grad, what):
        """``compute(make_leaf(DEVICE))`` run inside ``with cloned(mode):``, from both starting modes.

        The result holds ``expected`` (dtype, shape, device, exact values); it records history iff
        ``mode``; the starting mode is back right after the region; a backward pass taken after the
        region gives ``expected_grad`` on the leaf (when ``mode``) or raises RuntimeError (when not).
        On an accelerator the result and the gradient also equal the same computation on the CPU.
        """
        for start in STARTS:
            label = f"{what} (start={start}, mode={mode})"
            with torch.set_grad_enabled(start):
                x = make_leaf(DEVICE)
                with cloned(mode):
                    self.assert_grad_mode(mode, f"{label}: inside the cloned region")
                    y = compute(x)
                self.assert_grad_mode(start, f"{label}: right after the cloned region")
                self.assert_tensor_meta(y, f"{label}: result", requires_grad=mode)
                self.assert_is(y.grad_fn is None, not mode, f"{label}: result has no grad_fn")
                self.assert_tensor(y, expected, f"{label}: result", device=DEVICE)
                if DEVICE != "cpu":
                    reference_x = make_leaf("cpu")
                    with cloned(mode):
                        reference = compute(reference_x)
                    self.assert_tensor(y, reference.detach(), f"{label}: result against the CPU", device=DEVICE)
                # backward(ones) rather than sum().backward(): no op may run outside the region.
                if not mode:
                    self.assert_raises_exactly(RuntimeError, f"{label}: backward through an untracked result",
                                               y.backward, torch.ones_like(y), match="does not require grad")
                    continue
                y.backward(torch.ones_like(y))
                self.assert_tensor(x.grad, expected_grad, f"{label}: gradient after the region", device=DEVICE)
                if DEVICE != "cpu":
                    reference.backward(torch.ones_like(reference))
                    self.assert_tensor(x.grad, reference_x.grad, f"{label}: gradient against the CPU",
                                       device=DEVICE)

    def check_context_manager(self, make, inside):
        """``with make():`` sets ``inside`` and restores the starting mode on exit, also on an exception."""
        for start in STARTS:
            with self.subTest(start=start), torch.set_grad_enabled(start):
                with make():
                    self.assert_grad_mode(inside, "inside the with block")
                    self.check_computation(inside)
                self.assert_grad_mode(start, "right after the with block")
                with self.assert_raises_exactly(Boom, "Boom raised in the with block"), make():
                    self.assert_grad_mode(inside, "inside the raising with block")
                    raise Boom
                self.assert_grad_mode(start, "right after the with block raised")

    def check_decorator(self, decorate, inside):
        """A decorated function runs in ``inside``; the caller's mode is back when it returns or raises."""
        for start in STARTS:
            with self.subTest(start=start), torch.set_grad_enabled(start):
                @decorate
                def compute(fail=False):
                    self.assert_grad_mode(inside, "inside the decorated function")
                    if fail:
                        raise Boom
                    y = polynomial(leaf(DEVICE))
                    self.check_computation(inside)
                    return y

                self.assert_grad_mode(start, "right after decorating")
                self.assert_is(compute().requires_grad, inside, "requires_grad of the decorated function's result")
                self.assert_grad_mode(start, "right after the decorated function returned")
                with torch.set_grad_enabled(not start):  # the mode at call time is what is restored
                    self.assert_is(compute().requires_grad, inside, "requires_grad of a result in the other mode")
                    self.assert_grad_mode(not start, "right after a call made in the other mode")
                self.assert_raises_exactly(Boom, "the decorated function raising", compute, fail=True)
                self.assert_grad_mode(start, "right after the decorated function raised")

    def check_decorated_generator(self, decorate, inside):
        """Each step of a decorated generator runs in ``inside``; the caller's mode is back between steps."""
        for start in STARTS:
            with self.subTest(start=start), torch.set_grad_enabled(start):
                seen = []

                @decorate
                def steps():
                    seen.append(("first step", torch.is_grad_enabled()))
                    received = yield polynomial(leaf(DEVICE)).requires_grad
                    seen.append(("after send", torch.is_grad_enabled()))
                    try:
                        yield received
                    except Boom:
                        seen.append(("in except after throw", torch.is_grad_enabled()))
                    try:
                        yield polynomial(leaf(DEVICE)).requires_grad
                    finally:
                        seen.append(("in finally on close", torch.is_grad_enabled()))

                gen = steps()
                self.assert_grad_mode(start, "after creating the generator")
                self.assert_is(next(gen), inside, "requires_grad computed in the first step")
                self.assert_grad_mode(start, "between yields (after the first step)")
                with torch.set_grad_enabled(not start):
                    self.assert_value(gen.send("sent"), "sent", "value sent into the generator and yielded back")
                    self.assert_grad_mode(not start, "between yields (caller switched mode)")
                self.assert_is(gen.throw(Boom), inside, "requires_grad computed after the thrown exception")
                self.assert_grad_mode(start, "between yields (after throw)")
                gen.close()
                self.assert_grad_mode(start, "after closing the generator")
                self.assert_value(seen, [("first step", inside), ("after send", inside),
                                         ("in except after throw", inside), ("in finally on close", inside)],
                                  "grad mode seen in each generator step")

    def run_in_thread(self, target):
        """Start ``target`` in a new thread; exceptions it raises are re-raised by :meth:`join`."""
        errors = []

        def guarded():
            try:
                target()
            except BaseException as exc:  # reported in the main thread
                errors.append(exc)

        worker = threading.Thread(target=guarded, name="grad-mode-worker")
        worker.start()
        return worker, errors

    def join(self, worker, errors):
        worker.join(THREAD_TIMEOUT_S)
        self.assert_false(worker.is_alive(), "worker thread still running after the timeout")
        if errors:
            raise errors[0]

    def run_thread_to_end(self, target):
        worker, errors = self.run_in_thread(target)
        self.join(worker, errors)


class TestNoGrad(GradModeTestCase):
    """torch.no_grad disables grad mode locally."""

    def test_context_manager_disables_grad_and_restores(self):
        """with no_grad(): results do not record history; the previous mode is back on exit or exception."""
        self.check_context_manager(lambda: torch.no_grad(), inside=False)

    def test_decorator_with_parentheses_disables_grad_and_restores(self):
        """@no_grad(): the call runs without grad; the caller's mode is back on return or exception."""
        self.check_decorator(lambda func: torch.no_grad()(func), inside=False)

    def test_bare_decorator_disables_grad_and_restores(self):
        """@no_grad (no parentheses) behaves like @no_grad()."""
        self.check_decorator(lambda func: torch.no_grad(func), inside=False)

    def test_decorated_generator_disables_grad_in_each_step(self):
        """@no_grad() on a generator: every step (next/send/throw/close) runs without grad, caller's mode between."""
        self.check_decorated_generator(lambda func: torch.no_grad()(func), inside=False)

    def test_factory_with_requires_grad_is_not_affected(self):
        """Factories taking requires_grad=True still create leaves that require grad inside no_grad."""
        with torch.set_grad_enabled(True), torch.no_grad():
            created = torch.ones(3, device=DEVICE, requires_grad=True)
            derived = created * 2.0
        self.assert_tensor_meta(created, "leaf created inside no_grad", requires_grad=True)
        self.assert_true(created.is_leaf, "the factory's result is a leaf")
        self.assert_tensor_meta(derived, "result computed inside no_grad", requires_grad=False)

    def test_construction_does_not_change_grad_mode(self):
        """Creating no_grad() without entering it leaves grad mode unchanged (only __enter__ switches)."""
        for start in STARTS:
            with self.subTest(start=start), torch.set_grad_enabled(start):
                manager = torch.no_grad()
                self.assert_grad_mode(start, "after constructing no_grad()")
                with manager:
                    self.assert_grad_mode(False, "inside")
                self.assert_grad_mode(start, "after exit")


class TestEnableGrad(GradModeTestCase):
    """torch.enable_grad enables grad mode locally."""

    def test_context_manager_enables_grad_and_restores(self):
        """with enable_grad(): results record history; the previous mode is back on exit or exception."""
        self.check_context_manager(lambda: torch.enable_grad(), inside=True)

    def test_decorator_with_parentheses_enables_grad_and_restores(self):
        """@enable_grad(): the call runs with grad; the caller's mode is back on return or exception."""
        self.check_decorator(lambda func: torch.enable_grad()(func), inside=True)

    def test_bare_decorator_enables_grad_and_restores(self):
        """@enable_grad (no parentheses) behaves like @enable_grad()."""
        self.check_decorator(lambda func: torch.enable_grad(func), inside=True)

    def test_decorated_generator_enables_grad_in_each_step(self):
        """@enable_grad() on a generator: every step runs with grad, the caller's mode is back between steps."""
        self.check_decorated_generator(lambda func: torch.enable_grad()(func), inside=True)

    def test_construction_does_not_change_grad_mode(self):
        """Creating enable_grad() without entering it leaves grad mode unchanged."""
        for start in STARTS:
            with self.subTest(start=start), torch.set_grad_enabled(start):
                manager = torch.enable_grad()
                self.assert_grad_mode(start, "after constructing enable_grad()")
                with manager:
                    self.assert_grad_mode(True, "inside")
                self.assert_grad_mode(start, "after exit")


class TestSetGradEnabled(GradModeTestCase):
    """torch.set_grad_enabled(mode): plain call, context manager and decorator."""

    def test_is_the_grad_mode_module_class(self):
        """torch.set_grad_enabled and torch.autograd.set_grad_enabled are torch.autograd.grad_mode.set_grad_enabled."""
        self.assert_is(torch.set_grad_enabled, grad_mode.set_grad_enabled, "torch.set_grad_enabled")
        self.assert_is(torch.autograd.set_grad_enabled, grad_mode.set_grad_enabled, "torch.autograd.set_grad_enabled")
        self.assert_true(isinstance(grad_mode.set_grad_enabled, type), "set_grad_enabled is a class")

    def test_plain_call_switches_mode_until_switched_again(self):
        """set_grad_enabled(mode) as a call switches grad mode at once and it stays after the object is dropped."""
        self.addCleanup(torch.set_grad_enabled, torch.is_grad_enabled())
        for start in STARTS:
            for mode in MODES:
                with self.subTest(start=start, mode=mode), torch.set_grad_enabled(start):
                    try:
                        returned = torch.set_grad_enabled(mode)
                        self.assert_is(type(returned), grad_mode.set_grad_enabled, "type of the plain call's result")
                        self.assert_is(returned.mode, mode, ".mode of the plain call's result")
                        del returned
                        self.assert_grad_mode(mode, "after the plain call")
                        self.check_computation(mode)
                    finally:
                        torch.set_grad_enabled(start)

    def test_context_manager_sets_mode_and_restores(self):
        """with set_grad_enabled(mode): mode inside; the previous mode is back on exit or exception."""
        for mode in MODES:
            with self.subTest(mode=mode):
                self.check_context_manager(lambda: torch.set_grad_enabled(mode), inside=mode)

    def test_grad_mode_module_context_manager_sets_mode_and_restores(self):
        """torch.autograd.grad_mode.set_grad_enabled used directly behaves the same as a context manager."""
        for mode in MODES:
            with self.subTest(mode=mode):
                self.check_context_manager(lambda: grad_mode.set_grad_enabled(mode), inside=mode)

    def test_exit_restores_mode_saved_at_construction(self):
        """An object built earlier restores, on exit, the mode saved when it was built, not the mode at entry."""
        self.addCleanup(torch.set_grad_enabled, torch.is_grad_enabled())
        for start in STARTS:
            for mode in MODES:
                with self.subTest(start=start, mode=mode), torch.set_grad_enabled(start):
                    try:
                        manager = torch.set_grad_enabled(mode)  # saves `start`, switches to `mode`
                        self.assert_grad_mode(mode, "after construction")
                        torch.set_grad_enabled(not start)  # the mode current when the block is entered
                        with manager:
                            self.assert_grad_mode(mode, "inside")
                        self.assert_grad_mode(start, "after exit (mode saved at construction)")
                    finally:
                        torch.set_grad_enabled(start)

    def test_decorator_sets_mode_per_call_and_restores(self):
        """@set_grad_enabled(mode): decorating leaves grad mode unchanged; each call runs in mode and restores."""
        for mode in MODES:
            with self.subTest(mode=mode):
                self.check_decorator(lambda func: torch.set_grad_enabled(mode)(func), inside=mode)

    def test_decorated_generator_sets_mode_in_each_step(self):
        """@set_grad_enabled(mode) on a generator: each step runs in mode, the caller's mode is back between."""
        for mode in MODES:
            with self.subTest(mode=mode):
                self.check_decorated_generator(lambda func: torch.set_grad_enabled(mode)(func), inside=mode)

    def test_repr_names_the_mode(self):
        """repr(set_grad_enabled(mode)) names the mode from torch 2.9 (pytorch#155681); the object repr before."""
        for mode in MODES:
            with self.subTest(mode=mode), torch.set_grad_enabled(True):
                manager = set_grad_enabled_without_side_effect(mode)
                if torch_version_at_least("2.9"):
                    text = f"torch.autograd.grad_mode.set_grad_enabled(mode={mode})"
                    self.assert_value(repr(manager), text, "repr of set_grad_enabled")
                    self.assert_value(str(manager), text, "str of set_grad_enabled")
                    self.assert_value(repr(manager.clone()), text, "repr of its clone")
                else:
                    prefix = "<torch.autograd.grad_mode.set_grad_enabled object at 0x"
                    self.assert_true(repr(manager).startswith(prefix), f"repr on torch < 2.9: {repr(manager)!r}")


class TestSetGradEnabledClone(GradModeTestCase):
    """torch.autograd.grad_mode.set_grad_enabled.clone: a fresh object with the same mode."""

    def test_clone_is_new_object_of_same_class_and_mode(self):
        """clone() returns a different set_grad_enabled object with the same .mode, for both modes."""
        for mode in MODES:
            with self.subTest(mode=mode), torch.set_grad_enabled(True):
                original = set_grad_enabled_without_side_effect(mode)
                copy = grad_mode.set_grad_enabled.clone(original)
                self.assert_is_not(copy, original, "clone() result")
                self.assert_is(type(copy), grad_mode.set_grad_enabled, "type of the clone")
                self.assert_is(copy.mode, mode, ".mode of the clone")
                self.assert_is(original.mode, mode, ".mode of the original after clone()")

    def test_clone_switches_grad_mode_when_constructed(self):
        """clone() constructs again, so like set_grad_enabled(mode) it switches grad mode to mode at once."""
        self.addCleanup(torch.set_grad_enabled, torch.is_grad_enabled())
        for start in STARTS:
            for mode in MODES:
                with self.subTest(start=start, mode=mode), torch.set_grad_enabled(start):
                    original = set_grad_enabled_without_side_effect(mode)
                    self.assert_grad_mode(start, "after building the original and undoing its switch")
                    try:
                        original.clone()
                        self.assert_grad_mode(mode, "right after clone()")
                        self.check_computation(mode)
                    finally:
                        torch.set_grad_enabled(start)

    def test_clone_as_context_manager_matches_original(self):
        """with original.clone(): same mode inside as the original; the previous mode is back on exit/exception."""
        for mode in MODES:
            original = set_grad_enabled_without_side_effect(mode)
            with self.subTest(mode=mode):
                self.check_context_manager(original.clone, inside=mode)
                self.check_context_manager(lambda: torch.set_grad_enabled(mode), inside=mode)

    def test_clone_as_decorator_matches_original(self):
        """@original.clone(): each call runs in the original's mode and restores, also on exception."""
        for mode in MODES:
            original = set_grad_enabled_without_side_effect(mode)
            with self.subTest(mode=mode):
                self.check_decorator(lambda func: original.clone()(func), inside=mode)
                self.check_decorated_generator(lambda func: original.clone()(func), inside=mode)

    def test_clone_and_original_restore_independently(self):
        """Using the clone does not touch the original: each restores the mode saved at its own construction."""
        self.addCleanup(torch.set_grad_enabled, torch.is_grad_enabled())
        for mode in MODES:
            with self.subTest(mode=mode), torch.set_grad_enabled(not mode):
                try:
                    original = torch.set_grad_enabled(mode)  # saves `not mode`
                    copy = original.clone()  # built while `mode` is current: saves `mode`
                    self.assert_is_not(copy, original, "clone() result")
                    with copy:
                        self.assert_grad_mode(mode, "inside the clone")
                    self.assert_grad_mode(mode, "after the clone's block (its own saved mode)")

                    @copy
                    def decorated():
                        return torch.is_grad_enabled()

                    self.assert_is(decorated(), mode, "grad mode inside the function decorated with the clone")
                    self.assert_is(original.mode, mode, ".mode of the original")
                    self.assert_is(copy.mode, mode, ".mode of the clone")
                    with original:
                        self.assert_grad_mode(mode, "inside the original")
                    self.assert_grad_mode(not mode, "after the original's block (unaffected by the clone)")
                    torch.set_grad_enabled(not mode)
                    with copy:
                        self.assert_grad_mode(mode, "inside the clone, after the original was used")
                    self.assert_grad_mode(mode, "after the clone's second block (still its own saved mode)")
                finally:
                    torch.set_grad_enabled(not mode)


class TestNoGradEnableGradClone(GradModeTestCase):
    """no_grad().clone() / enable_grad().clone() (inherited from _DecoratorContextManager)."""

    def test_clone_is_new_object_and_does_not_switch_mode(self):
        """clone() of no_grad()/enable_grad() is a new object of the same class; building it switches nothing."""
        for name, make in (("no_grad", torch.no_grad), ("enable_grad", torch.enable_grad)):
            for start in STARTS:
                with self.subTest(api=name, start=start), torch.set_grad_enabled(start):
                    original = make()
                    copy = original.clone()
                    self.assert_is_not(copy, original, f"{name}().clone() result")
                    self.assert_is(type(copy), type(original), f"type of {name}().clone()")
                    self.assert_grad_mode(start, f"after {name}().clone()")

    def test_clone_as_context_manager_matches_original(self):
        """with no_grad().clone() / enable_grad().clone(): same mode as the original, restored on exit."""
        self.check_context_manager(torch.no_grad().clone, inside=False)
        self.check_context_manager(torch.enable_grad().clone, inside=True)

    def test_clone_as_decorator_matches_original(self):
        """@no_grad().clone() / @enable_grad().clone(): each call in the original's mode, restored after."""
        self.check_decorator(lambda func: torch.no_grad().clone()(func), inside=False)
        self.check_decorator(lambda func: torch.enable_grad().clone()(func), inside=True)


class TestGradModeNesting(GradModeTestCase):
    """Every grad-mode switch nested inside every other one."""

    def test_nested_context_managers_in_every_combination(self):
        """Inner block sets its mode; leaving it restores the outer block's mode, leaving that the start."""
        for outer_label, make_outer, outer_mode in CONTEXT_MANAGERS:
            for inner_label, make_inner, inner_mode in CONTEXT_MANAGERS:
                for start in STARTS:
                    with self.subTest(outer=outer_label, inner=inner_label, start=start), \
                            torch.set_grad_enabled(start):
                        with make_outer():
                            self.assert_grad_mode(outer_mode, "inside the outer block")
                            with make_inner():
                                self.assert_grad_mode(inner_mode, "inside the inner block")
                                self.assert_is(polynomial(leaf(DEVICE)).requires_grad, inner_mode,
                                               "requires_grad in the inner block")
                            self.assert_grad_mode(outer_mode, "right after the inner block")
                            with self.assert_raises_exactly(Boom, "Boom in the inner block"), make_inner():
                                raise Boom
                            self.assert_grad_mode(outer_mode, "right after the inner block raised")
                            self.assert_is(polynomial(leaf(DEVICE)).requires_grad, outer_mode,
                                           "requires_grad in the outer block")
                        self.assert_grad_mode(start, "right after the outer block")

    def test_nested_decorators_in_every_combination(self):
        """A decorated function calling another: each runs in its mode, each return restores the caller's."""
        for outer_label, decorate_outer, outer_mode in DECORATORS:
            for inner_label, decorate_inner, inner_mode in DECORATORS:
                for start in STARTS:
                    with self.subTest(outer=outer_label, inner=inner_label, start=start), \
                            torch.set_grad_enabled(start):
                        seen = []

                        @decorate_inner
                        def inner(fail):
                            seen.append(("inner", torch.is_grad_enabled()))
                            if fail:
                                raise Boom
                            return polynomial(leaf(DEVICE)).requires_grad

                        @decorate_outer
                        def outer():
                            seen.append(("outer", torch.is_grad_enabled()))
                            seen.append(("inner result", inner(False)))
                            seen.append(("after inner returned", torch.is_grad_enabled()))
                            try:
                                inner(True)
                            except Boom:
                                seen.append(("after inner raised", torch.is_grad_enabled()))
                            return polynomial(leaf(DEVICE)).requires_grad

                        self.assert_grad_mode(start, "after decorating")
                        self.assert_is(outer(), outer_mode, "requires_grad of the outer function's result")
                        self.assert_grad_mode(start, "right after the outer function returned")
                        self.assert_value(seen, [("outer", outer_mode), ("inner", inner_mode),
                                                 ("inner result", inner_mode), ("after inner returned", outer_mode),
                                                 ("inner", inner_mode), ("after inner raised", outer_mode)],
                                          "grad mode seen at each point of the nested calls")

    def test_plain_call_inside_block_is_undone_on_exit(self):
        """set_grad_enabled(m) called inside a block is replaced by the block's saved mode when it exits."""
        self.addCleanup(torch.set_grad_enabled, torch.is_grad_enabled())
        for label, make, inside in CONTEXT_MANAGERS:
            for start in STARTS:
                with self.subTest(block=label, start=start), torch.set_grad_enabled(start):
                    try:
                        with make():
                            torch.set_grad_enabled(not inside)
                            self.assert_grad_mode(not inside, "after the plain call inside the block")
                            self.check_computation(not inside)
                        self.assert_grad_mode(start, "right after the block")
                    finally:
                        torch.set_grad_enabled(start)


class TestGradModeIsThreadLocal(GradModeTestCase):
    """Grad mode belongs to a thread: switching it in one thread is invisible to the others."""

    def test_worker_change_does_not_leak_into_main_thread(self):
        """While a worker thread has grad disabled (plain call and no_grad), the main thread keeps its mode."""
        for start in STARTS:
            with self.subTest(start=start), torch.set_grad_enabled(start):
                switched, release = threading.Event(), threading.Event()
                seen = {}

                def worker():
                    seen["worker initial"] = torch.is_grad_enabled()
                    torch.set_grad_enabled(False)
                    with torch.no_grad():
                        seen["worker result tracks"] = polynomial(leaf(DEVICE)).requires_grad
                        switched.set()
                        release.wait(THREAD_TIMEOUT_S)
                    seen["worker after block"] = torch.is_grad_enabled()

                thread, errors = self.run_in_thread(worker)
                try:
                    self.assert_true(switched.wait(THREAD_TIMEOUT_S), "worker switched grad mode before the timeout")
                    self.assert_grad_mode(start, "in the main thread while the worker has grad disabled")
                    self.check_computation(start)
                finally:
                    release.set()
                    self.join(thread, errors)
                self.assert_grad_mode(start, "in the main thread after the worker ended")
                # A new thread starts with grad enabled whatever the creating thread's mode.
                self.assert_value(seen, {"worker initial": True, "worker result tracks": False,
                                         "worker after block": False}, "grad mode seen in the worker")

    def test_main_change_does_not_leak_into_worker_thread(self):
        """A plain-call switch in the main thread is not seen by a worker thread, whose mode stays its own."""
        self.addCleanup(torch.set_grad_enabled, torch.is_grad_enabled())
        for start in STARTS:
            with self.subTest(start=start), torch.set_grad_enabled(start):
                switched, checked = threading.Event(), threading.Event()
                seen = {}

                def worker():
                    seen["worker initial"] = torch.is_grad_enabled()
                    with torch.set_grad_enabled(start):
                        switched.set()
                        checked.wait(THREAD_TIMEOUT_S)
                        seen["worker after main switched"] = torch.is_grad_enabled()
                        seen["worker result tracks"] = polynomial(leaf(DEVICE)).requires_grad

                try:
                    thread, errors = self.run_in_thread(worker)
                    try:
                        self.assert_true(switched.wait(THREAD_TIMEOUT_S), "worker started before the timeout")
                        self.assert_grad_mode(start, "in the main thread after the worker switched")
                        torch.set_grad_enabled(not start)
                        self.check_computation(not start)
                    finally:
                        checked.set()
                        self.join(thread, errors)
                    self.assert_grad_mode(not start, "in the main thread after the worker left its block")
                finally:
                    torch.set_grad_enabled(start)
                # A new thread starts with grad enabled whatever the creating thread's mode.
                self.assert_value(seen, {"worker initial": True, "worker after main switched": start,
                                         "worker result tracks": start}, "grad mode seen in the worker")


class TestSetGradEnabledCloneCallForms(GradModeTestCase):
    """Every call form of set_grad_enabled and its clone: keyword mode, clone chains, each decorator target."""

    def test_keyword_mode_is_cloned_like_positional(self):
        """set_grad_enabled(mode=m) switches to m, keeps .mode == m, and its clone() switches to m again."""
        self.addCleanup(torch.set_grad_enabled, torch.is_grad_enabled())
        for mode in MODES:
            for start in STARTS:
                with self.subTest(f"set_grad_enabled(mode={mode}) from start={start}"), torch.set_grad_enabled(start):
                    try:
                        original = torch.set_grad_enabled(mode=mode)
                        self.assert_grad_mode(mode, "right after set_grad_enabled(mode=...)")
                        self.assert_is(original.mode, mode, ".mode of set_grad_enabled(mode=...)")
                        torch.set_grad_enabled(start)
                        copy = original.clone()
                        self.assert_grad_mode(mode, "right after clone() of the keyword-built object")
                        self.assert_is(copy.mode, mode, ".mode of the clone of the keyword-built object")
                    finally:
                        torch.set_grad_enabled(start)
                    with original.clone():
                        self.assert_grad_mode(mode, "inside with clone() of the keyword-built object")
                    self.assert_grad_mode(start, "right after with clone() of the keyword-built object")

    def test_clone_of_originals_built_in_either_mode(self):
        """An original built while grad is on or off clones to its own .mode; the clone saves the clone-time mode."""
        self.addCleanup(torch.set_grad_enabled, torch.is_grad_enabled())
        for mode in MODES:
            for built_in in STARTS:
                for cloned_in in STARTS:
                    label = f"mode={mode}, original built with grad={built_in}, cloned with grad={cloned_in}"
                    with self.subTest(label), torch.set_grad_enabled(built_in):
                        try:
                            original = set_grad_enabled_without_side_effect(mode)
                            torch.set_grad_enabled(cloned_in)
                            copy = original.clone()
                            self.assert_grad_mode(mode, "right after clone()")
                            self.assert_is(copy.mode, mode, ".mode of the clone")
                            torch.set_grad_enabled(not cloned_in)
                            with copy:
                                self.assert_grad_mode(mode, "inside the clone")
                            self.assert_grad_mode(cloned_in, "after the clone's block: the mode at clone() time")
                            with original:
                                self.assert_grad_mode(mode, "inside the original")
                            self.assert_grad_mode(built_in, "after the original's block: the mode it was built in")
                        finally:
                            torch.set_grad_enabled(built_in)

    def test_clone_of_a_clone(self):
        """A clone of a clone is again a new object with the mode; its saved mode is the one at its clone() call."""
        self.addCleanup(torch.set_grad_enabled, torch.is_grad_enabled())
        for mode in MODES:
            for start in STARTS:
                with self.subTest(f"mode={mode}, start={start}"), torch.set_grad_enabled(start):
                    try:
                        first = cloned(mode)  # saves `start`
                        second = first.clone()  # built while `mode` is current: saves `mode`
                        third = grad_mode.set_grad_enabled.clone(second)
                        self.assert_grad_mode(mode, "after clone() of a clone")
                        self.assert_value(len({id(first), id(second), id(third)}), 3, "distinct objects in the chain")
                        for name, obj in (("first", first), ("second", second), ("third", third)):
                            self.assert_is(type(obj), grad_mode.set_grad_enabled, f"type of the {name} clone")
                            self.assert_is(obj.mode, mode, f".mode of the {name} clone")
                        torch.set_grad_enabled(not mode)
                        with third:
                            self.assert_grad_mode(mode, "inside the clone of a clone")
                        self.assert_grad_mode(mode, "after the clone of a clone: the mode when it was cloned")
                        with first:
                            self.assert_grad_mode(mode, "inside the first clone")
                        self.assert_grad_mode(start, "after the first clone: the starting mode")
                    finally:
                        torch.set_grad_enabled(start)

    def test_with_statement_binds_none(self):
        """``with clone as bound`` binds None (__enter__ returns nothing), in both modes."""
        for mode in MODES:
            with self.subTest(f"mode={mode}"), torch.set_grad_enabled(not mode):
                with cloned(mode) as bound:
                    self.assert_is(bound, None, "value bound by with set_grad_enabled(...).clone() as ...")
                    self.assert_grad_mode(mode, "inside")
                self.assert_grad_mode(not mode, "after the block")

    def test_decorated_function_passes_arguments_result_and_metadata(self):
        """@clone: positional and keyword arguments and the result pass through; name, doc and __wrapped__ kept."""
        for mode in MODES:
            for start in STARTS:
                with self.subTest(f"mode={mode}, start={start}"), torch.set_grad_enabled(start):
                    def scale(x, factor, *, offset=0.0):
                        """Scale x and shift it."""
                        return x * factor + offset, torch.is_grad_enabled()

                    decorated = cloned(mode)(scale)
                    self.assert_grad_mode(start, "right after decorating (the clone's switch undone)")
                    self.assert_value(decorated.__name__, "scale", "__name__ of the decorated function")
                    self.assert_value(decorated.__doc__, "Scale x and shift it.", "__doc__ of the decorated function")
                    self.assert_is(decorated.__wrapped__, scale, "__wrapped__ of the decorated function")
                    x = leaf(DEVICE)
                    y, inside = decorated(x, 2.0, offset=1.0)
                    self.assert_is(inside, mode, "grad mode inside the decorated function")
                    self.assert_grad_mode(start, "right after the call")
                    self.assert_tensor_meta(y, "x * 2 + 1 from the decorated function", requires_grad=mode)
                    self.assert_tensor(y, torch.tensor([2.0 * v + 1.0 for v in VALUES]), "x * 2 + 1", device=DEVICE)
                    y, _ = decorated(x, factor=3.0)
                    self.assert_tensor(y, torch.tensor([3.0 * v for v in VALUES]), "x * 3 (keyword factor)",
                                       device=DEVICE)

    def test_decorated_generator_returns_its_value(self):
        """@clone on a generator function: each step runs in mode and the generator's return value is kept."""
        for mode in MODES:
            with self.subTest(f"mode={mode}"), torch.set_grad_enabled(not mode):
                @cloned(mode)
                def count(n):
                    for i in range(n):
                        yield i, torch.is_grad_enabled()
                    return "done"

                self.assert_grad_mode(not mode, "right after decorating")
                gen = count(2)
                self.assert_true(inspect.isgenerator(gen), "calling the decorated generator function gives a generator")
                self.assert_value(next(gen), (0, mode), "first step")
                self.assert_grad_mode(not mode, "between steps")
                self.assert_value(next(gen), (1, mode), "second step")
                with self.assert_raises_exactly(StopIteration, "the exhausted generator") as caught:
                    next(gen)
                self.assert_value(caught.exception.value, "done", "the generator's return value")
                self.assert_grad_mode(not mode, "after the generator finished")

    def test_decorated_methods(self):
        """@clone on an instance method, a staticmethod and a classmethod: each call runs in mode, args pass."""
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

                self.assert_grad_mode(not mode, "right after the class body decorated three methods")
                model = Model()
                for name, call, factor in (("method", model.method, 2.0), ("staticmethod", Model.static, 3.0),
                                           ("classmethod", Model.klass, 4.0)):
                    y, inside = call(leaf(DEVICE))
                    self.assert_is(inside, mode, f"grad mode inside the decorated {name}")
                    self.assert_grad_mode(not mode, f"right after calling the decorated {name}")
                    self.assert_tensor_meta(y, f"result of the decorated {name}", requires_grad=mode)
                    self.assert_tensor(y, torch.tensor([factor * v for v in VALUES]), f"result of the {name}",
                                       device=DEVICE)

    def test_decorated_class_warns_and_constructs_in_mode(self):
        """@clone on a class: FutureWarning (deprecated); it becomes a function whose construction runs in mode."""
        for mode in MODES:
            with self.subTest(f"mode={mode}"), torch.set_grad_enabled(not mode):
                class Recorder:
                    def __init__(self, tag):
                        self.tag = tag
                        self.grad_mode = torch.is_grad_enabled()

                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    decorated = cloned(mode)(Recorder)
                self.assert_value([w.category for w in caught], [FutureWarning], "warnings on decorating a class")
                self.assert_true("Decorating classes is deprecated" in str(caught[0].message),
                                 f"warning text: {caught[0].message}")
                self.assert_grad_mode(not mode, "right after decorating the class")
                self.assert_false(inspect.isclass(decorated), "the decorated class is no longer a class")
                made = decorated("tag")
                self.assert_is(type(made), Recorder, "type built by the decorated class")
                self.assert_value(made.tag, "tag", "argument passed to the constructor")
                self.assert_is(made.grad_mode, mode, "grad mode inside the decorated class's __init__")
                self.assert_grad_mode(not mode, "right after constructing")


class TestSetGradEnabledCloneDtypes(GradModeTestCase):
    """The computation under a cloned mode, per dtype: result dtype, values, history and gradients."""

    def test_float_dtypes(self):
        """float32/64/16, bfloat16 leaves: under the clone results keep dtype and record history iff mode."""
        for dtype in FLOAT_DTYPES:
            for mode in MODES:
                with self.subTest(f"{dtype}, mode={mode}"):
                    self.check_cloned_region(mode, lambda device: leaf(device, dtype), polynomial,
                                             torch.tensor(EXPECTED_VALUES, dtype=dtype),
                                             torch.tensor(EXPECTED_GRADS, dtype=dtype), f"{dtype} leaf")

    def test_leaf_created_inside_disabled_clone_still_requires_grad(self):
        """A factory with requires_grad=True inside a cloned disabled region gives a leaf that requires grad."""
        for dtype in FLOAT_DTYPES:
            with self.subTest(str(dtype)), torch.set_grad_enabled(True):
                with cloned(False):
                    created = leaf(DEVICE, dtype)
                    derived = polynomial(created)
                self.assert_tensor_meta(created, f"{dtype} leaf created in the region", dtype=dtype,
                                        requires_grad=True)
                self.assert_true(created.is_leaf, f"{dtype} factory result is a leaf")
                self.assert_tensor_meta(derived, f"{dtype} result computed in the region", dtype=dtype,
                                        requires_grad=False)

    def test_integer_and_bool_results_never_require_grad(self):
        """Integer and bool tensors: results under either cloned mode keep dtype and values, never record history."""
        for dtype in INTEGER_DTYPES + (torch.bool,):
            values = [True, False, True, False] if dtype is torch.bool else [0, 1, 2, 3]
            expected = values if dtype is torch.bool else [v * v + v for v in values]
            for mode in MODES:
                with self.subTest(f"{dtype}, mode={mode}"), torch.set_grad_enabled(not mode):
                    x = torch.tensor(values, dtype=dtype, device=DEVICE)
                    with cloned(mode):
                        y = x * x + x
                    self.assert_tensor(y, torch.tensor(expected, dtype=dtype), f"{dtype} x*x + x", device=DEVICE)
                    self.assert_tensor_meta(y, f"{dtype} x*x + x", requires_grad=False)
                    self.assert_is(y.grad_fn, None, f"{dtype} x*x + x grad_fn")

    def test_integer_and_bool_leaves_cannot_require_grad(self):
        """requires_grad=True on an integer or bool tensor raises RuntimeError under either cloned mode."""
        for dtype in INTEGER_DTYPES + (torch.bool,):
            for mode in MODES:
                with self.subTest(f"{dtype}, mode={mode}"), torch.set_grad_enabled(not mode):
                    with cloned(mode):
                        self.assert_raises_exactly(RuntimeError, f"{dtype} factory with requires_grad=True",
                                                   torch.zeros, 2, dtype=dtype, device=DEVICE, requires_grad=True,
                                                   match="floating point")
                        plain = torch.zeros(2, dtype=dtype, device=DEVICE)
                        self.assert_raises_exactly(RuntimeError, f"{dtype} tensor.requires_grad_()",
                                                   plain.requires_grad_, match="floating point")
                        self.assert_grad_mode(mode, "inside the region after the errors")
                    self.assert_grad_mode(not mode, "after the region")

    def test_integer_times_float_leaf(self):
        """An int64 tensor times a float32 leaf promotes to float32 and records history iff the cloned mode."""
        for mode in MODES:
            with self.subTest(f"mode={mode}"):
                counts = [1, 2, 0, -1]
                self.check_cloned_region(
                    mode, leaf, lambda x: torch.tensor(counts, device=x.device) * x,
                    torch.tensor([c * v for c, v in zip(counts, VALUES)]), torch.tensor(counts, dtype=torch.float32),
                    "int64 tensor * float32 leaf")


def _expand_first_row(x):
    return x[0].expand(2, 3)


# (label, view or copy taken of the 2x3 leaf inside the region, times each leaf element is used, is a view)
LAYOUTS = (
    ("contiguous", lambda x: x, [[1, 1, 1], [1, 1, 1]], False),
    ("transposed", lambda x: x.t(), [[1, 1, 1], [1, 1, 1]], True),
    ("permuted 3-d", lambda x: x.unsqueeze(2).permute(2, 1, 0), [[1, 1, 1], [1, 1, 1]], True),
    ("sliced with step 2", lambda x: x[:, ::2], [[1, 0, 1], [1, 0, 1]], True),
    ("expanded (stride 0)", _expand_first_row, [[2, 2, 2], [0, 0, 0]], True),
    ("channels_last 4-d copy", lambda x: x.reshape(1, 2, 3, 1).contiguous(memory_format=torch.channels_last),
     [[1, 1, 1], [1, 1, 1]], False),
)


class TestSetGradEnabledCloneLayouts(GradModeTestCase):
    """Non-contiguous inputs under a cloned mode: results equal the contiguous copy's; history iff mode."""

    def test_views_taken_inside_the_region(self):
        """Transposed, permuted, step-sliced, expanded and channels_last inputs: values, history and gradients."""
        expected_2d = torch.tensor(EXPECTED_2D)
        grads_2d = torch.tensor(GRADS_2D)
        for label, make_view, uses, _ in LAYOUTS:
            for mode in MODES:
                with self.subTest(f"{label}, mode={mode}"):
                    self.check_cloned_region(
                        mode, lambda device: torch.tensor(BASE_2D, device=device, requires_grad=True),
                        lambda x: polynomial(make_view(x)), make_view(expected_2d).contiguous(),
                        grads_2d * torch.tensor(uses, dtype=torch.float32), label)

    def test_input_taken_inside_the_region(self):
        """Inside a cloned region a view of a leaf keeps requires_grad, with a grad_fn iff mode; a copy follows mode."""
        for label, make_view, _, is_view in LAYOUTS[1:]:
            for mode in MODES:
                with self.subTest(f"{label}, mode={mode}"), torch.set_grad_enabled(not mode):
                    base = torch.tensor(BASE_2D, device=DEVICE, requires_grad=True)
                    with cloned(mode):
                        taken = make_view(base)
                    # A view shares its base's requires_grad even when taken with grad disabled.
                    self.assert_tensor_meta(taken, f"{label} of a leaf", requires_grad=mode or is_view)
                    self.assert_is(taken.grad_fn is None, not mode, f"{label} of a leaf has no grad_fn")

    def test_non_contiguous_leaf(self):
        """A leaf that is itself a transposed (non-contiguous) tensor behaves like a contiguous one."""
        for mode in MODES:
            with self.subTest(f"transposed leaf, mode={mode}"):
                self.check_cloned_region(
                    mode, lambda device: torch.tensor(BASE_2D, device=device).t().requires_grad_(), polynomial,
                    torch.tensor(EXPECTED_2D).t().contiguous(), torch.tensor(GRADS_2D).t().contiguous(),
                    "transposed leaf")


class TestSetGradEnabledCloneSizes(GradModeTestCase):
    """Zero-size, 0-d and size-1 inputs under a cloned mode."""

    def test_sizes(self):
        """Shapes (0,), (2, 0), () and (1, 1): result shape and values, history iff mode, gradient shape."""
        cases = (
            ("zero-size (0,)", [], [], []),
            ("inner dim 0 (2, 0)", [[], []], [[], []], [[], []]),
            ("0-d", -1.25, -1.25 * -1.25 + 3.0 * -1.25, 2.0 * -1.25 + 3.0),
            ("size-1 (1, 1)", [[3.0]], [[18.0]], [[9.0]]),
        )
        for label, values, expected, grads in cases:
            for mode in MODES:
                with self.subTest(f"{label}, mode={mode}"):
                    self.check_cloned_region(
                        mode, lambda device: torch.tensor(values, device=device, requires_grad=True), polynomial,
                        torch.tensor(expected), torch.tensor(grads), label)


class TestSetGradEnabledCloneSideEffects(GradModeTestCase):
    """What clone() and its use change, and what they must leave alone."""

    def test_clone_switches_mode_and_leaves_original_alone(self):
        """clone() switches grad mode at once (before/after asserted); the original's .mode and saved mode stay."""
        self.addCleanup(torch.set_grad_enabled, torch.is_grad_enabled())
        for mode in MODES:
            for start in STARTS:
                with self.subTest(f"mode={mode}, start={start}"), torch.set_grad_enabled(start):
                    try:
                        original = set_grad_enabled_without_side_effect(mode)  # saves `start`
                        torch.set_grad_enabled(not mode)
                        self.assert_grad_mode(not mode, "before clone()")
                        original.clone()
                        self.assert_grad_mode(mode, "after clone()")
                        self.assert_is(original.mode, mode, ".mode of the original after clone()")
                        torch.set_grad_enabled(not start)
                        with original:
                            self.assert_grad_mode(mode, "inside the original")
                        self.assert_grad_mode(start, "after the original's block: still its own saved mode")
                    finally:
                        torch.set_grad_enabled(start)

    def test_repeated_use_does_not_accumulate(self):
        """Ten clone/enter/exit rounds and ten decorated calls each end in the caller's mode, objects stay apart."""
        for mode in MODES:
            for start in STARTS:
                with self.subTest(f"mode={mode}, start={start}"), torch.set_grad_enabled(start):
                    original = set_grad_enabled_without_side_effect(mode)
                    copies = []
                    for round_ in range(10):
                        with original.clone():
                            self.assert_grad_mode(mode, f"inside round {round_}")
                        self.assert_grad_mode(start, f"after round {round_}")
                        copies.append(original.clone())
                        torch.set_grad_enabled(start)
                    self.assert_value(len(set(map(id, copies))), 10, "distinct clones")
                    self.assert_value([c.mode for c in copies], [mode] * 10, ".mode of every clone")
                    reused = cloned(mode)
                    for round_ in range(3):
                        with reused:
                            self.assert_grad_mode(mode, f"inside the reused clone, round {round_}")
                        self.assert_grad_mode(start, f"after the reused clone, round {round_}")
                    decorated = original.clone()(torch.is_grad_enabled)
                    caller_modes = [start, not start] * 5
                    for round_, caller in enumerate(caller_modes):
                        with torch.set_grad_enabled(caller):
                            self.assert_is(decorated(), mode, f"grad mode inside decorated call {round_}")
                            self.assert_grad_mode(caller, f"after decorated call {round_}")
                    self.assert_is(original.mode, mode, ".mode of the original after all rounds")

    def test_exceptions_restore_the_mode(self):
        """An Exception or a BaseException raised inside a cloned region or decorated call restores the mode."""
        for mode in MODES:
            for exc_type in (Boom, Interrupt):
                with self.subTest(f"{exc_type.__name__}, mode={mode}"), torch.set_grad_enabled(not mode):
                    with self.assert_raises_exactly(exc_type, f"{exc_type.__name__} in the cloned region"):
                        with cloned(mode):
                            self.assert_grad_mode(mode, "inside the region")
                            raise exc_type
                    self.assert_grad_mode(not mode, "right after the region raised")

                    @cloned(mode)
                    def fail():
                        raise exc_type

                    try:
                        fail()
                    except exc_type:
                        self.assert_grad_mode(not mode, "in the caller's handler")
                    else:
                        self.fail(f"the decorated function did not raise {exc_type.__name__}")
                    self.assert_grad_mode(not mode, "right after the decorated call raised")

    def test_in_place_update_of_a_leaf(self):
        """Under a cloned disabled mode a leaf is updated in place exactly once and stays a leaf; enabled refuses."""
        for start in STARTS:
            with self.subTest(f"start={start}"), torch.set_grad_enabled(start):
                weight = leaf(DEVICE)
                version = weight._version
                with cloned(False):
                    weight.mul_(2.0)
                self.assert_value(weight._version, version + 1, "version counter after one in-place update")
                self.assert_tensor(weight, torch.tensor([2.0 * v for v in VALUES]), "leaf after mul_(2)",
                                   device=DEVICE)
                self.assert_tensor_meta(weight, "leaf after the update", requires_grad=True)
                self.assert_true(weight.is_leaf and weight.grad_fn is None, "still a leaf without grad_fn")
                with cloned(True):
                    self.assert_raises_exactly(RuntimeError, "in-place update of a leaf under enabled grad",
                                               weight.mul_, 2.0, match="leaf Variable that requires grad")
                    y = polynomial(weight)
                self.assert_value(weight._version, version + 1, "version counter after the refused update")
                y.backward(torch.ones_like(y))
                self.assert_tensor(weight.grad, torch.tensor([4.0 * v + 3.0 for v in VALUES]),
                                   "gradient at the updated values", device=DEVICE)


class TestSetGradEnabledBadInput(GradModeTestCase):
    """Wrong mode values and signatures raise TypeError and leave the grad mode as it was."""

    BAD_MODES = (
        ("int 0", lambda: 0),
        ("int 1", lambda: 1),
        ("float 1.0", lambda: 1.0),
        ("None", lambda: None),
        ("str 'yes'", lambda: "yes"),
        ("list [True]", lambda: [True]),
        ("0-d bool tensor", lambda: torch.tensor(True, device=DEVICE)),
        ("0-d float tensor", lambda: torch.tensor(1.0, device=DEVICE)),
    )

    def test_non_bool_mode_raises_type_error_at_construction(self):
        """set_grad_enabled(v) and set_grad_enabled(mode=v) with a non-bool v raise TypeError, mode unchanged."""
        for label, make_value in self.BAD_MODES:
            for start in STARTS:
                with self.subTest(f"{label}, start={start}"), torch.set_grad_enabled(start):
                    value = make_value()
                    self.assert_raises_exactly(TypeError, f"set_grad_enabled({label})", torch.set_grad_enabled,
                                               value, match="must be bool")
                    self.assert_grad_mode(start, f"after set_grad_enabled({label}) raised")
                    self.assert_raises_exactly(TypeError, f"set_grad_enabled(mode={label})", torch.set_grad_enabled,
                                               mode=value, match="must be bool")
                    self.assert_grad_mode(start, f"after set_grad_enabled(mode={label}) raised")

    def test_non_bool_mode_raises_type_error_through_clone(self):
        """clone() of an object whose .mode was set to a non-bool raises TypeError; mode and object unchanged."""
        for label, make_value in self.BAD_MODES:
            for start in STARTS:
                with self.subTest(f"{label}, start={start}"), torch.set_grad_enabled(start):
                    original = set_grad_enabled_without_side_effect(not start)
                    value = make_value()
                    original.mode = value
                    self.assert_raises_exactly(TypeError, f"clone() with .mode = {label}", original.clone,
                                               match="must be bool")
                    self.assert_grad_mode(start, f"after clone() with .mode = {label} raised")
                    self.assert_is(original.mode, value, ".mode of the original after the failed clone()")

    def test_wrong_signatures_raise_type_error(self):
        """No mode, two modes, an unknown keyword, or an argument to clone(): TypeError, grad mode unchanged."""
        for start in STARTS:
            with torch.set_grad_enabled(start):
                original = set_grad_enabled_without_side_effect(not start)
                calls = (
                    ("set_grad_enabled()", lambda: torch.set_grad_enabled()),
                    ("set_grad_enabled(True, False)", lambda: torch.set_grad_enabled(True, False)),
                    (f"set_grad_enabled(enabled={not start})", lambda: torch.set_grad_enabled(enabled=not start)),
                    (f"clone({not start})", lambda: original.clone(not start)),
                    (f"clone(mode={not start})", lambda: original.clone(mode=not start)),
                )
                for label, call in calls:
                    with self.subTest(f"{label}, start={start}"):
                        self.assert_raises_exactly(TypeError, label, call)
                        self.assert_grad_mode(start, f"after {label} raised")


class TestSetGradEnabledCloneThreads(GradModeTestCase):
    """clone() and its decorators act on the calling thread only, in both directions."""

    def test_clone_in_worker_does_not_change_main_thread(self):
        """clone() in a worker switches the worker's mode only; the main thread keeps its mode meanwhile."""
        for mode in MODES:
            for start in STARTS:
                with self.subTest(f"mode={mode}, main start={start}"), torch.set_grad_enabled(start):
                    original = set_grad_enabled_without_side_effect(mode)
                    switched, release = threading.Event(), threading.Event()
                    seen = {}

                    def worker():
                        torch.set_grad_enabled(not mode)
                        original.clone()
                        seen["worker after clone()"] = torch.is_grad_enabled()
                        switched.set()
                        release.wait(THREAD_TIMEOUT_S)
                        seen["worker after the main thread checked"] = torch.is_grad_enabled()

                    thread, errors = self.run_in_thread(worker)
                    try:
                        self.assert_true(switched.wait(THREAD_TIMEOUT_S), "worker cloned before the timeout")
                        self.assert_grad_mode(start, "in the main thread while the worker's clone is active")
                        self.check_computation(start)
                    finally:
                        release.set()
                        self.join(thread, errors)
                    self.assert_value(seen, {"worker after clone()": mode,
                                             "worker after the main thread checked": mode},
                                      "grad mode seen in the worker")
                    self.assert_grad_mode(start, "in the main thread after the worker ended")

    def test_clone_in_main_thread_does_not_change_worker(self):
        """clone() in the main thread switches its mode only; a running worker keeps its own mode."""
        self.addCleanup(torch.set_grad_enabled, torch.is_grad_enabled())
        for mode in MODES:
            with self.subTest(f"mode={mode}"), torch.set_grad_enabled(not mode):
                original = set_grad_enabled_without_side_effect(mode)
                ready, cloned_event = threading.Event(), threading.Event()
                seen = {}

                def worker():
                    torch.set_grad_enabled(not mode)
                    ready.set()
                    cloned_event.wait(THREAD_TIMEOUT_S)
                    seen["worker after main clone()"] = torch.is_grad_enabled()
                    seen["worker result tracks"] = polynomial(leaf(DEVICE)).requires_grad

                thread, errors = self.run_in_thread(worker)
                try:
                    self.assert_true(ready.wait(THREAD_TIMEOUT_S), "worker set its mode before the timeout")
                    original.clone()
                    self.assert_grad_mode(mode, "in the main thread after clone()")
                finally:
                    cloned_event.set()
                    self.join(thread, errors)
                    torch.set_grad_enabled(not mode)
                self.assert_value(seen, {"worker after main clone()": not mode, "worker result tracks": not mode},
                                  "grad mode seen in the worker")

    def test_decorator_made_in_one_thread_applies_in_another(self):
        """A function decorated with a clone in one thread runs in the mode when called in the other, both ways."""
        for mode in MODES:
            for start in STARTS:
                with self.subTest(f"decorated in main, called in worker, mode={mode}"), torch.set_grad_enabled(start):
                    decorated = cloned(mode)(lambda: (torch.is_grad_enabled(), polynomial(leaf(DEVICE)).requires_grad))
                    seen = {}

                    def call_in_worker():
                        torch.set_grad_enabled(not mode)
                        seen["inside"] = decorated()
                        seen["worker after the call"] = torch.is_grad_enabled()

                    self.run_thread_to_end(call_in_worker)
                    self.assert_value(seen, {"inside": (mode, mode), "worker after the call": not mode},
                                      "grad mode in the worker")
                    self.assert_grad_mode(start, "in the main thread after the worker called")
                with self.subTest(f"decorated in worker, called in main, mode={mode}"), torch.set_grad_enabled(start):
                    made = {}

                    def decorate_in_worker():
                        torch.set_grad_enabled(not start)
                        made["function"] = cloned(mode)(torch.is_grad_enabled)
                        made["worker after decorating"] = torch.is_grad_enabled()

                    self.run_thread_to_end(decorate_in_worker)
                    self.assert_grad_mode(start, "in the main thread after the worker decorated")
                    self.assert_is(made["worker after decorating"], not start, "worker's mode after decorating")
                    self.assert_is(made["function"](), mode, "grad mode inside the call in the main thread")
                    self.assert_grad_mode(start, "in the main thread after the call")


class TestSetGradEnabledCloneInferenceMode(GradModeTestCase):
    """A clone used inside torch.inference_mode(): grad mode follows, autograd recording does not."""

    def test_clone_inside_inference_mode(self):
        """Inside inference_mode a cloned enabled mode turns grad on, results stay untracked; exit restores."""
        for mode in MODES:
            for start in STARTS:
                with self.subTest(f"mode={mode}, start={start}"), torch.set_grad_enabled(start):
                    x = leaf(DEVICE)
                    with torch.inference_mode():
                        self.assert_grad_mode(False, "inside inference_mode")
                        original = set_grad_enabled_without_side_effect(mode)
                        with original.clone():
                            self.assert_grad_mode(mode, "inside the clone inside inference_mode")
                            self.assert_true(torch.is_inference_mode_enabled(), "inference mode inside the clone")
                            y = polynomial(x)
                        self.assert_grad_mode(False, "after the clone's block inside inference_mode")
                        original.clone()  # left switched: leaving inference_mode must undo it
                        self.assert_grad_mode(mode, "after a plain clone() inside inference_mode")
                    self.assert_grad_mode(start, "right after inference_mode (the mode it was entered with)")
                    self.assert_false(torch.is_inference_mode_enabled(), "inference mode after its block")
                    self.assert_tensor_meta(y, "result computed inside inference_mode", requires_grad=False)
                    self.assert_is(y.grad_fn, None, "grad_fn of the result computed inside inference_mode")
                    self.assert_true(y.is_inference(), "the result is an inference tensor")
                    self.assert_tensor(y, torch.tensor(EXPECTED_VALUES), "x*x + 3x inside inference_mode",
                                       device=DEVICE)


if __name__ == "__main__":
    run_tests()
