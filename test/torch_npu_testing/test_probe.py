# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Unit tests of torch_npu_testing.suite.probe: the measured description of the test environment.

Contract: cann_version() reads the first CANN version record under $ASCEND_TOOLKIT_HOME,
$ASCEND_HOME_PATH, ... then the default roots (version.cfg before ascend_toolkit_install.info), and
returns (None, None) when there is none; probe() returns JSON-serialisable facts with fixed keys;
`python -m torch_npu_testing probe --json` prints valid JSON only.
"""
import argparse
import json
import os
import platform
import sys

import pytest

from torch_npu_testing.suite import probe as probe_module
from torch_npu_testing.runtime.carried import DEVICE_VARIABLES, resolve_device
from torch_npu_testing.suite.probe import cann_version, format_probe, probe

import torch


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return str(path)


# --------------------------------------------------------------------------- cann_version
def test_version_cfg_bracketed_value(tmp_path):
    """version.cfg 'version=[8.0.RC2]' -> 8.0.RC2; *_running_version lines are not the version."""
    path = write(tmp_path / "version.cfg",
                 "# version: 1.0\nruntime_running_version=[7.0.0.5:7.0.0]\nversion=[8.0.RC2]\n")
    assert cann_version({"ASCEND_TOOLKIT_HOME": str(tmp_path)}, default_roots=()) == ("8.0.RC2", path)


def test_install_info_in_an_arch_folder(tmp_path):
    """<root>/<arch>/ascend_toolkit_install.info 'version=8.1.RC1' (innerversion ignored)."""
    path = write(tmp_path / "aarch64-linux" / "ascend_toolkit_install.info",
                 "package_name=Ascend-cann-toolkit\ninnerversion=V100R001C19SPC001B061\nversion=8.1.RC1\n"
                 "arch=aarch64\n")
    assert cann_version({"ASCEND_TOOLKIT_HOME": str(tmp_path)}, default_roots=()) == ("8.1.RC1", path)


@pytest.mark.parametrize("relative, text, expected", [
    ("ascend_toolkit_install.info", "Version = 7.0.0\n", "7.0.0"),
    ("compiler/version.info", "  toolkit_version=7.0.RC1.alpha003\n", "7.0.RC1.alpha003"),
    ("runtime/version.info", "Version=[6.3.RC2]\n", "6.3.RC2"),
])
def test_other_version_records(tmp_path, relative, text, expected):
    """The other known records and spellings (Version, toolkit_version, spaces, brackets)."""
    path = write(tmp_path / relative, text)
    assert cann_version({"ASCEND_HOME_PATH": str(tmp_path)}, default_roots=()) == (expected, path)


def test_version_cfg_comes_before_install_info(tmp_path):
    """When several records exist, version.cfg is read first."""
    write(tmp_path / "x86_64-linux" / "ascend_toolkit_install.info", "version=8.1.RC1\n")
    path = write(tmp_path / "version.cfg", "version=[8.0.0]\n")
    assert cann_version({"ASCEND_TOOLKIT_HOME": str(tmp_path)}, default_roots=()) == ("8.0.0", path)


def test_records_without_a_version_or_unreadable_are_skipped(tmp_path):
    """A record with no version line, or a 'version.cfg' that is a folder, does not stop the search."""
    (tmp_path / "version.cfg").mkdir()
    write(tmp_path / "ascend_toolkit_install.info", "package_name=Ascend-cann-toolkit\n")
    path = write(tmp_path / "compiler" / "version.info", "version=7.0.0\n")
    assert cann_version({"ASCEND_TOOLKIT_HOME": str(tmp_path)}, default_roots=()) == ("7.0.0", path)


def test_root_variables_in_order_then_default_roots(tmp_path):
    """ASCEND_TOOLKIT_HOME before ASCEND_HOME_PATH; the default roots only after the variables."""
    empty, first, second, default = (tmp_path / name for name in ("empty", "first", "second", "default"))
    empty.mkdir()
    first_file = write(first / "version.cfg", "version=[1.0.0]\n")
    second_file = write(second / "version.cfg", "version=[2.0.0]\n")
    default_file = write(default / "version.cfg", "version=[3.0.0]\n")
    roots = (str(default),)
    assert cann_version({"ASCEND_TOOLKIT_HOME": str(first), "ASCEND_HOME_PATH": str(second)}, roots) == (
        "1.0.0", first_file)
    assert cann_version({"ASCEND_TOOLKIT_HOME": str(empty), "ASCEND_HOME_PATH": str(second)}, roots) == (
        "2.0.0", second_file)
    assert cann_version({"ASCEND_TOOLKIT_HOME": str(empty)}, roots) == ("3.0.0", default_file)
    assert cann_version({}, roots) == ("3.0.0", default_file)


def test_no_toolkit_is_none(tmp_path):
    """No variables and no default root, or roots without records: (None, None)."""
    assert cann_version({}, default_roots=()) == (None, None)
    assert cann_version({"ASCEND_TOOLKIT_HOME": str(tmp_path), "ASCEND_HOME_PATH": str(tmp_path / "missing")},
                        default_roots=(str(tmp_path),)) == (None, None)


# --------------------------------------------------------------------------- probe()
def test_probe_keys_types_and_values(tmp_path, monkeypatch):
    """probe() reports this process: fixed keys, JSON-serialisable, values matching torch and the device."""
    cann_file = write(tmp_path / "version.cfg", "version=[8.0.RC3]\n")
    monkeypatch.setenv("ASCEND_TOOLKIT_HOME", str(tmp_path))
    info = probe()
    assert json.loads(json.dumps(info)) == info
    assert set(info) == {"python", "python_executable", "platform", "machine", "torch", "torch_npu", "cann",
                         "device", "initial_grad_mode", "environment"}
    assert info["python"] == platform.python_version() and info["python_executable"] == sys.executable
    assert info["torch"]["version"] == torch.__version__
    assert info["torch"]["cuda_build"] == torch.version.cuda
    assert set(info["torch_npu"]) == {"installed_version", "file", "imported", "version"}
    assert info["torch_npu"]["imported"] is ("torch_npu" in sys.modules)
    assert info["cann"] == {"version": "8.0.RC3", "file": cann_file}
    device, notes = resolve_device()
    assert info["device"] == {"type": device, "reason": probe_module._device_reason(device, DEVICE_VARIABLES),
                              "notes": list(notes), "count": info["device"]["count"], "simulated": False}
    assert isinstance(info["device"]["count"], int) and info["device"]["count"] >= (device == "cpu")
    assert info["initial_grad_mode"] is torch.is_grad_enabled()
    assert set(info["environment"]) == {"TORCH_DEVICE_BACKEND_AUTOLOAD", "TORCH_NPU_TESTING_DEVICE",
                                        "TORCH_NPU_TESTING_STANDIN_NPU", "TOX_ENV_NAME"}


SAMPLE = {
    "python": "3.11.7", "python_executable": "/env/bin/python", "platform": "Linux-x", "machine": "aarch64",
    "torch": {"version": "2.12.0", "file": "/env/torch", "cuda_build": None, "git_version": "abc"},
    "torch_npu": {"installed_version": "2.12.0.post3", "file": "/env/torch_npu", "imported": False,
                  "version": None},
    "cann": {"version": None, "file": None},
    "device": {"type": "cpu", "reason": "no NPU or other accelerator available", "notes": ["why one", "why two"],
               "count": 1},
    "initial_grad_mode": False,
    "environment": {},
}


def test_format_probe_lines():
    """The human form: one line per fact, notes indented under the device, grad mode spelled out."""
    assert format_probe(SAMPLE).splitlines() == [
        "python     3.11.7 (/env/bin/python) on Linux-x",
        "torch      2.12.0 at /env/torch",
        "torch_npu  2.12.0.post3 (not imported) at /env/torch_npu",
        "CANN       not found",
        "device     cpu x1: no NPU or other accelerator available",
        "           note: why one",
        "           note: why two",
        "grad mode  disabled at start",
    ]


def test_format_probe_cuda_build_and_missing_torch_npu():
    """A CUDA build says so; no torch_npu says 'not installed'; a CANN version is shown."""
    info = json.loads(json.dumps(SAMPLE))
    info["torch"]["cuda_build"] = "12.6"
    info["torch_npu"]["installed_version"] = None
    info["cann"]["version"] = "8.0.RC2"
    info["initial_grad_mode"] = True
    text = format_probe(info)
    assert "torch      2.12.0 at /env/torch (CUDA 12.6 build)\n" in text
    assert "torch_npu  not installed\n" in text and "CANN       8.0.RC2\n" in text
    assert text.endswith("grad mode  enabled at start")


def test_probe_main_prints_human_or_json(capsys):
    """main() prints the human form by default and JSON with --json."""
    parser = argparse.ArgumentParser()
    probe_module.add_arguments(parser)
    assert probe_module.main(parser.parse_args([])) == 0
    assert capsys.readouterr().out.startswith("python     ")
    assert probe_module.main(parser.parse_args(["--json"])) == 0
    assert json.loads(capsys.readouterr().out)["torch"]["version"] == torch.__version__


def test_probe_cli_json_is_valid(run_python, tmp_path):
    """`python -m torch_npu_testing probe --json`: stdout is only JSON, reflecting the environment."""
    write(tmp_path / "version.cfg", "version=[8.0.RC1]\n")
    result = run_python(["-m", "torch_npu_testing", "probe", "--json"], ASCEND_TOOLKIT_HOME=tmp_path,
                        TORCH_NPU_TESTING_DEVICE="cpu", TOX_ENV_NAME="unit-probe")
    assert result.returncode == 0, result.stderr
    info = json.loads(result.stdout)
    assert info["cann"]["version"] == "8.0.RC1"
    assert info["device"] == {"type": "cpu", "reason": "forced by TORCH_NPU_TESTING_DEVICE", "notes": [], "count": 1,
                              "simulated": False}
    assert info["environment"] == {"TORCH_DEVICE_BACKEND_AUTOLOAD": "0", "TORCH_NPU_TESTING_DEVICE": "cpu",
                                   "TORCH_NPU_TESTING_STANDIN_NPU": None, "TOX_ENV_NAME": "unit-probe"}
    assert info["python_executable"] == sys.executable


def test_the_simulated_npu_is_labelled_in_the_probe(run_python):
    """Under TORCH_NPU_TESTING_STANDIN_NPU=simulated the device is npu, and the probe says it is the simulated NPU,
    not an NPU run, in its reason and its ``simulated`` flag."""
    result = run_python(["-m", "torch_npu_testing", "probe", "--json"], TORCH_NPU_TESTING_STANDIN_NPU="simulated",
                        TORCH_NPU_TESTING_CACHE=os.environ.get("TORCH_NPU_TESTING_CACHE") or os.path.join(
                            os.path.expanduser("~"), ".cache", "torch_npu_testing"))
    assert result.returncode == 0, result.stderr
    device = json.loads(result.stdout)["device"]
    assert (device["type"], device["count"], device["simulated"]) == ("npu", 2, True)
    assert device["reason"] == ("simulated NPU (host memory, CPU kernels), not an NPU run "
                                "(TORCH_NPU_TESTING_STANDIN_NPU=simulated)")
