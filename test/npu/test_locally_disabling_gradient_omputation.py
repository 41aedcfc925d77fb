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
"""
from torch_npu_testing import TestCase, run_tests, device_type, requires_api, torch_version_at_least

import threading

import torch
from torch.autograd import grad_mode

DEVICE = device_type()

STARTS = (False, True)
# Values whose products and sums are exact in float32, so results compare with zero tolerance.
VALUES = (0.5, -1.25, 2.0, 3.0)
EXPECTED_VALUES = [v * v + 3.0 * v for v in VALUES]
EXPECTED_GRADS = [2.0 * v + 3.0 for v in VALUES]
THREAD_TIMEOUT_S = 30.0


def leaf(device):
    return torch.tensor(VALUES, dtype=torch.float32, device=device, requires_grad=True)


def polynomial(x):
    """x*x + 3x: differentiable, exact for VALUES."""
    return x * x + 3.0 * x


def set_grad_enabled_without_side_effect(mode):
    """A ``set_grad_enabled(mode)`` object whose construction-time change of grad mode is undone.

    Used to obtain an original to ``.clone()`` from without leaving the grad mode changed.
    """
    before = torch.is_grad_enabled()
    original = torch.set_grad_enabled(mode)
    torch.set_grad_enabled(before)
    return original


# Ways to enter a grad mode with ``with``: (label, factory called inside the with statement, mode inside).
CONTEXT_MANAGERS = (
    ("no_grad()", lambda: torch.no_grad(), False),
    ("enable_grad()", lambda: torch.enable_grad(), True),
    ("set_grad_enabled(False)", lambda: torch.set_grad_enabled(False), False),
    ("set_grad_enabled(True)", lambda: torch.set_grad_enabled(True), True),
    ("set_grad_enabled(False).clone()", lambda: set_grad_enabled_without_side_effect(False).clone(), False),
    ("set_grad_enabled(True).clone()", lambda: set_grad_enabled_without_side_effect(True).clone(), True),
)

# Ways to decorate a function: (label, decorate(func) -> wrapped, mode inside the call).
DECORATORS = (
    ("@no_grad", lambda func: torch.no_grad(func), False),
    ("@no_grad()", lambda func: torch.no_grad()(func), False),
    ("@enable_grad", lambda func: torch.enable_grad(func), True),
    ("@enable_grad()", lambda func: torch.enable_grad()(func), True),
    ("@set_grad_enabled(False)", lambda func: torch.set_grad_enabled(False)(func), False),
    ("@set_grad_enabled(True)", lambda func: torch.set_grad_enabled(True)(func), True),
    ("@set_grad_enabled(False).clone()", lambda func: set_grad_enabled_without_side_effect(False).clone()(func),
     False),
    ("@set_grad_enabled(True).clone()", lambda func: set_grad_enabled_without_side_effect(True).clone()(func), True),
)


class Boom(Exception):
    """Raised inside a block or decorated function to check the restore-on-exception path."""


class GradModeTestCase(TestCase):
    """Shared checks; concrete classes call them with the API under test.

    Comparisons use assertIs, assertListEqual/assertDictEqual and torch.testing.assert_close, which mean the
    same under both base TestCases (torch_npu's assertEqual takes ``prec``/``message``, not ``atol``/``msg``).
    """

    def assert_grad_mode(self, expected, where):
        self.assertIs(torch.is_grad_enabled(), expected, f"grad mode {where}")

    def check_computation(self, expect_history):
        """A result computed on DEVICE now records history iff ``expect_history``; values match CPU."""
        x = leaf(DEVICE)
        y = polynomial(x)
        self.assertIs(y.requires_grad, expect_history)
        self.assertIs(y.grad_fn is not None, expect_history)
        self.assertEqual(y.device.type, DEVICE)
        torch.testing.assert_close(y.detach().cpu(), torch.tensor(EXPECTED_VALUES), atol=0, rtol=0)
        reference_x = leaf("cpu")
        reference = polynomial(reference_x)
        self.assertIs(reference.requires_grad, expect_history)
        if DEVICE != "cpu":
            torch.testing.assert_close(y.detach().cpu(), reference.detach(), atol=0, rtol=0)
        if expect_history:
            y.sum().backward()
            reference.sum().backward()
            torch.testing.assert_close(x.grad.cpu(), torch.tensor(EXPECTED_GRADS), atol=0, rtol=0)
            if DEVICE != "cpu":
                torch.testing.assert_close(x.grad.cpu(), reference_x.grad, atol=0, rtol=0)

    def check_context_manager(self, make, inside):
        """``with make():`` sets ``inside`` and restores the starting mode on exit, also on an exception."""
        for start in STARTS:
            with self.subTest(start=start), torch.set_grad_enabled(start):
                with make():
                    self.assert_grad_mode(inside, "inside the with block")
                    self.check_computation(inside)
                self.assert_grad_mode(start, "right after the with block")
                with self.assertRaises(Boom), make():
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
                self.assertIs(compute().requires_grad, inside)
                self.assert_grad_mode(start, "right after the decorated function returned")
                with torch.set_grad_enabled(not start):  # the mode at call time is what is restored
                    self.assertIs(compute().requires_grad, inside)
                    self.assert_grad_mode(not start, "right after a call made in the other mode")
                with self.assertRaises(Boom):
                    compute(fail=True)
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
                self.assertIs(next(gen), inside)
                self.assert_grad_mode(start, "between yields (after the first step)")
                with torch.set_grad_enabled(not start):
                    self.assertEqual(gen.send("sent"), "sent")
                    self.assert_grad_mode(not start, "between yields (caller switched mode)")
                self.assertIs(gen.throw(Boom), inside)
                self.assert_grad_mode(start, "between yields (after throw)")
                gen.close()
                self.assert_grad_mode(start, "after closing the generator")
                self.assertListEqual(seen, [("first step", inside), ("after send", inside),
                                            ("in except after throw", inside), ("in finally on close", inside)])


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
        self.assertTrue(created.requires_grad)
        self.assertTrue(created.is_leaf)
        self.assertFalse(derived.requires_grad)

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
        self.assertIs(torch.set_grad_enabled, grad_mode.set_grad_enabled)
        self.assertIs(torch.autograd.set_grad_enabled, grad_mode.set_grad_enabled)
        self.assertIsInstance(grad_mode.set_grad_enabled, type)

    def test_plain_call_switches_mode_until_switched_again(self):
        """set_grad_enabled(mode) as a call switches grad mode at once and it stays after the object is dropped."""
        self.addCleanup(torch.set_grad_enabled, torch.is_grad_enabled())
        for start in STARTS:
            for mode in (False, True):
                with self.subTest(start=start, mode=mode), torch.set_grad_enabled(start):
                    try:
                        returned = torch.set_grad_enabled(mode)
                        self.assertIsInstance(returned, grad_mode.set_grad_enabled)
                        self.assertIs(returned.mode, mode)
                        del returned
                        self.assert_grad_mode(mode, "after the plain call")
                        self.check_computation(mode)
                    finally:
                        torch.set_grad_enabled(start)

    def test_context_manager_sets_mode_and_restores(self):
        """with set_grad_enabled(mode): mode inside; the previous mode is back on exit or exception."""
        for mode in (False, True):
            with self.subTest(mode=mode):
                self.check_context_manager(lambda: torch.set_grad_enabled(mode), inside=mode)

    def test_grad_mode_module_context_manager_sets_mode_and_restores(self):
        """torch.autograd.grad_mode.set_grad_enabled used directly behaves the same as a context manager."""
        for mode in (False, True):
            with self.subTest(mode=mode):
                self.check_context_manager(lambda: grad_mode.set_grad_enabled(mode), inside=mode)

    def test_exit_restores_mode_saved_at_construction(self):
        """An object built earlier restores, on exit, the mode saved when it was built, not the mode at entry."""
        self.addCleanup(torch.set_grad_enabled, torch.is_grad_enabled())
        for start in STARTS:
            for mode in (False, True):
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
        for mode in (False, True):
            with self.subTest(mode=mode):
                self.check_decorator(lambda func: torch.set_grad_enabled(mode)(func), inside=mode)

    def test_decorated_generator_sets_mode_in_each_step(self):
        """@set_grad_enabled(mode) on a generator: each step runs in mode, the caller's mode is back between."""
        for mode in (False, True):
            with self.subTest(mode=mode):
                self.check_decorated_generator(lambda func: torch.set_grad_enabled(mode)(func), inside=mode)

    def test_repr_names_the_mode(self):
        """repr(set_grad_enabled(mode)) names the mode from torch 2.9 (pytorch#155681); the object repr before."""
        self.addCleanup(torch.set_grad_enabled, torch.is_grad_enabled())
        for mode in (False, True):
            with self.subTest(mode=mode), torch.set_grad_enabled(True):
                text = repr(torch.set_grad_enabled(mode))
                if torch_version_at_least("2.9"):
                    self.assertEqual(text, f"torch.autograd.grad_mode.set_grad_enabled(mode={mode})")
                    self.assertEqual(str(torch.set_grad_enabled(mode)), text)
                elif not torch_version_at_least("2.8"):
                    self.assertTrue(text.startswith("<torch.autograd.grad_mode.set_grad_enabled object at 0x"), text)
                else:
                    self.skipTest(f"torch {torch.__version__}: whether 2.8 has set_grad_enabled.__repr__ is not "
                                  "verified by this kit")


class TestSetGradEnabledClone(GradModeTestCase):
    """torch.autograd.grad_mode.set_grad_enabled.clone: a fresh object with the same mode."""

    def test_clone_is_new_object_of_same_class_and_mode(self):
        """clone() returns a different set_grad_enabled object with the same .mode, for both modes."""
        for mode in (False, True):
            with self.subTest(mode=mode), torch.set_grad_enabled(True):
                original = set_grad_enabled_without_side_effect(mode)
                copy = grad_mode.set_grad_enabled.clone(original)
                self.assertIsNot(copy, original)
                self.assertIs(type(copy), type(original))
                self.assertIs(type(copy), grad_mode.set_grad_enabled)
                self.assertIs(copy.mode, mode)
                self.assertIs(original.mode, mode)

    def test_clone_switches_grad_mode_when_constructed(self):
        """clone() constructs again, so like set_grad_enabled(mode) it switches grad mode to mode at once."""
        self.addCleanup(torch.set_grad_enabled, torch.is_grad_enabled())
        for start in STARTS:
            for mode in (False, True):
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
        for mode in (False, True):
            original = set_grad_enabled_without_side_effect(mode)
            with self.subTest(mode=mode):
                self.check_context_manager(original.clone, inside=mode)
                self.check_context_manager(lambda: torch.set_grad_enabled(mode), inside=mode)

    def test_clone_as_decorator_matches_original(self):
        """@original.clone(): each call runs in the original's mode and restores, also on exception."""
        for mode in (False, True):
            original = set_grad_enabled_without_side_effect(mode)
            with self.subTest(mode=mode):
                self.check_decorator(lambda func: original.clone()(func), inside=mode)
                self.check_decorated_generator(lambda func: original.clone()(func), inside=mode)

    def test_clone_and_original_restore_independently(self):
        """Using the clone does not touch the original: each restores the mode saved at its own construction."""
        self.addCleanup(torch.set_grad_enabled, torch.is_grad_enabled())
        for mode in (False, True):
            with self.subTest(mode=mode), torch.set_grad_enabled(not mode):
                try:
                    original = torch.set_grad_enabled(mode)  # saves `not mode`
                    copy = original.clone()  # built while `mode` is current: saves `mode`
                    self.assertIsNot(copy, original)
                    with copy:
                        self.assert_grad_mode(mode, "inside the clone")
                    self.assert_grad_mode(mode, "after the clone's block (its own saved mode)")

                    @copy
                    def decorated():
                        return torch.is_grad_enabled()

                    self.assertIs(decorated(), mode)
                    self.assertIs(original.mode, mode)
                    self.assertIs(copy.mode, mode)
                    with original:
                        self.assert_grad_mode(mode, "inside the original")
                    self.assert_grad_mode(not mode, "after the original's block (unaffected by the clone)")
                    torch.set_grad_enabled(not mode)
                    with copy:
                        self.assert_grad_mode(mode, "inside the clone, after the original was used")
                    self.assert_grad_mode(mode, "after the clone's second block (still its own saved mode)")
                finally:
                    torch.set_grad_enabled(not mode)


@requires_api("torch.autograd.grad_mode.no_grad.clone")
class TestNoGradEnableGradClone(GradModeTestCase):
    """no_grad().clone() / enable_grad().clone() (inherited from _DecoratorContextManager)."""

    def test_clone_is_new_object_and_does_not_switch_mode(self):
        """clone() of no_grad()/enable_grad() is a new object of the same class; building it switches nothing."""
        for name, make in (("no_grad", torch.no_grad), ("enable_grad", torch.enable_grad)):
            for start in STARTS:
                with self.subTest(api=name, start=start), torch.set_grad_enabled(start):
                    original = make()
                    copy = original.clone()
                    self.assertIsNot(copy, original)
                    self.assertIs(type(copy), type(original))
                    self.assert_grad_mode(start, "after clone()")

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
                                self.assertIs(polynomial(leaf(DEVICE)).requires_grad, inner_mode)
                            self.assert_grad_mode(outer_mode, "right after the inner block")
                            with self.assertRaises(Boom), make_inner():
                                raise Boom
                            self.assert_grad_mode(outer_mode, "right after the inner block raised")
                            self.assertIs(polynomial(leaf(DEVICE)).requires_grad, outer_mode)
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
                        self.assertIs(outer(), outer_mode)
                        self.assert_grad_mode(start, "right after the outer function returned")
                        self.assertListEqual(seen, [("outer", outer_mode), ("inner", inner_mode),
                                                    ("inner result", inner_mode), ("after inner returned", outer_mode),
                                                    ("inner", inner_mode), ("after inner raised", outer_mode)])

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

    def run_in_thread(self, target):
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
        self.assertFalse(worker.is_alive(), "worker thread did not finish")
        if errors:
            raise errors[0]

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
                    self.assertTrue(switched.wait(THREAD_TIMEOUT_S), "worker never switched grad mode")
                    self.assert_grad_mode(start, "in the main thread while the worker has grad disabled")
                    self.check_computation(start)
                finally:
                    release.set()
                    self.join(thread, errors)
                self.assert_grad_mode(start, "in the main thread after the worker ended")
                # A new thread starts with grad enabled whatever the creating thread's mode.
                self.assertDictEqual(seen, {"worker initial": True, "worker result tracks": False,
                                            "worker after block": False})

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
                        self.assertTrue(switched.wait(THREAD_TIMEOUT_S), "worker never started")
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
                self.assertDictEqual(seen, {"worker initial": True, "worker after main switched": start,
                                            "worker result tracks": start})


if __name__ == "__main__":
    run_tests()
