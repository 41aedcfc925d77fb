# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Unit tests of torch_npu_testing.carried: the helpers every exported file carries, and the proof that an
exported file behaves as the kit file it came from.

The carried modules hold only the standard library and torch at module level and never name the kit;
their device choice honours API_CONSISTENCY_DEVICE (and not the kit's variable, which an Ascend file must
not know); the kit's TestCase *is* the carried class. The parity test exports the kit's real test files
(master's branch map entry) into a git checkout in a temp dir, loads the kit file and the exported file in
this process (a stand-in torch_npu without an NPU on sys.path), runs both on the CPU forced by each one's
override variable, and compares every case's outcome, subtests included, from unittest's result objects.
"""
import ast
import importlib.util
import sys
import unittest
from pathlib import Path
from types import SimpleNamespace

import pytest
from test_export import make_ascend

import torch_npu_testing
from torch_npu_testing import device as kit_device
from torch_npu_testing import export, portable
from torch_npu_testing.__main__ import main as cli_main
from torch_npu_testing.carried import device as carried_device
from torch_npu_testing.carried import testcase as carried_testcase
from torch_npu_testing.export import inline

KIT_ROOT = Path(__file__).resolve().parents[2]


def fake_torch(cuda_available):
    accelerator = SimpleNamespace(
        current_accelerator=lambda check_available=False: (
            None if check_available and not cuda_available else SimpleNamespace(type="cuda")),
        is_available=lambda: cuda_available)
    return SimpleNamespace(accelerator=accelerator)


def no_torch_npu(name):
    raise ModuleNotFoundError(f"No module named {name!r}", name=name)


# --------------------------------------------------------------------------- the carried modules
@pytest.mark.parametrize("module", inline.CARRIED_MODULES[1:])
def test_carried_modules_import_only_stdlib_and_name_no_kit(module):
    """Module level: standard library or a relative import (inlined at export); no kit name anywhere."""
    text = inline.module_source(module)
    assert not export.KIT_REFERENCE_RE.search(text), module
    for node in ast.parse(text).body:
        if isinstance(node, ast.Import):
            assert all(alias.name.split(".")[0] in sys.stdlib_module_names for alias in node.names), node.lineno
        elif isinstance(node, ast.ImportFrom):
            assert node.level > 0 or node.module.split(".")[0] in sys.stdlib_module_names, node.lineno


def test_carried_device_reads_its_own_variable_not_the_kits():
    """The exported choice: API_CONSISTENCY_DEVICE forces; the kit's variable means nothing there."""
    torch = fake_torch(cuda_available=True)
    forced = carried_device.resolve_device({"API_CONSISTENCY_DEVICE": "cpu"}, torch, no_torch_npu)
    assert forced == carried_device.DeviceChoice("cpu", "forced by API_CONSISTENCY_DEVICE")
    ignored = carried_device.resolve_device({kit_device.DEVICE_ENV: "cpu"}, torch, no_torch_npu)
    assert ignored == carried_device.DeviceChoice("cuda", "torch.accelerator reports an available cuda")
    with pytest.raises(carried_device.DeviceUnavailableError,
                       match="^API_CONSISTENCY_DEVICE=cuda but no cuda device is available"):
        carried_device.resolve_device({"API_CONSISTENCY_DEVICE": "cuda"}, fake_torch(False), no_torch_npu)


def test_carried_device_type_caches_and_explains_once(monkeypatch, capsys):
    """device_type() resolves once; the notes go to stderr once, without naming the kit."""
    calls = []

    def fake_resolve():
        calls.append(1)
        return carried_device.DeviceChoice("cpu", "no NPU or other accelerator available", ("why",))
    monkeypatch.setattr(carried_device, "_DEVICE_CHOICE", [])
    monkeypatch.setattr(carried_device, "resolve_device", fake_resolve)
    assert [carried_device.device_type(), carried_device.device_type()] == ["cpu", "cpu"]
    assert calls == [1] and capsys.readouterr().err == "testing on cpu: why\n"


def test_the_kits_testcase_is_the_carried_class_with_guard_and_assertions():
    """One class: what the kit's files derive from is exactly what an exported file carries."""
    assert torch_npu_testing.TestCase is carried_testcase.TestCase
    mro = carried_testcase.TestCase.__mro__
    assert mro[1:3] == (portable.StateGuardMixin, portable.PortableAssertionsMixin)
    from torch.testing._internal.common_utils import TestCase as pytorch_case
    assert carried_testcase.device_base_test_case("cpu") is pytorch_case
    assert carried_testcase.device_base_test_case("cuda") is pytorch_case


def test_npu_base_and_runner_come_from_torch_npu(stub_torch_npu, monkeypatch):
    """On an NPU the base TestCase and run_tests are torch_npu's (a stub here)."""
    monkeypatch.syspath_prepend(str(stub_torch_npu("working")))
    for name in [name for name in sys.modules if name == "torch_npu" or name.startswith("torch_npu.")]:
        monkeypatch.delitem(sys.modules, name)
    import torch
    monkeypatch.setattr(torch, "npu", None, raising=False)
    try:
        base = carried_testcase.device_base_test_case("npu")
        runner = carried_testcase.device_run_tests("npu")
        assert getattr(base, "stub_npu_base", False) and runner.__module__ == "torch_npu.testing.testcase"
    finally:
        for name in [name for name in sys.modules if name == "torch_npu" or name.startswith("torch_npu.")]:
            del sys.modules[name]


# --------------------------------------------------------------------------- kit file == exported file
class CaseRecorder(unittest.TestResult):
    """Outcome of every case: ``(Class, method, subtest description) -> (outcome, skip reason)``."""

    def __init__(self):
        super().__init__()
        self.cases = {}

    @staticmethod
    def key(test, subtest=None):
        description = subtest._subDescription() if subtest is not None else ""
        return type(test).__name__, getattr(test, "_testMethodName", str(test)), description

    def addSuccess(self, test):  # noqa: N802 - unittest naming
        super().addSuccess(test)
        self.cases.setdefault(self.key(test), ("passed", ""))

    def addFailure(self, test, err):  # noqa: N802
        super().addFailure(test, err)
        self.cases[self.key(test)] = ("failed", "")

    def addError(self, test, err):  # noqa: N802
        super().addError(test, err)
        self.cases[self.key(test)] = ("error", "")

    def addSkip(self, test, reason):  # noqa: N802
        super().addSkip(test, reason)
        self.cases[self.key(test)] = ("skipped", reason)

    def addExpectedFailure(self, test, err):  # noqa: N802
        super().addExpectedFailure(test, err)
        self.cases[self.key(test)] = ("expected_failure", "")

    def addUnexpectedSuccess(self, test):  # noqa: N802
        super().addUnexpectedSuccess(test)
        self.cases[self.key(test)] = ("unexpected_success", "")

    def addSubTest(self, test, subtest, err):  # noqa: N802
        super().addSubTest(test, subtest, err)
        outcome = "passed" if err is None else ("failed" if issubclass(err[0], test.failureException) else "error")
        self.cases[self.key(test, subtest)] = (outcome, "")


def run_in_process(path, module_name):
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
        result = CaseRecorder()
        unittest.defaultTestLoader.loadTestsFromModule(module).run(result)
        return module, result.cases
    finally:
        del sys.modules[module_name]


@pytest.fixture
def exported_master(tmp_path, capsys):
    checkout = make_ascend(tmp_path / "ascend")
    code = cli_main(["export", "master", str(checkout), "--kit", str(KIT_ROOT)])
    _, err = capsys.readouterr()
    assert code == 0, f"export master refused: {err.strip()}"
    return checkout, export.load_branch_map()["branches"]["master"]["test_files"]


def test_exported_files_and_kit_files_give_the_same_outcome_per_case(exported_master, stub_torch_npu, monkeypatch):
    checkout, files = exported_master
    monkeypatch.syspath_prepend(str(stub_torch_npu("working")))  # torch_npu without an NPU
    import torch
    monkeypatch.setattr(torch, "npu", None, raising=False)
    monkeypatch.setenv(kit_device.DEVICE_ENV, "cpu")
    monkeypatch.setenv(carried_device.DEVICE_VARIABLE, "cpu")
    monkeypatch.setattr(kit_device, "_CHOICE", None)
    assert kit_device.device_type() == "cpu"
    try:
        for number, rel in enumerate(files):
            _, kit_cases = run_in_process(str(KIT_ROOT / rel), f"kit_parity_{number}")
            module, exported_cases = run_in_process(str(checkout / rel), f"exported_parity_{number}")
            # The exported module resolved its own device through its own variable and carries the kit's class.
            assert module._DEVICE_CHOICE[0] == ("cpu", "forced by API_CONSISTENCY_DEVICE", ())
            assert [base.__name__ for base in module.TestCase.__mro__[1:3]] == [
                "StateGuardMixin", "PortableAssertionsMixin"]
            assert module.TestCase is not carried_testcase.TestCase  # its own copy, not the kit's
            assert kit_cases and any(outcome == "passed" for outcome, _ in kit_cases.values()), rel
            assert exported_cases == kit_cases, rel
    finally:
        for name in [name for name in sys.modules if name == "torch_npu" or name.startswith("torch_npu.")]:
            del sys.modules[name]
