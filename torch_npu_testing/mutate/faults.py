# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""The faults themselves: each is one mutant's behaviour for one in-scope call of the API.

``Fault.call(real, args, kwargs, tally)`` replaces the call and notes one verdict per call in the
:class:`Tally`: *changed* (the fault altered the call), *no effect* (a result fault that changed nothing
on this call's real result), *not applicable* (it would raise where the real call did not, or cannot
apply to the value: the real behaviour is used). A call where the fault's condition never arises (no other
value passed for a defaulted parameter, no exception raised) notes nothing: a fault never noted was not
reached. Argument faults replace the real call, so they are never judged for effect.
"""
import collections
from dataclasses import dataclass
from typing import Callable

from . import returned, tensors

CHANGED, NO_EFFECT, NOT_APPLICABLE = "changed", "no effect", "not applicable"


class Tally:
    """Per mutant: in-scope calls, and verdicts per call (``{verdict: count}``)."""

    def __init__(self):
        self.calls = 0
        self.verdicts = collections.Counter()

    def note(self, verdict):
        if verdict is not None:
            self.verdicts[verdict] += 1

    def to_dict(self):
        return {"calls": self.calls, CHANGED: self.verdicts[CHANGED], NO_EFFECT: self.verdicts[NO_EFFECT],
                NOT_APPLICABLE: self.verdicts[NOT_APPLICABLE]}


@dataclass(frozen=True)
class Fault:
    """``code`` names the fault in a file (``param-default:arg1``); ``family`` groups it in the docs."""

    code: str
    family: str
    description: str
    call: Callable


def _real_instead(real, args, kwargs, tally):
    tally.note(NOT_APPLICABLE)
    return real(*args, **kwargs)


def _try_faulted(real, args, kwargs, faulted_args, faulted_kwargs, tally):
    """The call with faulted arguments; the real call (not applicable) when that raises."""
    try:
        result = real(*faulted_args, **faulted_kwargs)
    except Exception:  # noqa: BLE001 - a fault must not make the API raise where the real call may not
        return _real_instead(real, args, kwargs, tally)
    tally.note(CHANGED)
    return result


# ------------------------------------------------------------------------------------------- parameters
def _bind(params, args, kwargs):
    """``{name: (where, key)}`` for the passed arguments: where is "args" (index) or "kwargs" (name)."""
    places, index = {}, 0
    for param in params:
        if param.kind == "self":
            index += 1
        elif param.kind == "positional" and index < len(args):
            places[param.name], index = ("args", index), index + 1
        elif param.kind in ("positional", "keyword") and param.name in kwargs:
            places[param.name] = ("kwargs", param.name)
    return places


def _is_default(value, default):
    if value is default:
        return True
    try:
        return type(value) is type(default) and bool(value == default)
    except Exception:  # noqa: BLE001 - a value that cannot be compared (a tensor) is another value
        return False


def _replaced(args, kwargs, where, key, value=None, drop=False):
    args, kwargs = list(args), dict(kwargs)
    if where == "args":
        args[key] = value
    elif drop:
        del kwargs[key]
    else:
        kwargs[key] = value
    return tuple(args), kwargs


def param_default(param, params):
    def call(real, args, kwargs, tally):
        place = _bind(params, args, kwargs).get(param.name)
        if place is None:
            return real(*args, **kwargs)
        value = args[place[1]] if place[0] == "args" else kwargs[place[1]]
        if _is_default(value, param.default):
            return real(*args, **kwargs)
        new_args, new_kwargs = _replaced(args, kwargs, *place, value=param.default, drop=True)
        return _try_faulted(real, args, kwargs, new_args, new_kwargs, tally)
    return Fault(f"param-default:{param.name}", "parameters",
                 f"parameter {param.name} ignored (its default {param.default!r} used) when another value is passed",
                 call)


def param_off_by_one(param, params):
    def call(real, args, kwargs, tally):
        place = _bind(params, args, kwargs).get(param.name)
        value = None if place is None else (args[place[1]] if place[0] == "args" else kwargs[place[1]])
        if type(value) is not int:
            return real(*args, **kwargs)
        new_args, new_kwargs = _replaced(args, kwargs, *place, value=value + 1)
        return _try_faulted(real, args, kwargs, new_args, new_kwargs, tally)
    return Fault(f"param-int+1:{param.name}", "parameters",
                 f"integer parameter {param.name} off by one (+1), where the call still succeeds", call)


def kwargs_dropped(param, params):
    named = {p.name for p in params if p.kind in ("positional", "keyword")}

    def call(real, args, kwargs, tally):
        kept = {key: value for key, value in kwargs.items() if key in named}
        if len(kept) == len(kwargs):
            return real(*args, **kwargs)
        return _try_faulted(real, args, kwargs, args, kept, tally)
    return Fault(f"kwargs-dropped:{param.name}", "parameters",
                 f"keyword arguments collected by **{param.name} dropped (a wrapper that does not forward them)", call)


# ------------------------------------------------------------------------------------------- errors
def _other_type(exc):
    """Another exception type with the same message (``str``), and the same args where that keeps it."""
    other = TypeError if isinstance(exc, RuntimeError) else RuntimeError
    new = other(*exc.args)
    return new if str(new) == str(exc) else other(str(exc))


def raising_other_type(real, args, kwargs, tally):
    try:
        return real(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - any exception the API raises
        tally.note(CHANGED)
        raise _other_type(exc) from exc


def swallowing(real, args, kwargs, tally):
    try:
        return real(*args, **kwargs)
    except Exception:  # noqa: BLE001 - any exception the API raises
        tally.note(CHANGED)
        return None


def on_returned_too(behaviour):
    """``behaviour`` for the API's call, and for calls of the callable or ``__enter__`` of the CM it returns."""
    def call(real, args, kwargs, tally):
        result = behaviour(real, args, kwargs, tally)
        if returned.is_context_manager(result):
            returned.mark(result, "__enter__", lambda bound, a, k: behaviour(bound, a, k, tally))
        elif returned.is_plain_callable(result):
            return returned.wrap_callable(result, lambda fn, a, k: call(fn, a, k, tally))
        return result
    return call


ERROR_FAULTS = (
    ("error-type", "an exception the API raises comes out as another type with the same message", raising_other_type),
    ("error-swallowed", "an exception the API raises is swallowed (the call returns None)", swallowing),
)


def error_faults():
    return [Fault(code, "errors", text, on_returned_too(behaviour)) for code, text, behaviour in ERROR_FAULTS]


# ------------------------------------------------------------------------------------------- state, copies
def grad_mode_flipped():
    import torch

    def call(real, args, kwargs, tally):
        before = torch.is_grad_enabled()
        result = real(*args, **kwargs)
        after = torch.is_grad_enabled()
        if after != before:  # this call is a grad-mode switch itself
            tally.note(NOT_APPLICABLE)
        else:
            torch._C._set_grad_enabled(not after)
            tally.note(CHANGED)
        return result
    return Fault("state-grad-flipped", "state", "grad mode left flipped after the call", call)


def copy_returns_self(name):
    def call(real, args, kwargs, tally):
        tally.note(CHANGED)
        return args[0]
    return Fault("copy-self", "copies", f"{name}() returns self instead of a new object", call)


# ------------------------------------------------------------------------------------------- tensors
def _tensor_leaves(obj, depth=3):
    import torch

    if isinstance(obj, torch.Tensor):
        return [obj]
    if depth == 0:
        return []
    items = obj.values() if isinstance(obj, dict) else obj if isinstance(obj, (tuple, list)) else ()
    return [leaf for item in items for leaf in _tensor_leaves(item, depth - 1)]


def _map_tensors(obj, fn, verdicts):
    import torch

    if isinstance(obj, torch.Tensor):
        new, verdict = fn(obj)
        verdicts.append(verdict)
        return new
    if isinstance(obj, dict) and type(obj) is dict:
        return {key: _map_tensors(value, fn, verdicts) for key, value in obj.items()}
    if isinstance(obj, (tuple, list)) and type(obj) in (tuple, list):
        return type(obj)(_map_tensors(item, fn, verdicts) for item in obj)
    if isinstance(obj, tuple) and hasattr(obj, "_make"):
        return obj._make(_map_tensors(item, fn, verdicts) for item in obj)
    return obj


def _combined(verdicts):
    for verdict in (CHANGED, NO_EFFECT, NOT_APPLICABLE):
        if verdict in verdicts:
            return verdict
    return None


def through_returned_callables(behaviour):
    """``behaviour(real, args, kwargs) -> (result, verdict)`` for the API's call and, when the API returns
    a plain callable, for every call of that callable (whoever makes it)."""
    def call(real, args, kwargs, tally):
        result, verdict = behaviour(real, args, kwargs)
        if returned.is_plain_callable(result):
            return returned.wrap_callable(result, lambda fn, a, k: call(fn, a, k, tally))
        tally.note(verdict)
        return result
    return call


def result_fault(code, description, transform, storage_matters=False):
    def behaviour(real, args, kwargs):
        inputs = _tensor_leaves((args, kwargs))
        result = real(*args, **kwargs)
        verdicts = []
        faulted = _map_tensors(result, lambda x: tensors.apply(transform, x, inputs, storage_matters), verdicts)
        verdict = _combined(verdicts) or (NOT_APPLICABLE if not returned.is_plain_callable(result) else None)
        return (faulted if verdict == CHANGED else result), verdict
    return Fault(code, "tensor results", description, through_returned_callables(behaviour))


# ------------------------------------------------------------------------------------------- tensor arguments
def _contiguous_args(args, kwargs):
    import torch

    changed = []

    def contiguous(x):
        if type(x) in (torch.Tensor, torch.nn.Parameter) and x.layout is torch.strided and not x.is_contiguous():
            changed.append(x)
            return x.contiguous(), CHANGED
        return x, None

    new_args = _map_tensors(tuple(args), contiguous, [])
    new_kwargs = _map_tensors(dict(kwargs), contiguous, [])
    return new_args, new_kwargs, bool(changed)


def contiguous_arguments():
    def behaviour(real, args, kwargs):
        new_args, new_kwargs, changed = _contiguous_args(args, kwargs)
        if not changed:
            return real(*args, **kwargs), None
        try:
            return real(*new_args, **new_kwargs), CHANGED
        except Exception:  # noqa: BLE001 - the fault must not make the call raise
            return real(*args, **kwargs), NOT_APPLICABLE
    return Fault("args-contiguous", "tensor arguments",
                 "tensor arguments passed as contiguous copies (a port that calls .contiguous() first)",
                 through_returned_callables(behaviour))


def _snapshot(leaves):
    import torch

    return [(leaf, leaf.detach().clone()) for leaf in leaves
            if type(leaf) in (torch.Tensor, torch.nn.Parameter) and leaf.layout is torch.strided]


def inplace_dropped():
    import torch

    def behaviour(real, args, kwargs):
        saved = _snapshot(_tensor_leaves((args, kwargs)))
        result = real(*args, **kwargs)
        verdicts = []
        with torch.no_grad():
            for leaf, before in saved:
                if tensors.values_equal(before, leaf):
                    verdicts.append(NO_EFFECT)
                    continue
                try:
                    leaf.copy_(before)
                except RuntimeError:  # an overlapping (expanded) tensor cannot be written back
                    verdicts.append(NOT_APPLICABLE)
                else:
                    verdicts.append(CHANGED)
        return result, _combined(verdicts)
    return Fault("inplace-dropped", "tensor arguments",
                 "in-place writes to tensor arguments lost (a port that computes on a copy)",
                 through_returned_callables(behaviour))
