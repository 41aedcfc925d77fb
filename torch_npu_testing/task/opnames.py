# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Every name a test may call an API by, read from this interpreter's torch (``search`` needs it).

- Re-exports: the same object bound under another dotted name (``torch.set_grad_enabled.clone``), as
  ``locate`` finds them (:func:`torch_npu_testing.task.where_defined.locate`'s ``aliases``), plus the name in
  the module whose file defines it (``torch._functorch.eager_transforms.jacrev`` for ``torch.func.jacrev``,
  which sets its ``__module__`` to ``torch.func``) and, for an API of ``torch._functorch``, the ``functorch``
  package's deprecated thin wrapper of the same name (``functorch.jacrev``, defined in
  ``torch._functorch.deprecated``), which the upstream functorch tests call.
- Documented aliases of an op: torch says so in the first lines of the alias's docstring ("Alias for
  :func:`torch.movedim`." on ``torch.moveaxis``). The alias group is the canonical op and every name whose
  docstring points at it, whichever of them was asked for.
- Method forms of an op: for ``torch.<op>`` (and ``torch.Tensor.<op>``) whose name ``torch.Tensor`` also
  has, ``x.<op>(...)`` and, where it exists, the in-place ``x.<op>_(...)``, for the op and each alias.

:func:`names` returns ``{"api", "torch", "targets", "aliases", "documented_aliases", "methods", "module"}``
or raises :class:`UsageError` when torch is not importable here (:func:`toolspython.require_torch`: one line
naming the kit's tools interpreter) or the API does not resolve in it.
"""
import importlib.util
import re
import sys

from ..common.errors import UsageError
from ..common.toolspython import require_torch

ALIAS_RE = re.compile(r"Alias (?:for|of) :(?:func|meth|class):`~?(torch\.[\w.]+)`")
# The namespaces whose docstrings name documented aliases (ops and their method forms).
ALIAS_NAMESPACES = ("torch", "torch.Tensor", "torch.special", "torch.linalg", "torch.nn.functional")


def _documented_aliases():
    """``{alias: canonical}`` from the docstrings of the alias namespaces."""
    import torch
    found = {}
    for namespace in ALIAS_NAMESPACES:
        owner = torch
        for part in namespace.split(".")[1:]:
            owner = getattr(owner, part, None)
        for key in dir(owner) if owner is not None else ():
            doc = getattr(getattr(owner, key, None), "__doc__", None)
            match = ALIAS_RE.search(doc[:400]) if isinstance(doc, str) else None
            if match and match.group(1) != f"{namespace}.{key}":
                found[f"{namespace}.{key}"] = match.group(1)
    return found


def alias_group(api, table=None):
    """The documented alias group of ``api`` (canonical first), or ``[]`` when it has none."""
    table = _documented_aliases() if table is None else table
    spelled = api.replace("torch.Tensor.", "torch.", 1) if api.startswith("torch.Tensor.") else api
    canonical = table.get(api) or table.get(spelled) or spelled
    group = [name for name, target in table.items() if target == canonical]
    return [canonical] + sorted(group) if group else []


def method_forms(names):
    """``x.<leaf>`` / ``x.<leaf>_`` method names for the ops among ``names`` (``torch.<op>``, ``torch.Tensor.<op>``)."""
    import torch
    methods = []
    for name in names:
        parts = name.split(".")
        if parts[:-1] not in (["torch"], ["torch", "Tensor"]):
            continue
        for leaf in (parts[-1], parts[-1] + "_"):
            if callable(getattr(torch.Tensor, leaf, None)) and leaf not in methods:
                methods.append(leaf)
    return methods


def defining_names(api):
    """``[module.leaf]`` for the module whose file defines ``api``'s object (when it is bound there under its
    leaf) and the ``functorch`` package's deprecated wrapper of the same leaf."""
    import inspect
    from . import where_defined
    obj = where_defined.resolve(api.split("."))[-1][1]
    leaf = api.rsplit(".", 1)[-1]
    try:
        source = inspect.getsourcefile(inspect.unwrap(obj)) if callable(obj) else None
    except TypeError:
        source = None
    found = [f"{name}.{leaf}" for name, module in list(sys.modules.items())
             if source and name.startswith("torch") and getattr(module, "__file__", None) == source
             and vars(module).get(leaf) is obj]
    if any(name.startswith("torch._functorch.") for name in found) and importlib.util.find_spec("functorch"):
        import functorch
        wrapper = getattr(functorch, leaf, None)
        if callable(wrapper) and getattr(wrapper, "__module__", None) == "torch._functorch.deprecated":
            found.append(f"functorch.{leaf}")
    return [name for name in found if name != api]


def names(api, tool="search"):
    """Every name ``api`` is called by here; UsageError without torch (naming ``tool``) or when ``api`` does not
    resolve."""
    require_torch(tool)
    from . import locate
    row = locate.probe_here(api)
    if not row.get("found"):
        raise UsageError(f"{api} does not resolve in torch {row.get('torch')} ({sys.executable}): "
                         f"{row.get('error')}; check the name")
    reexports = list(dict.fromkeys([alias for alias in row.get("aliases") or [] if alias != api]
                                   + defining_names(api)))
    documented = [name for name in alias_group(api) if name != api]
    targets = list(dict.fromkeys([api] + reexports + documented))
    tensor_forms = [f"torch.Tensor.{name.rsplit('.', 1)[-1]}" for name in targets if name.count(".") == 1]
    methods = method_forms(targets)
    targets += [name for name in tensor_forms if name.rsplit(".", 1)[-1] in methods and name not in targets]
    return {"api": api, "torch": row["torch"], "targets": targets, "aliases": reexports,
            "documented_aliases": documented, "methods": methods, "module": row.get("module")}
