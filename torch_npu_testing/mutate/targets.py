# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""The API a mutant replaces: resolved by dotted name, classified by kind, replaced wherever a test reaches it.

Kinds (:data:`KINDS`), as the fault catalogue sees them:

- ``python function``: a module-level function (``aot_export_joint_with_descriptors``; ``_add_batch_dim``
  from torch 2.9, a Python wrapper);
- ``C builtin``: ``_add_batch_dim`` on torch 2.7.1, which has no ``inspect.signature``: its parameters are
  read from the pybind docstring's first line (``_add_batch_dim(arg0: torch.Tensor, arg1: int, ...)``);
- ``method``: a function of a class, reached through the class (``set_grad_enabled.clone``);
- ``C method``: a method descriptor of a C type reached through a Python class (``torch.Tensor.addcdiv``,
  defined on ``torch._C.TensorBase``): parameters from its docstring's first line, ``self`` first; the
  replacement is set on the named class, shadowing the inherited descriptor, and removed again;
- ``shared method``: a class function bound to one instance (``torch._functorch.config.patch`` is
  ``ConfigModule.patch`` bound to that module; ``torch._dynamo.config.patch`` is the same function). The
  replacement acts only when ``self`` is the target instance, as :mod:`torch_npu_testing.suite.api_calls`
  matches it; assigning to the module attribute is impossible (``ConfigModule.__setattr__`` raises).

The kind is the shared classifier's (:mod:`torch_npu_testing.task.apikind`): its ``form`` is the kind here,
its ``contract`` (context manager, config module, function, C builtin) is ``Target.contract``.

Replacement (:func:`install`): a Python function without a closure keeps its identity and gets a
trampoline as its code, so every alias reaches the mutant, including bound methods that decorators captured
at import (``context_decorator(self.clone, f)``). Anything else (a C builtin, a closure) is replaced by
identity: the defining module's attribute and every alias bound to the same object in loaded torch
modules, in FILE's module and in the owning class (``torch.set_grad_enabled`` is
``torch.autograd.grad_mode.set_grad_enabled``). Both are undone by the returned ``restore``.
"""
import inspect
import sys
import types
from dataclasses import dataclass, field
from typing import Any, Optional

from ..suite.api_calls import INTERNAL_PACKAGES, resolve
from ..task import apikind

KINDS = apikind.FORMS
EMPTY = apikind.NO_DEFAULT
_HOOK_PREFIX = "__torch_npu_testing_mutant_"


@dataclass(frozen=True)
class Param:
    """One parameter: ``kind`` is self / positional / keyword (keyword-only) / var_positional / var_keyword."""

    name: str
    kind: str
    default: Any = EMPTY
    annotation: str = ""

    @property
    def has_default(self):
        return self.default is not EMPTY


@dataclass
class Target:
    """A resolved API: ``obj`` as named, ``function`` what gets replaced, ``owner`` where it lives."""

    name: str
    obj: Any
    kind: str
    function: Any
    owner: Any
    attr: str
    bound_self: Any = None
    params: list = field(default_factory=list)
    returns: str = ""
    returns_class: Optional[type] = None
    signature_source: str = "inspect.signature"
    contract: str = ""

    @property
    def cm_class(self):
        """True for a method of a context-manager class (``set_grad_enabled.clone``)."""
        return self.kind == "method" and apikind.is_context_manager_class(self.owner)


class AbsentApi(Exception):
    """The API does not exist in this torch; the message says which part is missing."""


def _annotation_text(annotation):
    if annotation is EMPTY or annotation is None:
        return ""
    return annotation if isinstance(annotation, str) else getattr(annotation, "__name__", None) or str(annotation)


def _returns_class(function, text):
    """The class a return annotation names, when it is one (``"ContextDecorator"``, ``set_grad_enabled``)."""
    annotation = getattr(function, "__annotations__", {}).get("return")
    if isinstance(annotation, type):
        return annotation
    name = text.strip("'\"").rsplit(".", 1)[-1]
    found = getattr(function, "__globals__", {}).get(name)
    return found if isinstance(found, type) else None


def pybind_params(builtin):
    """``(params, returns)`` from a C builtin's docstring's first line (:func:`apikind.docstring_params`),
    or ``([], "")`` when it has none."""
    found, returns = apikind.docstring_params(builtin)
    return [Param(name, kind, default, annotation) for name, kind, default, annotation in found], returns


_KIND_NAMES = {inspect.Parameter.POSITIONAL_ONLY: "positional", inspect.Parameter.POSITIONAL_OR_KEYWORD: "positional",
               inspect.Parameter.KEYWORD_ONLY: "keyword", inspect.Parameter.VAR_POSITIONAL: "var_positional",
               inspect.Parameter.VAR_KEYWORD: "var_keyword"}


def signature_params(function, skip_self):
    """``(params, returns)`` of a Python function by ``inspect.signature`` (a method's first is of kind "self")."""
    signature = inspect.signature(function)
    params = [Param(p.name, _KIND_NAMES[p.kind], p.default, _annotation_text(p.annotation))
              for p in signature.parameters.values()]
    if skip_self and params:
        params[0] = Param(params[0].name, "self")
    return params, _annotation_text(signature.return_annotation)


def _owner_and_attr(name):
    owner_name, _, attr = name.rpartition(".")
    owner, _ = resolve(owner_name) if owner_name else (None, None)
    return owner, attr


def resolve_target(name):
    """The :class:`Target` named ``name``; AbsentApi when this torch lacks it, ValueError for a non-callable."""
    obj, absent = resolve(name)
    if absent:
        raise AbsentApi(absent)
    owner, attr = _owner_and_attr(name)
    kind = apikind.classify(obj, owner, attr)
    if kind.form == "shared method":
        function = obj.__func__
        cls = next((c for c in type(obj.__self__).__mro__ if c.__dict__.get(function.__name__) is function), None)
        if cls is None:
            raise ValueError(f"{name}: the class that defines {function.__name__} was not found")
        target = Target(name, obj, kind.form, function, cls, function.__name__, bound_self=obj.__self__)
    elif kind.form in ("python function", "method"):
        target = Target(name, obj, kind.form, obj, owner, attr)
    elif kind.form is not None:
        source = "pybind docstring" if kind.form == "C builtin" else "docstring"
        target = Target(name, obj, kind.form, obj, owner, attr, signature_source=source)
    else:
        raise ValueError(f"{name} is a {type(obj).__name__}: mutate replaces functions, C builtins and methods "
                         "(name a class's method, such as its clone)")
    target.contract = kind.contract
    if target.kind == "C builtin":
        target.params, target.returns = pybind_params(obj)
    elif target.kind == "C method":
        params, target.returns = pybind_params(obj)
        target.params = [Param("self", "self")] + params
    else:
        target.params, target.returns = signature_params(target.function, target.kind != "python function")
    target.returns_class = _returns_class(target.function, target.returns)
    return target


# ------------------------------------------------------------------------------------------- replacement
def _alias_homes(extra_modules, packages=()):
    """Modules whose attributes may alias the target: loaded torch (and ``packages``) modules, ``extra_modules``."""
    roots = set(INTERNAL_PACKAGES) | set(packages)
    homes = [module for module_name, module in list(sys.modules.items())
             if module is not None and module_name.split(".")[0] in roots]
    return homes + [module for module in extra_modules if module is not None]


def _replace_by_identity(target, replacement, extra_modules, packages):
    """Bind ``replacement`` wherever ``target.function`` is bound; the (holder, name) pairs replaced."""
    replaced = []
    holders = _alias_homes(extra_modules, packages) + ([target.owner] if isinstance(target.owner, type) else [])
    for holder in holders:
        try:
            names = [key for key, value in list(vars(holder).items()) if value is target.function]
        except TypeError:
            continue
        for key in names:
            try:
                setattr(holder, key, replacement)
            except (AttributeError, TypeError):
                continue
            replaced.append((holder, key))
    return replaced


def _trampoline_code(name, hook_name):
    namespace = {}
    exec(compile(f"def {name}(*args, **kwargs):\n    return {hook_name}(args, kwargs)\n",  # noqa: S102
                 __file__, "exec"), namespace)
    return namespace[name].__code__


def _swap_code(function, hook):
    """Give ``function`` a trampoline calling ``hook(real, args, kwargs, caller)``; return the restore."""
    saved = (function.__code__, function.__defaults__, function.__kwdefaults__)
    real = types.FunctionType(function.__code__, function.__globals__, function.__name__, function.__defaults__)
    real.__kwdefaults__ = function.__kwdefaults__
    real.__qualname__ = function.__qualname__
    hook_name = f"{_HOOK_PREFIX}{id(function)}"
    had_signature = "__signature__" in function.__dict__
    signature = inspect.signature(function)

    def call_hook(args, kwargs):
        return hook(real, args, kwargs, sys._getframe(2))

    function.__globals__[hook_name] = call_hook
    function.__signature__ = signature
    function.__code__ = _trampoline_code(function.__name__, hook_name)
    function.__defaults__, function.__kwdefaults__ = None, None

    def restore():
        function.__code__, function.__defaults__, function.__kwdefaults__ = saved
        function.__globals__.pop(hook_name, None)
        if not had_signature:
            del function.__signature__
    return restore


def _shadow_on_class(target, replacement):
    """Set ``replacement`` on the named class (a C type's descriptor cannot be replaced where it lives)."""
    owner, attr = target.owner, target.attr
    own = attr in vars(owner)
    setattr(owner, attr, replacement)

    def restore():
        if own:
            setattr(owner, attr, target.function)
        else:
            delattr(owner, attr)
    return restore


def install(target, hook, extra_modules=(), packages=()):
    """Route every call of ``target`` through ``hook(real, args, kwargs, caller_frame)``; return ``restore``."""
    function = target.function
    if isinstance(function, types.FunctionType) and not function.__code__.co_freevars:
        return _swap_code(function, hook)

    def replacement(*args, **kwargs):
        return hook(function, args, kwargs, sys._getframe(1))

    for attribute in ("__module__", "__name__", "__qualname__", "__doc__"):
        try:
            setattr(replacement, attribute, getattr(function, attribute))
        except (AttributeError, TypeError):
            pass
    replacement.__wrapped__ = function
    if target.kind == "C method":
        return _shadow_on_class(target, replacement)
    replaced = _replace_by_identity(target, replacement, extra_modules, packages)

    def restore():
        for holder, key in reversed(replaced):
            setattr(holder, key, function)
    return restore
