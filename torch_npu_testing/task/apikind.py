# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""The kind of an API: the one classifier ``new`` (what to draft) and ``mutate`` (which faults, how to
replace it) share.

:func:`classify` answers two questions about a resolved object (and the object that holds it):

- ``contract`` (:data:`CONTRACTS`), the generic contract of the API, which decides what a draft tests:

  - ``context manager``: a class with ``__enter__`` and ``__exit__`` (``torch.no_grad``, which is also a
    decorator), a method of such a class (``torch.no_grad.clone``: ``copy`` is True for ``clone``/``copy``/
    ``__copy__``), a function made by ``contextlib.contextmanager``, or a function whose return annotation
    names a context-manager class;
  - ``config module``: a torch config module or a method bound to one (``torch._dynamo.config.patch``);
  - ``C builtin``: a function or method without Python source (``torch._C._set_grad_enabled``,
    ``torch.Tensor.addcdiv``);
  - ``function``: any other Python function or method, over tensors or modules (``torch.func.functional_call``);
  - ``other``: a module, another class, data (no generic contract drafted).

- ``form`` (:data:`FORMS`), how ``mutate`` replaces it: ``python function``, ``method`` (a function of a
  class), ``shared method`` (a class function bound to one instance), ``C builtin``, ``C method`` (a C
  type's method descriptor); None for what it cannot replace (a class, a module, data).

This module needs only the standard library (it reads objects, imports nothing), so a probe run by path in
another interpreter may load it too.
"""
import ast
import inspect
import re
import types
from dataclasses import dataclass

CONTRACTS = ("context manager", "config module", "function", "C builtin", "other")
FORMS = ("python function", "C builtin", "method", "shared method", "C method")
COPY_NAMES = ("clone", "copy", "__copy__")
_DOC_SIGNATURE = re.compile(r"^\s*\w+\((?P<params>.*)\)\s*->\s*(?P<returns>.+?)\s*$")
NO_DEFAULT = inspect.Parameter.empty


@dataclass(frozen=True)
class ApiKind:
    contract: str
    form: str = None
    copy: bool = False


def is_context_manager_class(obj):
    return isinstance(obj, type) and hasattr(obj, "__enter__") and hasattr(obj, "__exit__")


def is_config_module(obj):
    """A torch config module (``torch._dynamo.config``): its class is, or derives from, ``ConfigModule``."""
    return isinstance(obj, types.ModuleType) and any(cls.__name__ == "ConfigModule" for cls in type(obj).__mro__)


def form(obj, owner):
    """How ``mutate`` replaces ``obj`` (held by ``owner``): one of :data:`FORMS`, or None."""
    if inspect.ismethod(obj) and not isinstance(obj.__self__, type):
        return "shared method"
    if isinstance(obj, types.FunctionType):
        return "method" if isinstance(owner, type) else "python function"
    if isinstance(obj, types.BuiltinFunctionType):
        return "C builtin"
    if isinstance(obj, (types.MethodDescriptorType, types.WrapperDescriptorType)) and isinstance(owner, type):
        return "C method"
    return None


def _makes_context_manager(function):
    """A ``contextlib.contextmanager`` function, or one annotated to return a context-manager class."""
    wrapped = getattr(function, "__wrapped__", None)
    if wrapped is not None and (inspect.isgeneratorfunction(wrapped) or inspect.isasyncgenfunction(wrapped)):
        return True
    annotation = getattr(function, "__annotations__", {}).get("return")
    if isinstance(annotation, str):
        annotation = getattr(function, "__globals__", {}).get(annotation.strip("'\"").rsplit(".", 1)[-1])
    return is_context_manager_class(annotation)


def contract(obj, owner):
    """The generic contract of ``obj`` (held by ``owner``): one of :data:`CONTRACTS`."""
    if is_config_module(obj) or (inspect.ismethod(obj) and is_config_module(obj.__self__)):
        return "config module"
    if is_context_manager_class(obj):
        return "context manager"
    shape = form(obj, owner)
    if shape in ("method", "C method") and is_context_manager_class(owner):
        return "context manager"
    if shape in ("python function", "method", "shared method"):
        function = obj.__func__ if inspect.ismethod(obj) else obj
        return "context manager" if _makes_context_manager(function) else "function"
    if shape in ("C builtin", "C method"):
        return "C builtin"
    return "other"


def classify(obj, owner, attr=""):
    """:class:`ApiKind` of ``obj`` (``owner.attr``)."""
    found = contract(obj, owner)
    copy = found == "context manager" and attr in COPY_NAMES and is_context_manager_class(owner)
    return ApiKind(found, form(obj, owner), copy)


def _split_top_level(text):
    parts, depth, current = [], 0, ""
    for char in text:
        if char in "[(":
            depth += 1
        elif char in "])":
            depth -= 1
        if char == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += char
    return [part for part in parts + [current.strip()] if part]


def _literal(text):
    """A docstring's default as its value (``1``, ``None``, ``'x'``); the text itself when it is no literal."""
    if not text.strip():
        return NO_DEFAULT
    try:
        return ast.literal_eval(text.strip())
    except (ValueError, SyntaxError):
        return text.strip()


def docstring_params(builtin):
    """``([(name, kind, default, annotation)], returns)`` of a C builtin from its docstring's first line
    (``_add_batch_dim(arg0: torch.Tensor, arg1: int) -> Tensor``; keyword-only after ``*``); ``([], "")``
    when it has none. ``kind`` is positional or keyword; ``default`` :data:`NO_DEFAULT` when there is none."""
    first = (getattr(builtin, "__doc__", None) or "").strip().splitlines()[:1]
    match = _DOC_SIGNATURE.match(first[0]) if first else None
    if match is None:
        return [], ""
    params, kind = [], "positional"
    for item in _split_top_level(match.group("params")):
        if item == "*":
            kind = "keyword"
            continue
        head, _, default = item.partition("=")
        name, _, annotation = head.partition(":")
        params.append((name.strip(), kind, _literal(default), annotation.strip()))
    return params, match.group("returns")
