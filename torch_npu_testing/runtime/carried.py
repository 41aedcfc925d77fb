# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""The helper every exported test file carries: export copies the block between the markers verbatim.

Kept small (Ascend reviewers read it in every PR) and self-contained (standard library and torch;
torch_npu only when the device is an NPU). It holds what an NPU run needs and nothing else:

- the device to test on: an override variable, else an NPU, else an available accelerator, else the CPU;
  ``current_accelerator()`` alone is not trusted (CUDA builds answer ``cuda`` without a GPU), and a
  torch_npu that fails to import (no CANN) falls back with one line saying why;
- version gates: ``parse_version``, ``torch_version_at_least``, ``find_api``, ``requires_api``;
- ``run_in_thread`` for the thread-locality tests;
- in :mod:`.carried_testcase` (carried too, right after this block): ``TestCase`` and ``run_tests``.

Importing this module imports nothing but the standard library (torch when the device is resolved), so
the tools use it as the kit's one implementation of version parsing and dotted-name lookup.


The kit's own runs add a global-state guard and XML routing on top (:mod:`.testcase`); those stay out.
"""
# --- carried: begin
import functools
import importlib
import os
import re
import sys
import threading
import unittest

DEVICE_VARIABLES = ("TORCH_NPU_TESTING_DEVICE", "API_CONSISTENCY_DEVICE")  # first set wins: cpu|cuda|npu|...


class DeviceUnavailableError(RuntimeError):
    pass


def resolve_device(environ=None, importer=importlib.import_module):
    """``(device type, notes)``; notes say why an accelerator that looks installed is not used."""
    environ = os.environ if environ is None else environ
    variable = next((name for name in DEVICE_VARIABLES if environ.get(name, "").strip()), None)
    forced, notes, accelerator = environ[variable].strip().lower() if variable else "", [], None
    import torch
    if forced in ("", "npu"):
        try:
            importer("torch_npu")
            if torch.npu.is_available():
                return "npu", ()
            notes.append("torch_npu imported but torch.npu.is_available() is False")
        except Exception as exc:  # ImportError without CANN (libhccl.so), RuntimeError at init, ...
            if not (isinstance(exc, ModuleNotFoundError) and exc.name == "torch_npu"):
                notes.append(f"torch_npu failed to import ({type(exc).__name__}: {str(exc).strip()[:200]})")
    try:  # is_available(), never the bare current_accelerator(); 2.7.1 raises here without a driver
        built_for = torch.accelerator.current_accelerator()
        if forced != "cpu" and torch.accelerator.is_available():
            accelerator = built_for.type
        elif forced != "cpu" and built_for is not None:
            notes.append(f"torch is built for {built_for.type} but no such device is available")
    except Exception as exc:
        notes.append(f"torch.accelerator failed ({type(exc).__name__}: {str(exc).strip()[:200]})")
    if forced and forced not in ("cpu", accelerator):
        raise DeviceUnavailableError(f"{variable}={forced} but no {forced} device is usable here"
                                     + (": " + "; ".join(notes) if notes else ""))
    return (forced or accelerator or "cpu"), tuple(notes)


@functools.lru_cache(maxsize=None)
def device_type():
    """``"npu"``, ``"cuda"`` (or another type) or ``"cpu"``: resolved once; its notes in ``device_type.notes``."""
    device, device_type.notes = resolve_device()
    if device_type.notes:
        print(f"testing on {device}: " + "; ".join(device_type.notes), file=sys.stderr)
    return device


def parse_version(text):
    match = re.match(r"\s*(\d+)(?:\.(\d+))?(?:\.(\d+))?", str(text))
    if not match:
        raise ValueError(f"not a version: {text!r}")
    return tuple(int(part or 0) for part in match.groups())


def torch_version_at_least(version):
    return parse_version(sys.modules["torch"].__version__) >= parse_version(version)


def find_api(dotted_name, default=None):
    """What ``dotted_name`` names (longest importable module, then attributes), else ``default``.
    Only a missing module counts as absent: one that exists and fails to import raises."""
    parts = dotted_name.split(".")
    for split in range(len(parts), 0, -1):
        module = ".".join(parts[:split])
        try:
            found = importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name and (module == exc.name or module.startswith(exc.name + ".")):
                continue
            raise
        for attr in parts[split:]:
            found = getattr(found, attr, default)
        return found
    return default


def requires_api(dotted_name, since=None):
    missing, need = object(), f"torch >= {since}" if since else "a torch that has it"
    return unittest.skipIf(find_api(dotted_name, missing) is missing,
                           f"{dotted_name} requires {need} (installed {sys.modules['torch'].__version__})")


def run_in_thread(fn, *args, timeout=60.0):
    """``fn(*args)`` in a new thread: its result, or its exception re-raised here."""
    box = {}

    def target():
        try:
            box["result"] = fn(*args)
        except BaseException as exc:  # handed back to the calling thread
            box["error"] = exc
    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive() or "error" in box:
        raise box.get("error") or TimeoutError(f"{fn} still running after {timeout} s")
    return box.get("result")
# --- carried: end
