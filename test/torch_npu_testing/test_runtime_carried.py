# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Unit tests of torch_npu_testing.runtime.carried: the block every exported file carries.

Device choice (override variables, NPU, an *available* accelerator, CPU; the traps: CUDA builds that
answer ``cuda`` without a GPU, torch_npu without CANN, 2.7.1's raising ``is_available``), version gates,
dotted-name lookup, the thread runner and the strict checks of TestCase: each must fail where a port
would slip through, with a message naming what differed.
"""
import types
import unittest

import pytest

from torch_npu_testing.runtime import carried, carried_testcase
from torch_npu_testing.runtime.carried import (DeviceUnavailableError, find_api, parse_version, requires_api,
                                               resolve_device, run_in_thread, torch_version_at_least)

import torch

VAR, ALT = carried.DEVICE_VARIABLES


# --------------------------------------------------------------------------- device choice
def _accelerator(monkeypatch, built_for=None, available=False, raises=None):
    """Make torch.accelerator report a build for ``built_for`` with/without a usable device."""
    def is_available():
        if raises:
            raise raises
        return available
    current = types.SimpleNamespace(type=built_for) if built_for else None
    monkeypatch.setattr(torch.accelerator, "is_available", is_available)
    monkeypatch.setattr(torch.accelerator, "current_accelerator", lambda *a, **k: current)


def _importer(npu=None, error=None):
    """An importer whose torch_npu import raises ``error`` or installs a torch.npu reporting ``npu``."""
    def load(name):
        assert name == "torch_npu"
        if error is not None:
            raise error
        torch.npu = types.SimpleNamespace(is_available=lambda: npu)
        return types.ModuleType("torch_npu")
    return load


MISSING = _importer(error=ModuleNotFoundError("No module named 'torch_npu'", name="torch_npu"))
NO_CANN = _importer(error=ImportError("libhccl.so: cannot open shared object file\nmore"))


@pytest.fixture(autouse=True)
def _keep_torch_npu_attribute():
    had = hasattr(torch, "npu")
    before = getattr(torch, "npu", None)
    yield
    if had:
        torch.npu = before
    elif hasattr(torch, "npu"):
        del torch.npu


@pytest.mark.parametrize("importer, accel, expected", [
    (MISSING, dict(), ("cpu", ())),
    (MISSING, dict(built_for="cuda", available=True), ("cuda", ())),
    (_importer(npu=True), dict(built_for="cuda", available=True), ("npu", ())),
    (MISSING, dict(built_for="xpu", available=True), ("xpu", ())),
])
def test_automatic_choice(monkeypatch, importer, accel, expected):
    _accelerator(monkeypatch, **accel)
    assert resolve_device({}, importer) == expected


def test_cuda_build_without_gpu_is_cpu_with_the_reason(monkeypatch):
    """current_accelerator() says cuda on every PyPI CUDA build; only is_available() counts."""
    _accelerator(monkeypatch, built_for="cuda", available=False)
    device, notes = resolve_device({}, MISSING)
    assert device == "cpu" and notes == ("torch is built for cuda but no such device is available",)


def test_is_available_raising_is_cpu_with_the_exception(monkeypatch):
    _accelerator(monkeypatch, built_for="cuda", raises=RuntimeError("Found no NVIDIA driver\ndetails"))
    device, notes = resolve_device({}, MISSING)
    assert device == "cpu" and "torch.accelerator failed (RuntimeError: Found no NVIDIA driver" in notes[0]


def test_torch_npu_without_cann_falls_back_with_one_note(monkeypatch):
    _accelerator(monkeypatch)
    device, notes = resolve_device({}, NO_CANN)
    assert device == "cpu" and len(notes) == 1 and notes[0].startswith("torch_npu failed to import (ImportError")


def test_torch_npu_without_npu_notes_it(monkeypatch):
    _accelerator(monkeypatch, built_for="cuda", available=True)
    assert resolve_device({}, _importer(npu=False)) == (
        "cuda", ("torch_npu imported but torch.npu.is_available() is False",))


def test_a_missing_dependency_of_torch_npu_is_a_failed_import_not_absence(monkeypatch):
    _accelerator(monkeypatch)
    broken = _importer(error=ModuleNotFoundError("No module named 'yaml'", name="yaml"))
    assert resolve_device({}, broken)[1] == ("torch_npu failed to import (ModuleNotFoundError: No module named "
                                             "'yaml')",)


@pytest.mark.parametrize("variable", [VAR, ALT])
def test_override_cpu_wins_and_skips_torch_npu(monkeypatch, variable):
    _accelerator(monkeypatch, built_for="cuda", available=True)
    assert resolve_device({variable: " CPU "}, _importer(error=AssertionError("must not import"))) == ("cpu", ())


def test_the_kits_variable_wins_over_the_exported_files_variable(monkeypatch):
    _accelerator(monkeypatch, built_for="cuda", available=True)
    assert resolve_device({VAR: "cpu", ALT: "cuda"}, MISSING)[0] == "cpu"
    assert resolve_device({VAR: "", ALT: "cuda"}, MISSING)[0] == "cuda"


@pytest.mark.parametrize("forced, importer, accel, fragment", [
    ("cuda", MISSING, dict(built_for="cuda"), "torch is built for cuda but no such device is available"),
    ("npu", MISSING, dict(), "no npu device is usable here"),
    ("npu", NO_CANN, dict(), "torch_npu failed to import (ImportError: libhccl.so"),
    ("npu", _importer(npu=False), dict(), "torch.npu.is_available() is False"),
    ("xpu", MISSING, dict(built_for="cuda", available=True), "no xpu device is usable here"),
    ("tpu", MISSING, dict(), "no tpu device is usable here"),
])
def test_forcing_an_absent_device_is_an_error_naming_the_variable(monkeypatch, forced, importer, accel, fragment):
    _accelerator(monkeypatch, **accel)
    with pytest.raises(DeviceUnavailableError) as caught:
        resolve_device({VAR: forced}, importer)
    assert str(caught.value).startswith(f"{VAR}={forced} but") and fragment in str(caught.value)


def test_forcing_an_available_device(monkeypatch):
    _accelerator(monkeypatch, built_for="cuda", available=True)
    assert resolve_device({ALT: "cuda"}, MISSING) == ("cuda", ())
    assert resolve_device({ALT: "npu"}, _importer(npu=True)) == ("npu", ())


def test_device_type_resolves_once_and_prints_notes_once(monkeypatch, capsys):
    calls = []
    monkeypatch.setattr(carried, "resolve_device", lambda: calls.append(1) or ("cpu", ("why",)))
    carried.device_type.cache_clear()
    try:
        assert [carried.device_type(), carried.device_type()] == ["cpu", "cpu"] and calls == [1]
        assert capsys.readouterr().err == "testing on cpu: why\n"
        assert carried.device_type.notes == ("why",), "the notes of that one resolution, for the probe"
    finally:
        carried.device_type.cache_clear()


def test_broken_torch_npu_on_the_path_gives_cpu_and_one_line(run_python, stub_torch_npu):
    """For real: a torch_npu that fails at import (as without CANN) is reported once, tests go on on the CPU."""
    result = run_python(["-c", "from torch_npu_testing import device_type; print(device_type())"],
                        PYTHONPATH=stub_torch_npu("broken"), TORCH_DEVICE_BACKEND_AUTOLOAD="0")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() in ("cpu", "cuda")
    assert result.stderr.count("torch_npu failed to import (ImportError") == 1


# --------------------------------------------------------------------------- version gates
@pytest.mark.parametrize("text, expected", [
    ("2.13.0a0+git1234abc", (2, 13, 0)), ("2.7.1+cpu", (2, 7, 1)), ("2.9", (2, 9, 0)), ("3", (3, 0, 0)),
    (" 2.10.1", (2, 10, 1)), ("2.11.0.post3", (2, 11, 0)), (torch.torch_version.TorchVersion("2.12.0"), (2, 12, 0)),
])
def test_parse_version_keeps_release_numbers(text, expected):
    assert parse_version(text) == expected


@pytest.mark.parametrize("text", ["", "v2.1", "abc", None])
def test_parse_version_rejects_non_versions(text):
    with pytest.raises(ValueError, match="not a version"):
        parse_version(text)


@pytest.mark.parametrize("installed, asked, expected", [
    ("2.13.0+cpu", "2.13", True), ("2.12.1", "2.13", False), ("2.13.0a0", "2.13.0", True), ("2.14.1", "2.9", True),
])
def test_torch_version_at_least(monkeypatch, installed, asked, expected):
    monkeypatch.setattr(torch, "__version__", installed)
    assert torch_version_at_least(asked) is expected


@pytest.mark.parametrize("name", ["torch", "torch.nn.Linear", "torch._functorch.config.patch",
                                  "torch.autograd.grad_mode.set_grad_enabled.clone", "torch.testing._internal"])
def test_find_api_finds_present_names(name):
    assert find_api(name) is not None


@pytest.mark.parametrize("name", ["no_such_top_level", "torch.no_such_module.f", "torch.nn.NoSuchLayer",
                                  "torch.nn.Linear.no_such_method.deeper"])
def test_find_api_gives_the_default_for_missing_names(name):
    missing = object()
    assert find_api(name, missing) is missing


def test_find_api_raises_when_an_existing_module_fails_to_import(tmp_path, monkeypatch):
    (tmp_path / "brokenpkg_xyz").mkdir()
    (tmp_path / "brokenpkg_xyz" / "__init__.py").write_text("import no_such_dependency_xyz\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ModuleNotFoundError, match="no_such_dependency_xyz"):
        find_api("brokenpkg_xyz.f")


def _run(case_class):
    return unittest.TextTestRunner(stream=open("/dev/null", "w")).run(unittest.defaultTestLoader.loadTestsFromTestCase(
        case_class))


def test_requires_api_skips_with_the_reason_and_runs_when_present():
    ran = []

    class Case(unittest.TestCase):
        @requires_api("torch.no_such_api_xyz", since="9.9")
        def test_absent(self):
            ran.append("absent")

        @requires_api("torch.nn.Linear")
        def test_present(self):
            ran.append("present")
    result = _run(Case)
    assert ran == ["present"]
    assert [reason for _, reason in result.skipped] == [
        f"torch.no_such_api_xyz requires torch >= 9.9 (installed {torch.__version__})"]


def test_requires_api_on_a_class_without_since():
    @requires_api("torch.no_such_api_xyz")
    class Case(unittest.TestCase):
        def test_a(self):
            raise AssertionError("must not run")
    result = _run(Case)
    assert [reason for _, reason in result.skipped] == [
        f"torch.no_such_api_xyz requires a torch that has it (installed {torch.__version__})"]


# --------------------------------------------------------------------------- thread runner
def test_run_in_thread_returns_the_result_from_another_thread():
    import threading
    main = threading.get_ident()
    assert run_in_thread(lambda a, b: (a + b, threading.get_ident() != main), 2, 3) == (5, True)


def test_run_in_thread_reraises_the_threads_exception():
    def boom():
        raise KeyError("in the thread")
    with pytest.raises(KeyError, match="in the thread"):
        run_in_thread(boom)


def test_run_in_thread_times_out():
    import threading
    release = threading.Event()
    try:
        with pytest.raises(TimeoutError, match="still running after 0.2 s"):
            run_in_thread(release.wait, timeout=0.2)
    finally:
        release.set()


# --------------------------------------------------------------------------- strict checks
class _Case(carried_testcase.TestCase):
    def runTest(self):  # pragma: no cover - hosts the assertions only
        pass


@pytest.fixture
def case():
    return _Case()


def _fails(call, *fragments):
    with pytest.raises(AssertionError) as caught:
        call()
    for fragment in fragments:
        assert fragment in str(caught.value), str(caught.value)


def test_assert_tensor_accepts_equal_tensors_of_every_layout(case):
    dense = torch.arange(6.).reshape(2, 3)
    case.assert_tensor(dense, dense.clone(), "dense")
    case.assert_tensor(dense.to_sparse(), dense.clone().to_sparse(), "coo")
    case.assert_tensor(dense.to_sparse_csr(), dense.clone().to_sparse_csr(), "csr")
    case.assert_tensor(dense.t(), dense.t().contiguous(), "a transposed view equals its contiguous copy")


@pytest.mark.parametrize("actual, fragment", [
    (torch.arange(6).reshape(2, 3), "dtype is torch.int64, expected torch.float32"),
    (torch.arange(6.).reshape(3, 2), "shape is torch.Size([3, 2]), expected torch.Size([2, 3])"),
    (torch.arange(6.).reshape(2, 3).to_sparse(), "layout is torch.sparse_coo, expected torch.strided"),
    (torch.arange(6.).reshape(2, 3) + 1e-6, "values differ (atol=0.0, rtol=0.0)"),
    ([0., 1.], "expected a tensor, got list"),
])
def test_assert_tensor_fails_naming_what_differs(case, actual, fragment):
    _fails(lambda: case.assert_tensor(actual, torch.arange(6.).reshape(2, 3), "the output"), "the output: ", fragment)


def test_assert_tensor_tolerances_and_device(case):
    expected = torch.ones(3)
    case.assert_tensor(expected + 1e-4, expected, "within atol", atol=1e-3)
    _fails(lambda: case.assert_tensor(expected, expected, "on cuda", device="cuda"),
           "device type is cpu, expected cuda")


def test_assert_value_is_strict_about_bool_versus_int(case):
    case.assert_value((1, "a"), (1, "a"), "tuple")
    _fails(lambda: case.assert_value(1, True, "mode"), "mode: got 1, expected True")
    _fails(lambda: case.assert_value(False, 0, "mode"), "mode: got False, expected 0")
    _fails(lambda: case.assert_value([1], [2], "list"), "list: got [1], expected [2]")


def test_assert_raises_exactly(case):
    with case.assert_raises_exactly(KeyError, "exact"):
        raise KeyError("k")
    with case.assert_raises_exactly(ValueError, "matching", match="bad v.lue"):
        raise ValueError("a bad value")

    def subclass():
        with case.assert_raises_exactly(LookupError, "a subclass is another error"):
            raise KeyError("k")

    def nothing():
        with case.assert_raises_exactly(KeyError, "nothing raised"):
            pass

    def mismatch():
        with case.assert_raises_exactly(ValueError, "wrong message", match="^other$"):
            raise ValueError("text")
    _fails(subclass, "a subclass is another error: expected LookupError", "got KeyError")
    _fails(nothing, "nothing raised: expected KeyError, nothing was raised")
    _fails(mismatch, "wrong message: expected ValueError matching '^other$', got ValueError: text")


def _block(module):
    import inspect
    source = inspect.getsource(module)
    return source[source.index("# --- carried: begin"):source.index("# --- carried: end")].splitlines()[1:]


def test_the_carried_blocks_stay_small_and_self_contained():
    """Export copies both blocks into Ascend files: at most 150 lines together (an import shared by both
    counted once), standard-library imports only."""
    lines = _block(carried) + _block(carried_testcase)
    imports = [line for line in lines if line.startswith(("import ", "from "))]
    assert len(lines) - (len(imports) - len(set(imports))) <= 150
    assert imports and all(line.split()[1] in ("contextlib", "functools", "importlib", "os", "re", "sys",
                                               "threading", "unittest") for line in imports)


def test_the_gates_import_without_torch(run_python):
    """Tools use parse_version / find_api from the carried gates in envs without torch: importing them must
    not import torch (defining TestCase does, so it lives in carried_testcase)."""
    result = run_python(["-c", "import sys; from torch_npu_testing.runtime import carried; "
                               "print(carried.parse_version('2.12.0'), 'torch' in sys.modules)"])
    assert result.returncode == 0 and result.stdout.strip() == "(2, 12, 0) False", result.stderr
