# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Unit tests of torch_npu_testing.device: where the API-consistency tests run.

Contract (GUIDE "Device"): TORCH_NPU_TESTING_DEVICE wins (then API_CONSISTENCY_DEVICE, the variable
exported files read), and forcing a device that is not there is a
DeviceUnavailableError naming the variable; otherwise torch_npu with an available NPU -> npu, else an
available torch.accelerator -> its type, else cpu. The two measured traps are covered with fakes
(resolve_device's environ / torch_module / importer parameters) here; for real (a PyPI CUDA build on a
GPU-less box, a torch_npu installed without CANN) by test/in_env in each branch env, with its own torch.
"""
import sys
from types import SimpleNamespace

import pytest

from torch_npu_testing import device
from torch_npu_testing.device import (DEVICE_ENV, DEVICE_VARIABLE, DeviceChoice, DeviceUnavailableError, device_choice,
                                      device_count, device_type, import_torch_npu, resolve_device)

CUDA_WITHOUT_GPU = "this torch is built for cuda but no cuda device is available"
NPU_NOT_AVAILABLE = "torch_npu imported but torch.npu.is_available() is False (no NPU or driver)"
LIBHCCL = "libhccl.so: cannot open shared object file"


# --------------------------------------------------------------------------- fakes
class FakeAccelerator:
    """torch.accelerator of a build compiled for ``compiled_for`` (None: a CPU-only build)."""

    def __init__(self, compiled_for=None, available=False, raises=None):
        self.compiled_for, self.available, self.raises = compiled_for, available, raises

    def current_accelerator(self, check_available=False):
        if self.compiled_for is None or (check_available and not self.available):
            return None
        return SimpleNamespace(type=self.compiled_for)

    def is_available(self):
        if self.raises is not None:
            raise self.raises
        return self.available


class OldFakeAccelerator(FakeAccelerator):
    """An accelerator module whose current_accelerator() has no check_available keyword."""

    def current_accelerator(self):
        return SimpleNamespace(type=self.compiled_for) if self.compiled_for else None


def fake_torch(accelerator=None, npu=None, cuda_available=None):
    torch = SimpleNamespace()
    if accelerator is not None:
        torch.accelerator = accelerator
    if npu is not None:
        torch.npu = npu
    if cuda_available is not None:
        torch.cuda = SimpleNamespace(is_available=cuda_available)
    return torch


def npu_module(available):
    def is_available():
        if isinstance(available, Exception):
            raise available
        return available
    return SimpleNamespace(is_available=is_available, device_count=lambda: 1)


def not_installed(name):
    raise ModuleNotFoundError(f"No module named {name!r}", name=name)


def broken_import(name):
    raise ImportError(LIBHCCL)


def imports(module):
    return lambda name: module


def must_not_import(name):
    raise AssertionError(f"{name} must not be imported")


CPU_BUILD = FakeAccelerator(compiled_for=None)


# --------------------------------------------------------------------------- override variable
def test_the_exported_files_variable_is_honoured_too():
    """API_CONSISTENCY_DEVICE (what exported files read) works in the kit, and errors name it."""
    torch = fake_torch(FakeAccelerator("cuda", available=True))
    assert resolve_device({DEVICE_VARIABLE: "cpu"}, torch, must_not_import) == DeviceChoice(
        "cpu", f"forced by {DEVICE_VARIABLE}")
    with pytest.raises(DeviceUnavailableError, match=f"^{DEVICE_VARIABLE}=npu but no NPU is usable"):
        resolve_device({DEVICE_VARIABLE: "npu"}, torch, not_installed)


def test_the_kits_variable_wins_over_the_exported_files_variable():
    """Both set: TORCH_NPU_TESTING_DEVICE decides; an empty kit variable leaves it to the other one."""
    torch = fake_torch(FakeAccelerator("cuda", available=True))
    choice = resolve_device({DEVICE_ENV: "cuda", DEVICE_VARIABLE: "cpu"}, torch, must_not_import)
    assert choice == DeviceChoice("cuda", f"forced by {DEVICE_ENV}")
    choice = resolve_device({DEVICE_ENV: " ", DEVICE_VARIABLE: "cpu"}, torch, must_not_import)
    assert choice == DeviceChoice("cpu", f"forced by {DEVICE_VARIABLE}")
    with pytest.raises(DeviceUnavailableError, match=f"^{DEVICE_ENV}='gpu' is not a device type"):
        resolve_device({DEVICE_ENV: "gpu", DEVICE_VARIABLE: "cpu"}, torch, must_not_import)


def test_override_cpu_wins_over_available_accelerator_without_importing_torch_npu():
    """TORCH_NPU_TESTING_DEVICE=cpu beats an available accelerator and does not touch torch_npu."""
    torch = fake_torch(FakeAccelerator("cuda", available=True))
    choice = resolve_device({DEVICE_ENV: "cpu"}, torch, must_not_import)
    assert choice == DeviceChoice("cpu", f"forced by {DEVICE_ENV}")


def test_override_value_is_trimmed_and_case_insensitive():
    """' CPU ' means cpu."""
    choice = resolve_device({DEVICE_ENV: " CPU "}, fake_torch(CPU_BUILD), must_not_import)
    assert choice.type == "cpu"


def test_empty_override_means_automatic_choice():
    """An empty variable is the automatic order, not an error."""
    torch = fake_torch(FakeAccelerator("xpu", available=True))
    choice = resolve_device({DEVICE_ENV: ""}, torch, not_installed)
    assert (choice.type, choice.reason) == ("xpu", "torch.accelerator reports an available xpu")


def test_override_cuda_with_available_cuda():
    """Forcing an accelerator that is available returns it, saying it was forced."""
    torch = fake_torch(FakeAccelerator("cuda", available=True))
    choice = resolve_device({DEVICE_ENV: "cuda"}, torch, must_not_import)
    assert choice == DeviceChoice("cuda", f"forced by {DEVICE_ENV}")


def test_override_cuda_on_cuda_build_without_gpu_raises_naming_the_variable():
    """Forcing cuda where the build has CUDA but no GPU is usable is an error, not a silent cpu."""
    torch = fake_torch(FakeAccelerator("cuda", available=False))
    with pytest.raises(DeviceUnavailableError) as info:
        resolve_device({DEVICE_ENV: "cuda"}, torch, must_not_import)
    assert str(info.value) == f"{DEVICE_ENV}=cuda but no cuda device is available: {CUDA_WITHOUT_GPU}"


def test_override_cuda_while_another_accelerator_is_available_names_it():
    """Forcing cuda on an xpu machine is an error that names the accelerator that is there."""
    torch = fake_torch(FakeAccelerator("xpu", available=True))
    with pytest.raises(DeviceUnavailableError) as info:
        resolve_device({DEVICE_ENV: "cuda"}, torch, must_not_import)
    assert str(info.value) == f"{DEVICE_ENV}=cuda but no cuda device is available (the available accelerator is xpu)"


def test_override_npu_without_torch_npu_raises_naming_the_variable():
    """TORCH_NPU_TESTING_DEVICE=npu with no torch_npu installed is an error saying so."""
    with pytest.raises(DeviceUnavailableError) as info:
        resolve_device({DEVICE_ENV: "npu"}, fake_torch(CPU_BUILD), not_installed)
    assert str(info.value) == f"{DEVICE_ENV}=npu but no NPU is usable: torch_npu is not installed"


def test_override_npu_with_torch_npu_failing_to_import_reports_the_import_error():
    """A torch_npu without CANN cannot satisfy a forced npu; the error carries the ImportError."""
    with pytest.raises(DeviceUnavailableError) as info:
        resolve_device({DEVICE_ENV: "npu"}, fake_torch(CPU_BUILD), broken_import)
    assert str(info.value) == (f"{DEVICE_ENV}=npu but no NPU is usable: torch_npu is installed but failed "
                               f"to import (ImportError: {LIBHCCL})")


def test_override_npu_with_npu_present_but_unavailable_raises():
    """torch_npu imports but torch.npu.is_available() is False: forced npu is an error."""
    torch = fake_torch(CPU_BUILD, npu=npu_module(False))
    with pytest.raises(DeviceUnavailableError, match=f"^{DEVICE_ENV}=npu but no NPU is usable: torch_npu imported"):
        resolve_device({DEVICE_ENV: "npu"}, torch, imports(object()))


def test_override_npu_with_available_npu():
    """Forcing npu where one is available returns npu, saying it was forced."""
    torch = fake_torch(CPU_BUILD, npu=npu_module(True))
    assert resolve_device({DEVICE_ENV: "npu"}, torch, imports(object())) == DeviceChoice(
        "npu", f"forced by {DEVICE_ENV}")


@pytest.mark.parametrize("value", ["gpu", "cuda:0", "0"])
def test_unknown_override_value_is_an_error_listing_the_known_devices(value):
    """A value that is not a device type is rejected before anything is imported."""
    with pytest.raises(DeviceUnavailableError) as info:
        resolve_device({DEVICE_ENV: value}, fake_torch(CPU_BUILD), must_not_import)
    assert str(info.value) == f"{DEVICE_ENV}={value!r} is not a device type; use one of cpu, cuda, npu, xpu, mps"


# --------------------------------------------------------------------------- automatic order
def test_available_npu_wins_over_an_available_cuda():
    """torch_npu with an NPU comes before torch.accelerator."""
    torch = fake_torch(FakeAccelerator("cuda", available=True), npu=npu_module(True))
    assert resolve_device({}, torch, imports(object())) == DeviceChoice("npu", "torch_npu with an available NPU")


def test_npu_not_available_falls_back_to_cpu_with_the_reason():
    """torch_npu imports but no NPU: cpu, and the note says why the NPU was not used."""
    torch = fake_torch(CPU_BUILD, npu=npu_module(False))
    choice = resolve_device({}, torch, imports(object()))
    assert choice == DeviceChoice("cpu", "no NPU or other accelerator available", (NPU_NOT_AVAILABLE,))


def test_npu_is_available_raising_falls_back_with_the_exception():
    """torch.npu.is_available() raising (driver trouble) is a note, not a crash."""
    torch = fake_torch(CPU_BUILD, npu=npu_module(RuntimeError("drv error\nsecond line")))
    choice = resolve_device({}, torch, imports(object()))
    assert choice.notes == ("torch.npu.is_available() raised (RuntimeError: drv error)",)


def test_torch_npu_that_does_not_register_torch_npu_attribute():
    """A torch_npu import that leaves no torch.npu is reported."""
    choice = resolve_device({}, fake_torch(CPU_BUILD), imports(object()))
    assert choice.notes == ("torch.npu is missing after importing torch_npu",)


def test_torch_npu_not_installed_is_silent():
    """No torch_npu at all is the normal CPU/GPU case: no note."""
    assert resolve_device({}, fake_torch(CPU_BUILD), not_installed) == DeviceChoice(
        "cpu", "no NPU or other accelerator available", ())


def test_torch_npu_missing_a_dependency_is_reported_as_failed_import():
    """ModuleNotFoundError for something torch_npu needs is not 'not installed'."""
    def missing_dependency(name):
        raise ModuleNotFoundError("No module named 'yaml'", name="yaml")
    choice = resolve_device({}, fake_torch(CPU_BUILD), missing_dependency)
    assert choice.notes == (
        "torch_npu is installed but failed to import (ModuleNotFoundError: No module named 'yaml')",)


def test_broken_torch_npu_with_available_cuda_uses_cuda_and_keeps_the_note():
    """A broken torch_npu does not hide an available GPU; the note still says torch_npu failed."""
    choice = resolve_device({}, fake_torch(FakeAccelerator("cuda", available=True)), broken_import)
    assert choice.type == "cuda"
    assert choice.notes == (f"torch_npu is installed but failed to import (ImportError: {LIBHCCL})",)


def test_cuda_build_without_gpu_is_cpu_although_current_accelerator_says_cuda():
    """The PyPI CUDA-build trap: current_accelerator() is cuda, is_available() False -> cpu + reason."""
    accelerator = FakeAccelerator("cuda", available=False)
    assert accelerator.current_accelerator().type == "cuda"  # the trap the fake reproduces
    choice = resolve_device({}, fake_torch(accelerator), not_installed)
    assert choice == DeviceChoice("cpu", "no NPU or other accelerator available", (CUDA_WITHOUT_GPU,))


def test_accelerator_is_available_raising_is_cpu_with_the_exception():
    """torch 2.7.1 behaviour: is_available() raises without a driver -> cpu and the note quotes it."""
    accelerator = FakeAccelerator("cuda", raises=RuntimeError("Found no NVIDIA driver on your system."))
    choice = resolve_device({}, fake_torch(accelerator), not_installed)
    assert choice.type == "cpu"
    assert choice.notes == (
        "torch.accelerator.is_available() raised (RuntimeError: Found no NVIDIA driver on your system.)",)


def test_cpu_only_build_is_cpu_without_notes():
    """A CPU build (current_accelerator() None) has nothing to explain."""
    assert resolve_device({}, fake_torch(CPU_BUILD), not_installed).notes == ()


def test_available_accelerator_type_is_used():
    """An available accelerator other than cuda (xpu) is chosen by its own type."""
    assert resolve_device({}, fake_torch(FakeAccelerator("xpu", available=True)), not_installed).type == "xpu"


def test_current_accelerator_without_check_available_keyword():
    """Older accelerator APIs without check_available still give the type once availability is known."""
    torch = fake_torch(OldFakeAccelerator("cuda", available=True))
    assert resolve_device({}, torch, not_installed).type == "cuda"


@pytest.mark.parametrize("cuda_available, expected", [(lambda: True, ("cuda", ())), (lambda: False, ("cpu", ()))])
def test_torch_without_accelerator_module_uses_cuda_is_available(cuda_available, expected):
    """torch < 2.6 has no torch.accelerator: torch.cuda.is_available() decides."""
    choice = resolve_device({}, fake_torch(cuda_available=cuda_available), not_installed)
    assert (choice.type, choice.notes) == expected


def test_torch_without_accelerator_module_and_cuda_raising():
    """torch.cuda.is_available() raising gives cpu and a note quoting the exception."""
    def raising():
        raise RuntimeError("CUDA driver initialization failed")
    choice = resolve_device({}, fake_torch(cuda_available=raising), not_installed)
    assert choice.notes == ("torch.cuda.is_available() raised (RuntimeError: CUDA driver initialization failed)",)


def test_import_torch_npu_reports_first_line_and_bare_exception_names():
    """The one-line reason keeps only the first message line; an empty message leaves the type name."""
    def raise_multiline(name):
        raise RuntimeError("first line\nsecond line")

    def raise_empty(name):
        raise RuntimeError()
    sentinel = object()
    assert import_torch_npu(imports(sentinel)) == (sentinel, None)
    assert import_torch_npu(raise_multiline) == (
        None, "torch_npu is installed but failed to import (RuntimeError: first line)")
    assert import_torch_npu(raise_empty) == (None, "torch_npu is installed but failed to import (RuntimeError)")
    assert import_torch_npu(not_installed) == (None, "torch_npu is not installed")


# --------------------------------------------------------------------------- stub torch_npu on sys.path
@pytest.fixture
def working_stub_on_path(stub_torch_npu, monkeypatch):
    """The working stub torch_npu importable in this process; torch.npu and sys.modules restored after."""
    import torch
    monkeypatch.syspath_prepend(str(stub_torch_npu("working")))
    monkeypatch.setattr(torch, "npu", None, raising=False)  # undo removes what the stub sets
    monkeypatch.delitem(sys.modules, "torch_npu", raising=False)
    yield monkeypatch
    for name in [name for name in sys.modules if name == "torch_npu" or name.startswith("torch_npu.")]:
        del sys.modules[name]


def test_stub_torch_npu_without_npu_resolves_cpu_with_reason(working_stub_on_path):
    """A real import of an installed torch_npu whose NPU is unavailable -> cpu, first note says why."""
    working_stub_on_path.setenv("STUB_NPU_AVAILABLE", "0")
    choice = resolve_device({})
    assert choice.type == "cpu"
    assert choice.notes[0] == NPU_NOT_AVAILABLE
    assert sys.modules["torch_npu"].__version__ == "0.0.0+stub"


def test_stub_torch_npu_with_npu_resolves_npu(working_stub_on_path):
    """A real import of torch_npu with torch.npu.is_available() True -> npu."""
    working_stub_on_path.setenv("STUB_NPU_AVAILABLE", "1")
    assert resolve_device({}) == DeviceChoice("npu", "torch_npu with an available NPU")


def test_broken_stub_torch_npu_on_pythonpath_gives_cpu_and_one_line(run_python, stub_torch_npu):
    """torch_npu raising ImportError('libhccl.so ...') at import: cpu and exactly one stderr line."""
    code = ("import torch_npu_testing\nfrom torch_npu_testing import device_type\n"
            "print(device_type(), device_type())\n")
    result = run_python(["-c", code], PYTHONPATH=stub_torch_npu("broken"))
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["cpu", "cpu"]
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(
        f"torch_npu_testing: testing on cpu: torch_npu is installed but failed to import (ImportError: {LIBHCCL})")


# --------------------------------------------------------------------------- caching, counting
def test_device_choice_resolves_once_and_prints_notes_once(monkeypatch, capsys):
    """device_type() resolves on first use, caches, and prints the notes as one stderr line, once."""
    calls = []

    def fake_resolve():
        calls.append(1)
        return DeviceChoice("cpu", "no NPU or other accelerator available", ("first why", "second why"))
    monkeypatch.setattr(device, "_CHOICE", None)
    monkeypatch.setattr(device, "resolve_device", fake_resolve)
    assert [device_type(), device_type(), device_choice().type] == ["cpu", "cpu", "cpu"]
    assert len(calls) == 1
    assert capsys.readouterr().err == "torch_npu_testing: testing on cpu: first why; second why\n"


def test_device_choice_without_notes_prints_nothing(monkeypatch, capsys):
    """Nothing to explain, nothing printed."""
    monkeypatch.setattr(device, "_CHOICE", None)
    monkeypatch.setattr(device, "resolve_device", lambda: DeviceChoice("cuda", "available"))
    assert device_type() == "cuda"
    assert capsys.readouterr().err == ""


def test_device_choice_does_not_cache_an_error(monkeypatch):
    """A forced device that is missing raises on every call (no half-resolved state is kept)."""
    monkeypatch.setattr(device, "_CHOICE", None)
    monkeypatch.setenv(DEVICE_ENV, "gpu")
    for _ in range(2):
        with pytest.raises(DeviceUnavailableError, match=DEVICE_ENV):
            device_type()
    assert device._CHOICE is None


def test_device_count(monkeypatch):
    """cpu counts 1; a device torch lacks counts 0; a count that raises counts 0."""
    import torch
    assert device_count("cpu") == 1
    monkeypatch.delattr(torch, "npu", raising=False)
    assert device_count("npu") == 0

    def raising():
        raise RuntimeError("no driver")
    monkeypatch.setattr(torch.cuda, "device_count", raising)
    assert device_count("cuda") == 0
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 3)
    assert device_count("cuda") == 3
