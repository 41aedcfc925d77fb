# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""An OpInfo draft on the simulated NPU: its values class compares the device with the CPU, the device included.

Contract: a drafted file's Values and Gradients classes pass on the simulated NPU with its own kernels (device
gradients in every backward dtype op_db declares for the device, complex32 included); its Values class fails when
the device's kernel of the op (``cat``, which ``torch.vstack`` dispatches) returns values moved by a relative 1e-3
while the CPU's stays right, and when that kernel leaves its (right) result on the CPU or on ``npu:1``; and, for
``hardtanh`` (which ``torch.nn.functional.relu6`` dispatches), when the kernel returns a contiguous result where
the CPU keeps a permuted input's strides, and when it is one ulp off on every other call (what atomic adds do);
and, for ``permute`` (``torch.moveaxis``), when the view comes back as a copy with the view's strides.
Real subprocesses: pytest runs the drafted file on the simulated NPU, the faulty kernel installed by a
``sitecustomize`` through :mod:`torch_npu_testing.standin.kernels`.
"""
import os
import re

from test_task_new_opinfo import REPO_ROOT, draft, here_only, kit, site_dir  # noqa: F401,F811 - fixtures

CACHE = os.environ.get("TORCH_NPU_TESTING_CACHE") or os.path.join(os.path.expanduser("~"), ".cache",
                                                                  "torch_npu_testing")
FAULTY_CAT = '''
import torch
from torch_npu_testing.standin import kernels


def cat(tensors, dim=0):
    result = kernels.on_host("cat", tensors, dim)
    if {fault!r} in ("cpu", "npu:1"):
        return result.to({fault!r})
    return result + (result.abs() + 1) * 1e-3 if result.is_floating_point() else result


HANDLE = kernels.replace("cat", cat)  # kept: the registration lives as long as its library
'''
PERMUTE_COPIED = '''
from torch_npu_testing.standin import kernels

HANDLE = kernels.replace("permute", lambda self, dims: kernels.on_host("permute", self, dims))  # a copy
'''
FAULTY_HARDTANH = '''
import math

import torch
from torch_npu_testing.standin import kernels

CALLS = []


def hardtanh(input, min_val=-1.0, max_val=1.0):
    result = kernels.on_host("hardtanh", input, min_val, max_val)
    if {fault!r} == "contiguous":
        return result.contiguous()
    CALLS.append(1)
    if len(CALLS) % 2 or not result.is_floating_point():
        return result
    return torch.nextafter(result, torch.full_like(result, math.inf))


HANDLE = kernels.replace("hardtanh", hardtanh)
'''


def values_run(run_python, root, rel, site=None, select="TestVstackValues and test_reference_inputs_match_the_cpu"):
    """The Values class's device test (or ``select``), run by pytest on the simulated NPU: (exit status, output)."""
    env = {"TORCH_NPU_TESTING_STANDIN_NPU": "simulated", "TORCH_NPU_TESTING_CACHE": CACHE,
           "PYTHONPATH": os.pathsep.join(filter(None, [site, str(REPO_ROOT)]))}
    proc = run_python(["-m", "pytest", "-q", "-p", "no:cacheprovider", rel, "-k", select], cwd=root, **env)
    return proc.returncode, proc.stdout + proc.stderr


def test_values_catch_moved_values_and_a_result_on_the_cpu(kit, here_only, run_python, tmp_path):  # noqa: F811
    rel = "test/ops/test_vstack_api.py"
    draft(kit, "torch.vstack", rel)
    status, output = values_run(run_python, kit, rel, select="TestVstackValues or TestVstackGradients")
    assert status == 0 and "6 passed" in output and "failed" not in output, output[-3000:]
    for fault, message in (("shift", "Tensor-likes are not close"), ("cpu", "the device call's result is on cpu,"),
                           ("npu:1", "the device call's result is on npu:1, not on npu:0")):
        site = site_dir(tmp_path, fault.replace(":", ""), FAULTY_CAT.replace("{fault!r}", repr(fault)))
        status, output = values_run(run_python, kit, rel, site)
        assert status == 1 and re.search(r"\b\d+ failed", output) and message in output, (fault, output[-3000:])


def drafted_and_passing(root, run_python, api, rel, select, passed):
    """Draft ``api`` at ``rel`` in ``root``; ``select`` passes (``passed`` tests) on the simulated NPU as it is."""
    draft(root, api, rel)
    status, output = values_run(run_python, root, rel, select=select)
    assert status == 0 and f"{passed} passed" in output and "failed" not in output, output[-3000:]


def test_values_catch_a_lost_layout_and_a_repeat_that_differs(kit, here_only, run_python, tmp_path):  # noqa: F811
    rel, select = "test/ops/test_relu6_api.py", "TestRelu6Values"
    drafted_and_passing(kit, run_python, "torch.nn.functional.relu6", rel, select, 2)
    for fault, test, message in (
            ("contiguous", "test_reference_inputs_match_the_cpu", "strides (dims of size 1 aside) are not the CPU's"),
            ("repeat", "test_repeated_device_calls_agree_bit_for_bit", "a second call on npu gave other results")):
        site = site_dir(tmp_path, fault, FAULTY_HARDTANH.replace("{fault!r}", repr(fault)))
        status, output = values_run(run_python, kit, rel, site, select=select)
        failed = [line for line in output.splitlines() if re.match(r"(SUB)?FAILED", line)]
        assert status == 1 and message in output and failed, (fault, output[-3000:])
        assert all(f"TestRelu6Values::{test}" in line for line in failed), (fault, output[-3000:])


def test_values_catch_a_view_returned_as_a_copy(kit, here_only, run_python, tmp_path):  # noqa: F811
    rel, select = "test/ops/test_moveaxis_api.py", "TestMoveaxisValues and test_reference_inputs_match_the_cpu"
    drafted_and_passing(kit, run_python, "torch.moveaxis", rel, select, 1)
    status, output = values_run(run_python, kit, rel, site_dir(tmp_path, "copied", PERMUTE_COPIED), select=select)
    assert status == 1 and "outputs that are views of an input: [False] on npu, [True] on the CPU" in output, \
        output[-3000:]
