# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Unit tests of torch_npu_testing.runtime.testcase: the TestCase / run_tests a test file imports.

Contract: TORCH_NPU_TESTING_INITIAL_GRAD_MODE=0|1 sets the grad mode before any test runs (a bad value
is an error naming the variable); with torch_npu's runner on an NPU host (simulated by a stub torch_npu
whose NPU is available) IN_CI=1 hands it the XML directory. Tiny test files run in real subprocesses.
PyTorch's runner writing JUnit XML on each torch (2.7.1 parses its flags when imported, newer ones in
run_tests) is checked by test/in_env in each branch env.
"""
import json

import pytest

from torch_npu_testing.runtime import testcase
from torch_npu_testing.runtime.testcase import (INITIAL_GRAD_MODE_ENV, XML_DIR_ENV, apply_initial_grad_mode,
                                                initial_grad_mode_from_env, xml_dir)

import torch


@pytest.mark.parametrize("value, expected", [
    ("1", True), ("true", True), ("ON", True), (" enabled ", True),
    ("0", False), ("false", False), ("Off", False), ("disabled", False),
    ("", None), ("   ", None),
])
def test_initial_grad_mode_values(value, expected):
    """The accepted spellings of enabled / disabled; empty means 'leave the process's mode alone'."""
    assert initial_grad_mode_from_env({INITIAL_GRAD_MODE_ENV: value}) is expected


def test_initial_grad_mode_unset_is_none():
    """No variable: None (nothing is changed)."""
    assert initial_grad_mode_from_env({}) is None


@pytest.mark.parametrize("value", ["2", "yes", "maybe", "-1"])
def test_initial_grad_mode_bad_value_is_an_error_naming_the_variable(value):
    """Anything else is a ValueError that says which variable and what to use."""
    with pytest.raises(ValueError) as info:
        initial_grad_mode_from_env({INITIAL_GRAD_MODE_ENV: value})
    assert str(info.value) == f"{INITIAL_GRAD_MODE_ENV}={value!r}: use 1 (enabled) or 0 (disabled)"


@pytest.fixture
def restore_grad_mode():
    before = torch.is_grad_enabled()
    yield
    torch.set_grad_enabled(before)


@pytest.mark.parametrize("value, start, expected", [("0", True, False), ("1", False, True), ("", False, False),
                                                    ("", True, True)])
def test_apply_initial_grad_mode_sets_the_mode(restore_grad_mode, value, start, expected):
    """apply_initial_grad_mode() sets the main thread's grad mode from the variable (unset: unchanged)."""
    torch.set_grad_enabled(start)
    returned = apply_initial_grad_mode({INITIAL_GRAD_MODE_ENV: value})
    assert torch.is_grad_enabled() is expected
    assert returned is (None if value == "" else expected)


def test_xml_dir_default_and_override():
    """JUnit XML goes to $TORCH_NPU_TESTING_XML_DIR, else test-reports (also when set but empty)."""
    assert xml_dir({}) == "test-reports"
    assert xml_dir({XML_DIR_ENV: ""}) == "test-reports"
    assert xml_dir({XML_DIR_ENV: "/tmp/reports/v2_7"}) == "/tmp/reports/v2_7"


# --------------------------------------------------------------------------- real runs of a tiny file
TINY_FILE = '''
import os
from torch_npu_testing import TestCase, run_tests, device_type
import torch

DEVICE = device_type()


class Tiny(TestCase):
    def test_grad_mode_is_the_requested_one(self):
        print("GRAD_AT_TEST", torch.is_grad_enabled(), "DEVICE", DEVICE,
              "NPU_BASE", getattr(self, "stub_npu_base", False))
        self.assertEqual(torch.is_grad_enabled(), os.environ["EXPECT_GRAD"] == "1")

    def test_skipped(self):
        self.skipTest("reason for the report")


if __name__ == "__main__":
    run_tests()
'''


@pytest.fixture
def tiny_file(tmp_path):
    path = tmp_path / "work" / "test_tiny.py"
    path.parent.mkdir()
    path.write_text(TINY_FILE)
    return path


def test_bad_initial_grad_mode_stops_run_tests_before_any_test(monkeypatch, restore_grad_mode):
    """run_tests() with a bad TORCH_NPU_TESTING_INITIAL_GRAD_MODE raises naming the variable; the base
    runner is never reached and the grad mode is untouched."""
    started = []
    monkeypatch.setattr(testcase.carried_testcase, "run_tests", lambda: started.append(True))
    monkeypatch.setenv(INITIAL_GRAD_MODE_ENV, "maybe")
    torch.set_grad_enabled(False)
    with pytest.raises(ValueError, match=f"^{INITIAL_GRAD_MODE_ENV}='maybe': use 1 \\(enabled\\) or 0"):
        testcase.run_tests()
    assert started == [] and torch.is_grad_enabled() is False
    monkeypatch.setenv(INITIAL_GRAD_MODE_ENV, "1")
    testcase.run_tests()  # the same call with a good value reaches the runner, grad mode set first
    assert started == [True] and torch.is_grad_enabled() is True


def test_npu_host_uses_torch_npu_runner_with_report_dir(run_python, stub_torch_npu, tiny_file, tmp_path):
    """With torch_npu and an available NPU (a stub here), TestCase derives from torch_npu's TestCase, the
    device is npu, and IN_CI=1 hands torch_npu's runner the XML directory without adding --save-xml to
    argv (its unittest.main would reject it)."""
    record = tmp_path / "record.json"
    xml_root = tmp_path / "xml"
    result = run_python([tiny_file, "-v"], cwd=tiny_file.parent, PYTHONPATH=stub_torch_npu("working"),
                        STUB_NPU_AVAILABLE="1", STUB_RECORD=record, IN_CI="1", TORCH_NPU_TESTING_XML_DIR=xml_root,
                        TORCH_NPU_TESTING_INITIAL_GRAD_MODE="0", EXPECT_GRAD="0")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "GRAD_AT_TEST False DEVICE npu NPU_BASE True" in result.stdout
    assert json.loads(record.read_text()) == {"argv": ["-v"], "report_path": str(xml_root)}
    assert "Ran 2 tests" in result.stderr
