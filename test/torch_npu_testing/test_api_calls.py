# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Unit tests of :mod:`torch_npu_testing.suite.api_calls`: the manifest and the run-time API call recorder.

The recorder is exercised on a tiny real test file that calls real target APIs (``set_grad_enabled``'s
``clone``, ``torch._functorch.config.patch``, ``_add_batch_dim``), run by the suite's own ``run_file``
in this process, so the ids, the direct / indirect split and the threads are checked on real calls.
One subprocess runs the full ``suite --api-calls`` command. How the recorder sees a torch whose
``_add_batch_dim`` is a C builtin and which lacks the aot APIs (2.7.1) is checked by test/in_env in that
torch's own env.
"""
import io
import json
import sys

import pytest

from torch_npu_testing.suite import api_calls, run as suite
from torch_npu_testing.common.table import load_apis, task_problem
from torch_npu_testing.suite.api_calls import ApiCallRecorder, resolve

TARGET_NAMES = [
    "torch._functorch.config.patch",
    "torch._functorch.vmap._add_batch_dim",
    "torch._functorch.aot_autograd.aot_export_joint_with_descriptors",
    "torch._functorch.aot_autograd.aot_compile_joint_with_descriptors",
    "torch.autograd.grad_mode.set_grad_enabled.clone",
]

# A real test file. Line numbers matter: tests below check the recorded call sites.
CALLER_FILE = '''\
import threading
import unittest

import torch
import torch._functorch.config
import torch.fx.experimental._config as fx_config


class Callers(unittest.TestCase):
    def test_clone_directly(self):
        original = torch.autograd.grad_mode.set_grad_enabled(False)
        copy = original.clone()
        torch.set_grad_enabled(True)
        self.assertFalse(copy.mode)

    def test_clone_through_a_decorator(self):
        @torch.set_grad_enabled(False)
        def grad_mode():
            return torch.is_grad_enabled()
        self.assertFalse(grad_mode())

    def test_patch_in_a_thread(self):
        seen = []
        worker = threading.Thread(target=lambda: seen.append(torch._functorch.config.patch(debug_assert=True)),
                                  name="patch-worker")
        worker.start()
        worker.join()
        self.assertEqual(len(seen), 1)

    def test_other_config_modules_patch(self):
        with fx_config.patch(translation_validation=False):
            pass

    def test_builtin(self):
        level = torch._C._functorch._vmap_increment_nesting(2, "error")
        try:
            torch._C._functorch._add_batch_dim(torch.ones(2, 3), 0, level)
        finally:
            torch._C._functorch._vmap_decrement_nesting()

    def test_calls_nothing(self):
        self.assertEqual(1 + 1, 2)
'''

MANIFEST = [
    {"name": "torch.autograd.grad_mode.set_grad_enabled.clone"},
    {"name": "torch._functorch.config.patch"},
    {"name": "torch._C._functorch._add_batch_dim"},
    {"name": "torch.no_such_api_in_any_release", "since": "99.0"},
    {"name": "torch.no_such_api_that_should_exist", "since": "1.0"},
]


def _manifest(entries):
    return [dict({"task": e["name"], "ascend_task_id": None, "since": None, "test_file": None}, **e)
            for e in entries]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """Run CALLER_FILE under a recorder with MANIFEST; ``(finish(), details(), file path)``."""
    path = tmp_path_factory.mktemp("callers") / "callers_file.py"
    path.write_text(CALLER_FILE)
    recorder = ApiCallRecorder(_manifest(MANIFEST))
    entry = suite.run_file(str(path), True, io.StringIO(), recorder)
    assert entry["counts"]["passed"] == 6, entry
    return recorder.finish(), recorder.details(), path


# --------------------------------------------------------------------------- manifest
def test_shipped_manifest_lists_the_five_target_apis_with_honest_task_ids():
    manifest = load_apis()
    assert [api["name"] for api in manifest] == TARGET_NAMES
    for api in manifest:
        assert api["task"] == api["name"]
        assert task_problem(api["ascend_task_id"]) is None and api["ascend_task_id"]["issues"]  # as the seed PRs
        assert api["test_file"].startswith("test/")
    assert {api["name"]: api["since"] for api in manifest if api["since"]} == {
        TARGET_NAMES[2]: "2.9", TARGET_NAMES[3]: "2.9"}


@pytest.mark.parametrize("text, message", [
    ("{not json", "not valid JSON"),
    ('{"format": "other/1", "apis": []}', "format is 'other/1'"),
    ('{"format": "torch_npu_testing.table/1", "apis": [{"task": "x"}]}', "must be a list"),
    ('{"format": "torch_npu_testing.table/1", "apis": [{"name": "a"}, {"name": "a"}]}', "listed twice"),
])
def test_a_bad_manifest_is_an_error_naming_the_file(tmp_path, text, message):
    path = tmp_path / "apis.json"
    path.write_text(text)
    with pytest.raises(ValueError, match=message) as info:
        load_apis(str(path))
    assert str(path) in str(info.value)


def test_resolve_finds_methods_and_reports_missing_names():
    import torch

    obj, missing = resolve("torch.autograd.grad_mode.set_grad_enabled.clone")
    assert missing is None and obj is torch.autograd.grad_mode.set_grad_enabled.clone
    obj, missing = resolve("torch.autograd.grad_mode.no_such_function")
    assert obj is None and missing == "torch.autograd.grad_mode has no attribute 'no_such_function'"
    obj, missing = resolve("no_such_top_level_package_xyz.f")
    assert obj is None and "no_such_top_level_package_xyz" in missing


# --------------------------------------------------------------------------- recorder, real calls
def test_direct_calls_are_attributed_to_the_calling_test_with_the_call_site(recorded):
    calls, details, path = recorded
    clone = details["apis"]["torch.autograd.grad_mode.set_grad_enabled.clone"]
    record = clone["tests"]["Callers.test_clone_directly"]
    assert record["direct"] == 1 and record["indirect"] == 0
    assert record["direct_sites"] == [f"{path}:12"]  # the line `copy = original.clone()`
    assert "Callers.test_clone_directly" in calls["torch.autograd.grad_mode.set_grad_enabled.clone"]


def test_a_call_made_by_torch_on_the_tests_behalf_is_indirect(recorded):
    _, details, path = recorded
    record = details["apis"]["torch.autograd.grad_mode.set_grad_enabled.clone"]["tests"][
        "Callers.test_clone_through_a_decorator"]
    assert record["direct"] == 0 and record["indirect"] == 1
    (site,) = record["indirect_sites"]
    assert site.startswith("torch/utils/_contextlib.py:") and site.endswith(f" from {path}:20")


def test_a_call_in_another_thread_counts_for_the_running_test(recorded):
    calls, details, _ = recorded
    record = details["apis"]["torch._functorch.config.patch"]["tests"]["Callers.test_patch_in_a_thread"]
    assert record["direct"] == 1
    assert record["threads"] == ["patch-worker"]
    assert calls["torch._functorch.config.patch"] == ["Callers.test_patch_in_a_thread"]


def test_patch_of_another_config_module_is_not_functorch_config_patch(recorded):
    calls, _, _ = recorded
    assert "Callers.test_other_config_modules_patch" not in sum(calls.values(), [])


def test_a_c_builtin_target_is_matched_on_c_calls(recorded):
    calls, details, _ = recorded
    info = details["apis"]["torch._C._functorch._add_batch_dim"]
    assert info["kind"] == "C builtin"
    assert calls["torch._C._functorch._add_batch_dim"] == ["Callers.test_builtin"]
    assert info["tests"]["Callers.test_builtin"]["direct"] == 1


def test_a_test_that_calls_nothing_is_listed_nowhere(recorded):
    calls, _, _ = recorded
    assert all("Callers.test_calls_nothing" not in tests for tests in calls.values())


def test_absent_apis_say_whether_this_torch_is_expected_to_have_them(recorded):
    calls, details, _ = recorded
    future = details["apis"]["torch.no_such_api_in_any_release"]
    assert (future["status"], future["expected_absent"]) == ("absent", True)
    should_exist = details["apis"]["torch.no_such_api_that_should_exist"]
    assert (should_exist["status"], should_exist["expected_absent"]) == ("absent", False)
    assert should_exist["reason"] == "torch has no attribute 'no_such_api_that_should_exist'"
    assert calls["torch.no_such_api_in_any_release"] == []


def test_the_hook_is_only_installed_while_a_test_runs():
    import torch

    recorder = ApiCallRecorder(_manifest([{"name": "torch.autograd.grad_mode.set_grad_enabled.clone"}]))
    assert sys.getprofile() is None
    recorder.start_test("T.a")
    assert sys.getprofile() is not None
    torch.set_grad_enabled(True).clone()
    recorder.stop_test("T.a")
    assert sys.getprofile() is None
    torch.set_grad_enabled(True).clone()  # between tests: not recorded, not counted
    assert recorder.finish() == {"torch.autograd.grad_mode.set_grad_enabled.clone": ["T.a"]}


def test_an_active_profiler_is_left_alone_and_the_test_reported_unmeasured():
    import torch

    def other_profiler(frame, event, arg):
        return None

    recorder = ApiCallRecorder(_manifest([{"name": "torch.autograd.grad_mode.set_grad_enabled.clone"}]))
    sys.setprofile(other_profiler)
    try:
        recorder.start_test("T.a")
        torch.set_grad_enabled(True).clone()
        assert sys.getprofile() is other_profiler
        recorder.stop_test("T.a")
        assert sys.getprofile() is other_profiler
    finally:
        sys.setprofile(None)
    assert recorder.finish() == {"torch.autograd.grad_mode.set_grad_enabled.clone": []}
    assert recorder.details()["unmeasured_tests"] == ["T.a"]


def test_an_error_inside_the_hook_is_reported_never_raised_into_the_test():
    import torch

    recorder = ApiCallRecorder(_manifest([{"name": "torch.autograd.grad_mode.set_grad_enabled.clone"}]))

    def broken(frame):
        raise ZeroDivisionError("boom")

    recorder.targets[0].accepts = broken
    recorder.start_test("T.a")
    try:
        clone = torch.set_grad_enabled(True).clone()  # must not raise
    finally:
        recorder.stop_test("T.a")
    assert clone.mode is True
    assert recorder.details()["recorder_errors"] == [
        "torch.autograd.grad_mode.set_grad_enabled.clone: ZeroDivisionError: boom"]


# --------------------------------------------------------------------------- the suite command
SUITE_FILE = '''\
from torch_npu_testing import TestCase, run_tests

import torch


class SetGradEnabledClone(TestCase):
    def test_clone_keeps_mode(self):
        self.assertFalse(torch.set_grad_enabled(False).clone().mode)
        torch.set_grad_enabled(True)


if __name__ == "__main__":
    run_tests()
'''


def test_suite_api_calls_writes_the_mapping_and_the_details(tmp_path, run_python):
    (tmp_path / "test_clone_api.py").write_text(SUITE_FILE)
    results = tmp_path / "out" / "env.json"
    proc = run_python(["-m", "torch_npu_testing", "suite", "--api-calls", "--results", results, "test_clone_api.py"],
                      cwd=tmp_path, TORCH_DEVICE_BACKEND_AUTOLOAD=0, TORCH_NPU_TESTING_DEVICE="cpu")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(results.read_text())
    assert list(data["api_calls"]) == TARGET_NAMES
    assert data["api_calls"]["torch.autograd.grad_mode.set_grad_enabled.clone"] == [
        "SetGradEnabledClone.test_clone_keeps_mode"]
    assert data["api_calls"]["torch._functorch.config.patch"] == []
    details = data["api_call_details"]["apis"]
    assert details["torch.autograd.grad_mode.set_grad_enabled.clone"]["tests"][
        "SetGradEnabledClone.test_clone_keeps_mode"]["direct_sites"] == ["test_clone_api.py:8"]


def test_internal_prefixes_cover_torch():
    import torch  # noqa: F401

    assert any(prefix.endswith("/torch/") for prefix in api_calls._internal_prefixes())
