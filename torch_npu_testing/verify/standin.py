# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""``--stand-in-npu``: a stand-in torch_npu ahead of site-packages, so a CPU box can run DEST's files whole.

The folder put first on ``PYTHONPATH`` holds the kit's stand-in package (the unit tests'
``test/torch_npu_testing/fixtures/standin_torch_npu``: ``torch.npu`` registered, no device by default),
DEST's own ``torch_npu/testing/testcase.py`` (and the ``common_utils.py`` beside it, which it imports) in
place of the stand-in's, and a ``torch.backends`` entry point so that ``import torch`` with
``TORCH_DEVICE_BACKEND_AUTOLOAD=1`` (run_test.py sets it) loads it as it loads the real torch_npu. Their
module-level NPU set-up then imports and the tests run on the CPU inside the real file: a stand-in run,
never an NPU run, and every record and description says so (:data:`LABEL`).

``--stand-in-npu=available`` sets ``TORCH_NPU_TESTING_STANDIN_NPU=available``: the stand-in reports one NPU,
so code that picks torch_npu's TestCase and runner on an NPU host takes that path.
"""
import os
import shutil

from ..common.errors import UsageError

LABEL = "stand-in torch_npu, not an NPU run"
SWITCH = "TORCH_NPU_TESTING_STANDIN_NPU"
MODES = ("none", "available")
FIXTURE = os.path.join("test", "torch_npu_testing", "fixtures", "standin_torch_npu")
KIT_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the kit's checkout
DEST_FILES = ("torch_npu/testing/testcase.py", "torch_npu/testing/common_utils.py")
DIST_INFO = "torch_npu-0.0.0+standin.dist-info"


def fixture_dir(kit_root=KIT_ROOT):
    """The stand-in package's folder in the checkout this kit runs from; UsageError when it lacks it (an
    installed kit without its tests)."""
    folder = os.path.join(kit_root, FIXTURE)
    if not os.path.isfile(os.path.join(folder, "torch_npu", "__init__.py")):
        raise UsageError(f"--stand-in-npu: {kit_root} lacks {FIXTURE}/torch_npu (run the kit from its checkout)")
    return folder


def build(dest, folder, kit_root=KIT_ROOT):
    """Lay the stand-in out in ``folder`` (empty); return ``{"path", "files": {what: from where}}``."""
    source = fixture_dir(kit_root)
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
    """The variables a child needs to see the stand-in first (``mode``: none / available)."""
    if mode not in MODES:
        raise UsageError(f"--stand-in-npu={mode}: expected one of {', '.join(MODES)}")
    paths = [folder] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    return {"PYTHONPATH": os.pathsep.join(paths), SWITCH: mode}
