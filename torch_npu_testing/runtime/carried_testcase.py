# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""The second half of the carried helper: the device's TestCase with strict checks, and run_tests.

Export copies the block between the markers right after :mod:`.carried`'s (the relative import above it
is the carried block itself). Apart from :mod:`.carried` because defining ``TestCase`` imports torch and
the device's test base: the tools import :mod:`.carried` without torch.

``TestCase`` is torch_npu's on an NPU and PyTorch's elsewhere, plus checks as strict on an NPU as on the
CPU: torch_npu's ``assertEqual(x, y, prec, message)`` ignores dtype, allows 1e-5 and takes no ``msg=``, so
tensors and plain values are compared here instead.

In a file export merges into an Ascend file, the base follows the file's runner instead of the device:
export sets ``RUNNER_MODULE`` to the module whose ``run_tests`` the file's main guard calls. PyTorch's
``common_utils.run_tests`` refuses (exit 1) a module holding a TestCase class that is not its own, and
torch_npu's TestCase is expecttest's; so a file ending in PyTorch's runner gets PyTorch's base on an NPU
too, and one ending in torch_npu's gets torch_npu's. ``None`` (the kit's own runs, a file export creates):
the device's pair. The strict checks are defined here, on top of either base, so they are the same.
"""
from .carried import device_type

# --- carried: begin
import contextlib
import importlib
import re
import sys


RUNNER_MODULE = None  # export: the module of the run_tests a merged file's main guard calls (its class check)


def _device_runtime(name):
    by_device = "torch_npu.testing.testcase" if device_type() == "npu" else "torch.testing._internal.common_utils"
    return getattr(importlib.import_module(RUNNER_MODULE or by_device), name)


class TestCase(_device_runtime("TestCase")):
    """The device's TestCase plus checks that name what they check and ignore no dtype or tolerance."""

    def assert_tensor(self, actual, expected, what, *, atol=0.0, rtol=0.0, device=None):
        """Same dtype, shape, layout, device type (``device`` or expected's); values within atol/rtol."""
        if not isinstance(actual, type(expected)):
            self.fail(f"{what}: expected a tensor, got {type(actual).__name__}")
        for name, got, want in (("dtype", actual.dtype, expected.dtype), ("shape", actual.shape, expected.shape),
                                ("layout", actual.layout, expected.layout),
                                ("device type", actual.device.type, device or expected.device.type)):
            if got != want:
                self.fail(f"{what}: {name} is {got}, expected {want}")
        try:
            sys.modules["torch"].testing.assert_close(actual.detach().cpu(), expected.detach().cpu(), atol=atol,
                                                      rtol=rtol, equal_nan=True, check_device=False)
        except (AssertionError, RuntimeError) as exc:  # RuntimeError: unequal float8 on 2.7.1
            self.fail(f"{what}: values differ (atol={atol}, rtol={rtol}): {exc}")

    def assert_value(self, actual, expected, what):
        if actual != expected or isinstance(actual, bool) != isinstance(expected, bool):
            self.fail(f"{what}: got {actual!r}, expected {expected!r}")

    @contextlib.contextmanager
    def assert_raises_exactly(self, exc_type, what, match=None):
        """The block raises ``exc_type`` itself (a subclass is another error), message matching ``match``."""
        try:
            yield
        except Exception as exc:
            if type(exc) is not exc_type or (match is not None and not re.search(match, str(exc))):
                self.fail(f"{what}: expected {exc_type.__name__} matching {match!r}, got {type(exc).__name__}: {exc}")
        else:
            self.fail(f"{what}: expected {exc_type.__name__}, nothing was raised")


def run_tests():
    _device_runtime("run_tests")()
# --- carried: end
