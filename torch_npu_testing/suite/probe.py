# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Describe the test environment: the 【测试环境】 section of an Ascend PR, measured, not typed.

Python, platform, torch and torch_npu (versions and where they are imported from), the CANN version
when a toolkit is present, the resolved device with its reason and count, and the grad mode the process
starts with. ``python -m torch_npu_testing probe [--json]`` prints it; the suite prints it once at the
start of every run and stores it in its results file.
"""
import glob
import importlib.util
import json
import os
import platform
import re
import sys
from importlib import metadata

# Where CANN toolkits record their version, relative to a toolkit root.
CANN_ROOT_ENVS = ("ASCEND_TOOLKIT_HOME", "ASCEND_HOME_PATH", "ASCEND_AICPU_PATH")
CANN_DEFAULT_ROOTS = ("/usr/local/Ascend/ascend-toolkit/latest", "/usr/local/Ascend/cann")
CANN_VERSION_FILES = ("version.cfg", "*/ascend_toolkit_install.info", "ascend_toolkit_install.info",
                      "compiler/version.info", "runtime/version.info")
_VERSION_LINE = re.compile(r"^\s*(?:version|Version|toolkit_version)\s*=\s*\[?([^\]\s]+)", re.MULTILINE)


def cann_version(environ=None, default_roots=CANN_DEFAULT_ROOTS):
    """``(version, file)`` of the first CANN version record found, or ``(None, None)``."""
    environ = os.environ if environ is None else environ
    roots = [environ[name] for name in CANN_ROOT_ENVS if environ.get(name)] + list(default_roots)
    for root in roots:
        for pattern in CANN_VERSION_FILES:
            for path in sorted(glob.glob(os.path.join(root, pattern))):
                try:
                    with open(path, encoding="utf-8", errors="replace") as handle:
                        match = _VERSION_LINE.search(handle.read())
                except OSError:
                    continue
                if match:
                    return match.group(1), path
    return None, None


def _distribution(name):
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


SIMULATED = "simulated NPU (host memory, CPU kernels), not an NPU run"


def _simulated(torch, device):
    """True when ``npu`` is the kit's simulated NPU (TORCH_NPU_TESTING_STANDIN_NPU=simulated)."""
    return device == "npu" and bool(getattr(getattr(torch, "npu", None), "_SIMULATED", False))


def _device_reason(device, variables, simulated=False):
    """Why the runtime chose ``device``: the simulated NPU, a forcing variable, an available accelerator, or none."""
    if simulated:
        return SIMULATED + " (TORCH_NPU_TESTING_STANDIN_NPU=simulated)"
    forced = next((name for name in variables if os.environ.get(name, "").strip()), None)
    if forced:
        return f"forced by {forced}"
    if device == "npu":
        return "torch_npu with an available NPU"
    if device != "cpu":
        return f"torch.accelerator reports an available {device}"
    return "no NPU or other accelerator available"


def _device_count(torch, device):
    """Number of devices of that type (1 for cpu); 0 when the count cannot be read."""
    if device == "cpu":
        return 1
    try:
        return int(getattr(torch, device).device_count())
    except Exception:
        return 0


def probe():
    """A JSON-serialisable description of this process's test environment."""
    import torch

    from ..runtime.carried import DEVICE_VARIABLES, device_type

    device = device_type()
    notes = device_type.notes  # of the same, one resolution that the tests use
    npu_spec = importlib.util.find_spec("torch_npu")
    npu_module = sys.modules.get("torch_npu")
    cann, cann_file = cann_version()
    return {
        "python": platform.python_version(),
        "python_executable": sys.executable,
        "platform": platform.platform(),
        "machine": platform.machine(),
        "torch": {
            "version": torch.__version__,
            "file": os.path.dirname(torch.__file__),
            "cuda_build": getattr(torch.version, "cuda", None),
            "git_version": getattr(torch.version, "git_version", None),
        },
        "torch_npu": {
            "installed_version": _distribution("torch_npu"),
            "file": os.path.dirname(npu_spec.origin) if npu_spec and npu_spec.origin else None,
            "imported": npu_module is not None,
            "version": getattr(npu_module, "__version__", None),
        },
        "cann": {"version": cann, "file": cann_file},
        "device": {"type": device, "reason": _device_reason(device, DEVICE_VARIABLES, _simulated(torch, device)),
                   "notes": list(notes), "count": _device_count(torch, device), "simulated": _simulated(torch, device)},
        "initial_grad_mode": torch.is_grad_enabled(),
        "environment": {name: os.environ.get(name) for name in (
            "TORCH_DEVICE_BACKEND_AUTOLOAD", "TORCH_NPU_TESTING_DEVICE", "TORCH_NPU_TESTING_STANDIN_NPU",
            "TOX_ENV_NAME")},
    }


def format_probe(info):
    """A few human lines, for the top of a run log."""
    npu = info["torch_npu"]
    npu_text = "not installed" if not npu["installed_version"] else (
        f"{npu['installed_version']} ({'imported' if npu['imported'] else 'not imported'}) at {npu['file']}")
    device = info["device"]
    lines = [
        f"python     {info['python']} ({info['python_executable']}) on {info['platform']}",
        f"torch      {info['torch']['version']} at {info['torch']['file']}"
        + (f" (CUDA {info['torch']['cuda_build']} build)" if info["torch"]["cuda_build"] else ""),
        f"torch_npu  {npu_text}",
        f"CANN       {info['cann']['version'] or 'not found'}",
        f"device     {device['type']} x{device['count']}: {device['reason']}"
        + ("".join(f"\n           note: {note}" for note in device["notes"])),
        f"grad mode  {'enabled' if info['initial_grad_mode'] else 'disabled'} at start",
    ]
    return "\n".join(lines)


def add_arguments(parser):
    parser.add_argument("--json", action="store_true", help="print the probe as JSON")


def main(args):
    info = probe()
    print(json.dumps(info, indent=2) if args.json else format_probe(info))
    return 0
