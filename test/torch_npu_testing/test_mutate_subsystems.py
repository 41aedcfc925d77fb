# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""``mutate``'s subsystem faults in-process: each changes what it claims and only where its condition arises."""
import collections
import warnings
from types import SimpleNamespace

import pytest
import torch
import torch.autograd.forward_ad as fwad

from torch_npu_testing.mutate import catalogue, subsystem_faults
from torch_npu_testing.mutate.faults import Tally

Pair = collections.namedtuple("Pair", "a b")
TARGET = SimpleNamespace(kind="python function", attr="f", owner=None)


def faults_by_code(target=TARGET, takes=True, returns=True):
    return {f.code: f for f in subsystem_faults.faults_for(target, takes, returns, catalogue.COPY_NAMES)}


FAULTS = faults_by_code()


def call(code, fn, *args, **kwargs):
    tally = Tally()
    return FAULTS[code].call(fn, args, kwargs, tally), dict(tally.verdicts)


def test_the_catalogue_chooses_by_kind_and_signature():
    assert list(FAULTS) == ["result-once-differentiable", "result-tangent-dropped", "result-namedtuple-as-tuple",
                            "version-not-bumped", "module-hooks-skipped", "autocast-ignored", "default-dtype-ignored",
                            "rng-not-advanced", "warnings-swallowed", "error-message-generic"]
    assert list(faults_by_code(takes=False, returns=False)) == [
        "rng-not-advanced", "warnings-swallowed", "error-message-generic"]
    method = SimpleNamespace(kind="method", attr="clone", owner=torch.set_grad_enabled)
    assert "copy-base-class" in faults_by_code(method, False, False)
    codes = [f.code for f in catalogue.faults_for(_resolved("torch._functorch.vmap._add_batch_dim"))]
    assert codes[-len(FAULTS):] == list(FAULTS)  # appended: the generic catalogue's indexes are kept


def _resolved(name):
    from torch_npu_testing.mutate import targets
    return targets.resolve_target(name)


def test_once_differentiable_keeps_values_and_first_gradients_and_fails_a_second_backward():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    out, verdicts = call("result-once-differentiable", lambda t: t * 1.0, x)
    assert verdicts == {"changed": 1} and torch.equal(out, x.detach())
    first, = torch.autograd.grad((out ** 3).sum(), x, create_graph=True)  # its gradient depends on x: it must
    assert torch.equal(first, 3 * x.detach() ** 2)                         # flow twice through the faulted node
    with pytest.raises(RuntimeError, match="once_differentiable|not have been used in the graph"):
        torch.autograd.grad(first.sum(), x)  # the faulted node cuts the second-order path
    leaf_out, verdicts = call("result-once-differentiable", lambda t: t, x)  # a leaf has no history to wrap
    assert leaf_out is x and verdicts == {"not applicable": 1}
    with torch.no_grad():
        assert call("result-once-differentiable", lambda t: t * 2, x)[1] == {"not applicable": 1}

    class Custom(torch.autograd.Function):  # a custom Function's result: its own backward decides
        @staticmethod
        def forward(ctx, t):
            return t * 2

        @staticmethod
        def backward(ctx, grad):
            return grad * 2
    assert call("result-once-differentiable", Custom.apply, x)[1] == {"not applicable": 1}
    assert call("result-once-differentiable", lambda t: Custom.apply(t)[1:], x)[1] == {"not applicable": 1}


def test_tangent_dropped_only_where_there_is_a_tangent():
    x = torch.tensor([1.0, 2.0])
    with fwad.dual_level():
        dual = fwad.make_dual(x, torch.ones(2))
        out, verdicts = call("result-tangent-dropped", lambda t: t * t, dual)
        assert verdicts == {"changed": 1} and fwad.unpack_dual(out).tangent is None
        assert torch.equal(fwad.unpack_dual(out).primal, x * x)
    assert call("result-tangent-dropped", lambda t: t * t, x)[1] == {"not applicable": 1}


def test_namedtuples_and_return_types_become_plain_tuples_nested_too():
    x = torch.tensor([[1.0, 3.0], [2.0, 0.0]])
    out, verdicts = call("result-namedtuple-as-tuple", lambda t: {"m": torch.max(t, 1), "p": [Pair(t, 1)]}, x)
    assert verdicts == {"changed": 1} and type(out["m"]) is tuple and type(out["p"][0]) is tuple
    assert torch.equal(out["m"][0], torch.tensor([3.0, 2.0]))
    assert call("result-namedtuple-as-tuple", lambda t: (t, [t]), x)[1] == {"not applicable": 1}


def test_version_not_bumped_restores_the_counter_but_keeps_the_write():
    x = torch.zeros(3)
    before = x._version
    _, verdicts = call("version-not-bumped", lambda t: t.add_(1), x)
    assert verdicts == {"changed": 1} and x._version == before and x.tolist() == [1.0, 1.0, 1.0]
    assert call("version-not-bumped", lambda t: t + 1, x)[1] == {}


def test_module_hooks_are_skipped_during_the_call_and_come_back():
    model = torch.nn.Sequential(torch.nn.Linear(2, 2))
    seen = []
    model.register_forward_pre_hook(lambda m, a: seen.append("pre"))
    model[0].register_forward_hook(lambda m, a, o: seen.append("post"))
    _, verdicts = call("module-hooks-skipped", lambda m: m(torch.ones(2)), model)
    assert verdicts == {"changed": 1} and seen == []
    model(torch.ones(2))
    assert seen == ["pre", "post"]
    assert call("module-hooks-skipped", lambda m: m(torch.ones(2)), torch.nn.Linear(2, 2))[1] == {}


def test_autocast_ignored_returns_the_inputs_wider_dtype_under_autocast_only():
    a, b = torch.ones(2, 3), torch.ones(3, 2)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out, verdicts = call("autocast-ignored", torch.mm, a, b)
    assert verdicts == {"changed": 1} and out.dtype is torch.float32
    assert call("autocast-ignored", torch.mm, a, b)[1] == {"not applicable": 1}
    with torch.autocast("cpu", dtype=torch.bfloat16):  # a bfloat16 result from bfloat16 inputs: no autocast at work
        assert call("autocast-ignored", torch.mm, a.bfloat16(), b.bfloat16())[1] == {"not applicable": 1}


def test_default_dtype_ignored_only_for_a_default_no_input_has():
    ints = torch.arange(3)
    saved = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        out, verdicts = call("default-dtype-ignored", lambda t: t * 1.5, ints)
        assert verdicts == {"changed": 1} and out.dtype is torch.float32
        assert call("default-dtype-ignored", lambda t: t * 1.5, ints.double())[1] == {"not applicable": 1}
    finally:
        torch.set_default_dtype(saved)
    assert call("default-dtype-ignored", lambda t: t * 1.5, ints)[1] == {"not applicable": 1}


def test_rng_not_advanced_rewinds_the_global_stream_only_after_a_draw():
    torch.manual_seed(0)
    first, verdicts = call("rng-not-advanced", torch.rand, 3)
    assert verdicts == {"changed": 1} and torch.equal(torch.rand(3), first)
    assert call("rng-not-advanced", torch.ones, 3)[1] == {}
    from torch._subclasses.fake_tensor import FakeTensorMode
    with FakeTensorMode():  # the bookkeeping runs outside an active fake mode
        assert call("rng-not-advanced", lambda: None)[1] == {}


def test_copy_base_class_only_for_a_subclass():
    class Sub(torch.set_grad_enabled):
        pass
    method = SimpleNamespace(kind="method", attr="clone", owner=torch.set_grad_enabled)
    fault, tally = faults_by_code(method, False, False)["copy-base-class"], Tally()
    with torch.enable_grad():
        got = fault.call(lambda self: self.clone(), (Sub(False),), {}, tally)
        assert type(got) is torch.set_grad_enabled and got.mode is False
        plain = fault.call(lambda self: self.clone(), (torch.set_grad_enabled(True),), {}, tally)
    assert type(plain) is torch.set_grad_enabled and tally.verdicts == {"changed": 1, "not applicable": 1}


def test_warnings_swallowed_and_generic_messages():
    def warn():
        warnings.warn("deprecated: use g", FutureWarning)
        return 1
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert call("warnings-swallowed", warn) == (1, {"changed": 1})
    assert caught == []
    assert call("warnings-swallowed", lambda: 2) == (2, {})

    def bad(value):
        raise ValueError(f"value {value!r} is out of range")
    tally = Tally()
    with pytest.raises(ValueError, match="^invalid argument$"):
        FAULTS["error-message-generic"].call(bad, (7,), {}, tally)
    assert tally.verdicts == {"changed": 1}

    class Picky(Exception):
        def __init__(self, a, b):
            super().__init__(f"{a} {b}")

    def picky():
        raise Picky(1, 2)
    with pytest.raises(Picky):  # a type that cannot be built from one message keeps the real error
        FAULTS["error-message-generic"].call(picky, (), {}, tally)
    assert tally.verdicts == {"changed": 1, "not applicable": 1}
