# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Unit tests of torch_npu_testing.runtime.collector: the kit's runs freeze what is alive when the tests start.

Contract: ``freeze_collector`` calls ``gc.freeze()`` unless TORCH_NPU_TESTING_GC_FREEZE says 0 (a bad value is
an error naming the variable, nothing frozen); a file's ``run_tests()`` and the suite's run of a file both
freeze before the first test, and objects the tests create are still collected. Real subprocesses run a tiny
file each way.
"""
import gc

import pytest

from torch_npu_testing.runtime.collector import GC_FREEZE_ENV, freeze_collector


@pytest.fixture
def unfrozen():
    gc.unfreeze()
    yield
    gc.unfreeze()


@pytest.mark.parametrize("value, froze", [("1", True), ("", True), (" on ", True), ("true", True),
                                          ("0", False), ("off", False), ("FALSE", False)])
def test_freeze_follows_the_variable(unfrozen, value, froze):
    """1/on/true or empty: frozen (the objects alive now leave the collector's generations); 0/off/false: not."""
    gc.collect()
    returned = freeze_collector({GC_FREEZE_ENV: value})
    assert returned is froze
    assert (gc.get_freeze_count() > 0) is froze


def test_unset_variable_freezes(unfrozen):
    assert freeze_collector({}) is True and gc.get_freeze_count() > 0


@pytest.mark.parametrize("value", ["2", "yes", "no"])
def test_bad_value_is_an_error_naming_the_variable_and_freezes_nothing(unfrozen, value):
    with pytest.raises(ValueError) as info:
        freeze_collector({GC_FREEZE_ENV: value})
    assert str(info.value) == (f"{GC_FREEZE_ENV}={value!r}: use 1 (freeze, the default) or 0 (leave the "
                               "collector)")
    assert gc.get_freeze_count() == 0


FROZEN_FILE = '''
import gc
import os
import weakref
from torch_npu_testing import TestCase, run_tests

ALIVE_AT_LOAD = [object() for _ in range(10)]


class Frozen(TestCase):
    def test_frozen_as_asked_and_new_cycles_collected(self):
        print("FROZEN", gc.get_freeze_count() > 0)

        class Node:
            pass
        node = Node()
        node.self = node  # a cycle: only the collector frees it
        gone = weakref.ref(node)
        del node
        gc.collect()
        self.assertIsNone(gone(), "a cycle the test made is collected")


if __name__ == "__main__":
    run_tests()
'''


@pytest.fixture
def frozen_file(tmp_path):
    path = tmp_path / "test_frozen.py"
    path.write_text(FROZEN_FILE)
    return path


@pytest.mark.parametrize("value, froze", [(None, True), ("0", False)])
def test_a_direct_run_freezes_before_its_tests(run_python, frozen_file, value, froze):
    env = {} if value is None else {GC_FREEZE_ENV: value}
    result = run_python([frozen_file], cwd=frozen_file.parent, **env)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"FROZEN {froze}" in result.stdout


@pytest.mark.parametrize("value, froze", [(None, True), ("0", False)])
def test_the_suite_freezes_before_a_files_tests(run_python, frozen_file, tmp_path, value, froze):
    env = {} if value is None else {GC_FREEZE_ENV: value}
    result = run_python(["-m", "torch_npu_testing", "suite", frozen_file, "--no-coverage", "--no-grad-mode-probe",
                         "--results", tmp_path / "results.json"], cwd=tmp_path, **env)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"FROZEN {froze}" in result.stdout
    assert "1 passed, 0 failed" in result.stdout + result.stderr


def test_a_bad_value_stops_the_suite_in_one_line_before_any_file(run_python, frozen_file, tmp_path):
    results = tmp_path / "results.json"
    result = run_python(["-m", "torch_npu_testing", "suite", frozen_file, "--no-coverage", "--results", results],
                        cwd=tmp_path, **{GC_FREEZE_ENV: "2"})
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.strip() == (f"torch_npu_testing: error: {GC_FREEZE_ENV}='2': use 1 (freeze, the default) "
                                     "or 0 (leave the collector)")
    assert "FROZEN" not in result.stdout and not results.exists()


def test_a_bad_value_stops_a_direct_run_before_any_test(run_python, frozen_file):
    result = run_python([frozen_file], cwd=frozen_file.parent, **{GC_FREEZE_ENV: "maybe"})
    assert result.returncode != 0
    assert "FROZEN" not in result.stdout
    assert f"{GC_FREEZE_ENV}='maybe': use 1 (freeze, the default) or 0" in result.stderr
