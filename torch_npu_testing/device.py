# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Which device the tests run on: resolved once, in one place.

Order (first match wins):

1. ``TORCH_NPU_TESTING_DEVICE=cpu|cuda|npu`` forces a device, else ``API_CONSISTENCY_DEVICE`` (the
   variable an exported file reads, so one setting works for both); forcing one that is not there
   raises :class:`DeviceUnavailableError` instead of silently testing something else.
2. torch_npu importable *and* ``torch.npu.is_available()`` -> ``npu``.
3. ``torch.accelerator.is_available()`` -> that accelerator's type (``cuda``, ``xpu``, ...).
4. ``cpu``.

The decision itself is :func:`torch_npu_testing.carried.device.resolve_device`, the code every exported
file carries; this module adds the kit's own override variable, the cache and the ``torch_npu_testing:``
prefix of the one stderr line that says why an accelerator that looked present was not used.
"""
import importlib
import sys

from .carried import device as carried
from .carried.device import DEVICE_VARIABLE, DeviceChoice, DeviceUnavailableError, import_torch_npu  # noqa: F401

DEVICE_ENV = "TORCH_NPU_TESTING_DEVICE"
# Override variables, first set wins: the kit's own, then the one exported files read.
DEVICE_VARIABLES = (DEVICE_ENV, DEVICE_VARIABLE)


def resolve_device(environ=None, torch_module=None, importer=importlib.import_module):
    """Decide the test device (see the module docstring). Pure function; no caching."""
    return carried.resolve_device(environ, torch_module, importer, variables=DEVICE_VARIABLES)


_CHOICE = None


def device_choice():
    """The resolved :class:`DeviceChoice` for this process (resolved on first use, then cached).

    When the CPU is chosen although an accelerator looked present, one line on stderr says why.
    """
    global _CHOICE
    if _CHOICE is None:
        choice = resolve_device()
        if choice.notes:
            print(f"torch_npu_testing: testing on {choice.type}: " + "; ".join(choice.notes), file=sys.stderr)
        _CHOICE = choice
    return _CHOICE


def device_type():
    """``"npu"``, ``"cuda"`` (or another accelerator type) or ``"cpu"``: where the tests run."""
    return device_choice().type


def device_count(device):
    """Number of devices of that type (1 for cpu); 0 when the count cannot be read."""
    if device == "cpu":
        return 1
    import torch
    module = getattr(torch, device, None)
    try:
        return int(module.device_count()) if module is not None else 0
    except Exception:
        return 0
