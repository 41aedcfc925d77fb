# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""TestCase and run_tests of the resolved device, in the form every exported file carries.

On an NPU the base is torch_npu's ``torch_npu.testing.testcase.TestCase`` (expecttest-based; its
setUpClass needs an NPU), elsewhere PyTorch's ``torch.testing._internal.common_utils.TestCase``. Either
way the class adds the global-state guard and the portable assertions of
the kit's ``portable`` module, so a file behaves alike on an NPU, a CUDA and a CPU host.

``device_type`` here is the kit's (it also honours the kit's own override variable); an exported file
gets ``device_type`` of the carried ``device`` module in its place (see the package docstring).
"""
from ..device import device_type
from ..portable import PortableAssertionsMixin, StateGuardMixin


def device_base_test_case(device):
    """The TestCase class the tests of ``device`` derive from (imported only when asked for)."""
    if device == "npu":
        from torch_npu.testing.testcase import TestCase as base
    else:
        from torch.testing._internal.common_utils import TestCase as base
    return base


def device_run_tests(device):
    """The ``run_tests`` that goes with :func:`device_base_test_case` of ``device``."""
    if device == "npu":
        from torch_npu.testing.testcase import run_tests as runner
    else:
        from torch.testing._internal.common_utils import run_tests as runner
    return runner


class TestCase(StateGuardMixin, PortableAssertionsMixin, device_base_test_case(device_type())):
    """The device's TestCase, failing (by name) any test that leaves global state changed."""


def run_tests():
    """Run the calling file's tests with the runner of the device's TestCase."""
    device_run_tests(device_type())()
