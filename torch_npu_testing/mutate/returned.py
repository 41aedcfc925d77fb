# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Faults on objects the API returned: they act whoever calls them.

A returned context manager (a ``ConfigPatch``, a ``set_grad_enabled`` made by ``clone``) keeps its type: the
fault is a behaviour for one dunder of that one object, found through a wrapper installed once on its class
(the instance's own ``__enter__`` would be ignored by ``with``, and a subclass would change ``type(obj)``).
A returned plain function is wrapped with ``functools.wraps``; another callable object gets its class's
``__call__`` wrapped the same way as a dunder.

A behaviour is ``behaviour(bound_original, args, kwargs)``. :func:`restore_all` undoes the class wrappers
(forked children never need it; in-process callers do).
"""
import functools
import types

_marks = {}       # id(obj) -> (obj, {dunder: behaviour}); the object is kept alive, so its id is not reused
_installed = {}   # (class, dunder) -> (had own attribute, original)


def _find(cls, dunder):
    for klass in cls.__mro__:
        if dunder in klass.__dict__:
            return klass.__dict__[dunder]
    return None


def _install(cls, dunder):
    original = _find(cls, dunder)
    if original is None:
        return False
    if (cls, dunder) in _installed:
        return True

    def dunder_wrapper(self, *args, **kwargs):
        entry = _marks.get(id(self))
        behaviour = entry[1].get(dunder) if entry is not None and entry[0] is self else None
        if behaviour is None:
            return original(self, *args, **kwargs)
        return behaviour(functools.partial(original, self), args, kwargs)

    dunder_wrapper.__name__ = dunder_wrapper.__qualname__ = dunder
    _installed[(cls, dunder)] = (dunder in cls.__dict__, original)
    setattr(cls, dunder, dunder_wrapper)
    return True


def mark(obj, dunder, behaviour):
    """Give ``obj``'s ``dunder`` the ``behaviour``; False when its class has no such method to wrap."""
    if not _install(type(obj), dunder):
        return False
    _marks.setdefault(id(obj), (obj, {}))[1][dunder] = behaviour
    return True


def is_context_manager(obj):
    cls = type(obj)
    return _find(cls, "__enter__") is not None and _find(cls, "__exit__") is not None


def is_plain_callable(obj):
    """A callable result that is neither a tensor, a class nor a context manager (those are faulted otherwise)."""
    import torch

    if isinstance(obj, (torch.Tensor, type)) or not callable(obj) or is_context_manager(obj):
        return False
    return not isinstance(obj, torch.nn.Module)


def wrap_callable(fn, behaviour):
    """``fn`` with every call going through ``behaviour(fn, args, kwargs)``."""
    if isinstance(fn, (types.FunctionType, types.MethodType, functools.partial)):
        @functools.wraps(fn)
        def faulted(*args, **kwargs):
            return behaviour(fn, args, kwargs)
        return faulted
    if mark(fn, "__call__", behaviour):
        return fn
    return fn


def restore_all():
    for (cls, dunder), (had_own, original) in reversed(list(_installed.items())):
        if had_own:
            setattr(cls, dunder, original)
        else:
            delattr(cls, dunder)
    _installed.clear()
    _marks.clear()
