# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""The stand-in torch_npu, part of the kit: :data:`FOLDER` holds an importable ``torch_npu`` package.

Put :data:`FOLDER` first on ``sys.path``/``PYTHONPATH`` and ``import torch_npu`` finds the stand-in, ahead
of a real torch_npu installed in site-packages. ``TORCH_NPU_TESTING_STANDIN_NPU`` says what it is
(``simulated``: the simulated NPU, a real ``npu`` device with host memory and the CPU's kernels; ``none``
or ``available``: ``torch.npu`` with no device): see ``torch_npu/__init__.py`` and docs/device.md.

Bottom floor, like ``runtime/``: it imports nothing of the kit (the package inside is loaded by the test
processes, often without the kit), and the kit's root package calls :func:`activate` at import.
"""
import os
import sys

FOLDER = os.path.dirname(os.path.abspath(__file__))
SWITCH = "TORCH_NPU_TESTING_STANDIN_NPU"
DEVICE_VARIABLE = "TORCH_NPU_TESTING_DEVICE"


def activate(environ=None, path=None):
    """Under ``TORCH_NPU_TESTING_STANDIN_NPU=simulated``, in the kit's own runs: the stand-in goes first on
    ``sys.path`` (so a real torch_npu installed here is shadowed) and the device defaults to ``npu``, so a
    device that cannot be built or loaded fails the run instead of quietly testing the CPU."""
    environ = os.environ if environ is None else environ
    path = sys.path if path is None else path
    if environ.get(SWITCH, "").strip() != "simulated":
        return False
    if FOLDER not in path:
        path.insert(0, FOLDER)
    environ.setdefault(DEVICE_VARIABLE, "npu")
    return True
