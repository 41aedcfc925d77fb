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
- value types: the space is the installed config itself: ``TestConfigPatchValueTypes`` patches every key
  of ``get_config_copy()`` with another value of its default's type (bool, int, float, str, list; a
  callable into None-valued keys), one at a time and all together, and values of other types (no type
  check);
- dtypes and layouts: ``config.patch`` takes no tensor, so they apply only to the computation driven under
  the patch: ``aot_function`` graphs compiled under ``patch(cse=False)`` (one for the inputs with grad,
  one for those without, to keep compile time low), every output compared with CPU eager on dtype,
  layout, shape and values, and with eager on the device on strides. ``TestConfigPatchComputationDtypes``
  enumerates ``all_types_and_complex_and(torch.half, torch.bfloat16, torch.bool)`` (float32/64, float16,
  bfloat16, complex64/128, uint8, int8/16/32/64, bool) plus complex32 (experimental in torch, works eagerly
  and under aot) through x*x + x*x, a bool mask, an int64 count and, for ordered dtypes, an int64 argmax;
  uint16/32/64 and the float8 types the installed release has are refused by upstream's CPU add kernel, and
  the compiled run must raise the same exception type. Quantized dtypes (quint8, qint8, qint32, quint4x2,
  quint2x4) are refused twice: CPU eager has no QuantizedCPU mul (NotImplementedError) and AOTAutograd's
  fake tensors refuse the input (UnsupportedFakeTensorException); they are a CPU layout, so that test runs
  on the CPU and the device comparison does not apply. float4_e2m1fn_x2 (no conversion kernel) never
  reaches the computation.
  ``TestConfigPatchComputationLayouts``: every memory format of rank 4 and 5 (contiguous, channels_last,
  channels_last_3d), transposed, permuted, step-sliced, expanded (stride 0), the conj view of complex64 (through
  x*2, whose backward adds nothing) and the neg view (``conj().imag``); sparse COO (converted on the CPU, then
  moved) is accepted (layout and values compared), CSR/CSC/BSR/BSC are refused by AOTAutograd's fake-tensor
  tracing with ``AssertionError`` (eager accepts them).
  ``TestConfigPatchComputationSizes``: batch 0, inner 0, 0-d, size-1 dims. Sizes are distinct per dim,
  values differ per position, plus deliberate square cases (int16 (3, 3), transposed (3, 3),
  channels_last (3, 3, 3, 3)). Vmap levels do not apply (no vmap here);
- side effects: the API mutates no tensor; the computation under it may
  (``TestConfigPatchComputationSideEffects``): compiled under ``patch(cse=False)``, a function returning
  a view of its input, a result and two views of it, and an input it mutated in place (values, views,
  shared storages, version counter, identity of the returned input and gradients as eager's), and
  x*x + x*x with dynamic shapes (symbolic sizes, one compile serving four shapes, zero-size included).
  The API's own side effect is the config state: restore after nesting, reuse, recursion, exceptions and
  assignments (``TestConfigPatchRestore``), consistency with ``get_config_copy``, ``save_config`` and
  ``load_config`` (``TestConfigPatchSerialization``), a tensor used as a value is stored by identity,
  neither copied nor moved;
- bad input: ``TestConfigPatchBadInput``;
- threads: ``TestConfigPatchThreads``, in both directions;
- neighbouring state, ``TestConfigPatchNeighbourConfigs``: ``torch._inductor.config`` has settings of the
  same name (``static_weight_shapes`` on every release, ``selective_decompose`` from 2.10); a functorch
  patch of them (context manager and decorator, and of every functorch key at once) leaves inductor's values
  as the very objects they were and inductor's and ``torch._dynamo.config``'s whole copies equal (dynamo
  shares no name), and an inductor patch leaves functorch's value alone. Grad mode and vmap levels are not
  neighbours of this API (it reads and writes neither).
- torch subsystems, ``TestConfigPatchSubsystems``: ``torch.func.grad``, ``vmap`` and ``jvp`` of a decorated
  function run it patched; changes as an ``OrderedDict`` or a dict subclass are applied (and not modified), a
  mapping that is not a dict is refused, a list value is stored as the object; ``get_hash()`` (the key of
  caches built on the config) follows the patch, nested and decorated, and is the old one after;
  a decorated ``nn.Module.forward`` runs patched while its forward pre-hook and hook run outside the patch,
  eval mode and ``state_dict`` untouched; ``torch.autocast`` and ``set_default_dtype`` pass through, no RNG
  draw; ``functools.partial``, callable objects, static and class methods decorated like functions;
  ``copy.copy`` of a patch is a working patch, ``copy.deepcopy`` and ``pickle`` as the release has them; no
  warnings. Not applicable here: autograd of the API itself (it takes and returns no tensor; the compiled
  computation's gradients are above, AOTAutograd's higher-order and forward-mode limits are the aot file's),
  version counters (it writes no tensor), ``torch.return_types`` (it returns a context manager), subclasses
  (the patch's class is local to each ``patch()`` call, so no user subclass exists).

Where upstream releases differ, the installed release's behaviour is asserted:

- invalid argument combinations raise ``AssertionError`` with an empty message before torch 2.10 and
  with a descriptive message from 2.10; too many positional arguments raise ``TypeError`` (Python);
- re-entering a patch object that is still active raises ``AssertionError`` before 2.12 and works
  (a stack of saved values) from 2.12, so a function decorated with one patch that calls itself raises
  ``AssertionError`` at its inner call before 2.12 and runs patched at every level from 2.12; exiting a
  patch that was never entered is a no-op before 2.12 and raises ``AssertionError`` from 2.12; before
  2.12 an enter that failed on an unknown key keeps the values it had already saved, so the next enter
  of that object raises ``AssertionError`` (re-entry), from 2.12 it raises ``AttributeError`` again;
- patched values are process-wide before 2.12 and thread-local from 2.12 (so one patch object can be
  active in two threads at once only from 2.12, and a patch a worker leaves entered dies with it);
- a dtype without a CPU kernel raises ``NotImplementedError`` from 2.8 and ``RuntimeError`` before;
- ``selective_decompose`` is a key of both functorch's and inductor's config from 2.10 only;
- ``copy.deepcopy`` of a patch works before 2.12 and raises ``TypeError`` (its ``ContextVar``) from 2.12.

On a CPU box every contract point is checked on the CPU against independently computed values. On an
accelerator the computation driven under the patch runs on the device and must equal the CPU reference
exactly (the inputs are small integer or half-integer numbers, exact in every dtype used), with the
strides of eager on the device. ``config.patch`` dispatches no device op, so whatever the device refuses is a
vehicle: a case whose computation the device refuses eagerly (probed once per case, forward and backward), whose
input it cannot hold, or whose refusal message it cannot print is left out of the compiled graph and skips with
the device's message (Ascend documents e.g. no complex ``add``, no float64 ``mul``/``ne``, no uint16/32/64 or
float8 copies and ``to_sparse`` as unsupported on Atlas A2).
"""
from torch_npu_testing import (TestCase, run_tests, device_type, run_in_thread, torch_version_at_least,
                               skip_unless_vehicle, vehicle_refusal)

import collections
import contextlib
import copy
import functools
import math
import pickle
import re
import types
import unittest
import warnings

import torch
from torch._functorch import config
from torch.testing._internal.common_dtype import all_types_and_complex_and

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
            self.assertIs(bound, None, "'with config.patch(...) as v' binds")
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
                    self.assertIs(bound, None, f"{label}: value bound by 'with ... as'")
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
    """Every key of the installed functorch config, with a value of its type and of other types (no type check)."""

    def test_every_key_is_patched_with_a_value_of_its_type_and_restored(self):
        """Every key of get_config_copy(), one at a time, then all together: the very object patched in, restored."""
        before = config.get_config_copy()
        by_type = {}
        for key, value in before.items():
            by_type.setdefault(type(value).__name__, []).append(key)
        self.assertTrue(set(by_type) >= {"bool", "int", "float", "str", "NoneType"},
                        f"value types of the functorch config keys: {sorted(by_type)}")
        unknown = {name: keys for name, keys in by_type.items() if replacement_for(before[keys[0]]) is None}
        self.assert_value(unknown, {}, "keys whose value type has no replacement value (extend replacement_for)")
        replacements = {key: replacement_for(value) for key, value in before.items()}
        for key, value in replacements.items():
            label = f"{type(before[key]).__name__} key {key}"
            with self.subTest(label):
                original = getattr(config, key)
                with config.patch(key, value):
                    self.assertIs(getattr(config, key), value, f"{label}: config.{key} inside the patch")
                    self.assert_value(typed(config.get_config_copy()[key]), typed(value),
                                      f"{label}: get_config_copy()[{key!r}] inside the patch")
                self.assertIs(getattr(config, key), original, f"{label}: config.{key} after the patch")
        with config.patch(replacements):
            inside = {key: getattr(config, key) for key in replacements}
        self.assert_value({key: typed(value) for key, value in inside.items()},
                          {key: typed(value) for key, value in replacements.items()},
                          f"all {len(replacements)} keys patched together, read inside the patch")
        self.assert_value(config.get_config_copy(), before, "the whole config after patching every key")

    def test_values_are_not_type_checked(self):
        """A bool key takes an int, str, float, None, list, callable or tensor as is (no coercion, no copy)."""
        tensor = torch.tensor([1.0, 2.0], device=DEVICE)
        cases = (("int 3", 3), ("int 0", 0), ("str 'yes'", "yes"), ("float 1.0", 1.0), ("None", None),
                 ("list", ["a", "list"]), ("callable", _marker_function), ("tensor on the test device", tensor))
        for label, value in cases:
            with self.subTest(label):
                with config.patch({"debug_assert": value}):
                    self.assertIs(config.debug_assert, value, f"debug_assert patched with {label}")
                self.assert_value(current(*DEFAULTS), DEFAULTS, f"after patching debug_assert with {label}")
        self.assert_tensor(tensor, torch.tensor([1.0, 2.0]), "the tensor used as a config value",
                           device=DEVICE)

    def test_keyword_value_none_is_a_value(self):
        """patch(key=None) and patch({key: None}) set None (only the two-positional form treats None as absent)."""
        for label, patch in (("patch(debug_assert=None)", config.patch(debug_assert=None)),
                             ("patch({'debug_assert': None})", config.patch({"debug_assert": None}))):
            with self.subTest(label):
                with patch:
                    self.assertIs(config.debug_assert, None, f"debug_assert inside {label}")
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
        self.assertIs(getattr(decorated, "__wrapped__", None), original, "__wrapped__ of the decorated function")
        self.assertIs(decorated(), True, "debug_assert seen by the decorated call")
        self.assertIs(original(), DEBUG_ASSERT_DEFAULT, "debug_assert seen by the undecorated function")

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
        self.assertIs(returned, holder, "value returned by the decorated method (self)")
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
        self.assertFalse(isinstance(decorated, type), "@patch on a plain class returns a function, not a class")
        self.assertIs(type(instance), Plain, "type of the object the decorated class returns")
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
        self.assertTrue(isinstance(decorated, type) and issubclass(decorated, Inner),
                        "@patch on a TestCase class returns a subclass of it")
        self.assert_value((decorated.__name__, decorated.__qualname__, decorated.__module__),
                          (Inner.__name__, Inner.__qualname__, Inner.__module__),
                          "(__name__, __qualname__, __module__) of the decorated TestCase class")
        self.assert_value(current(*DEFAULTS), DEFAULTS, "after decorating a TestCase class, before running it")
        result = unittest.TestResult()
        unittest.defaultTestLoader.loadTestsFromTestCase(decorated).run(result)
        self.assertTrue(result.wasSuccessful(), f"inner TestCase result: {result.errors + result.failures}")
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
        self.assertTrue("ValueError: setUpClass failed" in result.errors[0][1],
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
        error, caught = ValueError("raised inside the patch"), None
        try:
            with config.patch(debug_assert=True, cse=False):
                raise error
        except ValueError as exc:
            caught = exc
        self.assertIs(caught, error, "the exception leaving the block (the very object raised inside)")
        self.assert_value(current(*DEFAULTS), DEFAULTS, "after an exception inside a patch block")

    def test_decorator_restores_after_exception(self):
        """An exception in a decorated function propagates unchanged and every key is restored, each call."""
        error = KeyError("raised in the decorated function")

        @config.patch({"debug_assert": True, "cse": False})
        def failing():
            raise error

        for call in range(2):
            caught = None
            try:
                failing()
            except KeyError as exc:
                caught = exc
            self.assertIs(caught, error, f"call {call}: the exception leaving the decorator")
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
                with self.assert_raises_exactly(AssertionError, f"re-entering an active patch on {torch.__version__}",
                                                match=installed_message(MSG_REENTER)):
                    patch.__enter__()
                self.assert_value(current("debug_assert"), expected(debug_assert=True),
                                  "after the refused re-entry, the first entry is still active")
        self.assert_value(current(*DEFAULTS), DEFAULTS, "after leaving the patch object")

    def test_recursive_decorated_function_follows_installed_version(self):
        """A function decorated with one patch that calls itself: from 2.12 every level runs patched (the value is
        read after the inner call returns, before the outer returns); before 2.12 the inner call re-enters the
        active patch object and raises AssertionError out of the outer call; either way restored after."""
        calls = []

        @config.patch(debug_assert=True)
        def recurse(depth):
            calls.append(depth)
            seen = recurse(depth - 1) if depth else []
            return seen + [(depth, config.debug_assert, config.cse)]

        if torch_version_at_least(REENTRANT_AND_THREAD_LOCAL_SINCE):
            self.assert_value(recurse(2), [(0, True, CSE_DEFAULT), (1, True, CSE_DEFAULT), (2, True, CSE_DEFAULT)],
                              "(depth, debug_assert, cse) read at each level after its inner call returned")
            self.assert_value(calls, [2, 1, 0], "levels entered")
        else:
            with self.assert_raises_exactly(AssertionError, f"recursive call under one patch on {torch.__version__}",
                                            match=installed_message(MSG_REENTER)):
                recurse(2)
            self.assert_value(calls, [2], "levels whose body ran before the re-entry was refused")
        self.assert_value(current(*DEFAULTS), DEFAULTS, "after the recursive decorated function")
        self.assert_value(recurse(0), [(0, True, CSE_DEFAULT)], "a non-recursive call of it afterwards")
        self.assert_value(current(*DEFAULTS), DEFAULTS, "after the non-recursive call")

    def test_exiting_a_patch_that_was_never_entered_follows_installed_version(self):
        """__exit__ without __enter__: a no-op before 2.12, AssertionError from 2.12; no value changes either way."""
        with config.patch(debug_assert="outer"):
            never_entered = config.patch(debug_assert=True)
            if torch_version_at_least(REENTRANT_AND_THREAD_LOCAL_SINCE):
                with self.assert_raises_exactly(AssertionError, "exiting a patch that was never entered",
                                                match="^" + re.escape(MSG_EXIT_NOT_ENTERED) + "$"):
                    never_entered.__exit__(None, None, None)
            else:
                self.assertIs(never_entered.__exit__(None, None, None), None,
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
        self.assertFalse(hasattr(config, UNKNOWN_KEY), "hasattr(config, unknown key)")

    def test_non_string_key_in_dict_raises_attribute_error_when_entered(self):
        """patch({1: True}) builds; entering raises AttributeError naming the key."""
        patch = config.patch({1: True})
        with self.assert_raises_exactly(AttributeError, "entering patch({1: True})",
                                        match="^" + re.escape("torch._functorch.config.1 does not exist") + "$"):
            patch.__enter__()
        self.assert_value(current(*DEFAULTS), DEFAULTS, "after failing to enter patch({1: True})")

    def test_unknown_key_in_decorator_raises_at_call_not_at_decoration(self):
        """@patch(known=..., unknown=...) decorates fine; calls raise before the body runs (2nd call: per release)."""
        calls = []

        @config.patch(debug_assert=True, **{UNKNOWN_KEY: 1})
        def body():
            calls.append(1)

        with self.assert_raises_exactly(AttributeError, "first call of a function decorated with an unknown key",
                                        match=re.escape(f"{UNKNOWN_KEY} does not exist")):
            body()
        if torch_version_at_least(REENTRANT_AND_THREAD_LOCAL_SINCE):
            second = (AttributeError, "the failed enter saved nothing", re.escape(f"{UNKNOWN_KEY} does not exist"))
        else:
            second = (AssertionError, "the failed enter kept the saved value of the known key",
                      installed_message(MSG_REENTER))
        with self.assert_raises_exactly(second[0], f"second call on torch {torch.__version__}: {second[1]}",
                                        match=second[2]):
            body()
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
                with self.assert_raises_exactly(AssertionError, f"patch(*{args!r}, **{kwargs!r})",
                                                match=installed_message(message)):
                    config.patch(*args, **kwargs)
                self.assert_value(current(*DEFAULTS), DEFAULTS, f"after invalid patch ({label})")

    def test_too_many_positional_arguments_raise_type_error(self):
        """patch(key, value, extra) is refused by Python's signature check with TypeError."""
        with self.assert_raises_exactly(TypeError, "patch('debug_assert', True, False)", match="positional argument"):
            config.patch("debug_assert", True, False)
        self.assert_value(current(*DEFAULTS), DEFAULTS, "after patch with too many arguments")


class TestConfigPatchThreads(TestCase):
    """Patched values are process-wide before 2.12 and thread-local from 2.12, in both directions."""

    def thread_local(self):
        return torch_version_at_least(REENTRANT_AND_THREAD_LOCAL_SINCE)

    def test_patch_in_main_thread_seen_by_a_worker_follows_installed_version(self):
        """A worker reads the main thread's patched value before 2.12 and the default from 2.12."""
        with config.patch(debug_assert=True):
            seen = run_in_thread(current, *DEFAULTS)
        want = DEFAULTS if self.thread_local() else expected(debug_assert=True, cse=CSE_DEFAULT)
        self.assert_value(seen, want, f"flags read by a worker while the main thread is patched "
                                      f"(torch {torch.__version__})")
        self.assert_value(current(*DEFAULTS), DEFAULTS, "after the threaded check")

    def test_patch_left_entered_by_a_worker_follows_installed_version(self):
        """A worker enters a patch and ends inside it: before 2.12 the main thread sees (and exits) it, from 2.12
        the values died with the worker and exiting from the main thread raises AssertionError."""
        patch = config.patch(debug_assert=True, cse=False)

        def worker():
            patch.__enter__()
            return current(*DEFAULTS)

        try:
            seen_by_worker = run_in_thread(worker)
            seen_by_main = current(*DEFAULTS)
        finally:
            if not self.thread_local():
                patch.__exit__(None, None, None)
        self.assert_value(seen_by_worker, expected(debug_assert=True, cse=False), "flags read by the worker inside")
        want = DEFAULTS if self.thread_local() else expected(debug_assert=True, cse=False)
        self.assert_value(seen_by_main, want, f"flags read by the main thread after the worker ended inside its patch "
                                              f"(torch {torch.__version__})")
        if self.thread_local():
            with self.assert_raises_exactly(AssertionError, "exiting, in the main thread, a patch entered by a worker",
                                            match="^" + re.escape(MSG_EXIT_NOT_ENTERED) + "$"):
                patch.__exit__(None, None, None)
        self.assert_value(current(*DEFAULTS), DEFAULTS, "main thread at the end")

    def test_one_patch_object_active_in_two_threads_follows_installed_version(self):
        """A patch active in the main thread entered again by a worker: works from 2.12, AssertionError before."""
        patch = config.patch(debug_assert=True)

        def worker():
            with patch:
                return config.debug_assert

        with patch:
            if self.thread_local():
                self.assertIs(run_in_thread(worker), True, "debug_assert read by the worker inside the shared patch")
            else:
                with self.assert_raises_exactly(AssertionError, f"worker entering a patch active in the main thread "
                                                                f"(torch {torch.__version__})",
                                                match=installed_message(MSG_REENTER)):
                    run_in_thread(worker)
            self.assert_value(current("debug_assert"), expected(debug_assert=True),
                              "main thread, still inside its patch, after the worker finished")
        self.assert_value(current(*DEFAULTS), DEFAULTS, "after the shared patch")


# --------------------------------------------------------------------------- neighbouring config modules
# Module-level names the config machinery lists in every config module: not settings anyone patches.
NOT_SETTINGS = frozenset({"TYPE_CHECKING", "_save_config_ignore"})
# Settings torch._inductor.config shares by name with torch._functorch.config (measured per release).
SHARED_WITH_INDUCTOR = {"static_weight_shapes", "selective_decompose"} if torch_version_at_least("2.10") else {
    "static_weight_shapes"}


def neighbour_configs():
    """``{name: config module}`` of the neighbours a functorch patch must leave alone (imported by torch itself)."""
    import torch._dynamo.config
    import torch._inductor.config
    return {"torch._inductor.config": torch._inductor.config, "torch._dynamo.config": torch._dynamo.config}


class TestConfigPatchNeighbourConfigs(TestCase):
    """A functorch patch changes functorch's config only: inductor's keys of the same name and dynamo stay as is."""

    def snapshot(self):
        return {name: module.get_config_copy() for name, module in neighbour_configs().items()}

    def test_inductor_shares_these_key_names_on_the_installed_release(self):
        """static_weight_shapes (and selective_decompose from 2.10) exist in both modules; dynamo shares none."""
        functorch_keys = set(config.get_config_copy()) - NOT_SETTINGS
        shared = {name: functorch_keys & set(module.get_config_copy()) for name, module in neighbour_configs().items()}
        self.assert_value(shared, {"torch._inductor.config": SHARED_WITH_INDUCTOR, "torch._dynamo.config": set()},
                          f"setting names shared with functorch's config on torch {torch.__version__}")

    def test_functorch_patch_leaves_inductor_keys_of_the_same_name(self):
        """Each shared key patched in functorch (context manager and decorator), then every functorch key at once:
        inductor's value of that name is the very object it was, and inductor's and dynamo's whole configs are equal
        to their copies taken before, inside and after the patch."""
        inductor = neighbour_configs()["torch._inductor.config"]
        before = self.snapshot()
        everything = {key: replacement_for(value) for key, value in config.get_config_copy().items()}
        cases = [(f"patch({key!r}, ...)", {key: everything[key]}) for key in sorted(SHARED_WITH_INDUCTOR)]
        cases.append((f"patch(all {len(everything)} functorch keys)", everything))
        for label, changes in cases:
            shared = {key: getattr(inductor, key) for key in SHARED_WITH_INDUCTOR}
            for form in ("with", "decorator"):
                with self.subTest(f"{label} as {form}"):
                    def read_inside():
                        return ({key: getattr(config, key) for key in changes},
                                {key: getattr(inductor, key) for key in shared}, self.snapshot())

                    if form == "with":
                        with config.patch(changes):
                            functorch_inside, inductor_inside, inside = read_inside()
                    else:
                        functorch_inside, inductor_inside, inside = config.patch(changes)(read_inside)()
                    for key, value in changes.items():
                        self.assertIs(functorch_inside[key], value, f"{label}: functorch config.{key} inside")
                    for key, value in shared.items():
                        self.assertIs(inductor_inside[key], value, f"{label}: torch._inductor.config.{key} inside")
                    self.assert_value(inside, before, f"{label}: inductor and dynamo configs inside")
                    self.assert_value(self.snapshot(), before, f"{label}: inductor and dynamo configs after")
        self.assert_value(current(*DEFAULTS), DEFAULTS, "functorch config after the neighbour checks")

    def test_inductor_patch_leaves_functorch_keys_of_the_same_name(self):
        """The other direction: torch._inductor.config.patch of a shared key leaves functorch's value alone."""
        inductor = neighbour_configs()["torch._inductor.config"]
        for key in sorted(SHARED_WITH_INDUCTOR):
            with self.subTest(key):
                functorch_value, replacement = getattr(config, key), replacement_for(getattr(inductor, key))
                with inductor.patch(key, replacement):
                    self.assertIs(getattr(inductor, key), replacement, f"torch._inductor.config.{key} inside")
                    self.assertIs(getattr(config, key), functorch_value, f"functorch config.{key} inside")
                self.assertIs(getattr(config, key), functorch_value, f"functorch config.{key} after")


# --------------------------------------------------------------------------- computation under the patch
# dtypes whose every op here works on upstream's CPU (each one's outputs are compared with eager) ...
WORKING_DTYPES = tuple(all_types_and_complex_and(torch.half, torch.bfloat16, torch.bool)) + (torch.complex32,)
# ... and the others the installed release has: CPU add has no kernel for them, which raises NotImplementedError
# from 2.8 (pytorch#155470) and RuntimeError before.
MISSING_KERNEL_ERROR = NotImplementedError if torch_version_at_least("2.8") else RuntimeError
REFUSED_DTYPES = tuple(getattr(torch, name) for name in (
    "uint16", "uint32", "uint64", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz",
    "float8_e8m0fnu") if hasattr(torch, name))
QUANTIZED_DTYPES = (torch.quint8, torch.qint8, torch.qint32, torch.quint4x2, torch.quint2x4)
# The ranks each memory format applies to (torch refuses channels_last for rank 5 and _3d for rank 4).
MEMORY_FORMAT_SHAPES = ((torch.contiguous_format, (2, 3, 4, 5)), (torch.contiguous_format, (2, 3, 4, 5, 6)),
                        (torch.channels_last, (2, 3, 4, 5)), (torch.channels_last, (3, 3, 3, 3)),
                        (torch.channels_last_3d, (2, 3, 4, 5, 6)))
# Sparse layouts: AOTAutograd traces COO inputs; compressed ones fail its fake-tensor conversion. The COO input is
# converted on the CPU and moved: the conversion is not the computation (a device may refuse to_sparse).
SPARSE_ACCEPTED = {"sparse COO": lambda t: t.cpu().to_sparse().to(t.device)}
SPARSE_REFUSED = {"sparse CSR": lambda t: t.to_sparse_csr(), "sparse CSC": lambda t: t.to_sparse_csc(),
                  "sparse BSR (blocks 2x3)": lambda t: t.to_sparse_bsr((2, 3)),
                  "sparse BSC (blocks 2x3)": lambda t: t.to_sparse_bsc((2, 3))}


def position_values(dtype, shape):
    """Values that differ per position, alternately small and large (i/2 modulo a prime above the count: rows are
    not sorted), exact in ``dtype`` through 2*x*x: for 6 positions -2, 2, -1, 3, 0, 4 (floating ones halved)."""
    if dtype is torch.complex32:  # torch warns once per process that ComplexHalf is experimental
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", "ComplexHalf support is experimental", UserWarning)
            return position_values(torch.complex64, shape).to(dtype)
    count = math.prod(shape)
    prime = next(m for m in range(count + 1, 2 * count + 3) if all(m % d for d in range(2, m)))
    base = (torch.arange(count, dtype=torch.float64) * (prime // 2 + 1)) % prime - 2
    if dtype is torch.bool:
        return (base % 2 == 0).reshape(shape)
    if dtype.is_complex:
        return torch.complex(base / 2, base.flip(0) / 4).to(dtype).reshape(shape)
    if dtype.is_floating_point:
        return (base / 2).to(dtype).reshape(shape)
    return (base + (0 if dtype.is_signed else 2)).to(dtype).reshape(shape)


def grid(count):
    return position_values(torch.float32, (count,))


def duplicated_square(x):
    """x*x + x*x: with CSE AOTAutograd keeps one mul, without it two."""
    return x * x + x * x


def scaled(x):
    """x*2: one mul with or without CSE, and no add backward (a device without complex add computes it)."""
    return x * 2


def doubled(x):
    """x + x: one cheap op (no mul) for the layout and size cases."""
    return x + x


def dtype_outputs(x):
    """x*x + x*x, a bool mask, an int64 count per row and, where the dtype is ordered, an int64 argmax per row."""
    mask = x != 0
    outputs = (duplicated_square(x), mask, mask.sum(-1))
    return outputs if x.is_complex() or x.dtype is torch.bool else outputs + (x.argmax(-1),)


def case(input_class, label, values, shape=None, view=None, memory_format=None, grad=False, fn=doubled):
    """An input of the computation: ``build(device)`` returns (leaf, the input derived from it by ``view``)."""
    def build(device):
        leaf = values.reshape(shape) if shape is not None else values
        leaf = leaf.to(device=device, memory_format=memory_format or torch.preserve_format, copy=True)
        leaf.requires_grad_(grad)
        return leaf, (view(leaf) if view is not None else leaf)
    return input_class, label, build, fn


# Inputs without grad: one inference graph (each traced op costs compile time: one graph for all).
INFERENCE_CASES = (
    *(case("dtype", f"{dtype} (2, 3)", position_values(dtype, (2, 3)), fn=dtype_outputs) for dtype in WORKING_DTYPES),
    case("dtype", "torch.int16 square (3, 3)", position_values(torch.int16, (3, 3)), fn=dtype_outputs),
    case("layout", "transposed (2, 3)", grid(6), shape=(2, 3), view=torch.t),
    case("layout", "transposed square (3, 3)", grid(9), shape=(3, 3), view=torch.t),
    case("layout", "permuted (2, 3, 4)", grid(24), shape=(2, 3, 4), view=lambda t: t.permute(2, 0, 1)),
    case("layout", "sliced with steps (2, 3) of (4, 9)", grid(36), shape=(4, 9), view=lambda t: t[::2, ::3]),
    *(case("layout", f"{fmt} {shape}", grid(math.prod(shape)), shape=shape, memory_format=fmt)
      for fmt, shape in MEMORY_FORMAT_SHAPES),
    case("layout", "neg view: conj().imag of complex64 (2, 3)", position_values(torch.complex64, (2, 3)),
         view=lambda t: t.conj().imag, fn=duplicated_square),
    *(case("layout", f"{label} (3, 4)", grid(12), shape=(3, 4), view=to_sparse)
      for label, to_sparse in SPARSE_ACCEPTED.items()),
    case("size", "batch of 0 (0, 3)", torch.tensor([]), shape=(0, 3)),
    case("size", "inner dim of 0 (3, 0)", torch.tensor([]), shape=(3, 0)),
    case("size", "0-d", torch.tensor(-3.0)),
    case("size", "size-1 dims (1, 3, 1)", grid(3), shape=(1, 3, 1)),
)
# Inputs with grad: the joint graph, whose partitioner reads the cse flag (2 muls per x*x + x*x without it).
GRAD_CASES = (
    case("dtype", "torch.float16 (2, 3), with grad", position_values(torch.half, (2, 3)), grad=True,
         fn=duplicated_square),
    case("dtype", "torch.bfloat16 (2, 3), with grad", position_values(torch.bfloat16, (2, 3)), grad=True,
         fn=duplicated_square),
    case("layout", "conj view of complex64 (2, 3), with grad", position_values(torch.complex64, (2, 3)),
         view=torch.conj, grad=True, fn=scaled),
    case("layout", "sliced with step 2, with grad", grid(8), view=lambda t: t[::2], grad=True),
    case("layout", "expanded, stride 0, with grad", grid(3), view=lambda t: t.expand(2, 3), grad=True),
)
NESTED_CASE = case("nested", "float32 under patch(cse=False) nested in patch(cse=True)", grid(4), grad=True,
                   fn=duplicated_square)


def as_tuple(outputs):
    return outputs if isinstance(outputs, tuple) else (outputs,)


def _backward(outputs):
    floating = [out for out in outputs if out.requires_grad]
    if floating:
        torch.autograd.backward(floating, [torch.ones_like(out) for out in floating])


def _compile(functions, seen):
    """``aot_function`` of the functions applied one per input; ``seen`` records what the forward compiler saw
    and, in ``"counts"``, how many outputs each function returned when traced."""
    from torch._functorch.aot_autograd import aot_function, make_boxed_func
    from torch._functorch.partitioners import min_cut_rematerialization_partition

    def forward_compiler(graph_module, example_inputs):
        seen["compiles"] = seen.get("compiles", 0) + 1
        seen["cse"] = config.cse
        seen["muls"] = sum(1 for node in graph_module.graph.nodes
                           if node.op == "call_function" and node.target is torch.ops.aten.mul.Tensor)
        return make_boxed_func(graph_module)

    def computation(*inputs):
        outputs = [as_tuple(fn(x)) for fn, x in zip(functions, inputs)]
        seen["counts"] = [len(outs) for outs in outputs]
        return tuple(out for outs in outputs for out in outs)

    return aot_function(computation, fw_compiler=forward_compiler, partition_fn=min_cut_rematerialization_partition,
                        bw_compiler=lambda graph_module, _: make_boxed_func(graph_module))


def device_vehicle(label, build, fn):
    """``(what, probe)`` of a case's vehicle on DEVICE: its computation eager there, forward and backward (the
    compiled run dispatches the same device ops). ``config.patch`` dispatches none: a refusal is the vehicle's."""
    def probe():
        with torch.enable_grad():
            _backward(as_tuple(fn(build(DEVICE)[1])))
    return f"{label}: the computation eager on {DEVICE}", probe


def _compile_and_run(every_case, *patches):
    """The cases' functions compiled by aot_function and run (forward + backward) on DEVICE under ``patches``; a
    case whose vehicle the device refuses stays out of the one graph (its test skips, with the device's message)."""
    seen, cases = {}, tuple(case for case in every_case if not vehicle_refusal(*device_vehicle(*case[1:])))
    compiled = _compile([fn for *_, fn in cases], seen)
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
    counts = seen.pop("counts")
    spans = [(sum(counts[:index]), count) for index, count in enumerate(counts)]
    per_case = [[tuple(out.detach() for out in flat[start:start + count]) for start, count in spans]
                for flat in (outputs, again)]
    index = {label: number for number, (_, label, *_) in enumerate(cases)}
    return {"every": every_case, "cases": cases, "index": index, "seen": seen, "outputs": per_case[0],
            "again": per_case[1], "grads": [leaf.grad for leaf, _ in built]}


@functools.lru_cache(maxsize=None)
def aot_runs_under_patch():
    """The compiles shared by the computation tests (computed inside the first test that needs them).

    ``"grad"`` and ``"inference"`` under ``patch(cse=False)`` (non-default: 2 muls per x*x + x*x in the
    joint graph prove the patch reached AOTAutograd's partitioner); ``"nested"``: one input under
    ``patch(cse=False)`` inside ``patch(cse=True)`` (2 muls: the innermost patch wins). The innermost value is
    the non-default one: a partitioner that runs CSE imports inductor's pattern matcher on first use (0.7-1.0 s,
    docs/figures.md), and a patch back to the default inside another is checked on the config's hash.
    """
    return {"grad": _compile_and_run(GRAD_CASES, config.patch(cse=False)),
            "inference": _compile_and_run(INFERENCE_CASES, config.patch(cse=False)),
            "nested": _compile_and_run((NESTED_CASE,), config.patch(cse=True), config.patch("cse", False))}


def raised_under_patch(compiled, inp):
    """``(type, message)`` of what ``compiled(inp)`` raises under patch(cse=False), else None. Only these leave the
    guard: a device refusing inside AOTAutograd's fake-tensor tracing (printing the input for its message) raised
    through a dispatch-key guard its traceback keeps; freed later, that left most dispatch keys excluded in this
    thread and autograd stopped recording (measured on the simulated NPU)."""
    with torch._C._PreserveDispatchKeyGuard():
        try:
            with config.patch(cse=False):
                compiled(inp)
        except Exception as exc:
            return type(exc), str(exc)
    return None


def resolved_copy(tensor):
    """The contiguous, conj- and neg-resolved copy of a strided tensor; a sparse tensor as it is."""
    return tensor.resolve_conj().resolve_neg().contiguous() if tensor.layout is torch.strided else tensor


def eager_reference(build, fn):
    """CPU eager (outputs, grad) on the resolved contiguous copy, and the output strides of eager on DEVICE."""
    with torch.enable_grad():
        leaf, inp = build("cpu")
        outputs = as_tuple(fn(resolved_copy(inp)))
        _backward(outputs)
    with torch.no_grad():
        strides = [out.stride() if out.layout is torch.strided else None for out in as_tuple(fn(build(DEVICE)[1]))]
    return [out.detach() for out in outputs], leaf.grad, strides


class ComputationUnderPatch(TestCase):
    """Base: compare runs of the computation driven under a patch with eager, case by case, output by output."""

    def check_runs(self, input_class, *names):
        runs = aot_runs_under_patch()
        self.assert_value(current(*DEFAULTS), DEFAULTS, "after the aot_function runs under the patches")
        for name in names:
            run = runs[name]
            for case_class, label, build, fn in run["every"]:
                if case_class == input_class:
                    with self.subTest(f"{name}: {label}"):
                        skip_unless_vehicle(self, *device_vehicle(label, build, fn))
                        self.check_case(run, run["index"][label], f"{name} run, {label}", *eager_reference(build, fn))

    def check_case(self, run, index, what, ref_outputs, ref_grad, ref_strides):
        for key, call in (("outputs", "output"), ("again", "output of a second call outside the patch")):
            self.assert_value(len(run[key][index]), len(ref_outputs), f"{what}: number of outputs ({call})")
            for number, (out, ref, stride) in enumerate(zip(run[key][index], ref_outputs, ref_strides)):
                self.assert_tensor(out, ref, f"{what}: {call} {number} on {DEVICE} vs CPU eager", device=DEVICE)
                if stride is not None:
                    self.assert_value(out.stride(), stride, f"{what}: strides of {call} {number} vs eager's")
        if ref_grad is None:
            self.assertIs(run["grads"][index], None, f"{what}: grad of an input without requires_grad")
        else:
            self.assert_tensor(run["grads"][index], ref_grad, f"{what}: grad on {DEVICE} vs CPU eager", device=DEVICE)

    def check_refused(self, label, inp, exc_type, compiled):
        """``compiled`` called on ``inp`` (on DEVICE) under patch(cse=False) raises exactly ``exc_type``. The move
        to DEVICE and AOTAutograd's message (it prints the input there) are vehicles: refused, the case skips."""
        skip_unless_vehicle(self, f"{label} moved to {DEVICE}", lambda: inp.to(DEVICE))
        raised = raised_under_patch(compiled, inp.to(DEVICE)) or (None, "nothing was raised")

        def refusal():
            raise RuntimeError(raised[1])
        if raised[0] is RuntimeError and exc_type is not RuntimeError:
            skip_unless_vehicle(self, f"{label} compiled on {DEVICE}, AOTAutograd's message printing it", refusal)
        self.assert_value(raised[0], exc_type, f"{label}: the exception compiled on {DEVICE} under patch(cse=False) "
                                               f"raises ({raised[1][:200]})")
        self.assert_value(current(*DEFAULTS), DEFAULTS, f"{label}: after the refused run under the patch")


class TestConfigPatchDrivesComputation(ComputationUnderPatch):
    """A patched flag reaches the AOTAutograd machinery that reads it, at compile time."""

    def test_patched_cse_flag_reaches_aot_autograd(self):
        """Forward graph: 2 muls per x*x + x*x under patch(cse=False), also nested in patch(cse=True); one compile."""
        runs = aot_runs_under_patch()
        fns = [fn for *_, fn in runs["grad"]["cases"]]
        muls = 2 * fns.count(duplicated_square) + fns.count(scaled)
        self.assert_value(runs["grad"]["seen"], {"compiles": 1, "cse": False, "muls": muls},
                          f"patch(cse=False): (compiles, cse, aten.mul count) seen by the forward compiler for "
                          f"{fns.count(duplicated_square)} inputs through x*x + x*x, {fns.count(scaled)} through x*2")
        self.assert_value((runs["inference"]["seen"]["compiles"], runs["inference"]["seen"]["cse"]), (1, False),
                          "patch(cse=False), inputs without grad: (compiles, cse) seen by the forward compiler")
        self.assert_value(runs["nested"]["seen"], {"compiles": 1, "cse": False, "muls": 2},
                          "patch(cse=False) nested in patch(cse=True): (compiles, cse, aten.mul count) seen by "
                          "the forward compiler for 1 input")
        self.check_runs("nested", "nested")


class TestConfigPatchComputationDtypes(ComputationUnderPatch):
    """The computation compiled under patch(cse=False) in every dtype of torch's dtype space."""

    def test_patched_computation_in_every_dtype_equals_eager(self):
        """Every output (float, int64 argmax/count, bool mask) and grad equals CPU eager: dtype, strides, values."""
        self.check_runs("dtype", "inference", "grad")

    def test_dtypes_without_cpu_kernels_are_refused_alike(self):
        """uint16/32/64 and float8: upstream's CPU add refuses them (NotImplementedError, RuntimeError before 2.8),
        eager and compiled under the patch (one graph, traced on the first call, run for every dtype)."""
        self.assertTrue(REFUSED_DTYPES, "the installed release has unsigned and float8 dtypes")
        compiled = _compile([duplicated_square], {})
        for dtype in REFUSED_DTYPES:
            with self.subTest(str(dtype)):
                values = position_values(dtype, (2, 3))
                with self.assert_raises_exactly(MISSING_KERNEL_ERROR, f"{dtype}: CPU eager x*x + x*x (the reference)"):
                    duplicated_square(values)
                self.check_refused(f"{dtype} (2, 3)", values, MISSING_KERNEL_ERROR, compiled)

    def test_quantized_dtypes_are_refused_alike(self):
        """Quantized tensors (a CPU layout: run on the CPU, the device comparison does not apply): CPU eager
        x*x + x*x has no QuantizedCPU kernel (NotImplementedError) and AOTAutograd's fake tensors refuse the input
        under the patch (UnsupportedFakeTensorException)."""
        from torch._subclasses.fake_tensor import UnsupportedFakeTensorException
        compiled = _compile([duplicated_square], {})
        for dtype in QUANTIZED_DTYPES:
            with self.subTest(str(dtype)), warnings.catch_warnings():
                warnings.filterwarnings("ignore", "torch.quantize_per_tensor, torch.quantize_per_channel", UserWarning)
                values = torch.quantize_per_tensor(grid(6).reshape(2, 3), 0.5, 0, dtype)
                self.assert_value(values.dtype, dtype, "dtype of the quantized input")
                with self.assert_raises_exactly(NotImplementedError, f"{dtype}: CPU eager x*x + x*x"):
                    duplicated_square(values)
                with self.assert_raises_exactly(UnsupportedFakeTensorException, f"{dtype}: compiled under the patch",
                                                match="quantized nyi in meta tensors"):
                    with config.patch(cse=False):
                        compiled(values)
                self.assert_value(current(*DEFAULTS), DEFAULTS, f"{dtype}: after the refused run under the patch")


class TestConfigPatchComputationLayouts(ComputationUnderPatch):
    """Memory formats, strided views, conj/neg views and sparse layouts of the computation under the patch."""

    def test_patched_computation_on_every_layout_equals_eager(self):
        """Outputs for every layout equal CPU eager on the resolved contiguous copy; strides equal eager's."""
        self.check_runs("layout", "inference", "grad")

    def test_compressed_sparse_layouts_are_refused_by_aot_tracing(self):
        """CSR, CSC, BSR and BSC inputs: AssertionError from AOTAutograd's fake-tensor tracing (eager accepts them)."""
        dense = grid(24).reshape(4, 6)
        for label, to_sparse in SPARSE_REFUSED.items():
            with self.subTest(label), warnings.catch_warnings():
                warnings.filterwarnings("ignore", "Sparse CSR tensor support is in beta state", UserWarning)
                sparse = to_sparse(dense)
                self.assert_tensor(doubled(sparse).to_dense(), doubled(dense), f"{label}: CPU eager x + x (accepted)")
                self.check_refused(label, sparse, AssertionError, _compile([doubled], {}))


class TestConfigPatchComputationSizes(ComputationUnderPatch):
    """Zero-size, 0-d and size-1 inputs of the computation compiled under the patch."""

    def test_patched_computation_on_edge_sizes_equals_eager(self):
        """Outputs for batch-0, inner-0, 0-d and size-1 inputs equal CPU eager, shape and dtype included."""
        self.check_runs("size", "inference")


def aliasing_and_mutating(x, buffer):
    """Mutates ``buffer`` in place and returns it, a view of the input ``x``, a result and two views of it."""
    buffer.mul_(2)
    result = duplicated_square(x)
    return x.t(), result, result.view(-1), result[::2], buffer


def storage_relations(inputs, outputs):
    """Per output: (is a view, the index of each input and of each earlier output it shares its storage with)."""
    def storage(tensor):
        return tensor.untyped_storage().data_ptr()

    return [(out._is_view(), [i for i, inp in enumerate(inputs) if storage(inp) == storage(out)],
             [j for j, other in enumerate(outputs[:index]) if storage(other) == storage(out)])
            for index, out in enumerate(outputs)]


def side_effect_inputs(device):
    return grid(6).reshape(2, 3).to(device).requires_grad_(), grid(3).clone().to(device)  # not views on any device


@functools.lru_cache(maxsize=None)
def side_effect_runs():
    """Two compiles under patch(cse=False): the aliasing/mutating function, and x*x + x*x with dynamic shapes
    (traced once, then called with other shapes outside the patch)."""
    aliasing, dynamic = {}, {}
    from torch._functorch.aot_autograd import aot_function, make_boxed_func

    def forward_compiler(seen):
        def compiler(graph_module, _):
            seen["compiles"] = seen.get("compiles", 0) + 1
            seen["cse"] = config.cse
            seen["muls"] = sum(node.target is torch.ops.aten.mul.Tensor for node in graph_module.graph.nodes)
            seen["symbolic"] = [all(isinstance(size, torch.SymInt) for size in node.meta["val"].shape)
                                for node in graph_module.graph.nodes if node.op == "placeholder"]
            return make_boxed_func(graph_module)
        return compiler

    backward = lambda graph_module, _: make_boxed_func(graph_module)  # noqa: E731
    mutating = aot_function(aliasing_and_mutating, fw_compiler=forward_compiler(aliasing), bw_compiler=backward)
    squares = aot_function(duplicated_square, fw_compiler=forward_compiler(dynamic), bw_compiler=backward,
                           dynamic=True)
    x, buffer = side_effect_inputs(DEVICE)
    version = buffer._version
    with torch.enable_grad(), config.patch(cse=False):
        outputs = mutating(x, buffer)
        torch.autograd.backward([outputs[0], outputs[2]], [torch.ones_like(outputs[0]), torch.ones_like(outputs[2])])
        first = squares(grid(6).reshape(2, 3).to(DEVICE))
    later = [squares(grid(math.prod(shape)).reshape(shape).to(DEVICE)) for shape in DYNAMIC_SHAPES[1:]]
    return {"aliasing": (aliasing, x, buffer, buffer._version - version, outputs),
            "dynamic": (dynamic, [first] + later)}


DYNAMIC_SHAPES = ((2, 3), (4, 5), (1, 7), (3, 0))


class TestConfigPatchComputationSideEffects(TestCase):
    """Aliasing outputs, an in-place mutated input and dynamic shapes of a computation compiled under the patch."""

    def test_aliasing_outputs_and_mutated_input_equal_eager(self):
        """Under patch(cse=False): a view of the input, a result and two views of it, and an input mutated in place
        and returned: values, views and shared storages as CPU eager's, the mutation applied once (version + 1),
        the returned buffer is the input itself, gradients as eager's; the forward graph has 3 muls (no CSE)."""
        seen, x, buffer, bumps, outputs = side_effect_runs()["aliasing"]
        self.assert_value(seen, {"compiles": 1, "cse": False, "muls": 3, "symbolic": [False, False]},
                          "(compiles, cse, aten.mul count, symbolic inputs) seen by the forward compiler")
        self.assert_value(current(*DEFAULTS), DEFAULTS, "after the run under the patch")
        ref_x, ref_buffer = side_effect_inputs("cpu")
        with torch.enable_grad():
            ref = aliasing_and_mutating(ref_x, ref_buffer)
            torch.autograd.backward([ref[0], ref[2]], [torch.ones_like(ref[0]), torch.ones_like(ref[2])])
        self.assert_value(storage_relations((x, buffer), outputs), storage_relations((ref_x, ref_buffer), ref),
                          "(is a view, inputs shared, earlier outputs shared) per output, vs eager")
        self.assertIs(outputs[-1], buffer, "the mutated input returned is the input object itself")
        self.assert_value(bumps, 1, "version counter increments of the mutated input")
        for number, (out, want) in enumerate(zip(outputs, ref)):
            self.assert_tensor(out, want, f"output {number} on {DEVICE} vs CPU eager", device=DEVICE)
            self.assert_value(out.requires_grad, want.requires_grad, f"requires_grad of output {number}")
        self.assert_tensor(buffer, ref_buffer, "the mutated input vs eager's", device=DEVICE)
        self.assert_tensor(x.grad, ref_x.grad, "gradient through the aliasing outputs vs eager's", device=DEVICE)

    def test_dynamic_shapes_trace_once_under_the_patch(self):
        """aot_function(dynamic=True) traced under patch(cse=False): symbolic sizes, 2 muls, one compile serving
        shapes (2, 3), then (4, 5), (1, 7) and (3, 0) outside the patch, each equal to CPU eager."""
        seen, results = side_effect_runs()["dynamic"]
        self.assert_value(seen, {"compiles": 1, "cse": False, "muls": 2, "symbolic": [True]},
                          "(compiles, cse, aten.mul count, symbolic input) seen by the forward compiler")
        for shape, result in zip(DYNAMIC_SHAPES, results):
            with self.subTest(str(shape)):
                want = duplicated_square(grid(math.prod(shape)).reshape(shape))
                self.assert_tensor(result, want, f"x*x + x*x of shape {shape} on {DEVICE} vs CPU eager", device=DEVICE)


del ComputationUnderPatch  # a base, not a test class of its own


# --------------------------------------------------------------------------- torch subsystems
def cse_scale(x):
    """x scaled by 1 while cse is patched off and by 0 otherwise: the result shows the value seen inside."""
    return x * (0.0 if config.cse else 1.0)


class CseReader:
    """Callables that are not functions, each returning the cse value it sees."""

    def __call__(self):
        return config.cse

    @staticmethod
    def static():
        return config.cse

    @classmethod
    def klass(cls):
        return config.cse


class OrderedChanges(dict):
    """A user's dict subclass of changes."""


class TestConfigPatchSubsystems(TestCase):
    """Where the patch meets other parts of torch: torch.func transforms of a decorated function, mappings of
    changes, the config hash, nn.Module forward and hooks, autocast, the default dtype, the RNG stream,
    callables that are not functions, copies, warnings."""

    def test_torch_func_transforms_of_a_decorated_function(self):
        """grad, vmap and jvp of a patch-decorated function run it patched (x scaled by 1, not 0) and restore."""
        decorated = config.patch(cse=False)(lambda x: cse_scale(x).sum())
        x = torch.tensor([1.5, -2.0, 0.5], device=DEVICE)
        ones = torch.ones(3, device=DEVICE)
        self.assert_tensor(torch.func.grad(decorated)(x), ones.cpu(), "grad of the decorated function", device=DEVICE)
        self.assert_tensor(torch.vmap(config.patch(cse=False)(cse_scale))(x), x.cpu(), "vmap of it", device=DEVICE)
        self.assert_tensor(torch.func.jvp(decorated, (x,), (ones,))[1], torch.tensor(3.0), "jvp of it", device=DEVICE)
        self.assert_value(current(*DEFAULTS), DEFAULTS, "after the transforms")

    def test_mappings_of_changes(self):
        """A dict subclass or an OrderedDict of changes is applied; a mapping that is not a dict is refused as a
        lone positional argument; the dict passed is not modified and a list value is stored as the object."""
        marker = ["patched marker"]
        for label, changes in (("OrderedDict", collections.OrderedDict(cse=False)), ("dict subclass",
                                                                                     OrderedChanges(cse=False))):
            with self.subTest(label), config.patch(changes):
                self.assert_value(current("cse"), expected(cse=False), f"patch({label}) inside")
            self.assert_value(dict(changes), {"cse": False}, f"the {label} after the patch")
        with self.assert_raises_exactly(AssertionError, "patch(MappingProxyType)", match=installed_message(
                MSG_LONE_ARG)):
            config.patch(types.MappingProxyType({"cse": False}))
        old = config.debug_assert
        with config.patch({"debug_assert": marker}):
            self.assertIs(config.debug_assert, marker, "a list value is stored as the very object")
        self.assertIs(config.debug_assert, old, "the key's old object after the patch")

    def test_config_hash_follows_the_patch(self):
        """get_hash() differs inside a patch of a non-default value, equals the default's inside a patch of the
        default value and is the old one again after the patch, also inside a decorated function."""
        before = config.get_hash()
        with config.patch(cse=False):
            inside = config.get_hash()
            with config.patch(cse=True):
                self.assert_value(config.get_hash(), before, "hash inside a nested patch of the default value")
            self.assert_value(config.get_hash(), inside, "hash after the nested patch")
        self.assertTrue(inside != before, "hash inside patch(cse=False) differs from the default's")
        self.assert_value(config.get_hash(), before, "hash after the patch")
        self.assert_value(config.patch(cse=False)(config.get_hash)(), inside, "hash inside a decorated function")
        self.assert_value(config.get_hash(), before, "hash after the decorated function")

    def test_module_forward_decorated_and_its_hooks(self):
        """A decorated forward runs patched while the module's forward pre-hook and hook run outside it; eval mode
        and the state_dict are untouched and the output equals the undecorated module's."""
        torch.manual_seed(0)
        module = torch.nn.Linear(3, 2).to(DEVICE).eval()
        seen = []
        module.register_forward_pre_hook(lambda m, args: seen.append(("pre", config.cse)))
        module.register_forward_hook(lambda m, args, out: seen.append(("post", config.cse)))
        x = torch.ones(4, 3, device=DEVICE)
        plain = module(x)
        state = {key: value.clone() for key, value in module.state_dict().items()}
        forward = module.forward
        module.forward = config.patch(cse=False)(lambda t: seen.append(("forward", config.cse)) or forward(t))
        seen.clear()
        got = module(x)
        self.assert_value(seen, [("pre", CSE_DEFAULT), ("forward", False), ("post", CSE_DEFAULT)], "cse seen in order")
        self.assert_tensor(got, plain.detach().cpu(), "output of the decorated forward", device=DEVICE)
        self.assertFalse(module.training, "eval mode after the decorated call")
        for key, value in module.state_dict().items():
            self.assert_tensor(value, state[key].cpu(), f"state_dict {key}", device=DEVICE)

    def test_autocast_default_dtype_and_rng_stream_untouched(self):
        """Entering and leaving a patch inside torch.autocast and under set_default_dtype(float64) keeps both; the
        patch draws nothing from the global RNG stream."""
        saved = torch.get_default_dtype()
        torch.manual_seed(11)
        state = torch.get_rng_state()
        torch.set_default_dtype(torch.float64)
        try:
            with torch.autocast("cpu", dtype=torch.bfloat16):
                with config.patch(cse=False):
                    product = torch.ones(2, 3, dtype=torch.float32) @ torch.ones(3, 2, dtype=torch.float32)
                self.assert_value((torch.is_autocast_enabled("cpu"), torch.get_autocast_dtype("cpu"), product.dtype),
                                  (True, torch.bfloat16, torch.bfloat16), "autocast after the patch, matmul inside")
                config.patch(cse=False)(lambda: None)()
            self.assert_value((torch.get_default_dtype(), torch.tensor([0.5]).dtype), (torch.float64, torch.float64),
                              "the default dtype after the patch")
        finally:
            torch.set_default_dtype(saved)
        self.assertTrue(torch.equal(torch.get_rng_state(), state), "global RNG state after patches")

    def test_callables_and_copies(self):
        """partial, callable objects, static and class methods are decorated like functions; copy.copy of a patch
        is a working patch; deepcopy works before 2.12 and refuses the ContextVar from 2.12; pickle refuses the
        class local to patch()."""
        reader = CseReader()
        for label, func in (("partial", functools.partial(getattr, config, "cse")), ("callable object", reader),
                            ("staticmethod", CseReader.static), ("classmethod", CseReader.klass)):
            with self.subTest(label):
                wrapped = config.patch(cse=False)(func)
                self.assert_value((wrapped(), config.cse), (False, CSE_DEFAULT), f"decorated {label}, after")
        patch = config.patch(cse=False)
        for label, copy_of in (("copy", copy.copy), ("deepcopy", copy.deepcopy)):
            with self.subTest(label):
                if label == "deepcopy" and torch_version_at_least(REENTRANT_AND_THREAD_LOCAL_SINCE):
                    with self.assert_raises_exactly(TypeError, "deepcopy of a patch", match="ContextVar"):
                        copy.deepcopy(patch)
                    continue
                made = copy_of(patch)
                self.assertIs(type(made), type(patch), f"{label}: type")
                with made:
                    self.assert_value(current("cse"), expected(cse=False), f"inside the {label}")
                self.assert_value(current(*DEFAULTS), DEFAULTS, f"after the {label}")
        with self.assertRaises((AttributeError, pickle.PicklingError), msg="pickle of a patch"):
            pickle.dumps(patch)

    def test_no_warnings(self):
        """No call form, decorator or nesting gives a warning."""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with config.patch(cse=False), config.patch({"debug_assert": True}), config.patch("cse", True):
                pass
            config.patch(cse=False)(lambda: None)()
        self.assert_value([str(w.message) for w in caught], [], "warnings")


if __name__ == "__main__":
    run_tests()
