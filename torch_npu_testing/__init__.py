# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""torch_npu_testing: run PyTorch API-consistency tests on an Ascend NPU, a GPU or the CPU.

The public names, all that a test file needs::

    from torch_npu_testing import TestCase, run_tests, device_type, requires_api, torch_version_at_least

(plus ``find_api``, ``run_in_thread``; ``skip_unless_vehicle``, ``vehicle_refusal``, ``api_limit``: limits).
They come from :mod:`torch_npu_testing.runtime`, the subpackage a test file uses at run time; everything
else in the package is tooling.

Import this package *before* ``torch``: it defaults ``TORCH_DEVICE_BACKEND_AUTOLOAD`` to ``0`` so that
a torch_npu installed without CANN cannot break ``import torch``; torch_npu is then imported
explicitly when the device is resolved (see :mod:`torch_npu_testing.runtime.carried`).

Names are loaded lazily so the command-line tools (``python -m torch_npu_testing ...``) that do not
need torch never import it.
"""
import os

os.environ.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")

from .standin import activate as _activate_standin  # noqa: E402 - after the variable above, before torch

_activate_standin()  # TORCH_NPU_TESTING_STANDIN_NPU=simulated: the simulated NPU (docs/device.md)

__all__ = ["TestCase", "run_tests", "device_type", "requires_api", "torch_version_at_least", "find_api",
           "run_in_thread", "skip_unless_vehicle", "vehicle_refusal", "api_limit"]
__version__ = "0.1.0"

_LAZY = {
    "TestCase": "torch_npu_testing.runtime.testcase",
    "run_tests": "torch_npu_testing.runtime.testcase",
    "device_type": "torch_npu_testing.runtime.carried",
    "requires_api": "torch_npu_testing.runtime.carried",
    "torch_version_at_least": "torch_npu_testing.runtime.carried",
    "find_api": "torch_npu_testing.runtime.carried",
    "run_in_thread": "torch_npu_testing.runtime.carried",
    "skip_unless_vehicle": "torch_npu_testing.runtime.carried_limits",
    "vehicle_refusal": "torch_npu_testing.runtime.carried_limits",
    "api_limit": "torch_npu_testing.runtime.carried_limits",
}


def __getattr__(name):
    if name in _LAZY:
        import importlib
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'torch_npu_testing' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + __all__)
