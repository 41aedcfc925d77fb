# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Helpers that test files need and that must also live inside Ascend/pytorch.

Everything here depends only on the standard library and ``torch``: the export command
(``python -m torch_npu_testing export``) copies this module's source into the exported tree,
so a test file behaves the same in this kit and in an Ascend/pytorch checkout.

- version gating: :func:`torch_version_at_least`, :func:`has_api`, :func:`requires_api`;
- :class:`PortableAssertionsMixin`, which keeps ``assertEqual`` to the form that PyTorch's and
  torch_npu's TestCase both accept, so a file green here cannot die of a TypeError on an NPU host;
- the global-state guard: :class:`GlobalStateGuard` and :class:`StateGuardMixin`, which snapshot
  grad mode, inference mode, functorch config, the functorch nesting level and the default dtype
  before each test, restore them afterwards and fail the test that leaked them, by name.
"""
import importlib
import re
import unittest

import torch

__all__ = [
    "GlobalStateGuard",
    "PortableAssertionsMixin",
    "StateGuardMixin",
    "has_api",
    "parse_version",
    "requires_api",
    "torch_version_at_least",
]


# --------------------------------------------------------------------------- version gating
def parse_version(text):
    """``"2.12.0+cpu"`` -> ``(2, 12, 0)``; pre-releases count as their release (2.13.0a0 -> 2.13.0)."""
    match = re.match(r"\s*(\d+)(?:\.(\d+))?(?:\.(\d+))?", str(text))
    if not match:
        raise ValueError(f"not a version: {text!r}")
    return tuple(int(part or 0) for part in match.groups())


def torch_version_at_least(version):
    """True when the installed torch release is ``version`` or newer (local/pre suffixes ignored)."""
    return parse_version(torch.__version__) >= parse_version(version)


def has_api(dotted_name):
    """True when ``dotted_name`` (``"pkg.module.attr.attr"``) resolves in the installed torch.

    The longest importable module prefix is imported, the rest is looked up as attributes, so
    ``"torch._functorch.aot_autograd.aot_export_joint_with_descriptors"`` works whether the name is a
    function, a class attribute or a submodule.
    """
    parts = dotted_name.split(".")
    for split in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        try:
            for attr in parts[split:]:
                obj = getattr(obj, attr)
        except AttributeError:
            return False
        return True
    return False


def requires_api(dotted_name, since=None):
    """Skip a test function or a whole TestCase class when ``dotted_name`` is absent.

    The skip reason names the API, the first torch release that has it (``since``) and the
    installed version, e.g. ``aot_export_joint_with_descriptors requires torch >= 2.9 (installed 2.7.1)``.
    """
    short = dotted_name.rsplit(".", 1)[-1]
    needed = f"torch >= {since}" if since else "a torch that provides it"
    reason = f"{short} requires {needed} (installed {torch.__version__}: {dotted_name} not found)"
    return unittest.skipUnless(has_api(dotted_name), reason)


# --------------------------------------------------------------------------- global state
def _functorch_config():
    try:
        from torch._functorch import config
    except ImportError:  # pragma: no cover - very old torch
        return None
    return config if hasattr(config, "get_config_copy") else None


def _interpreter_stack_depth():
    """Number of functorch transforms (vmap, grad, jvp, functionalize) currently entered."""
    functorch = getattr(torch._C, "_functorch", None)
    if functorch is None or not hasattr(functorch, "get_interpreter_stack"):
        return 0
    stack = functorch.get_interpreter_stack()
    return 0 if stack is None else len(stack)


def _pop_interpreter():
    """Leave the innermost functorch transform, whatever its kind."""
    functorch = torch._C._functorch
    key = functorch.peek_interpreter_stack().key()
    if key == functorch.TransformType.Vmap:
        functorch._vmap_decrement_nesting()
    elif key == functorch.TransformType.Grad:
        functorch._grad_decrement_nesting()
    elif key == functorch.TransformType.Jvp:
        functorch._jvp_decrement_nesting()
    elif key == functorch.TransformType.Functionalize:
        functorch._func_decrement_nesting()
    else:  # pragma: no cover - a transform type newer than this helper
        raise RuntimeError(f"cannot leave functorch transform {key}")


class GlobalStateGuard:
    """Snapshot of the process-global state an API-consistency test may touch.

    ``leaks()`` compares the current state with the snapshot and returns one human-readable line
    per item that differs; ``restore()`` puts everything back. Grad mode and inference mode are
    thread-local: the guard checks the thread that created it.
    """

    def __init__(self):
        config = _functorch_config()
        self.grad_enabled = torch.is_grad_enabled()
        self.inference_mode = torch.is_inference_mode_enabled()
        self.default_dtype = torch.get_default_dtype()
        self.functorch_config = config.get_config_copy() if config is not None else None
        self.interpreter_depth = _interpreter_stack_depth()

    def _changed_config_keys(self):
        config = _functorch_config()
        if config is None or self.functorch_config is None:
            return []
        now = config.get_config_copy()
        changed = []
        for key in sorted(set(now) | set(self.functorch_config)):
            before, after = self.functorch_config.get(key), now.get(key)
            try:
                same = bool(before == after)
            except Exception:  # values whose == is not a bool (tensors) compare by identity
                same = before is after
            if not same:
                changed.append((key, before, after))
        return changed

    def leaks(self):
        found = []
        if torch.is_grad_enabled() != self.grad_enabled:
            found.append(f"grad mode: was {self.grad_enabled}, left {torch.is_grad_enabled()}")
        if torch.is_inference_mode_enabled() != self.inference_mode:
            found.append(f"inference mode: was {self.inference_mode}, left {torch.is_inference_mode_enabled()}")
        if torch.get_default_dtype() != self.default_dtype:
            found.append(f"default dtype: was {self.default_dtype}, left {torch.get_default_dtype()}")
        for key, before, after in self._changed_config_keys():
            found.append(f"torch._functorch.config.{key}: was {before!r}, left {after!r}")
        depth = _interpreter_stack_depth()
        if depth != self.interpreter_depth:
            found.append(f"functorch nesting level (vmap/grad): was {self.interpreter_depth} deep, left {depth} deep")
        return found

    def restore(self):
        while _interpreter_stack_depth() > self.interpreter_depth:
            _pop_interpreter()
        config = _functorch_config()
        if config is not None and self.functorch_config is not None and self._changed_config_keys():
            config.load_config(self.functorch_config)
        torch.set_default_dtype(self.default_dtype)
        # Inference mode is only ever left by exiting its RAII guard, so it is reported, not reset.
        torch.set_grad_enabled(self.grad_enabled)


class StateGuardMixin:
    """TestCase mixin: every test must leave global state as it found it.

    Before each test a :class:`GlobalStateGuard` is taken; after the test (also when it failed)
    the state is restored so later tests start clean, and a test that leaked state fails with
    ``<test id> leaked global state: grad mode: was True, left False``.
    """

    def setUp(self):
        super().setUp()
        self._global_state_guard = GlobalStateGuard()

    def tearDown(self):
        # Checked before the base tearDown: PyTorch's common_utils TestCase silently resets grad
        # mode there, which would hide the leak.
        guard = getattr(self, "_global_state_guard", None)
        leaked = guard.leaks() if guard is not None else []
        if leaked:
            guard.restore()
        try:
            super().tearDown()
        finally:
            if leaked:
                self.fail(f"{self.id()} leaked global state: " + "; ".join(leaked))


# --------------------------------------------------------------------------- portable asserts
_ASSERT_EQUAL_HELP = (
    "{name}(first, second) takes no other arguments in API-consistency tests: PyTorch's TestCase takes "
    "(x, y, msg, atol=, rtol=, ...) but torch_npu's takes (x, y, prec, message, ...), so anything more "
    "breaks on one of them. Compare tensors with torch.testing.assert_close(actual, expected, atol=..., "
    "rtol=..., msg=...) and use the plain unittest asserts (assertIs, assertTupleEqual, ...) for the rest.")


def _contains_tensor(value, depth=0):
    if isinstance(value, torch.Tensor):
        return True
    if depth < 3 and isinstance(value, (list, tuple)):
        return any(_contains_tensor(item, depth + 1) for item in value)
    if depth < 3 and isinstance(value, dict):
        return any(_contains_tensor(item, depth + 1) for item in value.values())
    return False


class PortableAssertionsMixin:
    """Keep the assertions a test file uses to what both TestCase bases mean the same way.

    ``assertEqual`` / ``assertNotEqual`` take exactly two values and no tensors: the two bases disagree
    on every extra argument and on the default tolerance for tensors, which must be explicit anyway
    (``torch.testing.assert_close``). torch_npu's ``assertWarns(call_fn, msg)`` is not unittest's, so
    ``assertWarns`` is refused in favour of ``assertWarnsRegex``. Misuse raises TypeError on every
    device, so it is caught on a CPU box before it reaches an NPU host.
    """

    def _check_portable(self, name, first, second, args, kwargs):
        if args or kwargs:
            raise TypeError(_ASSERT_EQUAL_HELP.format(name=name))
        if _contains_tensor(first) or _contains_tensor(second):
            raise TypeError(f"{name} on tensors uses a TestCase-specific default tolerance; use "
                            "torch.testing.assert_close(actual, expected, atol=..., rtol=...) instead")

    def assertEqual(self, first, second, *args, **kwargs):  # noqa: N802 - unittest naming
        self._check_portable("assertEqual", first, second, args, kwargs)
        unittest.TestCase.assertEqual(self, first, second)

    def assertNotEqual(self, first, second, *args, **kwargs):  # noqa: N802 - unittest naming
        self._check_portable("assertNotEqual", first, second, args, kwargs)
        unittest.TestCase.assertNotEqual(self, first, second)

    def assertWarns(self, *args, **kwargs):  # noqa: N802 - unittest naming
        raise TypeError("assertWarns differs between PyTorch's and torch_npu's TestCase; "
                        "use assertWarnsRegex(WarningClass, regex) instead")
