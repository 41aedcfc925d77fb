# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""The kit's stand-in for torch_npu: put its folder first on ``PYTHONPATH`` and ``import torch_npu`` finds it.

``import torch`` with ``TORCH_DEVICE_BACKEND_AUTOLOAD=1`` calls :func:`_autoload` through the
``torch.backends`` entry point verify lays beside it, as it does for the real torch_npu; ``import torch_npu``
calls it too. It names PrivateUse1 ``npu``, registers ``torch.npu`` and leaves
``torch.distributed.is_hccl_available`` callable (Ascend's ``test/run_test.py`` calls it at import).

What it is depends on ``TORCH_NPU_TESTING_STANDIN_NPU`` (read at the first ``import``; see docs/device.md):

- ``simulated``: the simulated NPU, a real torch device ``npu`` (``npu:0``, ``npu:1``) whose memory is on
  the host and whose kernels are the CPU's (C++ in ``_device/``, compiled once per torch build);
  ``torch.npu`` answers what tests, torch and torch_npu's TestCase ask (:mod:`._simulated`);
- ``none`` or unset: ``torch.npu`` is registered but reports no device;
- ``available``: ``torch.npu`` reports one NPU that has no device behind it (tensors stay on the CPU).

Any other value is an error, in one line. A real torch_npu already loaded in the process is refused.
"""
import os
import sys
import types

__version__ = "0.0.0+standin"

SWITCH = "TORCH_NPU_TESTING_STANDIN_NPU"
MODES = ("none", "available", "simulated")
LABEL = "simulated NPU (host memory, CPU kernels), not an NPU run"


def mode(environ=None):
    """The switch's value (``none`` when unset); ValueError naming the variable when it is unknown."""
    value = (os.environ if environ is None else environ).get(SWITCH, "").strip() or "none"
    if value not in MODES:
        raise ValueError(f"stand-in torch_npu: {SWITCH}={value!r}: expected one of {', '.join(MODES)}")
    return value


def _npu_reported():
    """True when the switch asks for one NPU; read at each call so a process can set it before asking."""
    return mode() == "available"


npu = types.ModuleType("torch_npu.npu")
npu.is_available = _npu_reported
npu.device_count = lambda: 1 if _npu_reported() else 0
npu.set_device = lambda device: None
npu.get_device_name = lambda index=0: "stand-in (reports one NPU)" if _npu_reported() else "stand-in (no NPU)"


def _refuse_a_real_torch_npu(torch, mine):
    present = getattr(torch, "npu", None)
    if present is not None and present is not mine:
        where = getattr(sys.modules.get(getattr(present, "__name__", ""), None), "__file__", None) or repr(present)
        raise RuntimeError(f"simulated NPU: a torch_npu is already loaded in this process ({where}); "
                           "the simulated NPU does not load beside it")
    if present is None and torch._C._get_privateuse1_backend_name() not in ("privateuseone", "npu"):
        raise RuntimeError("simulated NPU: PrivateUse1 is already named "
                           f"{torch._C._get_privateuse1_backend_name()!r} in this process")


def npu_format_cast(tensor, acl_format):
    """The NPU's internal formats do not exist on the host: the tensor itself, as in format ND."""
    return tensor


def _autoload():
    import torch
    import torch.distributed

    global npu
    if mode() == "simulated":
        from . import _simulated
        _refuse_a_real_torch_npu(torch, _simulated.module)
        _simulated.install(torch)
        npu = _simulated.module
        from . import _limits_kernels  # Ascend's documented limits, when $TORCH_NPU_TESTING_LIMITS names a table
        _limits_kernels.install_from_environment()
    elif not hasattr(torch, "npu"):
        torch.utils.rename_privateuse1_backend("npu")    # as the real torch_npu names its device
        torch._register_device_module("npu", npu)
    if not hasattr(torch.distributed, "is_hccl_available"):
        torch.distributed.is_hccl_available = lambda: False


from . import utils  # noqa: E402,F401 - as the real torch_npu, which imports its utils at import

_autoload()
