# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Unit tests of torch_npu_testing.portable: version gating and the global-state guard.

Version gating: release numbers only ("2.13.0a0+git" is 2.13.0), has_api resolves modules and
attributes, requires_api skips with a reason naming the API, the version needed and the one installed.
State guard: each item a test may leak (grad mode, inference mode, default dtype, a functorch config
key, a vmap/grad level left entered) is reported by leaks() and put back by restore(); StateGuardMixin
makes a leaking test FAIL by name and restores the state so the next test starts clean (checked in a
real subprocess run of a tiny test file).
"""
import io
import unittest

import pytest

from torch_npu_testing import portable
from torch_npu_testing.portable import (GlobalStateGuard, has_api, parse_version, requires_api,
                                        torch_version_at_least)

import torch
import torch._functorch.config as functorch_config

functorch = torch._C._functorch


# --------------------------------------------------------------------------- versions
@pytest.mark.parametrize("text, expected", [
    ("2.13.0a0+git1234abc", (2, 13, 0)),
    ("2.7.1+cpu", (2, 7, 1)),
    ("2.12.0+cu130", (2, 12, 0)),
    ("2.9", (2, 9, 0)),
    ("3", (3, 0, 0)),
    (" 2.10.1", (2, 10, 1)),
    ("2.11.0.post3", (2, 11, 0)),
])
def test_parse_version_keeps_release_numbers(text, expected):
    """Local (+cpu) and pre-release (a0) suffixes are dropped; missing parts are 0."""
    assert parse_version(text) == expected


@pytest.mark.parametrize("text", ["", "abc", "v2.7", None])
def test_parse_version_rejects_non_versions(text):
    """Text that does not start with a number is a ValueError naming it."""
    with pytest.raises(ValueError, match="not a version"):
        parse_version(text)


def test_parse_version_accepts_torch_version_object():
    """torch.__version__ (a TorchVersion) parses like its text."""
    assert parse_version(torch.__version__) == parse_version(str(torch.__version__))


@pytest.mark.parametrize("installed, asked, expected", [
    ("2.13.0a0+git", "2.13", True),
    ("2.13.0a0+git", "2.13.0", True),
    ("2.13.0a0+git", "2.13.1", False),
    ("2.13.0a0+git", "2.14", False),
    ("2.13.0a0+git", "2.9", True),
    ("2.7.1+cpu", "2.7.1", True),
    ("2.7.1+cpu", "2.7", True),
    ("2.7.1+cpu", "2.8", False),
    ("2.7.1+cpu", "2.10", False),  # numeric, not string, comparison
    ("2.10.0", "2.9", True),
])
def test_torch_version_at_least(monkeypatch, installed, asked, expected):
    """Compares the installed torch release with the one asked for, number by number."""
    monkeypatch.setattr(torch, "__version__", installed)
    assert torch_version_at_least(asked) is expected


# --------------------------------------------------------------------------- has_api / requires_api
@pytest.mark.parametrize("name", [
    "torch",
    "torch.nn.functional",                       # a submodule
    "torch.nn.functional.relu",                  # a function in a module
    "torch._functorch.config.cse",               # a module-level setting
    "torch.nn.Linear.forward",                   # an attribute of a class
    "torch._C._functorch._vmap_increment_nesting",  # an attribute of an extension module
])
def test_has_api_finds_present_names(name):
    """Modules, functions, class attributes and extension attributes all resolve."""
    assert has_api(name) is True


@pytest.mark.parametrize("name", [
    "torch.no_such_attribute_xyz",
    "torch.nn.functional.no_such_function_xyz",
    "torch.nn.Linear.no_such_method_xyz",
    "no_such_package_xyz",
    "no_such_package_xyz.sub.attr",
])
def test_has_api_rejects_missing_names(name):
    """A missing module or attribute anywhere in the path is False, not an exception."""
    assert has_api(name) is False


def _broken_package(tmp_path, monkeypatch, body):
    """A package ``tnt_broken_pkg`` on sys.path whose submodule ``mod`` exists; ``body`` is its source."""
    package = tmp_path / "tnt_broken_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "mod.py").write_text(body)
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("tnt_broken_pkg", "tnt_broken_pkg.mod"):
        monkeypatch.delitem(__import__("sys").modules, name, raising=False)


@pytest.mark.parametrize("body, error", [
    ("import tnt_dependency_that_does_not_exist\n", ModuleNotFoundError),   # a missing dependency
    ("raise ImportError('libhccl.so: cannot open shared object file')\n", ImportError),
])
def test_has_api_raises_when_an_existing_module_fails_to_import(tmp_path, monkeypatch, body, error):
    """Absent means absent: a module that exists but fails to import raises its own ImportError (a broken
    install must not become a quiet 'requires torch >= X' skip)."""
    _broken_package(tmp_path, monkeypatch, body)
    with pytest.raises(error):
        has_api("tnt_broken_pkg.mod.some_api")


def test_has_api_missing_submodule_of_existing_package_is_absent(tmp_path, monkeypatch):
    """A submodule that does not exist under a package that does is simply absent."""
    _broken_package(tmp_path, monkeypatch, "x = 1\n")
    assert has_api("tnt_broken_pkg.mod.x") is True
    assert has_api("tnt_broken_pkg.no_such_mod.x") is False


def test_requires_api_on_broken_import_errors_by_name(tmp_path, monkeypatch):
    """requires_api over a module that fails to import: nothing skips; each decorated test (method or every
    test of a class) errors with an ImportError naming the API and the import failure."""
    _broken_package(tmp_path, monkeypatch, "raise ImportError('libhccl.so: cannot open shared object file')\n")

    class Case(unittest.TestCase):
        @requires_api("tnt_broken_pkg.mod.api", since="2.9")
        def test_method(self):
            pass

    @requires_api("tnt_broken_pkg.mod.api")
    class WholeClass(unittest.TestCase):
        def test_one(self):
            pass

        def helper(self):
            return "not a test"

    for case, expected in ((Case, ["test_method"]), (WholeClass, ["test_one"])):
        result, output = _run_unittest(case)
        assert result.skipped == [] and len(result.errors) == len(expected), output
        for (test, trace), name in zip(result.errors, expected):
            assert test.id().endswith(name)
            assert "ImportError: tnt_broken_pkg.mod.api: a module on the way exists but failed to import" in trace
            assert "libhccl.so" in trace
    assert WholeClass().helper() == "not a test"


def _run_unittest(case):
    stream = io.StringIO()
    result = unittest.TextTestRunner(stream=stream, verbosity=2).run(
        unittest.defaultTestLoader.loadTestsFromTestCase(case))
    return result, stream.getvalue()


def test_requires_api_on_a_method_skips_with_the_reason():
    """A missing API skips the method; the printed reason names API, needed and installed version."""
    ran = []

    class Case(unittest.TestCase):
        @requires_api("torch.nn.functional.relu_missing_xyz", since="99.1")
        def test_missing(self):
            ran.append("missing")

        @requires_api("torch.nn.functional.relu", since="1.0")
        def test_present(self):
            ran.append("present")

    result, output = _run_unittest(Case)
    reason = (f"relu_missing_xyz requires torch >= 99.1 (installed {torch.__version__}: "
              "torch.nn.functional.relu_missing_xyz not found)")
    assert ran == ["present"]
    assert [r for _, r in result.skipped] == [reason]
    assert f"skipped '{reason}'" in output


def test_requires_api_on_a_class_skips_every_test_and_without_since():
    """On a class, every test skips; without since the reason says 'a torch that provides it'."""
    ran = []

    @requires_api("torch._functorch.no_such_api_xyz")
    class Case(unittest.TestCase):
        def test_one(self):
            ran.append(1)

        def test_two(self):
            ran.append(2)

    result, output = _run_unittest(Case)
    reason = (f"no_such_api_xyz requires a torch that provides it (installed {torch.__version__}: "
              "torch._functorch.no_such_api_xyz not found)")
    assert ran == []
    assert result.testsRun == 2 and [r for _, r in result.skipped] == [reason, reason]
    assert output.count(f"skipped '{reason}'") == 2


# --------------------------------------------------------------------------- GlobalStateGuard
@pytest.fixture
def guard():
    """A fresh guard; the state is put back even when the test's own restore() is wrong."""
    snapshot = GlobalStateGuard()
    yield snapshot
    while portable._interpreter_stack_depth() > 0:
        portable._pop_interpreter()
    functorch_config.load_config(snapshot.functorch_config)
    torch.set_default_dtype(snapshot.default_dtype)
    torch.set_grad_enabled(snapshot.grad_enabled)


def test_guard_reports_nothing_when_nothing_changed(guard):
    """Untouched state (or state changed and changed back) is not a leak."""
    assert guard.leaks() == []
    torch.set_default_dtype(torch.float64)
    torch.set_default_dtype(guard.default_dtype)
    with torch.no_grad(), torch.enable_grad():
        functorch._vmap_increment_nesting(2, "error")
        functorch._vmap_decrement_nesting()
    assert guard.leaks() == []


@pytest.mark.parametrize("initial", [True, False])
def test_guard_grad_mode(guard, initial):
    """Grad mode flipped -> one line naming it; restore() sets the snapshot's mode back."""
    torch.set_grad_enabled(initial)
    inner = GlobalStateGuard()
    torch.set_grad_enabled(not initial)
    assert inner.leaks() == [f"grad mode: was {initial}, left {not initial}"]
    inner.restore()
    assert torch.is_grad_enabled() is initial
    assert inner.leaks() == []


def test_guard_default_dtype(guard):
    """set_default_dtype left changed -> reported and restored."""
    before = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64 if before != torch.float64 else torch.float32)
    after = torch.get_default_dtype()
    assert guard.leaks() == [f"default dtype: was {before}, left {after}"]
    guard.restore()
    assert torch.get_default_dtype() == before and guard.leaks() == []


@pytest.mark.parametrize("key", ["cse", "debug_assert"])
def test_guard_functorch_config_key(guard, key):
    """A torch._functorch.config key left changed -> reported by name with both values, restored."""
    before = getattr(functorch_config, key)
    setattr(functorch_config, key, not before)
    assert guard.leaks() == [f"torch._functorch.config.{key}: was {before!r}, left {not before!r}"]
    guard.restore()
    assert getattr(functorch_config, key) is before and guard.leaks() == []


def test_guard_functorch_config_patch_context_is_not_a_leak(guard):
    """config.patch used as a context manager puts the value back: nothing to report."""
    with functorch_config.patch(cse=not functorch_config.cse):
        assert len(guard.leaks()) == 1
    assert guard.leaks() == []


def test_guard_vmap_level_left_entered(guard):
    """_vmap_increment_nesting without the decrement -> 'nesting level' leak; restore() leaves it."""
    functorch._vmap_increment_nesting(3, "error")
    assert guard.leaks() == ["functorch nesting level (vmap/grad): was 0 deep, left 1 deep"]
    guard.restore()
    assert functorch.peek_interpreter_stack() is None
    assert guard.leaks() == []


def test_guard_leaves_every_kind_of_transform(guard):
    """Nested vmap, grad, jvp and functionalize levels are all left by restore(), innermost first."""
    functorch._vmap_increment_nesting(2, "error")
    functorch._grad_increment_nesting()
    functorch._jvp_increment_nesting()
    functorch._func_increment_nesting(True)
    assert guard.leaks() == ["functorch nesting level (vmap/grad): was 0 deep, left 4 deep"]
    guard.restore()
    assert functorch.peek_interpreter_stack() is None


def test_guard_restores_only_down_to_its_own_level(guard):
    """A guard taken inside a vmap level pops only the levels entered after it."""
    functorch._vmap_increment_nesting(2, "error")
    try:
        inner = GlobalStateGuard()
        functorch._grad_increment_nesting()
        assert inner.leaks() == ["functorch nesting level (vmap/grad): was 1 deep, left 2 deep"]
        inner.restore()
        assert functorch.peek_interpreter_stack().key() == functorch.TransformType.Vmap
    finally:
        while portable._interpreter_stack_depth() > 0:
            portable._pop_interpreter()


def test_guard_reports_inference_mode_without_resetting_it(guard):
    """Inference mode can only be left by its RAII guard: reported (with the grad mode it turns off), and
    still on after restore()."""
    torch.set_grad_enabled(True)
    outer = GlobalStateGuard()
    context = torch.inference_mode()
    context.__enter__()
    try:
        assert outer.leaks() == ["grad mode: was True, left False", "inference mode: was False, left True"]
        outer.restore()
        assert torch.is_inference_mode_enabled()
        assert outer.leaks() == ["inference mode: was False, left True"]
    finally:
        context.__exit__(None, None, None)
    assert outer.leaks() == []


def test_guard_reports_several_leaks_in_a_fixed_order(guard):
    """Each leaked item is one line; all of them are restored at once."""
    torch.set_grad_enabled(not guard.grad_enabled)
    torch.set_default_dtype(torch.float16)
    functorch_config.cse = not functorch_config.cse
    functorch._vmap_increment_nesting(2, "error")
    assert [line.split(":")[0] for line in guard.leaks()] == [
        "grad mode", "default dtype", "torch._functorch.config.cse", "functorch nesting level (vmap/grad)"]
    guard.restore()
    assert guard.leaks() == []


# --------------------------------------------------------------------------- StateGuardMixin, for real
LEAKING_FILE = '''
from torch_npu_testing import TestCase, run_tests
import torch
import torch._functorch.config as config


class Leaks(TestCase):
    def test_a_leaks_grad_mode(self):
        torch.set_grad_enabled(False)

    def test_a_then_clean(self):
        self.assertTrue(torch.is_grad_enabled())

    def test_b_leaks_default_dtype(self):
        torch.set_default_dtype(torch.float64)

    def test_b_then_clean(self):
        self.assertEqual(torch.get_default_dtype(), torch.float32)

    def test_c_leaks_config(self):
        config.cse = False

    def test_c_then_clean(self):
        self.assertTrue(config.cse)

    def test_d_leaks_vmap_level(self):
        torch._C._functorch._vmap_increment_nesting(2, "error")

    def test_d_then_clean(self):
        self.assertIsNone(torch._C._functorch.peek_interpreter_stack())

    def test_e_clean_uses_state_inside_contexts(self):
        with torch.no_grad(), config.patch(cse=False):
            self.assertFalse(torch.is_grad_enabled())


if __name__ == "__main__":
    run_tests()
'''


def test_state_guard_mixin_fails_leaking_tests_by_name_and_restores(tmp_path, run_python):
    """A real run: each leaking test FAILS naming what leaked; the test after it starts clean; the clean
    tests pass (tests run in name order, so each 'then_clean' test follows its leaker)."""
    path = tmp_path / "test_leaks.py"
    path.write_text(LEAKING_FILE)
    result = run_python([path, "-v"], cwd=tmp_path)
    output = result.stderr
    assert result.returncode == 1, output
    assert "Ran 9 tests" in output and "FAILED (failures=4)" in output
    for name, leak in [("test_a_leaks_grad_mode", "grad mode: was True, left False"),
                       ("test_b_leaks_default_dtype", "default dtype: was torch.float32, left torch.float64"),
                       ("test_c_leaks_config", "torch._functorch.config.cse: was True, left False"),
                       ("test_d_leaks_vmap_level", "functorch nesting level (vmap/grad): was 0 deep, left 1 deep")]:
        assert f"{name} (__main__.Leaks.{name}) ... FAIL" in output
        assert f"AssertionError: __main__.Leaks.{name} leaked global state: {leak}\n" in output
    for name in ["test_a_then_clean", "test_b_then_clean", "test_c_then_clean", "test_d_then_clean",
                 "test_e_clean_uses_state_inside_contexts"]:
        assert f"{name} (__main__.Leaks.{name}) ... ok" in output


# --------------------------------------------------------------------------- assertion vocabulary
class _Case(portable.PortableAssertionsMixin, unittest.TestCase):
    def runTest(self):  # pragma: no cover - never run, the case only hosts the assertions
        pass


@pytest.fixture
def case():
    return _Case()


def _fails(call, *fragments):
    with pytest.raises(AssertionError) as caught:
        call()
    for fragment in fragments:
        assert fragment in str(caught.value), str(caught.value)
    return str(caught.value)


def test_assert_tensor_accepts_the_same_tensor(case):
    """Same dtype, shape, layout, device type and values passes (also non-contiguous, 0-d, empty, bool)."""
    base = torch.arange(6.).reshape(2, 3)
    case.assert_tensor(base.t(), base.t().contiguous(), "transposed")
    case.assert_tensor(torch.tensor(3), torch.tensor(3), "0-d")
    case.assert_tensor(torch.empty(0, 2), torch.empty(0, 2), "empty")
    case.assert_tensor(torch.tensor([True, False]), torch.tensor([True, False]), "bool")
    case.assert_tensor(torch.tensor([float("nan")]), torch.tensor([float("nan")]), "nan equals nan")


@pytest.mark.parametrize("actual, fragment", [
    (torch.ones(2, dtype=torch.float64), "dtype is torch.float64, expected torch.float32"),
    (torch.ones(3), "shape is (3,), expected (2,)"),
    (torch.ones(1, 2), "shape is (1, 2), expected (2,)"),
    (torch.ones(2) + 1e-6, "values differ (atol=0.0, rtol=0.0)"),
    (torch.ones(2).to_sparse(), "layout is torch.sparse_coo, expected torch.strided"),
    ([1.0, 1.0], "expected a tensor, got list"),
])
def test_assert_tensor_fails_naming_what_differs(case, actual, fragment):
    """Each difference fails with the label and the property (exact by default: no silent 1e-5 as on NPU)."""
    _fails(lambda: case.assert_tensor(actual, torch.ones(2), "the output"), "the output: ", fragment)


def test_assert_tensor_tolerances_and_device(case):
    """atol/rtol widen the value check only; device names the device type the actual must be on."""
    case.assert_tensor(torch.ones(2) + 1e-6, torch.ones(2), "close", atol=1e-5, rtol=0)
    _fails(lambda: case.assert_tensor(torch.ones(2), torch.ones(2), "moved", device="npu"),
           "moved: device type is cpu, expected npu")
    with pytest.raises(TypeError, match="expected must be a tensor"):
        case.assert_tensor(torch.ones(2), [1.0, 1.0], "bad call")


def test_assert_tensor_meta_checks_only_what_is_given(case):
    """Unset properties are not checked; requires_grad is checked when given."""
    leaf = torch.ones(2, requires_grad=True)
    case.assert_tensor_meta(leaf, "leaf", dtype=torch.float32, shape=(2,), device="cpu", requires_grad=True)
    _fails(lambda: case.assert_tensor_meta(leaf.detach(), "detached", requires_grad=True),
           "detached: requires_grad is False, expected True")


def test_plain_value_assertions(case):
    """assert_value / assert_is / assert_is_not / assert_true / assert_false fail with the label and values;
    assert_value refuses tensors."""
    case.assert_value((1, "a"), (1, "a"), "tuple")
    _fails(lambda: case.assert_value(1, 2, "count"), "count: got 1, expected 2")
    marker = object()
    case.assert_is(marker, marker, "same")
    _fails(lambda: case.assert_is([], [], "list"), "list: got [], expected the very object []")
    case.assert_is_not([], [], "copies")
    _fails(lambda: case.assert_is_not(marker, marker, "copy"), "copy: got the very object")
    case.assert_true(1, "one")
    _fails(lambda: case.assert_true(0, "zero"), "zero: expected true, got 0")
    case.assert_false("", "empty")
    _fails(lambda: case.assert_false("x", "text"), "text: expected false, got 'x'")
    with pytest.raises(TypeError, match="use assert_tensor"):
        case.assert_value(torch.ones(1), torch.ones(1), "tensor")


def test_assert_grad_mode(case):
    """Passes for the calling thread's mode, fails naming both modes otherwise."""
    with torch.no_grad():
        case.assert_grad_mode(False, "inside no_grad")
        _fails(lambda: case.assert_grad_mode(True, "inside no_grad"),
               "inside no_grad: grad mode is disabled, expected enabled")


def test_assert_raises_exactly_call_and_context_forms(case):
    """The exact type passes and the exception is returned; a subclass, another type, no exception or a
    message not matching fail with the label; BaseException that is not an Exception passes through."""
    error = case.assert_raises_exactly(ValueError, "int('x')", int, "x")
    assert isinstance(error, ValueError)
    with case.assert_raises_exactly(KeyError, "lookup", match="nope") as caught:
        {}["nope"]
    assert isinstance(caught.exception, KeyError)
    _fails(lambda: case.assert_raises_exactly(LookupError, "subclass", lambda: {}["k"]),
           "subclass: expected LookupError, got KeyError")
    _fails(lambda: case.assert_raises_exactly(TypeError, "wrong", int, "x"),
           "wrong: expected TypeError, got ValueError")
    _fails(lambda: case.assert_raises_exactly(TypeError, "quiet", int, "1"), "quiet: expected TypeError, nothing")
    _fails(lambda: case.assert_raises_exactly(ValueError, "text", int, "x", match="^nothing like it$"),
           "text: ValueError message", "does not match")
    with pytest.raises(KeyboardInterrupt):
        with case.assert_raises_exactly(ValueError, "interrupt"):
            raise KeyboardInterrupt
