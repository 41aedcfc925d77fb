# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""The global-state guard of the kit's own runs: a test that leaks state fails by name.

Global state an API-consistency test may touch: grad mode and inference mode (thread-local: the
guard checks the thread that created it), the functorch config, the functorch nesting level (vmap,
grad, jvp, functionalize) and the default dtype. Not carried by export: Ascend's files run without it,
and the kit's runs prove that none of the kit's tests leaks.
"""
import torch


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
