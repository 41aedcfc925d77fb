# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""API-consistency tests for ``torch._functorch.config.patch``.

``config.patch`` temporarily changes functorch/AOTAutograd settings, as a context manager or as a
decorator. torch_npu relies on it (and on the flags it patches) unchanged, so an NPU port must behave
exactly as upstream PyTorch: the same call forms, the same values applied, the same values restored
(after nesting, reuse and exceptions), the same errors for bad arguments and unknown keys.

Where upstream releases differ, the installed release's behaviour is asserted:

- invalid argument combinations raise ``AssertionError`` with an empty message before torch 2.11 and
  with a descriptive message from 2.11;
- re-entering a patch object that is still active raises ``AssertionError`` before 2.12 and works
  (a stack of saved values) from 2.12;
- patched values are process-wide before 2.12 and thread-local from 2.12.

On a CPU box every contract point is checked on the CPU. On an accelerator the one computation that
goes through AOTAutograd under a patched flag also runs on the device and must equal the CPU reference.
"""
from torch_npu_testing import TestCase, run_tests, device_type, requires_api, torch_version_at_least

import threading
import unittest

import torch
from torch._functorch import config

DEVICE = device_type()

# Keys present, with these defaults, on every supported release (2.7.1 .. 2.13).
DEBUG_ASSERT_DEFAULT = False
CSE_DEFAULT = True
# A third key whose default we only read (it is an int tuning knob, not part of this contract).
INT_KEY = "max_dist_from_bw"

UNKNOWN_KEY = "no_such_key_for_api_consistency_tests"

# Messages of the invalid-argument AssertionErrors (torch >= 2.11; earlier releases use bare asserts).
MSG_BOTH_FORMS = "cannot pass both positional and keyword arguments to patch"
MSG_LONE_ARG = "first argument must be a dict when passing a single positional arg to patch"
MSG_KEY_NOT_STR = "first argument must be a string when passing 2 positional args to patch"
MSG_VALUE_WITHOUT_KEY = "second positional argument is only valid when first argument is a key string"
MSG_REENTER = "prior should be empty when entering ConfigPatch"

MESSAGES_SINCE = "2.11"
REENTRANT_AND_THREAD_LOCAL_SINCE = "2.12"


def _same(actual, expected):
    """Equal *and* of the same type: True == 1 in Python, but a port that coerces values must fail."""
    return type(actual) is type(expected) and actual == expected


class ConfigPatchTestBase(TestCase):
    """Shared checks: every mismatch names the key, the moment and both values."""

    def expect_config(self, where, **expected):
        for key, want in expected.items():
            got = getattr(config, key)
            if not _same(got, want):
                self.fail(f"{where}: torch._functorch.config.{key} expected {want!r} "
                          f"({type(want).__name__}), got {got!r} ({type(got).__name__})")

    def expect_equal(self, actual, expected, what):
        if actual != expected:
            self.fail(f"{what}: expected {expected!r}, got {actual!r}")

    def expect_config_unchanged(self, before, where):
        now = config.get_config_copy()
        changed = {key: (before.get(key), now.get(key)) for key in set(before) | set(now)
                   if before.get(key) != now.get(key)}
        if changed:
            self.fail(f"{where}: config keys changed (key: (before, now)): {changed!r}")

    def expect_defaults(self, where):
        self.expect_config(where, debug_assert=DEBUG_ASSERT_DEFAULT, cse=CSE_DEFAULT)

    def expect_assertion_message(self, error, expected_since_2_11, what):
        """Installed-version rule for the AssertionError text of invalid patch() calls."""
        got = str(error)
        want = expected_since_2_11 if torch_version_at_least(MESSAGES_SINCE) else ""
        if got != want:
            self.fail(f"{what}: AssertionError message on torch {torch.__version__} expected {want!r}, got {got!r}")


class TestConfigPatchCallForms(ConfigPatchTestBase):
    """The three spellings of a patch (key + value, dict, keywords) and the empty patch."""

    def test_key_value_form_applies_inside_and_restores_after(self):
        """patch("key", value) sets only that key while entered; __enter__ returns None; exit restores."""
        self.expect_defaults("before patch('debug_assert', True)")
        with config.patch("debug_assert", True) as bound:
            self.assertIsNone(bound, f"'with config.patch(...) as v' must bind None, got {bound!r}")
            self.expect_config("inside patch('debug_assert', True)", debug_assert=True, cse=CSE_DEFAULT)
        self.expect_defaults("after patch('debug_assert', True)")

    def test_dict_form_applies_every_key_and_restores_every_key(self):
        """patch({k1: v1, k2: v2, k3: v3}) applies all keys together and restores all of them."""
        int_before = getattr(config, INT_KEY)
        with config.patch({"debug_assert": True, "cse": False, INT_KEY: int_before + 7}):
            self.expect_config("inside dict patch", debug_assert=True, cse=False, **{INT_KEY: int_before + 7})
        self.expect_defaults("after dict patch")
        self.expect_config("after dict patch", **{INT_KEY: int_before})

    def test_keyword_form_applies_every_key_and_restores_every_key(self):
        """patch(k1=v1, k2=v2, k3=v3) applies all keys together and restores all of them."""
        int_before = getattr(config, INT_KEY)
        with config.patch(debug_assert=True, cse=False, **{INT_KEY: int_before + 3}):
            self.expect_config("inside keyword patch", debug_assert=True, cse=False, **{INT_KEY: int_before + 3})
        self.expect_defaults("after keyword patch")
        self.expect_config("after keyword patch", **{INT_KEY: int_before})

    def test_empty_patch_changes_nothing(self):
        """patch() and patch({}) are valid no-ops as context managers and as decorators."""
        before = config.get_config_copy()
        for label, patch in (("patch()", config.patch()), ("patch({})", config.patch({}))):
            with patch as bound:
                self.assertIsNone(bound, f"{label}: __enter__ must return None, got {bound!r}")
                self.expect_config_unchanged(before, f"inside {label}")
            self.expect_config_unchanged(before, f"after {label}")

        @config.patch()
        def decorated():
            return config.get_config_copy()

        during_call = decorated()
        self.expect_equal(during_call, before, "config seen inside a function decorated with @patch()")
        self.expect_config_unchanged(before, "after calling a function decorated with @patch()")

    def test_patch_object_does_nothing_until_entered(self):
        """Building a patch object changes no value; only __enter__ (or calling a decorated function) does."""
        patch = config.patch(debug_assert=True, cse=False)
        self.expect_defaults("after constructing patch(debug_assert=True, cse=False), before entering it")
        with patch:
            self.expect_config("inside", debug_assert=True, cse=False)
        self.expect_defaults("after exit")

    def test_values_are_not_type_checked(self):
        """Any object is stored as is (no coercion, no validation) and the typed default comes back."""
        marker = ["a", "list", "object"]
        with config.patch(debug_assert="yes", cse=3, **{INT_KEY: marker}):
            self.expect_config("inside patch with wrongly typed values", debug_assert="yes", cse=3)
            self.assertIs(getattr(config, INT_KEY), marker,
                          f"config.{INT_KEY} must be the very object patched in, got {getattr(config, INT_KEY)!r}")
        with config.patch({"debug_assert": None}):
            self.expect_config("inside patch({'debug_assert': None})", debug_assert=None)
        self.expect_defaults("after patches with wrongly typed values")


class TestConfigPatchAsDecorator(ConfigPatchTestBase):
    """patch(...) used with @ on a function, a method and a unittest.TestCase class."""

    def test_decorator_on_plain_function_applies_for_each_call(self):
        """@patch applies during every call, restores after each, passes arguments and results through."""

        @config.patch("debug_assert", True)
        def read_flags(offset, *, scale=1):
            return (config.debug_assert, config.cse, offset * scale)

        self.expect_defaults("after decorating, before any call")
        for call in range(2):
            seen = read_flags(5, scale=2)
            self.expect_equal(seen, (True, CSE_DEFAULT, 10),
                              f"call {call}: (debug_assert, cse, result) seen by the decorated function")
            self.expect_defaults(f"after call {call} of the decorated function")

    def test_decorator_keeps_the_function_identity(self):
        """The decorated function keeps __name__/__doc__ and exposes the original as __wrapped__."""

        def original():
            """doc of original"""
            return config.debug_assert

        decorated = config.patch(debug_assert=True)(original)
        self.expect_equal(decorated.__name__, "original", "__name__ of the decorated function")
        self.expect_equal(decorated.__doc__, "doc of original", "__doc__ of the decorated function")
        self.assertIs(getattr(decorated, "__wrapped__", None), original, "__wrapped__ must be the undecorated function")
        self.assertIs(decorated(), True, "decorated call must see debug_assert=True")
        self.assertIs(original(), DEBUG_ASSERT_DEFAULT, "the undecorated function must see the default")

    def test_decorator_on_method_receives_self(self):
        """@patch on a method: self and arguments reach the method, the patch is active, then restored."""

        class Holder:
            def __init__(self):
                self.calls = []

            @config.patch({"cse": False, "debug_assert": True})
            def record(self, tag):
                self.calls.append((tag, config.cse, config.debug_assert))
                return self

        holder = Holder()
        returned = holder.record("first").record("second")
        self.assertIs(returned, holder, "the method must receive the instance as self and return it unchanged")
        self.expect_equal(holder.calls, [("first", False, True), ("second", False, True)],
                          "(tag, cse, debug_assert) recorded by the decorated method")
        self.expect_defaults("after the decorated method calls")

    def test_decorator_on_testcase_class_patches_for_the_class_lifetime(self):
        """@patch on a unittest.TestCase class: active in setUpClass..tearDownClass, restored afterwards."""
        seen = []

        @config.patch(debug_assert=True)
        class Inner(unittest.TestCase):
            @classmethod
            def setUpClass(cls):
                seen.append(("setUpClass", config.debug_assert))

            def test_reads_flag(self):
                seen.append(("test", config.debug_assert))

            @classmethod
            def tearDownClass(cls):
                seen.append(("tearDownClass", config.debug_assert))

        self.expect_equal(Inner.__name__, "Inner", "__name__ of the decorated TestCase class")
        self.expect_defaults("after decorating a TestCase class, before running it")
        suite = unittest.defaultTestLoader.loadTestsFromTestCase(Inner)
        result = unittest.TestResult()
        suite.run(result)
        self.assertTrue(result.wasSuccessful(), f"inner TestCase failed: {result.errors + result.failures}")
        expected = [("setUpClass", True), ("test", True), ("tearDownClass", True)]
        self.expect_equal(seen, expected, "(phase, debug_assert) seen by the decorated TestCase class")
        self.expect_defaults("after running the decorated TestCase class")


class TestConfigPatchRestore(ConfigPatchTestBase):
    """What exit puts back: the value saved at enter, for the patched keys only, also after errors."""

    def test_nested_patches_restore_the_outer_value(self):
        """Leaving an inner patch restores the outer patch's value, not the default."""
        with config.patch(debug_assert=True):
            with config.patch(debug_assert="inner", cse=False):
                self.expect_config("inside inner patch", debug_assert="inner", cse=False)
            self.expect_config("after inner patch, inside outer patch", debug_assert=True, cse=CSE_DEFAULT)
            with config.patch(cse=False):
                self.expect_config("inside a nested patch of another key", debug_assert=True, cse=False)
            self.expect_config("after nested patch of another key", debug_assert=True, cse=CSE_DEFAULT)
        self.expect_defaults("after outer patch")

    def test_prior_value_is_saved_at_enter_not_at_construction(self):
        """A patch built earlier restores the value current when it was entered."""
        patch = config.patch(debug_assert="late")
        with config.patch(debug_assert="outer"):
            with patch:
                self.expect_config("inside the late-entered patch", debug_assert="late")
            self.expect_config("after the late-entered patch", debug_assert="outer")
        self.expect_defaults("after both patches")

    def test_exit_restores_saved_value_over_assignments_inside(self):
        """An assignment to a patched key inside the block is undone; other keys are left as assigned."""
        try:
            with config.patch(debug_assert=True):
                config.debug_assert = "assigned inside"
                config.cse = False
            self.expect_config("after exit: patched key restored, unpatched key keeps its assignment",
                               debug_assert=DEBUG_ASSERT_DEFAULT, cse=False)
        finally:
            config.cse = CSE_DEFAULT
        self.expect_defaults("after manual cleanup")

    def test_context_manager_restores_after_exception(self):
        """An exception inside the block propagates unchanged (not suppressed) and every key is restored."""
        error = ValueError("raised inside the patch")
        with self.assertRaises(ValueError) as caught, config.patch(debug_assert=True, cse=False):
            raise error
        self.assertIs(caught.exception, error, "the exception leaving the block must be the one raised inside")
        self.expect_defaults("after an exception inside a patch block")

    def test_decorator_restores_after_exception(self):
        """An exception in a decorated function propagates unchanged and every key is restored."""
        error = KeyError("raised in the decorated function")

        @config.patch({"debug_assert": True, "cse": False})
        def failing():
            raise error

        for call in range(2):
            with self.assertRaises(KeyError) as caught:
                failing()
            self.assertIs(caught.exception, error, "the exception must propagate out of the decorator unchanged")
            self.expect_defaults(f"after failing call {call} of a decorated function")

    def test_patch_object_can_be_entered_again_after_exit(self):
        """One patch object used twice in sequence applies and restores each time, saving the prior anew."""
        patch = config.patch(debug_assert=True, cse=False)
        with patch:
            self.expect_config("first use", debug_assert=True, cse=False)
        self.expect_defaults("after first use")
        with config.patch(debug_assert="outer"):
            with patch:
                self.expect_config("second use", debug_assert=True, cse=False)
            self.expect_config("after second use inside an outer patch", debug_assert="outer", cse=CSE_DEFAULT)
        self.expect_defaults("after second use")

    def test_reentering_an_active_patch_object_follows_installed_version(self):
        """Entering a still-active patch again: AssertionError before 2.12, a nested level from 2.12."""
        patch = config.patch(debug_assert=True)
        with patch:
            if torch_version_at_least(REENTRANT_AND_THREAD_LOCAL_SINCE):
                with patch:
                    self.expect_config("inside the re-entered patch", debug_assert=True)
                    config.debug_assert = "changed at inner level"
                self.expect_config("after the inner exit (restores the value seen at inner entry)", debug_assert=True)
            else:
                with self.assertRaises(AssertionError) as caught:
                    patch.__enter__()
                want = MSG_REENTER if torch_version_at_least(MESSAGES_SINCE) else ""
                self.expect_equal(str(caught.exception), want, "re-entry AssertionError message")
                self.expect_config("after the refused re-entry, the first entry is still active", debug_assert=True)
        self.expect_defaults("after leaving the patch object")

    def test_patched_value_visibility_in_other_threads_follows_installed_version(self):
        """Another thread sees the patched value before 2.12 (global) and the default from 2.12 (thread-local)."""
        seen = []
        with config.patch(debug_assert=True):
            worker = threading.Thread(target=lambda: seen.append(config.debug_assert))
            worker.start()
            worker.join()
        thread_local = torch_version_at_least(REENTRANT_AND_THREAD_LOCAL_SINCE)
        want = [DEBUG_ASSERT_DEFAULT] if thread_local else [True]
        self.expect_equal(seen, want, f"torch {torch.__version__}: debug_assert read by another thread "
                                      f"({'thread-local' if thread_local else 'process-wide'} patches)")
        self.expect_defaults("after the threaded check")


class TestConfigPatchErrors(ConfigPatchTestBase):
    """Unknown keys and invalid argument combinations."""

    def test_unknown_key_raises_attribute_error_when_entered(self):
        """An unknown key fails at enter (not at construction) and no other key is left changed."""
        want = f"torch._functorch.config.{UNKNOWN_KEY} does not exist"
        for changes in ({"debug_assert": True, UNKNOWN_KEY: 1}, {UNKNOWN_KEY: 1, "debug_assert": True}):
            patch = config.patch(changes)  # construction must not raise
            with self.assertRaises(AttributeError) as caught, patch:
                self.fail(f"the body of a patch with unknown key ran (changes={changes!r})")
            self.expect_equal(str(caught.exception), want, "unknown-key AttributeError message")
            self.expect_defaults(f"after failing to enter patch({changes!r})")
        self.assertFalse(hasattr(config, UNKNOWN_KEY), "hasattr(config, unknown) must be False")

    def test_unknown_key_in_decorator_raises_at_call_not_at_decoration(self):
        """@patch(unknown=...) decorates fine; each call raises AttributeError before the body runs."""
        calls = []

        @config.patch(debug_assert=True, **{UNKNOWN_KEY: 1})
        def body():
            calls.append(1)

        with self.assertRaises(AttributeError):
            body()
        self.expect_equal(calls, [], "calls of a decorated body despite the unknown key")
        self.expect_defaults("after calling a function decorated with an unknown key")

    def test_invalid_argument_combinations_raise_assertion_error(self):
        """dict+kwargs, key+value+kwargs, a lone key, a key with value None, a non-str key, value without key."""
        cases = (
            ("dict + kwargs", ({"debug_assert": True},), {"cse": False}, MSG_BOTH_FORMS),
            ("key + value + kwargs", ("debug_assert", True), {"cse": False}, MSG_BOTH_FORMS),
            ("lone key", ("debug_assert",), {}, MSG_LONE_ARG),
            ("key with value None (None means 'no value')", ("debug_assert", None), {}, MSG_LONE_ARG),
            ("non-str key with value", (1, True), {}, MSG_KEY_NOT_STR),
            ("value without key", (None, True), {}, MSG_VALUE_WITHOUT_KEY),
        )
        for label, args, kwargs, message in cases:
            with self.subTest(label):
                with self.assertRaises(AssertionError, msg=f"patch(*{args!r}, **{kwargs!r}) must raise") as caught:
                    config.patch(*args, **kwargs)
                self.expect_assertion_message(caught.exception, message, label)
                self.expect_defaults(f"after invalid patch ({label})")


class TestConfigPatchDrivesComputation(ConfigPatchTestBase):
    """A patched flag must reach the machinery that reads it, on the test device as on the CPU."""

    @requires_api("torch._functorch.aot_autograd.aot_function")
    def test_patched_cse_flag_reaches_aot_autograd(self):
        """Under patch(cse=...) AOTAutograd sees the flag (1 vs 2 muls); results and grads equal CPU eager."""
        from torch._functorch.aot_autograd import aot_function, make_boxed_func
        from torch._functorch.partitioners import min_cut_rematerialization_partition

        def duplicated_square(x):
            return x * x + x * x  # CSE merges the two identical muls into one

        def run(device, cse):
            seen = {}

            def forward_compiler(graph_module, example_inputs):
                seen["cse"] = config.cse
                seen["muls"] = sum(1 for node in graph_module.graph.nodes
                                   if node.op == "call_function" and node.target is torch.ops.aten.mul.Tensor)
                return make_boxed_func(graph_module)

            compiled = aot_function(duplicated_square, fw_compiler=forward_compiler,
                                    bw_compiler=lambda gm, _: make_boxed_func(gm),
                                    partition_fn=min_cut_rematerialization_partition)
            x = torch.tensor([1.0, -2.0, 3.0, 0.5], device=device, requires_grad=True)
            with torch.enable_grad(), config.patch(cse=cse):
                out = compiled(x)
                out.sum().backward()
            return seen, out.detach(), x.grad

        x_ref = torch.tensor([1.0, -2.0, 3.0, 0.5])
        eager_out, eager_grad = duplicated_square(x_ref), 4 * x_ref  # exact: small dyadic values
        for cse, muls in ((True, 1), (False, 2)):
            seen, out, grad = run(DEVICE, cse)
            self.expect_equal(seen, {"cse": cse, "muls": muls}, f"patch(cse={cse}): what the forward compiler saw")
            self.expect_equal(out.device.type, DEVICE, "device of the compiled function's output")
            torch.testing.assert_close(out.cpu(), eager_out, atol=0, rtol=0,
                                       msg=lambda m, c=cse: f"patch(cse={c}) output on {DEVICE} != CPU eager: {m}")
            torch.testing.assert_close(grad.cpu(), eager_grad, atol=0, rtol=0,
                                       msg=lambda m, c=cse: f"patch(cse={c}) grad on {DEVICE} != CPU reference: {m}")
            self.expect_defaults(f"after the aot_function run with patch(cse={cse})")


if __name__ == "__main__":
    run_tests()
