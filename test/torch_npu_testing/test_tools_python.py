# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""A tool that needs torch, run by an interpreter without it: one line naming the tools' interpreter, exit 2,
nothing written (README: the unit env's interpreter runs the tools). ``python -S`` is this interpreter without
its site-packages, so without torch."""
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("argv", [
    ["locate", "torch.Tensor.ndim"],
    ["docs", "torch.Tensor.ndim", "--ascend", "DEST"],
    ["new", "torch.Tensor.ndim", "--path", "test/x/test_ndim_api.py", "--kit", "KIT"],
    ["mutate", "test/x/test_ndim_api.py"],
    ["pr", "v2.12.0", "--ascend", "DEST"],
])
def test_a_tool_that_needs_torch_names_the_tools_interpreter(tmp_path, argv):
    kit = tmp_path / "kit"
    (kit / "torch_npu_testing" / "common").mkdir(parents=True)
    (kit / "torch_npu_testing" / "common" / "table.json").write_text("{}")
    (kit / "test" / "x").mkdir(parents=True)
    (tmp_path / "test" / "x").mkdir(parents=True)
    (tmp_path / "test" / "x" / "test_ndim_api.py").write_text("import torch\n")
    argv = [str(kit) if word == "KIT" else str(tmp_path) if word == "DEST" else word for word in argv]
    before = sorted(path.relative_to(tmp_path) for path in tmp_path.rglob("*"))
    result = subprocess.run(["/usr/bin/env", "-i", "PATH=/usr/bin:/bin", f"PYTHONPATH={ROOT}", sys.executable, "-S",
                             "-m", "torch_npu_testing", *argv], capture_output=True, text=True, check=False,
                            cwd=tmp_path)
    assert result.returncode == 2 and result.stdout == "", result.stderr
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"torch_npu_testing: error: {argv[0]} needs torch, which "), line
    assert f"`.tox/unit/bin/python -m torch_npu_testing {argv[0]} ...`" in line
    assert sorted(path.relative_to(tmp_path) for path in tmp_path.rglob("*")) == before
