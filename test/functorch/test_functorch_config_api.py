# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""API-consistency tests for ``torch._functorch.config.patch``.

``config.patch`` temporarily changes functorch/AOTAutograd settings, as a context manager or as a
decorator. torch_npu relies on it (and on the flags it patches) unchanged, so an NPU port must behave
exactly as upstream PyTorch: the same call forms, the same values applied, the same values restored
(after nesting, reuse and exceptions), the same errors for bad arguments and unknown keys, the same
visibility across threads, and a patched flag must reach the AOTAutograd machinery that reads it.

Input classes where device ports break, and where they are covered:

- call forms and parameters: ``TestConfigPatchCallForms`` (key + value, dict, keywords, the parameter
  names ``arg1``/``arg2``, empty), ``TestConfigPatchAsDecorator`` (function, method, generator function,
  plain class, ``unittest.TestCase`` class), ``TestConfigPatchRestore`` (nesting, reuse, re-entry);
- dtypes: ``TestConfigPatchValueTypes`` patches one key of every value type the installed functorch
  config holds (bool, int, float, str, None, list; a callable goes into a None-valued key) and values of
  other types (no type check); ``TestConfigPatchComputationDtypes`` runs the computation driven under the
  patch in float32, float64, float16, bfloat16, int64 and bool;
- layouts and sizes: ``config.patch`` takes no tensor, so they apply only to the computation driven
  under the patch: ``TestConfigPatchComputationLayouts`` (transposed, permuted, sliced with a step,
  expanded, channels_last) and ``TestConfigPatchComputationSizes`` (batch 0, inner 0, 0-d, size-1 dims)
  go through the one ``aot_function`` graph compiled under ``patch(cse=False)`` (shared by the three
  computation classes, to keep compile time low) and must equal CPU eager on the contiguous copy;
- side effects: the API mutates no tensor; its side effect is the config state: restore after nesting,
  reuse, exceptions and assignments (``TestConfigPatchRestore``), consistency with ``get_config_copy``,
  ``save_config`` and ``load_config`` (``TestConfigPatchSerialization``), a tensor used as a value is
  stored by identity, neither copied nor moved;
- bad input: ``TestConfigPatchBadInput``;
- threads: ``TestConfigPatchThreads``, in both directions.

Where upstream releases differ, the installed release's behaviour is asserted:

- invalid argument combinations raise ``AssertionError`` with an empty message before torch 2.10 and
  with a descriptive message from 2.10; too many positional arguments raise ``TypeError`` (Python);
- re-entering a patch object that is still active raises ``AssertionError`` before 2.12 and works
  (a stack of saved values) from 2.12; exiting a patch that was never entered is a no-op before 2.12
  and raises ``AssertionError`` from 2.12; before 2.12 an enter that failed on an unknown key keeps the
  values it had already saved, so the next enter of that object raises ``AssertionError`` (re-entry),
  from 2.12 it raises ``AttributeError`` again;
- patched values are process-wide before 2.12 and thread-local from 2.12 (so one patch object can be
  active in two threads at once only from 2.12).

On a CPU box every contract point is checked on the CPU against independently computed values. On an
accelerator the computation driven under the patch runs on the device and must equal the CPU reference
exactly (the inputs are small integer-valued numbers, exact in every dtype used).
"""
from torch_npu_testing import TestCase, run_tests, device_type, requires_api, torch_version_at_least

import contextlib
import functools
import pickle
import re
import threading
import unittest

import torch
from torch._functorch import config

DEVICE = device_type()

# Keys present, with these defaults, on every supported release (2.7.1 .. 2.14).
DEBUG_ASSERT_DEFAULT = False
CSE_DEFAULT = True
INT_KEY = "max_dist_from_bw"  # an int tuning knob present on every supported release

UNKNOWN_KEY = "no_such_key_for_api_consistency_tests"

# Messages of the invalid-argument AssertionErrors (torch >= 2.10; earlier releases use bare asserts).
MSG_BOTH_FORMS = "cannot pass both positional and keyword arguments to patch"
MSG_LONE_ARG = "first argument must be a dict when passing a single positional arg to patch"
MSG_KEY_NOT_STR = "first argument must be a string when passing 2 positional args to patch"
MSG_VALUE_WITHOUT_KEY = "second positional argument is only valid when first argument is a key string"
MSG_REENTER = "prior should be empty when entering ConfigPatch"
MSG_EXIT_NOT_ENTERED = "prior should not be empty when exiting ConfigPatch"

MESSAGES_SINCE = "2.10"
REENTRANT_AND_THREAD_LOCAL_SINCE = "2.12"
THREAD_WAIT_S = 10.0


# --------------------------------------------------------------------------- value builders
def typed(value):
    """``(type name, value)``: True == 1 in Python, so a port that coerces a value must not compare equal."""
    return (type(value).__name__, value)


def current(*keys):
    """The current value of each key, typed."""
    return {key: typed(getattr(config, key)) for key in keys}


def expected(**values):
    """The expected value of each key, typed."""
    return {key: typed(value) for key, value in values.items()}


DEFAULTS = expected(debug_assert=DEBUG_ASSERT_DEFAULT, cse=CSE_DEFAULT)


def installed_message(message_since_2_10):
    """Regex for the AssertionError text of the installed release: empty before 2.10."""
    want = message_since_2_10 if torch_version_at_least(MESSAGES_SINCE) else ""
    return "^" + re.escape(want) + "$"


def run_in_thread(fn):
    """Run ``fn`` in a new thread and return ``("ok", result)`` or ``("raised", exception)``."""
    box = []

    def target():
        try:
            box.append(("ok", fn()))
        except BaseException as exc:  # reported to the calling test, which asserts on it
            box.append(("raised", exc))

    worker = threading.Thread(target=target)
    worker.start()
    worker.join(THREAD_WAIT_S)
    return box[0] if box else ("raised", TimeoutError("worker thread did not finish"))


def keys_by_type():
    """One key per value type of the installed functorch config (public keys preferred), name order."""
    chosen = {}
    ordered = sorted(config.get_config_copy().items(),
                     key=lambda kv: (kv[0].startswith("_"), kv[0] != kv[0].lower(), kv[0]))
    for key, value in ordered:
        chosen.setdefault(type(value), key)
    return chosen


def _marker_function():
    """A callable used as a config value (identity is what is checked)."""
    return "marker"


def replacement_for(value):
    """A value of the same type as ``value`` that differs from it (None-valued keys get a callable)."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, float):
        return 0.75 if value != 0.75 else 0.25
    if isinstance(value, str):
        return value + "_patched"
    if value is None:
        return _marker_function
    if isinstance(value, (list, tuple, set)):
        return type(value)(["patched marker"])
    if isinstance(value, dict):
        return {"patched": "marker"}
    return None  # a type this table does not know yet: the test names it


class TestConfigPatchCallForms(TestCase):
    """The spellings of a patch (key + value, dict, keywords, parameter names) and the empty patch."""

    def test_key_value_form_applies_inside_and_restores_after(self):
        """patch("key", value) sets only that key while entered; __enter__ returns None; exit restores."""
        self.assert_value(current(*DEFAULTS), DEFAULTS, "before patch('debug_assert', True)")
        with config.patch("debug_assert", True) as bound:
            self.assert_is(bound, None, "'with config.patch(...) as v' binds")
            self.assert_value(current(*DEFAULTS), expected(debug_assert=True, cse=CSE_DEFAULT),
                              "inside patch('debug_assert', True)")
        self.assert_value(current(*DEFAULTS), DEFAULTS, "after patch('debug_assert', True)")

    def test_dict_form_applies_every_key_and_restores_every_key(self):
        """patch({k1: v1, k2: v2, k3: v3}) applies all keys together and restores all of them."""
        int_before = getattr(config, INT_KEY)
        keys = ("debug_assert", "cse", INT_KEY)
        with config.patch({"debug_assert": True, "cse": False, INT_KEY: int_before + 7}):
            self.assert_value(current(*keys), expected(debug_assert=True, cse=False, **{INT_KEY: int_before + 7}),
                              "inside dict patch")
        self.assert_value(current(*keys), expected(**{INT_KEY: int_before}, debug_assert=DEBUG_ASSERT_DEFAULT,
                                                   cse=CSE_DEFAULT), "after dict patch")

    def test_keyword_form_applies_every_key_and_restores_every_key(self):
        """patch(k1=v1, k2=v2, k3=v3) applies all keys together and restores all of them."""
        int_before = getattr(config, INT_KEY)
        keys = ("debug_assert", "cse", INT_KEY)
        with config.patch(debug_assert=True, cse=False, **{INT_KEY: int_before + 3}):
            self.assert_value(current(*keys), expected(debug_assert=True, cse=False, **{INT_KEY: int_before + 3}),
                              "inside keyword patch")
        self.assert_value(current(*keys), expected(**{INT_KEY: int_before}, debug_assert=DEBUG_ASSERT_DEFAULT,
                                                   cse=CSE_DEFAULT), "after keyword patch")

    def test_parameters_arg1_and_arg2_can_be_passed_by_name(self):
        """The positional parameters are named arg1/arg2: patch(arg1=key, arg2=value) and patch(arg1=dict) work."""
        cases = (
            ("patch(arg1='cse', arg2=False)", (), dict(arg1="cse", arg2=False)),
            ("patch(arg1={'cse': False})", (), dict(arg1={"cse": False})),
            ("patch('cse', arg2=False)", ("cse",), dict(arg2=False)),
        )
        for label, args, kwargs in cases:
            with self.subTest(label):
                with config.patch(*args, **kwargs):
                    self.assert_value(current(*DEFAULTS), expected(debug_assert=DEBUG_ASSERT_DEFAULT, cse=False),
                                      f"inside {label}")
                self.assert_value(current(*DEFAULTS), DEFAULTS, f"after {label}")

    def test_empty_patch_changes_nothing(self):
        """patch(), patch(None) and patch({}) are valid no-ops as context managers and as decorators."""
        before = config.get_config_copy()
        for label, patch in (("patch()", config.patch()), ("patch(None)", config.patch(None)),
                             ("patch({})", config.patch({}))):
            with self.subTest(label):
                with patch as bound:
                    self.assert_is(bound, None, f"{label}: value bound by 'with ... as'")
                    self.assert_value(config.get_config_copy(), before, f"whole config inside {label}")
                self.assert_value(config.get_config_copy(), before, f"whole config after {label}")

        @config.patch()
        def decorated():
            return config.get_config_copy()

        self.assert_value(decorated(), before, "config seen inside a function decorated with @patch()")
        self.assert_value(config.get_config_copy(), before, "after calling a function decorated with @patch()")

    def test_patch_object_does_nothing_until_entered(self):
        """Building a patch object (or decorating without calling) changes no value; only __enter__ does."""
        patch = config.patch(debug_assert=True, cse=False)
        config.patch("cse", False)(lambda: None)  # decorated, never called
        self.assert_value(current(*DEFAULTS), DEFAULTS, "after constructing patches, before entering them")
        with patch:
            self.assert_value(current(*DEFAULTS), expected(debug_assert=True, cse=False), "inside")
        self.assert_value(current(*DEFAULTS), DEFAULTS, "after exit")

    def test_dict_is_read_at_enter_not_copied_at_construction(self):
        """patch(d) keeps the dict itself: a key added to d before entering is applied, and restored."""
        changes = {"cse": False}
        patch = config.patch(changes)
        changes["debug_assert"] = True
        with patch:
            self.assert_value(current(*DEFAULTS), expected(debug_assert=True, cse=False),
                              "inside a patch whose dict gained a key after construction")
        self.assert_value(current(*DEFAULTS), DEFAULTS, "after that patch")


class TestConfigPatchValueTypes(TestCase):
    """Every value type the functorch config holds, and values of other types (no type check)."""

    def test_one_key_of_every_value_type_is_patched_exactly_and_restored(self):
        """For one key per value type: inside, the very object patched in; after, the very object read before."""
        chosen = keys_by_type()
        for required in (bool, int, float, str, type(None)):
            self.assert_true(required in chosen, f"functorch config holds a key of type {required.__name__} "
                                                 f"(types found: {sorted(t.__name__ for t in chosen)})")
        for value_type, key in chosen.items():
            label = f"{value_type.__name__} key {key}"
            with self.subTest(label):
                before = getattr(config, key)
                value = replacement_for(before)
                self.assert_true(value is not None, f"{label}: no replacement value for this type (extend the table)")
                with config.patch(key, value):
                    self.assert_is(getattr(config, key), value, f"{label}: config.{key} inside the patch")
                    self.assert_value(typed(config.get_config_copy()[key]), typed(value),
                                      f"{label}: get_config_copy()[{key!r}] inside the patch")
                self.assert_is(getattr(config, key), before, f"{label}: config.{key} after the patch")
                self.assert_value(typed(config.get_config_copy()[key]), typed(before),
                                  f"{label}: get_config_copy()[{key!r}] after the patch")

    def test_values_are_not_type_checked(self):
        """A bool key takes an int, str, float, None, list, callable or tensor as is (no coercion, no copy)."""
        tensor = torch.tensor([1.0, 2.0], device=DEVICE)
        cases = (("int 3", 3), ("int 0", 0), ("str 'yes'", "yes"), ("float 1.0", 1.0), ("None", None),
                 ("list", ["a", "list"]), ("callable", _marker_function), ("tensor on the test device", tensor))
        for label, value in cases:
            with self.subTest(label):
                with config.patch({"debug_assert": value}):
                    self.assert_is(config.debug_assert, value, f"debug_assert patched with {label}")
                self.assert_value(current(*DEFAULTS), DEFAULTS, f"after patching debug_assert with {label}")
        self.assert_tensor(tensor, torch.tensor([1.0, 2.0]), "the tensor used as a config value",
                           device=DEVICE)

    def test_keyword_value_none_is_a_value(self):
        """patch(key=None) and patch({key: None}) set None (only the two-positional form treats None as absent)."""
        for label, patch in (("patch(debug_assert=None)", config.patch(debug_assert=None)),
                             ("patch({'debug_assert': None})", config.patch({"debug_assert": None}))):
            with self.subTest(label):
                with patch:
                    self.assert_is(config.debug_assert, None, f"debug_assert inside {label}")
                self.assert_value(current(*DEFAULTS), DEFAULTS, f"after {label}")


class TestConfigPatchAsDecorator(TestCase):
    """patch(...) used with @ on a function, a method, a generator function and classes."""

    def test_decorator_on_plain_function_applies_for_each_call(self):
        """@patch applies during every call, restores after each, passes arguments and results through."""

        @config.patch("debug_assert", True)
        def read_flags(offset, *, scale=1):
            return (config.debug_assert, config.cse, offset * scale)

        self.assert_value(current(*DEFAULTS), DEFAULTS, "after decorating, before any call")
        for call in range(2):
            self.assert_value(read_flags(5, scale=2), (True, CSE_DEFAULT, 10),
                              f"call {call}: (debug_assert, cse, result) seen by the decorated function")
            self.assert_value(current(*DEFAULTS), DEFAULTS, f"after call {call} of the decorated function")

    def test_decorator_keeps_the_function_identity(self):
        """The decorated function keeps __name__/__qualname__/__doc__/__module__ and has __wrapped__."""

        def original():
            """doc of original"""
            return config.debug_assert

        decorated = config.patch(debug_assert=True)(original)
        for attribute in ("__name__", "__qualname__", "__doc__", "__module__"):
            self.assert_value(getattr(decorated, attribute), getattr(original, attribute),
                              f"{attribute} of the decorated function")
        self.assert_is(getattr(decorated, "__wrapped__", None), original, "__wrapped__ of the decorated function")
        self.assert_is(decorated(), True, "debug_assert seen by the decorated call")
        self.assert_is(original(), DEBUG_ASSERT_DEFAULT, "debug_assert seen by the undecorated function")

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
        self.assert_is(returned, holder, "value returned by the decorated method (self)")
        self.assert_value(holder.calls, [("first", False, True), ("second", False, True)],
                          "(tag, cse, debug_assert) recorded by the decorated method")
        self.assert_value(current(*DEFAULTS), DEFAULTS, "after the decorated method calls")

    def test_decorator_on_generator_function_is_not_active_while_iterating(self):
        """@patch on a generator function is active only while the generator object is created, not in its body."""

        @config.patch(debug_assert=True)
        def generate():
            yield config.debug_assert
            yield config.cse

        generator = generate()
        self.assert_value(current(*DEFAULTS), DEFAULTS, "after creating the generator")
        self.assert_value(list(generator), [DEBUG_ASSERT_DEFAULT, CSE_DEFAULT],
                          "values read by the generator body (the patch has already exited)")

    def test_decorator_on_plain_class_constructs_under_the_patch(self):
        """@patch on a class that is not a TestCase wraps it like a function: construction runs under the patch."""

        class Plain:
            def __init__(self, tag):
                self.tag, self.seen = tag, config.debug_assert

        decorated = config.patch(debug_assert=True)(Plain)
        instance = decorated("t")
        self.assert_false(isinstance(decorated, type), "@patch on a plain class returns a function, not a class")
        self.assert_is(type(instance), Plain, "type of the object the decorated class returns")
        self.assert_value((instance.tag, instance.seen), ("t", True), "(tag, debug_assert) seen by __init__")
        self.assert_value(current(*DEFAULTS), DEFAULTS, "after constructing through the decorated class")

    def test_decorator_on_testcase_class_patches_for_the_class_lifetime(self):
        """@patch on a unittest.TestCase class: active in setUpClass..tearDownClass, restored afterwards."""
        seen = []

        class Inner(unittest.TestCase):
            @classmethod
            def setUpClass(cls):
                seen.append(("setUpClass", config.debug_assert))

            def test_reads_flag(self):
                seen.append(("test", config.debug_assert))

            @classmethod
            def tearDownClass(cls):
                seen.append(("tearDownClass", config.debug_assert))

        decorated = config.patch(debug_assert=True)(Inner)
        self.assert_true(isinstance(decorated, type) and issubclass(decorated, Inner),
                         "@patch on a TestCase class returns a subclass of it")
        self.assert_value((decorated.__name__, decorated.__qualname__, decorated.__module__),
                          (Inner.__name__, Inner.__qualname__, Inner.__module__),
                          "(__name__, __qualname__, __module__) of the decorated TestCase class")
        self.assert_value(current(*DEFAULTS), DEFAULTS, "after decorating a TestCase class, before running it")
        result = unittest.TestResult()
        unittest.defaultTestLoader.loadTestsFromTestCase(decorated).run(result)
        self.assert_true(result.wasSuccessful(), f"inner TestCase result: {result.errors + result.failures}")
        self.assert_value(seen, [("setUpClass", True), ("test", True), ("tearDownClass", True)],
                          "(phase, debug_assert) seen by the decorated TestCase class")
        self.assert_value(current(*DEFAULTS), DEFAULTS, "after running the decorated TestCase class")

    def test_decorated_testcase_class_whose_setupclass_fails_restores(self):
        """@patch on a TestCase class whose setUpClass raises: the class errors, no test runs, values restored."""
        seen = []

        class Failing(unittest.TestCase):
            @classmethod
            def setUpClass(cls):
                seen.append(("setUpClass", config.debug_assert))
                raise ValueError("setUpClass failed")

            def test_never_runs(self):
                seen.append(("test", config.debug_assert))

        result = unittest.TestResult()
        unittest.defaultTestLoader.loadTestsFromTestCase(config.patch(debug_assert=True)(Failing)).run(result)
        self.assert_value((len(result.errors), result.testsRun), (1, 0),
                          "(errors, tests run) of the class whose setUpClass failed")
        self.assert_true("ValueError: setUpClass failed" in result.errors[0][1],
                         f"the class error is the setUpClass exception: {result.errors[0][1]}")
        self.assert_value(seen, [("setUpClass", True)], "(phase, debug_assert) seen by the failing TestCase class")
        self.assert_value(current(*DEFAULTS), DEFAULTS, "after the decorated class whose setUpClass failed")


class TestConfigPatchRestore(TestCase):
    """What exit puts back: the value saved at enter, for the patched keys only, also after errors."""

    def test_nested_patches_restore_the_outer_value(self):
        """Leaving an inner patch restores the outer patch's value, not the default."""
        with config.patch(debug_assert=True):
            with config.patch(debug_assert="inner", cse=False):
                self.assert_value(current(*DEFAULTS), expected(debug_assert="inner", cse=False), "inside inner")
            self.assert_value(current(*DEFAULTS), expected(debug_assert=True, cse=CSE_DEFAULT),
                              "after inner patch, inside outer patch")
            with config.patch(cse=False):
                self.assert_value(current(*DEFAULTS), expected(debug_assert=True, cse=False),
                                  "inside a nested patch of another key")
            self.assert_value(current(*DEFAULTS), expected(debug_assert=True, cse=CSE_DEFAULT),
                              "after nested patch of another key")
        self.assert_value(current(*DEFAULTS), DEFAULTS, "after outer patch")

    def test_prior_value_is_saved_at_enter_not_at_construction(self):
        """A patch built earlier restores the value current when it was entered."""
        patch = config.patch(debug_assert="late")
        with config.patch(debug_assert="outer"):
            with patch:
                self.assert_value(current("debug_assert"), expected(debug_assert="late"), "inside the late patch")
            self.assert_value(current("debug_assert"), expected(debug_assert="outer"), "after the late patch")
        self.assert_value(current(*DEFAULTS), DEFAULTS, "after both patches")

    def test_exit_restores_saved_value_over_assignments_inside(self):
        """An assignment to a patched key inside the block is undone; other keys are left as assigned."""
        try:
            with config.patch(debug_assert=True):
                config.debug_assert = "assigned inside"
                config.cse = False
            self.assert_value(current(*DEFAULTS), expected(debug_assert=DEBUG_ASSERT_DEFAULT, cse=False),
                              "after exit: patched key restored, unpatched key keeps its assignment")
        finally:
            config.cse = CSE_DEFAULT

    def test_context_manager_restores_after_exception(self):
        """An exception inside the block propagates unchanged (not suppressed) and every key is restored."""
        error = ValueError("raised inside the patch")
        with self.assert_raises_exactly(ValueError, "exception raised inside a patch block") as caught:
            with config.patch(debug_assert=True, cse=False):
                raise error
        self.assert_is(caught.exception, error, "the exception leaving the block")
        self.assert_value(current(*DEFAULTS), DEFAULTS, "after an exception inside a patch block")

    def test_decorator_restores_after_exception(self):
        """An exception in a decorated function propagates unchanged and every key is restored, each call."""
        error = KeyError("raised in the decorated function")

        @config.patch({"debug_assert": True, "cse": False})
        def failing():
            raise error

        for call in range(2):
            caught = self.assert_raises_exactly(KeyError, f"call {call} of a failing decorated function", failing)
            self.assert_is(caught, error, f"call {call}: the exception leaving the decorator")
            self.assert_value(current(*DEFAULTS), DEFAULTS, f"after failing call {call} of a decorated function")

    def test_patch_object_can_be_entered_again_after_exit(self):
        """One patch object used twice in sequence applies and restores each time, saving the prior anew."""
        patch = config.patch(debug_assert=True, cse=False)
        with patch:
            self.assert_value(current(*DEFAULTS), expected(debug_assert=True, cse=False), "first use")
        self.assert_value(current(*DEFAULTS), DEFAULTS, "after first use")
        with config.patch(debug_assert="outer"):
            with patch:
                self.assert_value(current(*DEFAULTS), expected(debug_assert=True, cse=False), "second use")
            self.assert_value(current(*DEFAULTS), expected(debug_assert="outer", cse=CSE_DEFAULT),
                              "after second use inside an outer patch")
        self.assert_value(current(*DEFAULTS), DEFAULTS, "after second use")

    def test_reentering_an_active_patch_object_follows_installed_version(self):
        """Entering a still-active patch again: AssertionError before 2.12, a nested level from 2.12."""
        patch = config.patch(debug_assert=True)
        with patch:
            if torch_version_at_least(REENTRANT_AND_THREAD_LOCAL_SINCE):
                with patch:
                    self.assert_value(current("debug_assert"), expected(debug_assert=True), "inside the re-entry")
                    config.debug_assert = "changed at inner level"
                self.assert_value(current("debug_assert"), expected(debug_assert=True),
                                  "after the inner exit (restores the value seen at inner entry)")
            else:
                self.assert_raises_exactly(AssertionError, f"re-entering an active patch on torch {torch.__version__}",
                                           patch.__enter__, match=installed_message(MSG_REENTER))
                self.assert_value(current("debug_assert"), expected(debug_assert=True),
                                  "after the refused re-entry, the first entry is still active")
        self.assert_value(current(*DEFAULTS), DEFAULTS, "after leaving the patch object")

    def test_exiting_a_patch_that_was_never_entered_follows_installed_version(self):
        """__exit__ without __enter__: a no-op before 2.12, AssertionError from 2.12; no value changes either way."""
        with config.patch(debug_assert="outer"):
            never_entered = config.patch(debug_assert=True)
            if torch_version_at_least(REENTRANT_AND_THREAD_LOCAL_SINCE):
                self.assert_raises_exactly(AssertionError, "exiting a patch that was never entered",
                                           never_entered.__exit__, None, None, None,
                                           match="^" + re.escape(MSG_EXIT_NOT_ENTERED) + "$")
            else:
                self.assert_is(never_entered.__exit__(None, None, None), None,
                               f"__exit__ of a never-entered patch on torch {torch.__version__}")
            self.assert_value(current("debug_assert"), expected(debug_assert="outer"),
                              "after exiting a never-entered patch")
        self.assert_value(current(*DEFAULTS), DEFAULTS, "after the outer patch")


class TestConfigPatchSerialization(TestCase):
    """get_config_copy / save_config / load_config agree with the patched values."""

    def test_snapshots_inside_a_patch_hold_the_patched_values(self):
        """Inside a patch get_config_copy() and save_config() show the patched keys and every other key unchanged."""
        before = config.get_config_copy()
        int_before = getattr(config, INT_KEY)
        changes = {"cse": False, INT_KEY: int_before + 5}
        with config.patch(changes):
            inside_copy = config.get_config_copy()
            inside_saved = pickle.loads(config.save_config())
        self.assert_value(inside_copy, {**before, **changes}, "get_config_copy() inside the patch")
        for key, value in changes.items():
            self.assert_value(typed(inside_saved[key]), typed(value), f"save_config()[{key!r}] inside the patch")
        others = {key: value for key, value in inside_saved.items() if key not in changes}
        self.assert_value(others, {key: before[key] for key in others}, "other keys of save_config() inside")
        self.assert_value(config.get_config_copy(), before, "get_config_copy() after the patch")
        after_saved = pickle.loads(config.save_config())
        self.assert_value(after_saved, {key: before[key] for key in after_saved}, "save_config() after the patch")

    def test_blob_saved_inside_a_patch_reapplies_it_with_load_config(self):
        """load_config(blob saved inside a patch) sets the patched values again; load_config(before) undoes it."""
        saved_before = config.save_config()
        with config.patch({"cse": False, "debug_assert": True}):
            saved_inside = config.save_config()
        self.assert_value(current(*DEFAULTS), DEFAULTS, "after the patch, before load_config")
        try:
            config.load_config(saved_inside)
            self.assert_value(current(*DEFAULTS), expected(debug_assert=True, cse=False),
                              "after load_config(blob saved inside the patch)")
        finally:
            config.load_config(saved_before)
        self.assert_value(current(*DEFAULTS), DEFAULTS, "after load_config(blob saved before)")

    def test_load_config_inside_a_patch_is_undone_for_patched_keys_only(self):
        """load_config inside a patch: the patched key gets its prior back at exit, an unpatched key keeps the load."""
        try:
            with config.patch(cse=False):
                config.load_config({"cse": "loaded", "debug_assert": "loaded"})
                self.assert_value(current(*DEFAULTS), expected(debug_assert="loaded", cse="loaded"),
                                  "inside the patch, after load_config")
            self.assert_value(current(*DEFAULTS), expected(debug_assert="loaded", cse=CSE_DEFAULT),
                              "after the patch: cse restored, debug_assert kept as loaded")
        finally:
            config.debug_assert = DEBUG_ASSERT_DEFAULT


class TestConfigPatchBadInput(TestCase):
    """Unknown keys, wrong argument types and invalid argument combinations: upstream's exception types."""

    def test_unknown_key_raises_attribute_error_when_entered(self):
        """An unknown key fails at enter (not at construction) and no other key is left changed."""
        want = "^" + re.escape(f"torch._functorch.config.{UNKNOWN_KEY} does not exist") + "$"
        for changes in ({"debug_assert": True, UNKNOWN_KEY: 1}, {UNKNOWN_KEY: 1, "debug_assert": True}):
            label = f"patch({list(changes)})"
            with self.subTest(label):
                patch = config.patch(changes)  # construction must not raise
                with self.assert_raises_exactly(AttributeError, f"entering {label}", match=want):
                    with patch:
                        self.fail(f"the body of {label} ran")
                self.assert_value(current(*DEFAULTS), DEFAULTS, f"after failing to enter {label}")
        self.assert_false(hasattr(config, UNKNOWN_KEY), "hasattr(config, unknown key)")

    def test_non_string_key_in_dict_raises_attribute_error_when_entered(self):
        """patch({1: True}) builds; entering raises AttributeError naming the key."""
        patch = config.patch({1: True})
        self.assert_raises_exactly(AttributeError, "entering patch({1: True})", patch.__enter__,
                                   match="^" + re.escape("torch._functorch.config.1 does not exist") + "$")
        self.assert_value(current(*DEFAULTS), DEFAULTS, "after failing to enter patch({1: True})")

    def test_unknown_key_in_decorator_raises_at_call_not_at_decoration(self):
        """@patch(known=..., unknown=...) decorates fine; calls raise before the body runs (2nd call: per release)."""
        calls = []

        @config.patch(debug_assert=True, **{UNKNOWN_KEY: 1})
        def body():
            calls.append(1)

        self.assert_raises_exactly(AttributeError, "first call of a function decorated with an unknown key", body,
                                   match=re.escape(f"{UNKNOWN_KEY} does not exist"))
        if torch_version_at_least(REENTRANT_AND_THREAD_LOCAL_SINCE):
            self.assert_raises_exactly(AttributeError, "second call: the failed enter saved nothing", body,
                                       match=re.escape(f"{UNKNOWN_KEY} does not exist"))
        else:
            self.assert_raises_exactly(AssertionError, f"second call on torch {torch.__version__}: the failed enter "
                                                       "kept the saved value of the known key", body,
                                       match=installed_message(MSG_REENTER))
        self.assert_value(calls, [], "calls of a decorated body despite the unknown key")
        self.assert_value(current(*DEFAULTS), DEFAULTS, "after calling a function decorated with an unknown key")

    def test_invalid_argument_combinations_raise_assertion_error(self):
        """dict+kwargs, key+value+kwargs, a lone key, key with None, non-str key, dict with a value, value alone."""
        cases = (
            ("dict + kwargs", ({"debug_assert": True},), {"cse": False}, MSG_BOTH_FORMS),
            ("key + value + kwargs", ("debug_assert", True), {"cse": False}, MSG_BOTH_FORMS),
            ("lone key", ("debug_assert",), {}, MSG_LONE_ARG),
            ("key with value None (None means 'no value')", ("debug_assert", None), {}, MSG_LONE_ARG),
            ("lone int", (1,), {}, MSG_LONE_ARG),
            ("lone list of keys", (["debug_assert"],), {}, MSG_LONE_ARG),
            ("non-str key with value", (1, True), {}, MSG_KEY_NOT_STR),
            ("dict with a value", ({"debug_assert": True}, True), {}, MSG_KEY_NOT_STR),
            ("value without key", (None, True), {}, MSG_VALUE_WITHOUT_KEY),
            ("arg2 by name without arg1", (), {"arg2": True}, MSG_VALUE_WITHOUT_KEY),
        )
        for label, args, kwargs, message in cases:
            with self.subTest(label):
                self.assert_raises_exactly(AssertionError, f"patch(*{args!r}, **{kwargs!r})", config.patch,
                                           *args, match=installed_message(message), **kwargs)
                self.assert_value(current(*DEFAULTS), DEFAULTS, f"after invalid patch ({label})")

    def test_too_many_positional_arguments_raise_type_error(self):
        """patch(key, value, extra) is refused by Python's signature check with TypeError."""
        self.assert_raises_exactly(TypeError, "patch('debug_assert', True, False)", config.patch,
                                   "debug_assert", True, False, match="positional argument")
        self.assert_value(current(*DEFAULTS), DEFAULTS, "after patch with too many arguments")


class TestConfigPatchThreads(TestCase):
    """Patched values are process-wide before 2.12 and thread-local from 2.12, in both directions."""

    def thread_local(self):
        return torch_version_at_least(REENTRANT_AND_THREAD_LOCAL_SINCE)

    def test_patch_in_main_thread_seen_by_a_worker_follows_installed_version(self):
        """A worker reads the main thread's patched value before 2.12 and the default from 2.12."""
        with config.patch(debug_assert=True):
            outcome = run_in_thread(lambda: config.debug_assert)
        want = DEBUG_ASSERT_DEFAULT if self.thread_local() else True
        self.assert_value(outcome, ("ok", want), f"debug_assert read by a worker while the main thread is "
                                                 f"patched (torch {torch.__version__})")
        self.assert_value(current(*DEFAULTS), DEFAULTS, "after the threaded check")

    def test_patch_in_a_worker_seen_by_main_thread_follows_installed_version(self):
        """The main thread reads a worker's patched value before 2.12 and the default from 2.12."""
        inside, release = threading.Event(), threading.Event()

        def worker():
            with config.patch(debug_assert=True, cse=False):
                inside.set()
                if not release.wait(THREAD_WAIT_S):
                    raise TimeoutError("main thread did not release the worker")
                return current(*DEFAULTS)

        box = []
        thread = threading.Thread(target=lambda: box.append(worker()))
        thread.start()
        try:
            self.assert_true(inside.wait(THREAD_WAIT_S), "the worker entered its patch")
            seen_by_main = current(*DEFAULTS)
        finally:
            release.set()
            thread.join(THREAD_WAIT_S)
        want = DEFAULTS if self.thread_local() else expected(debug_assert=True, cse=False)
        self.assert_value(seen_by_main, want, f"flags read by the main thread while a worker is patched "
                                              f"(torch {torch.__version__})")
        self.assert_value(box, [expected(debug_assert=True, cse=False)], "flags read by the worker inside its patch")
        self.assert_value(current(*DEFAULTS), DEFAULTS, "main thread after the worker left its patch")

    def test_one_patch_object_active_in_two_threads_follows_installed_version(self):
        """A patch active in the main thread entered again by a worker: works from 2.12, AssertionError before."""
        patch = config.patch(debug_assert=True)

        def worker():
            with patch:
                return config.debug_assert

        with patch:
            outcome = run_in_thread(worker)
            self.assert_value(current("debug_assert"), expected(debug_assert=True),
                              "main thread, still inside its patch, after the worker finished")
        if self.thread_local():
            self.assert_value(outcome, ("ok", True), "debug_assert read by the worker inside the shared patch")
        else:
            self.assert_value((outcome[0], type(outcome[1]).__name__), ("raised", "AssertionError"),
                              f"worker entering a patch active in the main thread (torch {torch.__version__})")
        self.assert_value(current(*DEFAULTS), DEFAULTS, "after the shared patch")


# --------------------------------------------------------------------------- computation under the patch
EXACT_VALUES = (1.0, -2.0, 3.0, 0.5)  # x*x + x*x and its grad 4*x are exact in float16 and bfloat16 too


def grid(count):
    """Integer-valued floats -count/2 .. count/2 - 1: x*x + x*x is exact in float32."""
    return [float(v - count // 2) for v in range(count)]


def duplicated_square(x):
    """x*x + x*x: with CSE AOTAutograd keeps one mul, without it two."""
    return x * x + x * x


def doubled(x):
    """x + x: one cheap op (no mul) for the layout and size cases."""
    return x + x


def case(input_class, label, values, dtype=torch.float32, shape=None, view=None, memory_format=None, grad=False,
         fn=doubled):
    """An input of the computation: ``build(device)`` returns (leaf, the input derived from it by ``view``)."""
    def build(device):
        leaf = torch.tensor(values, dtype=dtype, device=device)
        if shape is not None:
            leaf = leaf.reshape(shape)
        if memory_format is not None:
            leaf = leaf.to(memory_format=memory_format)
        leaf.requires_grad_(grad)
        return leaf, (view(leaf) if view is not None else leaf)
    return input_class, label, build, fn


# All inputs go through one graph (each traced op costs compile time, so the graph is kept small). The
# dtype cases go through x*x + x*x, whose muls show the patched cse flag; float16 and bfloat16 also go
# through the backward (float32's grad is checked by NESTED_CASE). The layout and size cases go through
# x + x, the expanded and step-sliced ones through the backward too (a sum over the stride-0 dim, a
# scatter into a strided leaf).
COMPUTATION_CASES = (
    case("dtype", "torch.float32 1-d", EXACT_VALUES, torch.float32, fn=duplicated_square),
    case("dtype", "torch.float64 1-d", EXACT_VALUES, torch.float64, fn=duplicated_square),
    case("dtype", "torch.float16 1-d (with grad)", EXACT_VALUES, torch.float16, grad=True, fn=duplicated_square),
    case("dtype", "torch.bfloat16 1-d (with grad)", EXACT_VALUES, torch.bfloat16, grad=True, fn=duplicated_square),
    case("dtype", "torch.int64 1-d (no grad)", [1, -2, 3, 0], torch.int64, fn=duplicated_square),
    case("dtype", "torch.bool 1-d (no grad)", [True, False, True], torch.bool, fn=duplicated_square),
    case("layout", "transposed 2-d", grid(6), shape=(2, 3), view=lambda t: t.t()),
    case("layout", "permuted 3-d", grid(24), shape=(2, 3, 4), view=lambda t: t.permute(2, 0, 1)),
    case("layout", "sliced with step 2 (with grad)", grid(8), view=lambda t: t[::2], grad=True),
    case("layout", "expanded, stride 0 (with grad)", grid(3), view=lambda t: t.expand(2, 3), grad=True),
    case("layout", "channels_last 4-d", grid(16), shape=(2, 2, 2, 2), memory_format=torch.channels_last),
    case("size", "batch of 0 (0, 3)", [], shape=(0, 3)),
    case("size", "inner dim of 0 (3, 0)", [], shape=(3, 0)),
    case("size", "0-d", -3.0),
    case("size", "size-1 dims (1, 3, 1)", grid(3), shape=(1, 3, 1)),
)
NESTED_CASE = case("nested", "float32 1-d under patch(cse=True) nested in patch(cse=False)", EXACT_VALUES, grad=True,
                   fn=duplicated_square)


def muls_without_cse(cases):
    """aten.mul count of the forward graph when CSE is off: two per x*x + x*x input."""
    return sum(2 for *_, fn in cases if fn is duplicated_square)


def _backward(outputs):
    floating = [out for out in outputs if out.requires_grad]
    torch.autograd.backward(floating, [torch.ones_like(out) for out in floating])


def _compile_and_run(cases, *patches):
    """The cases' functions compiled by aot_function and run (forward + backward) on DEVICE under ``patches``."""
    from torch._functorch.aot_autograd import aot_function, make_boxed_func
    from torch._functorch.partitioners import min_cut_rematerialization_partition

    seen = {"compiles": 0}

    def forward_compiler(graph_module, example_inputs):
        seen["compiles"] += 1
        seen["cse"] = config.cse
        seen["muls"] = sum(1 for node in graph_module.graph.nodes
                           if node.op == "call_function" and node.target is torch.ops.aten.mul.Tensor)
        return make_boxed_func(graph_module)

    functions = [fn for *_, fn in cases]

    def computation(*inputs):
        return tuple(fn(x) for fn, x in zip(functions, inputs))

    compiled = aot_function(computation, fw_compiler=forward_compiler,
                            bw_compiler=lambda graph_module, _: make_boxed_func(graph_module),
                            partition_fn=min_cut_rematerialization_partition)
    with torch.enable_grad():  # the views of leaves that require grad must record it, whatever the grad mode
        built = [build(DEVICE) for _, _, build, _ in cases]
    inputs = [inp for _, inp in built]
    with torch.enable_grad(), contextlib.ExitStack() as stack:
        for patch in patches:
            stack.enter_context(patch)
        outputs = compiled(*inputs)
        _backward(outputs)
    with torch.enable_grad():
        again = compiled(*inputs)  # outside the patches: the graph compiled under them is reused
    return {"seen": seen, "outputs": [out.detach() for out in outputs], "grads": [leaf.grad for leaf, _ in built],
            "again": [out.detach() for out in again]}


@functools.lru_cache(maxsize=None)
def aot_runs_under_patch():
    """The two compiles shared by the computation tests (computed inside the first test that needs them).

    ``"all"``: every input class under ``patch(cse=False)`` (non-default: 2 muls per input prove the
    patch reached AOTAutograd); ``"nested"``: one input under ``patch(cse=True)`` inside
    ``patch(cse=False)`` (1 mul: the innermost patch wins).
    """
    return {"all": _compile_and_run(COMPUTATION_CASES, config.patch(cse=False)),
            "nested": _compile_and_run((NESTED_CASE,), config.patch(cse=False), config.patch("cse", True))}


def cpu_reference(cases):
    """Eager CPU results (outputs, grads) for ``cases``, each computed on the contiguous copy of its input."""
    outputs, grads = [], []
    with torch.enable_grad():
        for _, _, build, fn in cases:
            leaf, inp = build("cpu")
            out = fn(inp.contiguous())
            _backward([out])
            outputs.append(out.detach())
            grads.append(leaf.grad)
    return outputs, grads


class ComputationUnderPatch(TestCase):
    """Base: compare one run of the computation driven under a patch with CPU eager, case by case."""

    def check_run(self, run, cases, where, only_class=None):
        ref_outputs, ref_grads = cpu_reference(cases)
        self.assert_value(current(*DEFAULTS), DEFAULTS, f"after the aot_function run {where}")
        for index, (input_class, label, _, _) in enumerate(cases):
            if only_class is not None and input_class != only_class:
                continue
            with self.subTest(label):
                what = f"{where}, {label}"
                self.assert_tensor(run["outputs"][index], ref_outputs[index],
                                   f"{what}: output on {DEVICE} vs CPU eager", device=DEVICE)
                self.assert_tensor(run["again"][index], ref_outputs[index],
                                   f"{what}: output of a second call outside the patch", device=DEVICE)
                if ref_grads[index] is None:
                    self.assert_is(run["grads"][index], None, f"{what}: grad of an input without requires_grad")
                else:
                    self.assert_tensor(run["grads"][index], ref_grads[index],
                                       f"{what}: grad on {DEVICE} vs CPU eager", device=DEVICE)


@requires_api("torch._functorch.aot_autograd.aot_function")
class TestConfigPatchDrivesComputation(ComputationUnderPatch):
    """A patched flag reaches the AOTAutograd machinery that reads it, at compile time."""

    def test_patched_cse_flag_reaches_aot_autograd(self):
        """Forward graph: 2 muls per input under patch(cse=False), 1 under a nested patch(cse=True); compiled once."""
        runs = aot_runs_under_patch()
        muls = muls_without_cse(COMPUTATION_CASES)
        self.assert_value(runs["all"]["seen"], {"compiles": 1, "cse": False, "muls": muls},
                          f"patch(cse=False): (compiles, cse, aten.mul count) seen by the forward compiler "
                          f"for {muls // 2} inputs through x*x + x*x")
        self.assert_value(runs["nested"]["seen"], {"compiles": 1, "cse": True, "muls": 1},
                          "patch(cse=True) nested in patch(cse=False): (compiles, cse, aten.mul count) seen by "
                          "the forward compiler for 1 input")
        self.check_run(runs["nested"], (NESTED_CASE,), "patch(cse=True) nested in patch(cse=False)")


@requires_api("torch._functorch.aot_autograd.aot_function")
class TestConfigPatchComputationDtypes(ComputationUnderPatch):
    """The computation compiled under patch(cse=False) in float32/64/16, bfloat16, int64 and bool."""

    def test_patched_computation_in_every_dtype_equals_eager(self):
        """Outputs (and float16/bfloat16 grads) equal CPU eager exactly, dtype and device included."""
        self.check_run(aot_runs_under_patch()["all"], COMPUTATION_CASES, "patch(cse=False)", only_class="dtype")


@requires_api("torch._functorch.aot_autograd.aot_function")
class TestConfigPatchComputationLayouts(ComputationUnderPatch):
    """Transposed, permuted, step-sliced, expanded and channels_last inputs of the computation under the patch."""

    def test_patched_computation_on_non_contiguous_inputs_equals_contiguous(self):
        """Outputs for non-contiguous inputs under patch(cse=False) equal CPU eager on the contiguous copy."""
        self.check_run(aot_runs_under_patch()["all"], COMPUTATION_CASES, "patch(cse=False)", only_class="layout")


@requires_api("torch._functorch.aot_autograd.aot_function")
class TestConfigPatchComputationSizes(ComputationUnderPatch):
    """Zero-size, 0-d and size-1 inputs of the computation compiled under the patch."""

    def test_patched_computation_on_edge_sizes_equals_eager(self):
        """Outputs for batch-0, inner-0, 0-d and size-1 inputs equal CPU eager, shape and dtype included."""
        self.check_run(aot_runs_under_patch()["all"], COMPUTATION_CASES, "patch(cse=False)", only_class="size")


del ComputationUnderPatch  # a base, not a test class of its own


if __name__ == "__main__":
    run_tests()
