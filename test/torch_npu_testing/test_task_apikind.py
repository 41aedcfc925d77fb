# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""The one API-kind classifier ``new`` and ``mutate`` share: real torch objects of every kind, and the kind
``mutate`` then records (its ``form`` as today's ``kind``, the ``contract`` as ``api_kind``)."""
import contextlib
import functools

import pytest
import torch

from torch_npu_testing.mutate import targets
from torch_npu_testing.suite.api_calls import resolve
from torch_npu_testing.task import apikind


def _kind(name):
    obj, absent = resolve(name)
    assert absent is None, absent
    owner_name, _, attr = name.rpartition(".")
    return apikind.classify(obj, resolve(owner_name)[0], attr)


@pytest.mark.parametrize("name, contract, form, copy", [
    ("torch.no_grad", "context manager", None, False),
    ("torch.inference_mode", "context manager", None, False),
    ("torch.no_grad.clone", "context manager", "method", True),
    ("torch.autograd.grad_mode.set_grad_enabled.clone", "context manager", "method", True),
    ("torch.no_grad.__enter__", "context manager", "method", False),
    ("torch.random.fork_rng", "context manager", "python function", False),
    ("torch._functorch.config", "config module", None, False),
    ("torch._functorch.config.patch", "config module", "shared method", False),
    ("torch.func.functional_call", "function", "python function", False),
    ("torch.func.stack_module_state", "function", "python function", False),
    ("torch._C._set_grad_enabled", "C builtin", "C builtin", False),
    ("torch.Tensor.addcdiv", "C builtin", "C method", False),
    ("torch.nn", "other", None, False),
    ("torch.nn.Linear", "other", None, False),
])
def test_torch_apis_of_every_kind(name, contract, form, copy):
    assert _kind(name) == apikind.ApiKind(contract, form, copy)


def test_a_function_annotated_to_return_a_context_manager_class_is_one():
    def make() -> torch.no_grad:
        return torch.no_grad()

    assert apikind.contract(make, None) == "context manager"
    assert apikind.contract(functools.partial(make), None) == "other"  # a partial is data, not an API


def test_contextmanager_functions_and_plain_generators():
    @contextlib.contextmanager
    def managed():
        yield

    def plain():
        yield

    assert apikind.contract(managed, None) == "context manager"
    assert apikind.contract(plain, None) == "function"


def test_mutate_records_the_shared_kinds():
    clone = targets.resolve_target("torch.no_grad.clone")
    assert (clone.kind, clone.contract) == ("method", "context manager")
    patch = targets.resolve_target("torch._functorch.config.patch")
    assert (patch.kind, patch.contract) == ("shared method", "config module")
    assert targets.KINDS == apikind.FORMS
    with pytest.raises(ValueError, match="torch.no_grad is a type: mutate replaces functions"):
        targets.resolve_target("torch.no_grad")
