# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Which device the tests run on, in the form every exported file carries (see the package docstring).

Order (first match wins):

1. an override variable (``API_CONSISTENCY_DEVICE=cpu|cuda|npu`` in an exported file; the kit also reads
   its own variable first) forces a device; forcing one that is not there raises
   :class:`DeviceUnavailableError` instead of silently testing something else;
2. torch_npu importable *and* ``torch.npu.is_available()`` -> ``npu``;
3. ``torch.accelerator.is_available()`` -> that accelerator's type (``cuda``, ``xpu``, ...);
4. ``cpu``.

Two traps this avoids: every PyPI CUDA build of torch (2.7.1-2.12.0) reports ``cuda`` from
``torch.accelerator.current_accelerator()`` on a machine without a GPU, and torch_npu installed
without CANN fails at import. Both fall back to the CPU with the reason in ``DeviceChoice.notes``.
Only the standard library is imported at module level; torch when the device is resolved.
"""
import collections
import importlib
import os
import sys

DEVICE_VARIABLE = "API_CONSISTENCY_DEVICE"
KNOWN_DEVICES = ("cpu", "cuda", "npu", "xpu", "mps")

# The resolved device: its type, the reason it was chosen, and notes (why an accelerator that looks present
# was not used).
DeviceChoice = collections.namedtuple("DeviceChoice", ["type", "reason", "notes"], defaults=((),))


class DeviceUnavailableError(RuntimeError):
    """A device was forced through an override variable but is not usable here."""


def _one_line(exc):
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}".rstrip(": ")


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


def npu_available(torch_module):
    """``(True, None)`` when torch.npu reports an available NPU, else ``(False, why)``."""
    npu = getattr(torch_module, "npu", None)
    if npu is None:
        return False, "torch.npu is missing after importing torch_npu"
    try:
        if npu.is_available():
            return True, None
        return False, "torch_npu imported but torch.npu.is_available() is False (no NPU or driver)"
    except Exception as exc:
        return False, f"torch.npu.is_available() raised ({_one_line(exc)})"


def available_accelerator(torch_module):
    """Type of a usable accelerator, or ``(None, why-not)``.

    Uses ``is_available()`` / ``current_accelerator(check_available=True)``, never the bare
    ``current_accelerator()`` (which answers ``cuda`` on CUDA builds without a GPU).
    """
    accelerator = getattr(torch_module, "accelerator", None)
    if accelerator is None:  # torch < 2.6: only CUDA is known here
        try:
            if torch_module.cuda.is_available():
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


def forced_device(environ, variables):
    """``(device, variable)`` from the first of ``variables`` set to a non-empty value, else ``("", None)``."""
    for variable in variables:
        value = environ.get(variable, "").strip().lower()
        if value:
            return value, variable
    return "", None


def resolve_device(environ=None, torch_module=None, importer=importlib.import_module, variables=(DEVICE_VARIABLE,)):
    """Decide the test device. Pure function of the environment and of what imports; no caching.

    ``variables`` are the override variables, first set wins.
    """
    environ = os.environ if environ is None else environ
    if torch_module is None:
        import torch as torch_module
    forced, variable = forced_device(environ, variables)
    if forced and forced not in KNOWN_DEVICES:
        raise DeviceUnavailableError(
            f"{variable}={forced!r} is not a device type; use one of {', '.join(KNOWN_DEVICES)}")

    notes = []
    if forced in ("", "npu"):
        npu_module, npu_why = import_torch_npu(importer)
        if npu_module is not None:
            ok, npu_why = npu_available(torch_module)
            if ok:
                return DeviceChoice("npu", f"forced by {variable}" if forced else "torch_npu with an available NPU")
        if forced == "npu":
            raise DeviceUnavailableError(f"{variable}=npu but no NPU is usable: {npu_why}")
        if npu_why and npu_why != "torch_npu is not installed":
            notes.append(npu_why)

    if forced == "cpu":
        return DeviceChoice("cpu", f"forced by {variable}")

    accel, accel_why = available_accelerator(torch_module)
    if forced:
        if accel == forced:
            return DeviceChoice(forced, f"forced by {variable}")
        raise DeviceUnavailableError(
            f"{variable}={forced} but no {forced} device is available"
            + (f": {accel_why}" if accel_why else (f" (the available accelerator is {accel})" if accel else "")))
    if accel is not None:
        return DeviceChoice(accel, f"torch.accelerator reports an available {accel}", tuple(notes))
    if accel_why:
        notes.append(accel_why)
    return DeviceChoice("cpu", "no NPU or other accelerator available", tuple(notes))


_DEVICE_CHOICE = []


def device_type():
    """``"npu"``, ``"cuda"`` (or another accelerator type) or ``"cpu"``: where the tests run.

    Resolved on first use (see the order above), then cached; when the CPU is chosen although an
    accelerator looked present, one line on stderr says why.
    """
    if not _DEVICE_CHOICE:
        choice = resolve_device()
        if choice.notes:
            print(f"testing on {choice.type}: " + "; ".join(choice.notes), file=sys.stderr)
        _DEVICE_CHOICE.append(choice)
    return _DEVICE_CHOICE[0].type
