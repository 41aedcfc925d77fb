# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""``--stand-in-npu``: the kit's stand-in torch_npu ahead of site-packages, so a CPU box can run DEST's files.

The folder put first on ``PYTHONPATH`` holds the kit's stand-in package (``torch_npu_testing/standin``),
DEST's own ``torch_npu/testing/testcase.py`` (and the ``common_utils.py`` beside it, which it imports) in
place of the stand-in's, and a ``torch.backends`` entry point so that ``import torch`` with
``TORCH_DEVICE_BACKEND_AUTOLOAD=1`` (run_test.py sets it) loads it as it loads the real torch_npu.

Modes (``TORCH_NPU_TESTING_STANDIN_NPU`` in the children):

- ``simulated``: the simulated NPU, a real ``npu`` device (host memory, CPU kernels): DEST's files run on
  ``npu``. Every record and description says :data:`SIMULATED_LABEL`. The device is built (or found in
  the cache) for each env's torch before anything runs; where it cannot be built that is a UsageError.
- ``none`` (the bare flag): ``torch.npu`` registered, no device: the files run on the CPU;
- ``available``: ``torch.npu`` reports one NPU with no device behind it (an NPU host's code paths up to the
  first tensor on ``npu``).
"""
import os
import shutil
import subprocess

from .. import standin as standin_package
from ..common.errors import UsageError

LABEL = "stand-in torch_npu, not an NPU run"
SIMULATED_LABEL = "simulated NPU (host memory, CPU kernels), not an NPU run"
SWITCH = standin_package.SWITCH
MODES = ("none", "available", "simulated")
DEST_FILES = ("torch_npu/testing/testcase.py", "torch_npu/testing/common_utils.py")
DIST_INFO = "torch_npu-0.0.0+standin.dist-info"
KIT_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the kit's checkout


def label(mode):
    """What a record, log and PR line says of a run in ``mode``."""
    return SIMULATED_LABEL if mode == "simulated" else LABEL


def package_dir(folder=standin_package.FOLDER):
    """The folder holding the stand-in ``torch_npu`` package; UsageError when it lacks it."""
    if not os.path.isfile(os.path.join(folder, "torch_npu", "__init__.py")):
        raise UsageError(f"--stand-in-npu: {folder} lacks torch_npu/__init__.py (a broken kit install)")
    return folder


def build(dest, folder, source=standin_package.FOLDER):
    """Lay the stand-in out in ``folder`` (empty); return ``{"path", "files": {what: from where}}``."""
    source = package_dir(source)
    shutil.copytree(os.path.join(source, "torch_npu"), os.path.join(folder, "torch_npu"),
                    ignore=shutil.ignore_patterns("__pycache__"))
    origins = {"torch_npu": os.path.join(source, "torch_npu")}
    for rel in DEST_FILES:
        mine = os.path.join(dest, rel)
        if os.path.isfile(mine):
            shutil.copyfile(mine, os.path.join(folder, rel))
            origins[rel] = mine
    info = os.path.join(folder, DIST_INFO)
    os.makedirs(info)
    with open(os.path.join(info, "METADATA"), "w", encoding="utf-8") as handle:
        handle.write("Metadata-Version: 2.1\nName: torch-npu\nVersion: 0.0.0+standin\n")
    with open(os.path.join(info, "entry_points.txt"), "w", encoding="utf-8") as handle:
        handle.write("[torch.backends]\ntorch_npu = torch_npu:_autoload\n")
    return {"path": folder, "files": origins}


def environment(folder, mode):
    """The variables a child needs to see the stand-in first (``mode``: none / available / simulated)."""
    if mode not in MODES:
        raise UsageError(f"--stand-in-npu={mode}: expected one of {', '.join(MODES)}")
    paths = [folder] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    return {"PYTHONPATH": os.pathsep.join(paths), SWITCH: mode}


def prepare_device(python, folder, timeout=900):
    """Build (or find in the cache) the simulated NPU for ``python``'s torch before any test runs;
    UsageError with the builder's one line (the torch and the compiler's first error) when it cannot."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([folder] + [p for p in os.environ.get(
        "PYTHONPATH", "").split(os.pathsep) if p]), TORCH_DEVICE_BACKEND_AUTOLOAD="0")
    env.pop(SWITCH, None)
    result = subprocess.run([python, "-m", "torch_npu._device"], env=env, capture_output=True, text=True,
                            timeout=timeout, check=False)
    if result.returncode != 0:
        lines = [line for line in (result.stderr or result.stdout).splitlines() if line.strip()]
        last = lines[-1] if lines else f"exit {result.returncode}"
        raise UsageError(f"--stand-in-npu=simulated: {python}: {last}")
    return result.stdout.strip()
