# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""``new``'s draft by kind (issue 34 items 2-4): for one API of each kind, the draft (probed in this
interpreter, a real subprocess) passes its real tests, keeps its placeholders failing with their labels,
and fails against a broken implementation: one monkeypatched fault per contract area."""
import functools
import sys
import unittest

import pytest
import torch

from torch_npu_testing.common import results
from torch_npu_testing.suite.run import load_module
from torch_npu_testing.task import kind_draft, kind_spec

APIS = {"context manager": "torch.no_grad.clone", "config module": "torch._functorch.config.patch",
        "function": "torch.func.stack_module_state", "C builtin": "torch.promote_types"}


@pytest.fixture(scope="module")
def drafts(tmp_path_factory):
    folder, found = tmp_path_factory.mktemp("drafts"), {}
    for kind, api in APIS.items():
        text, drafted_kind, problems = kind_draft.draft(api, None, [sys.executable])
        assert text is not None and drafted_kind == kind and problems == [], (api, drafted_kind, problems)
        path = folder / f"test_{api.replace('.', '_')}.py"
        path.write_text(text)
        found[kind] = (str(path), text)
    return found


def _run(path):
    """``{test id: (outcome, reason)}`` of the draft at ``path``, run in this process."""
    module = load_module(path)
    runner = unittest.TextTestRunner(stream=open("/dev/null", "w"), resultclass=results.recorder_class(path))
    outcome = runner.run(unittest.defaultTestLoader.loadTestsFromModule(module))
    runner.stream.stream.close()
    return {case.id: (case.outcome.value, case.reason) for case in outcome.cases}


@pytest.mark.parametrize("kind", list(APIS))
def test_the_draft_passes_its_real_tests_and_its_placeholders_fail_with_labels(drafts, kind):
    path, text = drafts[kind]
    assert len(text.splitlines()) <= 600
    assert APIS[kind] in text and "PROBED = {" in text
    ran = _run(path)
    placeholders = {name: value for name, value in ran.items() if "Semantics." in name}
    real = {name: value for name, value in ran.items() if "Semantics." not in name}
    assert len(placeholders) == len(kind_spec.PLACEHOLDERS)
    for name, (outcome, reason) in placeholders.items():
        assert outcome == "failed" and reason.startswith(f"AssertionError: not written yet: {APIS[kind]}: "), name
    assert real and all(outcome == "passed" for outcome, _ in real.values()), real


def _failing_areas(path):
    return {name.split(".")[0] for name, (outcome, _) in _run(path).items()
            if outcome != "passed" and "Semantics." not in name}


def _no_restore(self, *exc):
    return None


def _swallowing(real, *args, **kwargs):
    """A port that swallows the errors of bad input (returns None instead)."""
    try:
        return real(*args, **kwargs)
    except Exception:  # noqa: BLE001 - the fault
        return None


def test_a_context_managers_faults_fail_their_areas(drafts, monkeypatch):
    path, _ = drafts["context manager"]
    with monkeypatch.context() as patch:
        patch.setattr(torch.no_grad, "clone", lambda self: self)
        assert "TestCloneCopy" in _failing_areas(path)
    with monkeypatch.context() as patch:
        patch.setattr(torch.no_grad, "__exit__", _no_restore)
        assert {"TestCloneEnterExit", "TestCloneNesting"} <= _failing_areas(path)
    with monkeypatch.context() as patch:
        patch.setattr(torch.no_grad, "__call__", lambda self, function: function)
        assert "TestCloneDecorator" in _failing_areas(path)
    with monkeypatch.context() as patch:
        real = torch.no_grad.clone
        patch.setattr(torch.no_grad, "clone", lambda self, *args, **kwargs: real(self))
        assert "TestCloneBadInput" in _failing_areas(path)


def test_a_config_patchs_faults_fail_their_areas(drafts, monkeypatch):
    path, _ = drafts["config module"]
    config = torch._functorch.config
    real = type(config).patch
    with monkeypatch.context() as patch:
        patch.setattr(type(config), "patch", lambda self, *args, **kwargs: real(self))
        assert {"TestPatchPatchForms", "TestPatchEnterExit"} <= _failing_areas(path)


def test_a_functions_faults_fail_their_areas(drafts, monkeypatch):
    path, _ = drafts["function"]
    real = torch.func.stack_module_state

    def shifted(models):
        params, buffers = real(models)
        return {key: value + 1e-3 for key, value in params.items()}, buffers
    with monkeypatch.context() as patch:
        patch.setattr(torch.func, "stack_module_state", shifted)
        assert "TestStackModuleStateValues" in _failing_areas(path)
    with monkeypatch.context() as patch:
        patch.setattr(torch.func, "stack_module_state", functools.partial(_swallowing, real))
        assert "TestStackModuleStateBadInput" in _failing_areas(path)


def test_a_c_builtins_faults_fail_their_areas(drafts, monkeypatch):
    path, _ = drafts["C builtin"]
    real = torch.promote_types
    with monkeypatch.context() as patch:
        patch.setattr(torch, "promote_types", lambda a, b: torch.float64 if a.is_floating_point else real(a, b))
        assert "TestPromoteTypesDtypes" in _failing_areas(path)
    with monkeypatch.context() as patch:
        patch.setattr(torch, "promote_types", lambda *args, **kwargs: real(*args[:2]))
        assert "TestPromoteTypesBadInput" in _failing_areas(path)


def test_an_api_of_no_drafted_kind_gives_the_reason():
    text, why, _ = kind_draft.draft("torch.nn", None, [sys.executable])
    assert text is None and why == "no generic contract drafted for a other (None)"
