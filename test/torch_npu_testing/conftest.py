# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Fixtures of the unit tests of torch_npu_testing: clean subprocess environments and stub torch_npu
packages.

Skip reasons are always printed (``-rs``): a skipped test must say why.

The unit tests run alone in the `unit` env: none of them needs another env's interpreter. What only a
branch env's own torch can show (a CUDA build without a GPU, torch_npu without CANN, torch 2.7.1's
builtins) is checked by test/in_env, which every branch env runs with its own interpreter.
"""
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]

# fixture files in Ascend's shapes (they import torch_npu) and a stand-in torch_npu: data for the export
# tests, never collected as tests themselves
collect_ignore = ["fixtures"]

# Variables that this package, torch's test runner or the Ascend runner read: a subprocess started by a
# test gets exactly the ones the test sets, whatever the surrounding shell or tox env exported.
_CONTROLLED = ("TORCH_DEVICE_BACKEND_AUTOLOAD", "IN_CI", "CI", "PYTHONPATH", "TEST_REPORT_PATH",
               "TEST_REPORT_SOURCE_OVERRIDE", "TOX_ENV_NAME", "PYTORCH_SRC", "OMP_NUM_THREADS")


def pytest_configure(config):
    if "s" not in config.option.reportchars and "a" not in config.option.reportchars:
        config.option.reportchars += "s"


@pytest.fixture
def clean_env():
    """``clean_env(**overrides)`` -> os.environ minus the controlled variables, plus the overrides."""
    def make(**overrides):
        env = {key: value for key, value in os.environ.items()
               if key not in _CONTROLLED and not key.startswith("TORCH_NPU_TESTING_")}
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env.update({key: str(value) for key, value in overrides.items()})
        return env
    return make


@pytest.fixture
def run_python(clean_env):
    """``run_python(args, python=sys.executable, cwd=None, **env)`` -> CompletedProcess (text, captured)."""
    def run(args, python=sys.executable, cwd=None, **env):
        return subprocess.run([str(python)] + [str(arg) for arg in args], cwd=cwd, env=clean_env(**env),
                              capture_output=True, text=True, timeout=300, check=False)
    return run


@pytest.fixture
def stub_torch_npu(tmp_path):
    """``stub_torch_npu(kind)`` -> a folder to put on PYTHONPATH holding a fake ``torch_npu`` package.

    kind ``"broken"``: importing it raises the ImportError torch_npu raises without CANN.
    kind ``"working"``: it imports, sets ``torch.npu`` whose ``is_available()`` returns
    ``$STUB_NPU_AVAILABLE == "1"``, and provides ``torch_npu.testing.testcase`` (TestCase, run_tests
    that records its argv and report directory in ``$STUB_RECORD`` before running unittest.main).
    """
    def make(kind):
        root = tmp_path / f"stub_{kind}"
        package = root / "torch_npu"
        package.mkdir(parents=True)
        if kind == "broken":
            (package / "__init__.py").write_text(
                'raise ImportError("libhccl.so: cannot open shared object file")\n')
            return root
        assert kind == "working", kind
        (package / "__init__.py").write_text(
            "import os\nimport types\n\nimport torch\n\n__version__ = '0.0.0+stub'\n"
            "torch.npu = types.SimpleNamespace(\n"
            "    is_available=lambda: os.environ.get('STUB_NPU_AVAILABLE') == '1',\n"
            "    device_count=lambda: 1)\n")
        (package / "testing").mkdir()
        (package / "testing" / "__init__.py").write_text("")
        (package / "testing" / "testcase.py").write_text(
            "import json\nimport os\nimport sys\nimport unittest\n\n"
            "TEST_REPORT_PATH = os.getenv('TEST_REPORT_PATH', 'test-reports')\n\n\n"
            "class TestCase(unittest.TestCase):\n    stub_npu_base = True\n\n\n"
            "def run_tests():\n"
            "    with open(os.environ['STUB_RECORD'], 'w') as handle:\n"
            "        json.dump({'argv': sys.argv[1:], 'report_path': TEST_REPORT_PATH}, handle)\n"
            "    unittest.main(argv=sys.argv)\n")
        return root
    return make


@pytest.fixture
def no_outside_config(monkeypatch):
    """Neither $PYTORCH_SRC nor the patches-dir override of the developer's shell reaches an upstream test."""
    from torch_npu_testing.upstream import patches, source
    monkeypatch.delenv(source.SOURCE_ENV, raising=False)
    monkeypatch.delenv(patches.PATCHES_DIR_ENV, raising=False)
