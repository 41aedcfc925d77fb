# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Context-manager and decorator faults, on the context manager the API returns.

The API's call is real; the object it returns gets one faulted dunder (:func:`returned.mark`), which acts
whoever calls it (``with``, ``contextlib``, a decorator's wrapper). A result that is not a context manager,
or a decorator use where the fault cannot apply (decorating a class returns a class), is not applicable.
"""
import types

from . import returned
from .faults import CHANGED, NOT_APPLICABLE, Fault


def _exit_not_restoring(tally):
    def behaviour(bound, args, kwargs):
        tally.note(CHANGED)
        return None
    return "__exit__", behaviour


def _enter_doing_nothing(tally):
    def behaviour(bound, args, kwargs):
        tally.note(CHANGED)
        return None
    return "__enter__", behaviour


def _decorator_unchanged(tally):
    def behaviour(bound, args, kwargs):
        decorated = bound(*args, **kwargs)
        func = args[0] if len(args) == 1 and not kwargs else None
        if func is None or decorated is func or not callable(func) or isinstance(func, type):
            tally.note(NOT_APPLICABLE)
            return decorated
        tally.note(CHANGED)
        return func
    return "__call__", behaviour


def _wrapper_without_wraps(tally):
    def behaviour(bound, args, kwargs):
        decorated = bound(*args, **kwargs)
        if not isinstance(decorated, types.FunctionType) or (args and decorated is args[0]):
            tally.note(NOT_APPLICABLE)
            return decorated

        def plain(*call_args, **call_kwargs):
            return decorated(*call_args, **call_kwargs)
        tally.note(CHANGED)
        return plain
    return "__call__", behaviour


CONTEXT_FAULTS = (
    ("cm-exit-no-restore", "__exit__ does not restore (it does nothing)", _exit_not_restoring),
    ("cm-enter-noop", "__enter__ does nothing", _enter_doing_nothing),
    ("decorator-unchanged", "used as a decorator, it returns the function unchanged", _decorator_unchanged),
    ("decorator-no-wraps", "the decorator's wrapper drops functools.wraps (name, docstring, __wrapped__)",
     _wrapper_without_wraps),
)


def _on_result(make_behaviour):
    def call(real, args, kwargs, tally):
        result = real(*args, **kwargs)
        dunder, behaviour = make_behaviour(tally)
        if not returned.is_context_manager(result) or not returned.mark(result, dunder, behaviour):
            tally.note(NOT_APPLICABLE)
        return result
    return call


def context_faults():
    return [Fault(code, "context managers and decorators", text, _on_result(make))
            for code, text, make in CONTEXT_FAULTS]
