# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Which device the tests run on: resolved once, in one place.

Order (first match wins):

1. ``TORCH_NPU_TESTING_DEVICE=cpu|cuda|npu`` forces a device; forcing one that is not there raises
   :class:`DeviceUnavailableError` instead of silently testing something else.
2. torch_npu importable *and* ``torch.npu.is_available()`` -> ``npu``.
3. ``torch.accelerator.is_available()`` -> that accelerator's type (``cuda``, ``xpu``, ...).
4. ``cpu``.

Two traps this avoids: every PyPI CUDA build of torch (2.7.1-2.12.0) reports ``cuda`` from
``torch.accelerator.current_accelerator()`` on a machine without a GPU, and torch_npu installed
without CANN fails at import (and, through backend autoload, breaks ``import torch``). Both fall
back to the CPU with one line on stderr saying why.
"""
import importlib
import os
import sys
from dataclasses import dataclass, field

DEVICE_ENV = "TORCH_NPU_TESTING_DEVICE"
KNOWN_DEVICES = ("cpu", "cuda", "npu", "xpu", "mps")


class DeviceUnavailableError(RuntimeError):
    """A device was forced through TORCH_NPU_TESTING_DEVICE but is not usable here."""


@dataclass(frozen=True)
class DeviceChoice:
    type: str
    reason: str
    # Lines worth telling the user once (why an accelerator that looks present was not used).
    notes: tuple = field(default=())


def import_torch_npu(importer=importlib.import_module):
    """Import torch_npu explicitly. Returns ``(module, None)`` or ``(None, why)``; never raises."""
    try:
        return importer("torch_npu"), None
    except ModuleNotFoundError as exc:
        if exc.name == "torch_npu":
            return None, "torch_npu is not installed"
        return None, f"torch_npu is installed but failed to import ({_one_line(exc)})"
    except Exception as exc:  # ImportError for libhccl.so, RuntimeError from CANN init, ...
        return None, f"torch_npu is installed but failed to import ({_one_line(exc)})"


def npu_available(torch):
    npu = getattr(torch, "npu", None)
    if npu is None:
        return False, "torch.npu is missing after importing torch_npu"
    try:
        if npu.is_available():
            return True, None
        return False, "torch_npu imported but torch.npu.is_available() is False (no NPU or driver)"
    except Exception as exc:
        return False, f"torch.npu.is_available() raised ({_one_line(exc)})"


def available_accelerator(torch):
    """Type of a usable accelerator, or ``(None, why-not)``.

    Uses ``is_available()`` / ``current_accelerator(check_available=True)``, never the bare
    ``current_accelerator()`` (which answers ``cuda`` on CUDA builds without a GPU).
    """
    accelerator = getattr(torch, "accelerator", None)
    if accelerator is None:  # torch < 2.6: only CUDA is known to this helper
        try:
            if torch.cuda.is_available():
                return "cuda", None
        except Exception as exc:
            return None, f"torch.cuda.is_available() raised ({_one_line(exc)})"
        return None, None
    compiled_for = None
    try:
        current = accelerator.current_accelerator()
        compiled_for = current.type if current is not None else None
    except Exception:
        pass
    try:
        available = bool(accelerator.is_available())
    except Exception as exc:  # torch 2.7.1 raises from device_count() without a driver
        available = False
        why = f"torch.accelerator.is_available() raised ({_one_line(exc)})"
    else:
        why = None if available else (
            f"this torch is built for {compiled_for} but no {compiled_for} device is available"
            if compiled_for else None)
    if not available:
        return None, why
    try:
        current = accelerator.current_accelerator(check_available=True)
    except TypeError:  # no check_available keyword in this version; availability was checked above
        current = accelerator.current_accelerator()
    if current is None:
        return None, why
    return current.type, None


def resolve_device(environ=None, torch_module=None, importer=importlib.import_module):
    """Decide the test device. Pure function of the environment and of what imports; no caching."""
    environ = os.environ if environ is None else environ
    if torch_module is None:
        import torch as torch_module
    torch = torch_module
    forced = environ.get(DEVICE_ENV, "").strip().lower()
    if forced and forced not in KNOWN_DEVICES:
        raise DeviceUnavailableError(
            f"{DEVICE_ENV}={forced!r} is not a device type; use one of {', '.join(KNOWN_DEVICES)}")

    notes = []
    npu_module, npu_why = (None, None)
    if forced in ("", "npu"):
        npu_module, npu_why = import_torch_npu(importer)
        if npu_module is not None:
            ok, npu_why = npu_available(torch)
            if ok:
                return DeviceChoice("npu", f"forced by {DEVICE_ENV}" if forced else "torch_npu with an available NPU")
        if forced == "npu":
            raise DeviceUnavailableError(f"{DEVICE_ENV}=npu but no NPU is usable: {npu_why}")
        if npu_why and npu_why != "torch_npu is not installed":
            notes.append(npu_why)

    if forced == "cpu":
        return DeviceChoice("cpu", f"forced by {DEVICE_ENV}")

    accel, accel_why = available_accelerator(torch)
    if forced:
        if accel == forced:
            return DeviceChoice(forced, f"forced by {DEVICE_ENV}")
        raise DeviceUnavailableError(
            f"{DEVICE_ENV}={forced} but no {forced} device is available"
            + (f": {accel_why}" if accel_why else (f" (the available accelerator is {accel})" if accel else "")))
    if accel is not None:
        return DeviceChoice(accel, f"torch.accelerator reports an available {accel}", tuple(notes))
    if accel_why:
        notes.append(accel_why)
    reason = "no NPU or other accelerator available"
    return DeviceChoice("cpu", reason, tuple(notes))


_CHOICE = None


def device_choice():
    """The resolved :class:`DeviceChoice` for this process (resolved on first use, then cached).

    When the CPU is chosen although an accelerator looked present, one line on stderr says why.
    """
    global _CHOICE
    if _CHOICE is None:
        choice = resolve_device()
        if choice.notes:
            print(f"torch_npu_testing: testing on {choice.type}: " + "; ".join(choice.notes), file=sys.stderr)
        _CHOICE = choice
    return _CHOICE


def device_type():
    """``"npu"``, ``"cuda"`` (or another accelerator type) or ``"cpu"``: where the tests run."""
    return device_choice().type


def device_count(device):
    """Number of devices of that type (1 for cpu); 0 when the count cannot be read."""
    if device == "cpu":
        return 1
    import torch
    module = getattr(torch, device, None)
    try:
        return int(module.device_count()) if module is not None else 0
    except Exception:
        return 0


def _one_line(exc):
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}".rstrip(": ")
