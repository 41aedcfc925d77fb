# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""The stand-in torch_npu's NPU switch, in real subprocesses.

By default the stand-in reports no NPU; ``TORCH_NPU_TESTING_STANDIN_NPU=available`` makes it report one
(``is_available()`` True, ``device_count()`` 1), so the kit's device resolution takes its NPU path; a value
it does not know is an error, never a silent default.
"""
from conftest import REPO_ROOT

from torch_npu_testing import standin

STANDIN = standin.FOLDER
PROBE = ("import torch_npu, torch\n"
         "from torch_npu_testing.runtime.carried import resolve_device\n"
         "print(torch.npu.is_available(), torch.npu.device_count(), resolve_device()[0])\n")


def _probe(run_python, **env):
    return run_python(["-c", PROBE], PYTHONPATH=f"{STANDIN}:{REPO_ROOT}", **env)


def test_by_default_the_standin_reports_no_npu(run_python):
    result = _probe(run_python)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False", "0", "cpu"]


def test_the_switch_reports_one_npu_and_the_device_resolves_to_it(run_python):
    result = _probe(run_python, TORCH_NPU_TESTING_STANDIN_NPU="available")
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True", "1", "npu"]


def test_an_unknown_switch_value_is_an_error(run_python):
    result = run_python(["-c", "import torch_npu, torch; torch.npu.is_available()"],
                        PYTHONPATH=str(STANDIN), TORCH_NPU_TESTING_STANDIN_NPU="yes")
    assert result.returncode == 1
    assert "TORCH_NPU_TESTING_STANDIN_NPU='yes': expected one of none, available, simulated" in result.stderr
