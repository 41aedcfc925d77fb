# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Faults where an API's values meet another torch subsystem (issue 38): one generic fault per subsystem.

Each follows from how a device port is built, not from one API, so every future task is measured on it:

- autograd, higher order (``result-once-differentiable``): a port's kernel registered with a backward that
  is itself not differentiable (``once_differentiable``); values, history and first gradients stay right,
  a second backward (``create_graph=True``) fails. Not applicable to the result of a custom
  ``autograd.Function`` (a compiled graph's ``CompiledFunction``) or a view of one: its own backward decides
  its higher order;
- autograd, forward mode (``result-tangent-dropped``): a port's kernel without a forward derivative that
  returns the primal alone, so a ``torch.autograd.forward_ad`` tangent is lost;
- tensor identity (``version-not-bumped``): a port that writes through ``.data`` or raw device memory, so an
  input it mutates keeps its old ``_version`` (autograd's check of saved tensors then misses the write);
- containers (``result-namedtuple-as-tuple``): a port's wrapper that rebuilds outputs with ``tuple(...)``, so a
  namedtuple or ``torch.return_types`` result loses its type and field names;
- nn.Module (``module-hooks-skipped``): a port that calls ``module.forward`` instead of ``module(...)``, so
  forward hooks and pre-hooks of a module argument and its submodules do not run;
- autocast (``autocast-ignored``): a port that runs its kernels outside the caller's autocast state, so a
  result autocast makes in bfloat16/float16 comes in the inputs' wider dtype;
- default dtype (``default-dtype-ignored``): a port that creates tensors with an explicit float32, so a
  result in a non-float32 default dtype (that no input has) comes in float32;
- RNG (``rng-not-advanced``): a port that draws from its own generator, so the global stream does not move;
- Python level (``copy-base-class``): a ``clone``/``copy`` that constructs the defining class instead of
  ``type(self)``, so a subclass's copy is the base class;
- warnings (``warnings-swallowed``): a port's wrapper that silences warnings the API gives;
- messages (``error-message-generic``): a port's wrapper that re-raises with its own message, losing the name
  of the culprit.

"No free kills" as everywhere: a fault whose condition does not arise on a call (no tangent, no hook, no
autocast, no draw, no warning) notes nothing or *not applicable* and keeps the real behaviour.
"""
import contextlib
import copy
import warnings

from . import returned, tensors
from .faults import CHANGED, NOT_APPLICABLE, Fault, on_returned_too, through_returned_callables

_PLAIN = tensors._PLAIN_TYPES


def _map_results(obj, fn, verdicts, depth=3):
    """``obj`` with ``fn`` applied to every tensor leaf (tuples, lists, dicts, namedtuples, structseqs)."""
    import torch

    if isinstance(obj, torch.Tensor):
        new, verdict = fn(obj)
        verdicts.append(verdict)
        return new
    if depth == 0:
        return obj
    if type(obj) is dict:
        return {key: _map_results(value, fn, verdicts, depth - 1) for key, value in obj.items()}
    if type(obj) in (tuple, list):
        return type(obj)(_map_results(item, fn, verdicts, depth - 1) for item in obj)
    if isinstance(obj, tuple) and hasattr(obj, "_make"):
        return obj._make(_map_results(item, fn, verdicts, depth - 1) for item in obj)
    if isinstance(obj, tuple):  # a torch.return_types structseq
        return type(obj)(tuple(_map_results(item, fn, verdicts, depth - 1) for item in obj))
    return obj


def _verdict(verdicts):
    return CHANGED if CHANGED in verdicts else (NOT_APPLICABLE if verdicts else None)


def _result_fault(code, description, transform):
    """A fault on every tensor (or container) of the result, and of a returned callable's results."""
    def behaviour(real, args, kwargs):
        result = real(*args, **kwargs)
        verdicts = []
        faulted = transform(result, verdicts)
        verdict = _verdict(verdicts) or (NOT_APPLICABLE if not returned.is_plain_callable(result) else None)
        return (faulted if verdict == CHANGED else result), verdict
    return Fault(code, "subsystems", description, through_returned_callables(behaviour))


# ------------------------------------------------------------------------------------------- autograd
def _from_custom_function(x):
    """Made by a custom autograd.Function, or a view of such a result (a compiled graph's aliased output)."""
    base = x._base if x._is_view() else None
    return any(t is not None and hasattr(t.grad_fn, "_forward_cls") for t in (x, base))


def _once_differentiable(result, verdicts):
    import torch
    from torch.autograd.forward_ad import unpack_dual
    from torch.autograd.function import once_differentiable

    class OnceDifferentiable(torch.autograd.Function):
        generate_vmap_rule = True  # the setup_context form: usable while functorch transforms are active

        @staticmethod
        def forward(x):
            return x.view_as(x)

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        @once_differentiable
        def backward(ctx, grad):
            return grad

    def fault(x):
        inner, rebuild = tensors._physical(x)  # a BatchedTensor: its physical tensor, rebuilt around the fault
        if (inner is None or not torch.is_grad_enabled() or inner.grad_fn is None
                or _from_custom_function(inner) or unpack_dual(inner).tangent is not None):
            return x, NOT_APPLICABLE  # a custom Function's result (a compiled graph's): its own higher order
        try:
            return rebuild(OnceDifferentiable.apply(inner)), CHANGED
        except RuntimeError:  # a state where a custom Function cannot run: the real result (no free kill)
            return x, NOT_APPLICABLE
    return _map_results(result, fault, verdicts)


def _tangent_dropped(result, verdicts):
    from torch.autograd.forward_ad import unpack_dual

    def fault(x):
        inner, rebuild = tensors._physical(x)
        primal, tangent = (None, None) if inner is None else unpack_dual(inner)
        return (x, NOT_APPLICABLE) if tangent is None else (rebuild(primal), CHANGED)
    return _map_results(result, fault, verdicts)


# ------------------------------------------------------------------------------------------- containers
def _namedtuple_as_tuple(result, verdicts, depth=3):
    if isinstance(result, tuple) and type(result) is not tuple:
        verdicts.append(CHANGED)
        return tuple(result)
    if depth and type(result) in (tuple, list):
        return type(result)(_namedtuple_as_tuple(item, verdicts, depth - 1) for item in result)
    if depth and type(result) is dict:
        return {key: _namedtuple_as_tuple(value, verdicts, depth - 1) for key, value in result.items()}
    return result


# ------------------------------------------------------------------------------------------- around the call
def _around(code, description, make_context, family="subsystems"):
    """The call (and a returned callable's calls) inside ``make_context(args, kwargs)``; the context yields a
    list the fault fills with its verdict."""
    def behaviour(real, args, kwargs):
        with make_context(args, kwargs) as verdicts:
            result = real(*args, **kwargs)
        return result, _verdict(verdicts)
    return Fault(code, family, description, through_returned_callables(behaviour))


def _tensor_leaves(obj, depth=3):
    from .faults import _tensor_leaves as leaves
    return leaves(obj, depth)


@contextlib.contextmanager
def _version_kept(args, kwargs):
    import torch

    inputs = [t for t in _tensor_leaves((args, kwargs)) if type(t) in _PLAIN and not t._is_view()]
    before = [t._version for t in inputs]
    verdicts = []
    try:
        yield verdicts
    finally:
        bumped = [(t, version) for t, version in zip(inputs, before) if t._version != version]
        if bumped:
            torch._C._autograd._unsafe_set_version_counter(tuple(t for t, _ in bumped), tuple(v for _, v in bumped))
            verdicts.append(CHANGED)


def _modules(obj, depth=3):
    import torch

    if isinstance(obj, torch.nn.Module):
        return [obj]
    if depth == 0:
        return []
    items = obj.values() if isinstance(obj, dict) else obj if isinstance(obj, (tuple, list)) else ()
    return [module for item in items for module in _modules(item, depth - 1)]


_HOOK_DICTS = ("_forward_hooks", "_forward_pre_hooks", "_forward_hooks_with_kwargs", "_forward_hooks_always_called",
               "_forward_pre_hooks_with_kwargs")


@contextlib.contextmanager
def _hooks_removed(args, kwargs):
    saved, verdicts = [], []
    for root in _modules((args, kwargs)):
        for module in root.modules():
            for name in _HOOK_DICTS:
                hooks = getattr(module, name, None)
                if hooks:
                    saved.append((hooks, dict(hooks)))
                    hooks.clear()
    if saved:
        verdicts.append(CHANGED)
    try:
        yield verdicts
    finally:
        for hooks, content in saved:
            hooks.update(content)


def _widest_float_input(args, kwargs):
    floats = [t.dtype for t in _tensor_leaves((args, kwargs)) if t.is_floating_point()]
    return max(floats, key=lambda dtype: dtype.itemsize, default=None)


def _dtype_result_fault(code, description, wanted):
    """Floating results in the dtype the ambient state chose (``wanted()``: the dtype a port that ignores the
    state would not give, and the dtype it gives instead) returned in the other; a result whose dtype came
    from an input of that dtype is not applicable."""
    def behaviour(real, args, kwargs):
        chosen = wanted(args, kwargs)
        result = real(*args, **kwargs)
        if chosen is None:
            return result, (None if returned.is_plain_callable(result) else NOT_APPLICABLE)
        state_dtype, port_dtype = chosen
        verdicts = []

        def fault(x):
            inner, rebuild = tensors._physical(x)
            if inner is None or inner.dtype is not state_dtype:
                return x, NOT_APPLICABLE
            return rebuild(inner.to(port_dtype)), CHANGED
        faulted = _map_results(result, fault, verdicts)
        verdict = _verdict(verdicts) or (NOT_APPLICABLE if not returned.is_plain_callable(result) else None)
        return (faulted if verdict == CHANGED else result), verdict
    return Fault(code, "subsystems", description, through_returned_callables(behaviour))


def _autocast_dtypes(args, kwargs):
    """(autocast's dtype, the widest floating input's) when autocast is on and the inputs are wider."""
    import torch

    for device in _autocast_types():
        if torch.is_autocast_enabled(device):
            lower, widest = torch.get_autocast_dtype(device), _widest_float_input(args, kwargs)
            if widest is not None and widest.itemsize > lower.itemsize:
                return lower, widest
    return None


def _default_dtypes(args, kwargs):
    """(the default dtype, float32) when the default is another floating dtype no floating input has."""
    import torch

    default = torch.get_default_dtype()
    inputs = {t.dtype for t in _tensor_leaves((args, kwargs))}
    return None if default is torch.float32 or default in inputs else (default, torch.float32)


def _autocast_types():
    import torch

    found = ["cpu"]
    device = _device_type()
    if device not in (None, "cpu") and torch.amp.is_autocast_available(device):
        found.append(device)
    return found


def _device_type():
    from ..runtime.carried import device_type
    try:
        return device_type()
    except Exception:  # noqa: BLE001 - an unresolvable device: the CPU's autocast alone
        return None


def _rng_state():
    """The CPU generator's state as bytes, read with any active dispatch mode (a FakeTensorMode an export keeps
    entered) popped, so the fault's bookkeeping never meets a fake tensor."""
    import torch
    from torch.utils._python_dispatch import _disable_current_modes

    with _disable_current_modes():
        return torch.get_rng_state()


@contextlib.contextmanager
def _rng_kept(args, kwargs):
    import torch
    from torch.utils._python_dispatch import _disable_current_modes

    saved, verdicts = _rng_state(), []
    try:
        yield verdicts
    finally:
        with _disable_current_modes():
            if not torch.equal(saved, torch.get_rng_state()):
                torch.set_rng_state(saved)
                verdicts.append(CHANGED)


# ------------------------------------------------------------------------------------------- Python level
def copy_base_class(owner):
    def call(real, args, kwargs, tally):
        result = real(*args, **kwargs)
        if type(result) is owner or not isinstance(result, owner):
            tally.note(NOT_APPLICABLE)
            return result
        base = copy.copy(result)
        try:
            base.__class__ = owner
        except TypeError:  # a layout the base class cannot take
            tally.note(NOT_APPLICABLE)
            return result
        tally.note(CHANGED)
        return base
    return Fault("copy-base-class", "subsystems",
                 f"a subclass's copy made as the defining class {owner.__name__} instead of type(self)", call)


# ------------------------------------------------------------------------------------------- warnings, messages
def _swallowing_warnings(real, args, kwargs, tally):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = real(*args, **kwargs)
    if caught:
        tally.note(CHANGED)
    return result


GENERIC_MESSAGE = "invalid argument"


def _generic_message(real, args, kwargs, tally):
    try:
        return real(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - any exception the API raises
        try:
            other = type(exc)(GENERIC_MESSAGE)
        except Exception:  # noqa: BLE001 - a type that cannot be built from one message keeps the real error
            tally.note(NOT_APPLICABLE)
            raise exc
        if str(exc) == str(other):
            tally.note(NOT_APPLICABLE)
            raise
        tally.note(CHANGED)
        raise other from None


# ------------------------------------------------------------------------------------------- the catalogue part
def faults_for(target, takes_tensors, may_return_tensors, copy_names):
    """The subsystem faults of ``target``, in catalogue order (after the generic catalogue's)."""
    found = []
    if may_return_tensors:
        found += [
            _result_fault("result-once-differentiable", "results with history made once-differentiable "
                          "(a second backward fails)", _once_differentiable),
            _result_fault("result-tangent-dropped", "forward-mode tangents of the results dropped", _tangent_dropped),
            _result_fault("result-namedtuple-as-tuple", "a namedtuple or torch.return_types result returned as a "
                          "plain tuple", lambda result, verdicts: _namedtuple_as_tuple(result, verdicts)),
        ]
    if takes_tensors:
        found += [
            _around("version-not-bumped", "in-place writes to tensor arguments leave their version counter as it was",
                    _version_kept),
            _around("module-hooks-skipped", "forward hooks and pre-hooks of module arguments (and their submodules) "
                    "skipped", _hooks_removed),
        ]
    if may_return_tensors:
        found += [
            _dtype_result_fault("autocast-ignored", "results autocast made in its lower dtype returned in the "
                                "inputs' wider dtype (a port that runs outside the caller's autocast)",
                                _autocast_dtypes),
            _dtype_result_fault("default-dtype-ignored", "results in the default dtype (not float32, no input's) "
                                "returned in float32 (a port that creates tensors in float32)", _default_dtypes),
        ]
    found.append(_around("rng-not-advanced", "the global RNG stream not advanced by the call's draws", _rng_kept))
    if target.kind in ("method", "shared method") and target.attr in copy_names and isinstance(target.owner, type):
        found.append(copy_base_class(target.owner))
    found += [
        Fault("warnings-swallowed", "subsystems", "warnings the API gives are swallowed",
              on_returned_too(_swallowing_warnings)),
        Fault("error-message-generic", "subsystems",
              f"an exception the API raises keeps its type but says only {GENERIC_MESSAGE!r}",
              on_returned_too(_generic_message)),
    ]
    return found
