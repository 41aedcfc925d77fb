# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Unit tests of torch_npu_testing.runtime.guard: the global-state guard of the kit's own runs.

Each item a test may leak (grad mode, inference mode, default dtype, a functorch config key, a vmap/grad
level left entered) is reported by leaks() and put back by restore(); StateGuardMixin makes a leaking
test FAIL by name and restores the state so the next test starts clean (checked in a real subprocess run
of a tiny test file).
"""
import pytest

from torch_npu_testing.runtime import guard as guard_module
from torch_npu_testing.runtime.guard import GlobalStateGuard

import torch
import torch._functorch.config as functorch_config

functorch = torch._C._functorch


# --------------------------------------------------------------------------- GlobalStateGuard
@pytest.fixture
def guard():
    """A fresh guard; the state is put back even when the test's own restore() is wrong."""
    snapshot = GlobalStateGuard()
    yield snapshot
    while guard_module._interpreter_stack_depth() > 0:
        guard_module._pop_interpreter()
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
        while guard_module._interpreter_stack_depth() > 0:
            guard_module._pop_interpreter()


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
