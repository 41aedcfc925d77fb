# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Helpers that test files need and that must also live inside Ascend/pytorch.

Everything here depends only on the standard library and ``torch``: the export command
(``python -m torch_npu_testing export``) copies this module's source into the exported tree,
so a test file behaves the same in this kit and in an Ascend/pytorch checkout.

- version gating: :func:`torch_version_at_least`, :func:`has_api`, :func:`requires_api`;
- :class:`PortableAssertionsMixin`, the kit's assertion vocabulary (``assert_tensor``,
  ``assert_tensor_meta``, ``assert_value``, ``assert_is``, ``assert_true``, ``assert_grad_mode``,
  ``assert_raises_exactly``, ...: every check carries a message naming what it checks, and none goes through
  the base class's ``assertEqual``, so a file is as strict on an NPU host as on the CPU); it also keeps
  ``assertEqual`` to the form that PyTorch's and torch_npu's TestCase both accept, so a file green here
  cannot die of a TypeError on an NPU host;
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


def _is_missing_module(exc, module_name):
    """True when ``exc`` says that ``module_name`` itself (or a package above it) does not exist.

    Any other ImportError (the module exists but importing it failed: a broken install, a missing
    shared library, an error inside the module) is not "absent" and must not become a quiet skip.
    """
    if not isinstance(exc, ModuleNotFoundError) or not exc.name:
        return False
    return module_name == exc.name or module_name.startswith(exc.name + ".")


def has_api(dotted_name):
    """True when ``dotted_name`` (``"pkg.module.attr.attr"``) resolves in the installed torch.

    The longest importable module prefix is imported, the rest is looked up as attributes, so
    ``"torch._functorch.aot_autograd.aot_export_joint_with_descriptors"`` works whether the name is a
    function, a class attribute or a submodule. Absent means absent: a module that does not exist or a
    missing attribute gives False, but a module that exists and fails to import raises its ImportError.
    """
    parts = dotted_name.split(".")
    for split in range(len(parts), 0, -1):
        module_name = ".".join(parts[:split])
        try:
            obj = importlib.import_module(module_name)
        except ImportError as exc:
            if _is_missing_module(exc, module_name):
                continue
            raise
        try:
            for attr in parts[split:]:
                obj = getattr(obj, attr)
        except AttributeError:
            return False
        return True
    return False


def _failing_with(error):
    """A decorator that makes a test function, or every test of a class, error with ``error``."""
    def raise_error(*args, **kwargs):
        raise error

    def decorate(target):
        if isinstance(target, type):
            for name in list(vars(target)):
                if name.startswith("test") and callable(getattr(target, name)):
                    setattr(target, name, decorate(getattr(target, name)))
            return target

        def failing_test(*args, **kwargs):
            raise_error()
        failing_test.__name__ = getattr(target, "__name__", "test")
        failing_test.__qualname__ = getattr(target, "__qualname__", failing_test.__name__)
        failing_test.__doc__ = getattr(target, "__doc__", None)
        return failing_test
    return decorate


def requires_api(dotted_name, since=None):
    """Skip a test function or a whole TestCase class when ``dotted_name`` is absent.

    The skip reason names the API, the first torch release that has it (``since``) and the
    installed version, e.g. ``aot_export_joint_with_descriptors requires torch >= 2.9 (installed 2.7.1)``.
    When a module on the way exists but fails to import, nothing is skipped: every decorated test
    errors with an ImportError naming the API and the import that failed.
    """
    short = dotted_name.rsplit(".", 1)[-1]
    needed = f"torch >= {since}" if since else "a torch that provides it"
    try:
        present = has_api(dotted_name)
    except ImportError as exc:
        error = ImportError(f"{dotted_name}: a module on the way exists but failed to import "
                            f"({type(exc).__name__}: {exc})")
        return _failing_with(error)
    reason = f"{short} requires {needed} (installed {torch.__version__}: {dotted_name} not found)"
    return unittest.skipUnless(present, reason)


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

    # ----------------------------------------------------------------- the kit's assertion vocabulary
    # Every check names what it checks (``what``) and says expected vs actual. They never go through
    # the base class's assertEqual, so a file is exactly as strict on an NPU host (torch_npu's
    # assertEqual ignores dtype and allows 1e-5) as on the CPU.

    def assert_tensor(self, actual, expected, what, *, atol=0.0, rtol=0.0, device=None, equal_nan=True):
        """``actual`` is a tensor like ``expected``: same dtype, shape and layout, values within
        ``atol``/``rtol`` (exact by default), on the device type ``device`` (default: expected's)."""
        if not isinstance(expected, torch.Tensor):
            raise TypeError(f"assert_tensor({what!r}): expected must be a tensor, got {type(expected).__name__}")
        self.assert_tensor_meta(actual, what, dtype=expected.dtype, shape=tuple(expected.shape),
                                device=device or expected.device.type, layout=expected.layout)
        actual_cpu, expected_cpu = actual.detach().cpu(), expected.detach().cpu()
        if atol == 0 and rtol == 0 and actual.layout == torch.strided and torch.equal(actual_cpu, expected_cpu):
            return  # exact and equal: the common case, without assert_close's cost (NaNs take the long way)
        try:
            torch.testing.assert_close(actual_cpu, expected_cpu, atol=atol, rtol=rtol,
                                       equal_nan=equal_nan, check_device=False)
        except AssertionError as exc:
            self.fail(f"{what}: values differ (atol={atol}, rtol={rtol}): {exc}")

    def assert_tensor_meta(self, actual, what, *, dtype=None, shape=None, device=None, layout=None,
                           requires_grad=None):
        """``actual`` is a tensor and each given property (dtype, shape, device type, layout,
        requires_grad) is as expected."""
        if not isinstance(actual, torch.Tensor):
            self.fail(f"{what}: expected a tensor, got {type(actual).__name__}: {actual!r}")
        checks = (("dtype", dtype, actual.dtype),
                  ("shape", None if shape is None else tuple(shape), tuple(actual.shape)),
                  ("device type", device, actual.device.type),
                  ("layout", layout, actual.layout),
                  ("requires_grad", requires_grad, actual.requires_grad))
        for name, wanted, got in checks:
            if wanted is not None and got != wanted:
                self.fail(f"{what}: {name} is {got}, expected {wanted}")

    def assert_value(self, actual, expected, what):
        """Plain (non-tensor) equality, with a message naming what differs."""
        if _contains_tensor(actual) or _contains_tensor(expected):
            raise TypeError(f"assert_value({what!r}) compares plain values; use assert_tensor for tensors")
        if not actual == expected:
            self.fail(f"{what}: got {actual!r}, expected {expected!r}")

    def assert_is(self, actual, expected, what):
        """Identity (``actual is expected``)."""
        if actual is not expected:
            self.fail(f"{what}: got {actual!r}, expected the very object {expected!r}")

    def assert_is_not(self, actual, unexpected, what):
        """Not the same object (``actual is not unexpected``)."""
        if actual is unexpected:
            self.fail(f"{what}: got the very object {unexpected!r}, expected a different one")

    def assert_true(self, value, what):
        """``value`` is truthy."""
        if not value:
            self.fail(f"{what}: expected true, got {value!r}")

    def assert_false(self, value, what):
        """``value`` is falsy."""
        if value:
            self.fail(f"{what}: expected false, got {value!r}")

    def assert_grad_mode(self, expected, what):
        """The calling thread's grad mode is ``expected``."""
        enabled = torch.is_grad_enabled()
        if enabled is not bool(expected):
            self.fail(f"{what}: grad mode is {'enabled' if enabled else 'disabled'}, "
                      f"expected {'enabled' if expected else 'disabled'}")

    def assert_raises_exactly(self, exc_type, what, fn=None, *args, match=None, **kwargs):
        """``fn(*args, **kwargs)`` raises exactly ``exc_type`` (not a subclass: a port that raises
        another error type is not consistent), whose message matches the regex ``match`` if given.

        Returns the exception. Without ``fn`` it is a context manager whose ``.exception`` is set on exit.
        """
        checker = _RaisesExactly(self, exc_type, what, match)
        if fn is None:
            return checker
        with checker:
            fn(*args, **kwargs)
        return checker.exception


class _RaisesExactly:
    """Context manager behind :meth:`PortableAssertionsMixin.assert_raises_exactly`."""

    def __init__(self, case, exc_type, what, match):
        self.case, self.exc_type, self.what, self.match = case, exc_type, what, match
        self.exception = None

    def __enter__(self):
        return self

    def __exit__(self, kind, value, traceback):
        name = self.exc_type.__name__
        if kind is None:
            self.case.fail(f"{self.what}: expected {name}, nothing was raised")
        if kind is not self.exc_type:
            if not issubclass(kind, Exception):
                return False  # KeyboardInterrupt, SystemExit, a failing inner assertion: let it through
            self.case.fail(f"{self.what}: expected {name}, got {kind.__name__}: {value}")
        if self.match is not None and not re.search(self.match, str(value)):
            self.case.fail(f"{self.what}: {name} message {str(value)!r} does not match {self.match!r}")
        self.exception = value
        return True
