# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""``mutate``'s parts in-process: tensor faults and their judgement, scope, replacement, counting."""
import os
import types

import pytest
import torch

from torch_npu_testing.mutate import catalogue, faults, returned, scope, score, targets, tensors


# --------------------------------------------------------------------------- tensors
def test_a_batched_tensor_is_rebuilt_around_the_faulted_physical_tensor():
    functorch = torch._C._functorch
    level = functorch._vmap_increment_nesting(2, "error")
    try:
        x = torch.arange(6.0).reshape(2, 3)
        batched = functorch._add_batch_dim(x, 0, level)
        faulted, verdict = tensors.apply(tensors.shift, batched, [x])
        assert verdict == "changed" and functorch.is_batchedtensor(faulted)
        assert functorch.maybe_get_level(faulted) == level and functorch.maybe_get_bdim(faulted) == 0
        assert torch.equal(functorch.get_unwrapped(faulted), x + (x.abs() + 1) * 1e-3)
        copy, verdict = tensors.apply(tensors.view_as_copy, batched, [x], storage_matters=True)
        assert verdict == "changed" and functorch.get_unwrapped(copy).data_ptr() != x.data_ptr()
    finally:
        functorch._vmap_decrement_nesting()


def test_values_that_cannot_be_rebuilt_are_not_applicable():
    from torch._subclasses.fake_tensor import FakeTensorMode
    with FakeTensorMode():
        fake = torch.ones(2)
    assert tensors.apply(tensors.shift, fake, []) == (fake, "not applicable")
    sparse = torch.eye(2).to_sparse()
    assert tensors.apply(tensors.shift, sparse, []) == (sparse, "not applicable")
    ints = torch.arange(3)
    assert tensors.apply(tensors.shift, ints, []) == (ints, "not applicable")  # no float values to move
    float8 = torch.zeros(2, dtype=torch.float8_e4m3fn)
    assert tensors.apply(tensors.shift, float8, [])[1] == "not applicable"  # the dtype lacks the op


def test_a_fault_that_changes_nothing_returns_the_real_object():
    small = torch.tensor([1.0, 2.0])
    assert tensors.apply(tensors.bfloat16_rounding, small, []) == (small, "no effect")
    nan = torch.tensor([float("nan"), 1.0], dtype=torch.float64)
    assert tensors.same(nan, nan.clone())
    assert not tensors.same(nan, torch.tensor([0.0, 1.0], dtype=torch.float64))
    square = torch.tensor([[1, 2], [3, 4]])
    faulted, verdict = tensors.apply(tensors.transpose_square, square, [])
    assert verdict == "changed" and faulted.tolist() == [[1, 3], [2, 4]] and faulted.stride() == square.stride()
    assert tensors.apply(tensors.narrow_dtype, torch.ones(2, dtype=torch.bool), [])[0].dtype == torch.uint8
    conj = torch.tensor([1 + 2j]).conj()
    assert tensors.apply(tensors.resolve_bits, conj, [])[1] == "changed"
    assert tensors.apply(tensors.first_plus_one, torch.zeros(0, dtype=torch.int64), [])[1] == "not applicable"


# --------------------------------------------------------------------------- scope
def _frame_in(filename, name):
    """A real frame whose code lives at ``filename`` (as if torch defined it) and calls back ``probe``."""
    namespace = {}
    exec(compile(f"def {name}(probe):\n    return probe()\n", filename, "exec"), namespace)  # noqa: S102
    return namespace[name]


def test_scope_acts_for_the_test_and_looks_through_only_forwarding_torch_frames():
    import sys
    torch_dir = os.path.dirname(torch.__file__)
    checker = scope.Scope("python function")

    def probe():
        return checker.acts(sys._getframe(1))
    assert probe()  # called from this test file
    assert not _frame_in(os.path.join(torch_dir, "_functorch", "eager_transforms.py"), "grad_impl")(probe)
    assert _frame_in(os.path.join(torch_dir, "_functorch", "vmap.py"), "_flat_vmap")(probe)
    assert _frame_in(os.path.join(torch_dir, "_functorch", "apis.py"), "wrapped")(probe)
    assert not _frame_in(os.path.join(torch_dir, "_functorch", "apis.py"), "grad")(probe)
    method_scope = scope.Scope("method")
    assert not _frame_in(os.path.join(torch_dir, "_functorch", "vmap.py"), "_flat_vmap")(
        lambda: method_scope.acts(sys._getframe(1)))
    assert _frame_in(os.path.join(torch_dir, "utils", "_contextlib.py"), "decorate_context")(
        lambda: method_scope.acts(sys._getframe(1)))
    assert set(scope.LOOKED_THROUGH) == set(targets.KINDS)


# --------------------------------------------------------------------------- targets
def test_a_c_builtin_reads_its_parameters_from_the_pybind_docstring():
    target = targets.resolve_target("torch._C._functorch._add_batch_dim")
    assert target.kind == "C builtin" and [p.name for p in target.params] == ["arg0", "arg1", "arg2"]
    assert "Tensor" in target.returns
    codes = [fault.code for fault in catalogue.faults_for(target)]
    assert codes[:2] == ["param-int+1:arg1", "param-int+1:arg2"] and "result-shift" in codes
    assert targets.pybind_params(types.SimpleNamespace(__doc__="no signature here")) == ([], "")


def test_a_builtin_is_replaced_by_identity_in_every_alias_and_restored():
    import torch._functorch.vmap  # noqa: F401 - one of the modules that bind the C function
    target = targets.resolve_target("torch._C._functorch._add_batch_dim")
    seen = []

    def hook(real, args, kwargs, caller):
        seen.append(caller.f_code.co_name)
        return real(*args, **kwargs)
    holders = [m for m in targets._alias_homes(()) if vars(m).get("_add_batch_dim") is target.function]
    restore = targets.install(target, hook)
    try:
        assert all(vars(m)["_add_batch_dim"] is not target.function for m in holders) and holders
        level = torch._C._functorch._vmap_increment_nesting(1, "error")
        torch._C._functorch._add_batch_dim(torch.ones(1), 0, level)
        torch._C._functorch._vmap_decrement_nesting()
    finally:
        restore()
    assert seen == ["test_a_builtin_is_replaced_by_identity_in_every_alias_and_restored"]
    assert all(vars(m)["_add_batch_dim"] is target.function for m in holders)


def test_a_python_function_keeps_its_identity_and_signature_while_replaced():
    import inspect
    from torch.autograd import grad_mode
    target = targets.resolve_target("torch.autograd.grad_mode.set_grad_enabled.clone")
    captured = grad_mode.set_grad_enabled(True).clone  # a bound method taken before the mutant, as decorators do
    calls = []
    restore = targets.install(target, lambda real, args, kwargs, caller: calls.append(args) or real(*args, **kwargs))
    try:
        assert grad_mode.set_grad_enabled.clone is target.function
        assert str(inspect.signature(target.function)) == "(self) -> 'set_grad_enabled'"
        captured()
    finally:
        restore()
    assert len(calls) == 1 and "__signature__" not in target.function.__dict__
    with pytest.raises(ValueError, match="is a type: mutate replaces functions"):
        targets.resolve_target("torch.autograd.grad_mode.set_grad_enabled")


# --------------------------------------------------------------------------- returned objects, faults
def test_a_marked_object_gets_its_fault_and_others_of_its_class_do_not():
    class Box:
        def __call__(self, value):
            return value
    marked, plain = Box(), Box()
    assert returned.wrap_callable(marked, lambda fn, args, kwargs: fn(*args) * 2) is marked
    try:
        assert (marked(3), plain(3)) == (6, 3)
    finally:
        returned.restore_all()
    assert marked(3) == 3 and "__call__" in Box.__dict__


def test_the_error_and_state_faults_act_only_where_they_can():
    tally = faults.Tally()
    type_fault, swallow = faults.error_faults()

    def bad():
        raise KeyError("k")
    with pytest.raises(RuntimeError, match="^'k'$") as caught:
        type_fault.call(bad, (), {}, tally)
    assert isinstance(caught.value.__cause__, KeyError)
    assert swallow.call(bad, (), {}, tally) is None and tally.verdicts["changed"] == 2
    state = faults.grad_mode_flipped()
    with torch.enable_grad():
        state.call(torch._C._set_grad_enabled, (False,), {}, tally)  # a switch itself: not applicable
        assert tally.verdicts["not applicable"] == 1 and not torch.is_grad_enabled()
        torch._C._set_grad_enabled(True)
        state.call(lambda: None, (), {}, tally)
        assert not torch.is_grad_enabled()


# --------------------------------------------------------------------------- counting
def test_outcomes_of_child_reports():
    base = {"tallies": {"api": {"calls": 2, "changed": 1, "no effect": 0, "not applicable": 0}}}
    assert score.outcome_of(dict(base, first_failure="T.t"), "api") == ("killed", "T.t")
    assert score.outcome_of(dict(base, first_failure=None), "api") == ("survived", None)
    assert score.outcome_of({"timed_out": True}, "api") == ("timeout", None)
    assert score.outcome_of({"died": "killed by signal 11"}, "api") == (
        "killed", "(the child died: killed by signal 11)")
    assert score.outcome_of({"error": "Traceback\nValueError: x\n"}, "api") == (
        "killed", "(the child raised: ValueError: x)")
    assert score.outcome_of({"tallies": {}}, "api") == ("not reached", None)


def test_an_explanation_is_the_sentence_naming_the_mutant():
    doc = "Intro. The mutant ``x.f:result-cpu`` is equivalent on a CPU run. Other; result-cpu-ish is not."
    assert score.explanation(doc, "x.f:result-cpu", "result-cpu", False) == (
        "The mutant ``x.f:result-cpu`` is equivalent on a CPU run.")
    assert score.explanation(doc, "x.g:result-cpu", "result-cpu", False) is None
    assert score.explanation("Only result-cpu here.", "x.g:result-cpu", "result-cpu", True) == "Only result-cpu here."
    assert score.total_percent([]) is None


def test_inplace_dropped_undoes_writes_and_leaves_untouched_inputs_alone():
    fault, tally = faults.inplace_dropped(), faults.Tally()
    x = torch.zeros(3)
    fault.call(lambda t: t.add_(1), (x,), {}, tally)
    assert x.tolist() == [0.0, 0.0, 0.0] and tally.verdicts == {"changed": 1}
    expanded = torch.zeros(1).expand(3)  # stride 0: a copy has other strides, the same values
    assert fault.call(lambda t: t.sum(), (expanded,), {}, tally).item() == 0.0
    assert tally.verdicts == {"changed": 1, "no effect": 1} and expanded.stride() == (0,)
