# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""What only a branch env's own interpreter can show: each tox branch env runs these with its torch (and
torch_npu), after the API suite.

- device resolution on this build: a PyPI CUDA build on a GPU-less box reports ``cuda`` from
  ``current_accelerator()`` yet must resolve ``cpu``; torch_npu installed without CANN must not break
  ``import torch`` and must resolve ``cpu``; in both cases stderr says why in exactly one line;
- ``IN_CI=1`` JUnit XML lands in ``$TORCH_NPU_TESTING_XML_DIR`` and the requested initial grad mode applies
  (torch 2.7.1's common_utils parses its flags at import, newer ones in ``run_tests``);
- the API-call recorder classifies ``_add_batch_dim`` as this torch defines it (a C builtin on 2.7.1,
  Python from 2.9) and reports the aot APIs absent where this torch lacks them.

A check that does not apply to this env (no CUDA build, no torch_npu, an Ascend toolkit configured)
skips with the reason.
"""
import importlib.util
import io
import json
import os
import re
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET

import pytest

import torch

from torch_npu_testing.suite import run as suite
from torch_npu_testing.suite.api_calls import ApiCallRecorder
from torch_npu_testing.runtime.carried import torch_version_at_least

CUDA_WITHOUT_GPU = "torch is built for cuda but no such device is available"
TORCH_NPU_FAILED = "torch_npu failed to import (ImportError: "

DEVICE_SCRIPT = textwrap.dedent("""
    import importlib.util, json, os
    from torch_npu_testing import device_type
    first, second = device_type(), device_type()
    import torch
    print(json.dumps({"device": [first, second], "cuda_build": torch.version.cuda,
                      "cuda_available": torch.cuda.is_available(),
                      "current_accelerator": str(torch.accelerator.current_accelerator())
                                             if hasattr(torch, "accelerator") else None,
                      "autoload": os.environ.get("TORCH_DEVICE_BACKEND_AUTOLOAD")}))
""")


def _kit_lines(stderr):
    """stderr without torch's own glog-style warnings (``W1130 12:00:00.0 pid file.py:N] ...``, printed by
    CUDA builds importing torch.testing without a CUDA runtime) and blank lines."""
    return [line for line in stderr.splitlines() if line.strip() and not re.match(r"^[WIE]\d{4} ", line)]


def _run(args, cwd=None, **env):
    environ = {key: value for key, value in os.environ.items()
               if not key.startswith("TORCH_NPU_TESTING_") and key not in ("TORCH_DEVICE_BACKEND_AUTOLOAD", "IN_CI")}
    environ.update({key: str(value) for key, value in env.items()})
    return subprocess.run([sys.executable, *map(str, args)], cwd=cwd, env=environ, capture_output=True, text=True,
                          timeout=300, check=False)


def _torch_npu_installed():
    """A torch_npu in this env (the kit's stand-in, first on sys.path under TORCH_NPU_TESTING_STANDIN_NPU=simulated,
    does not count: these checks' children run without the switch, so without it)."""
    from importlib.machinery import PathFinder
    from torch_npu_testing import standin
    return PathFinder.find_spec("torch_npu", [path for path in sys.path if path != standin.FOLDER]) is not None


_DEVICE_RUN = []


def device_run():
    """The device script, run once in a fresh interpreter of this env (both device checks read it)."""
    if not _DEVICE_RUN:
        _DEVICE_RUN.append(_run(["-c", DEVICE_SCRIPT]))
    return _DEVICE_RUN[0]


@pytest.fixture
def no_ascend_toolkit():
    if os.environ.get("ASCEND_TOOLKIT_HOME") or os.environ.get("ASCEND_HOME_PATH"):
        pytest.skip("an Ascend toolkit is configured here: these checks cover hosts without CANN")


def test_cuda_build_without_gpu_resolves_cpu_with_one_line(no_ascend_toolkit):
    """The trap (current_accelerator() says cuda) is present in this build and avoided."""
    if torch.version.cuda is None:
        pytest.skip(f"torch {torch.__version__} here is not a CUDA build")
    if torch.cuda.is_available():
        pytest.skip("a GPU is usable here: this check covers a CUDA build on a machine without one")
    result = device_run()
    assert result.returncode == 0, result.stderr
    info = json.loads(result.stdout)
    assert info["current_accelerator"] in ("cuda", None)
    assert info["device"] == ["cpu", "cpu"] and info["autoload"] == "0"
    lines = _kit_lines(result.stderr)
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("testing on cpu: ") and lines[0].endswith(CUDA_WITHOUT_GPU)
    assert (TORCH_NPU_FAILED in lines[0]) == _torch_npu_installed()


def test_torch_npu_without_cann_resolves_cpu_with_one_line(no_ascend_toolkit):
    """torch_npu installed, no CANN: importing the kit first keeps `import torch` working (autoload off),
    the device is cpu and the one stderr line quotes torch_npu's ImportError."""
    if not _torch_npu_installed():
        pytest.skip("torch_npu is not installed in this env")
    result = device_run()
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["device"] == ["cpu", "cpu"]
    lines = _kit_lines(result.stderr)
    assert len(lines) == 1 and TORCH_NPU_FAILED in lines[0], result.stderr


TINY_FILE = textwrap.dedent('''
    import os
    from torch_npu_testing import TestCase, run_tests
    import torch


    class Tiny(TestCase):
        def test_grad_mode_is_the_requested_one(self):
            self.assertIs(torch.is_grad_enabled(), os.environ["EXPECT_GRAD"] == "1", "grad mode at the first test")

        def test_skipped(self):
            self.skipTest("reason for the report")


    if __name__ == "__main__":
        run_tests()
''')


def test_in_ci_junit_xml_and_initial_grad_mode(tmp_path):
    """IN_CI=1: one XML file under $TORCH_NPU_TESTING_XML_DIR (none in ./test-reports) holding the skip
    reason; the first test sees the initial grad mode that was asked for (disabled: not the default)."""
    mode = "0"
    if importlib.util.find_spec("xmlrunner") is None:
        pytest.skip("unittest-xml-reporting is not installed in this env")
    (tmp_path / "test_tiny.py").write_text(TINY_FILE)
    xml_root = tmp_path / "xml"
    result = _run(["test_tiny.py", "-v"], cwd=tmp_path, IN_CI="1", TORCH_NPU_TESTING_XML_DIR=xml_root,
                  TORCH_NPU_TESTING_INITIAL_GRAD_MODE=mode, EXPECT_GRAD=mode, TORCH_NPU_TESTING_DEVICE="cpu")
    assert result.returncode == 0, result.stdout + result.stderr
    reports = sorted(xml_root.rglob("*.xml"))
    assert len(reports) == 1, reports
    assert not (tmp_path / "test-reports").exists()
    cases = {case.get("name"): case for case in ET.parse(reports[0]).getroot().iter("testcase")}
    assert sorted(cases) == ["test_grad_mode_is_the_requested_one", "test_skipped"]
    assert cases["test_skipped"].find("skipped").get("message") == "reason for the report"
    assert cases["test_grad_mode_is_the_requested_one"].find("failure") is None


ADD_BATCH_DIM_FILE = textwrap.dedent('''
    import unittest

    import torch
    from torch._functorch.vmap import _add_batch_dim


    class AddBatchDim(unittest.TestCase):
        def test_direct(self):
            level = torch._C._functorch._vmap_increment_nesting(2, "error")
            try:
                _add_batch_dim(torch.ones(2, 3), 0, level)
            finally:
                torch._C._functorch._vmap_decrement_nesting()

        def test_through_vmap(self):
            torch.vmap(torch.sin)(torch.ones(2, 3))
''')


def test_api_call_recorder_sees_this_torchs_definitions(tmp_path):
    """_add_batch_dim: a direct call counts, vmap's call on the test's behalf does not; its kind is this
    torch's (C builtin before 2.9, Python after); the aot APIs are absent before 2.9, expected so."""
    path = tmp_path / "test_abd.py"
    path.write_text(ADD_BATCH_DIM_FILE)
    recorder = ApiCallRecorder()
    suite.run_file(str(path), True, io.StringIO(), recorder)
    recorder.finish()
    apis = recorder.details()["apis"]
    add_batch_dim = apis["torch._functorch.vmap._add_batch_dim"]
    assert add_batch_dim["kind"] == ("python function" if torch_version_at_least("2.9") else "C builtin")
    assert add_batch_dim["tests"]["AddBatchDim.test_direct"]["direct"] == 1
    assert add_batch_dim["tests"]["AddBatchDim.test_through_vmap"]["direct"] == 0
    assert add_batch_dim["tests"]["AddBatchDim.test_through_vmap"]["indirect"] >= 1
    for name in ("torch._functorch.aot_autograd.aot_export_joint_with_descriptors",
                 "torch._functorch.aot_autograd.aot_compile_joint_with_descriptors"):
        if torch_version_at_least("2.9"):
            assert apis[name]["status"] != "absent", apis[name]
        else:
            assert (apis[name]["status"], apis[name]["expected_absent"]) == ("absent", True)
