# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""The family of an API: its owner and the owner's siblings, with every dotted name each is bound to.

``search`` counts a test as *related* when it calls the owner or a sibling, whether or not the file
mentions the API's leaf name: for ``torch.autograd.grad_mode.set_grad_enabled.clone`` the owner is
``set_grad_enabled`` and the siblings are the other public classes of ``torch.autograd.grad_mode`` that
share a base class with it (``no_grad``, ``enable_grad``, ``inference_mode``, ...). Each is known under
all its re-exports (``torch.no_grad``, ``torch.autograd.no_grad``), read from this interpreter's torch.

An owner that is a module (``torch._functorch.config`` for ``config.patch``) is no member: ``search``
counts calls into a private owner module as the API's own module's. When the API itself is a class
(``torch.autograd.grad_mode.inference_mode``), its siblings are the classes sharing its base
(``no_grad``, ...). Without torch here the owner is taken by its spelling and no sibling is known (said).
"""
import importlib.util
import inspect
import sys

from . import where_defined


def _public_classes(module):
    names = getattr(module, "__all__", None) or [name for name in vars(module) if not name.startswith("_")]
    return [(name, getattr(module, name, None)) for name in names]


def _siblings(owner):
    """Public classes defined in the owner's module that share a base class (other than object) with it."""
    module = sys.modules.get(getattr(owner, "__module__", ""), None)
    if module is None:
        return []
    bases = set(owner.__mro__[1:-1])
    found = []
    for name, value in _public_classes(module):
        if (inspect.isclass(value) and value is not owner and value.__module__ == module.__name__
                and bases & set(value.__mro__[1:-1])):
            found.append(f"{module.__name__}.{name}")
    return found


def _names_of(dotted):
    """``dotted`` and its re-exports, found by the locate probe in this interpreter."""
    row = where_defined.locate(dotted)
    return [dotted] + [alias for alias in row.get("aliases") or [] if alias != dotted]


def family(api):
    """``{"owner", "owner_kind", "members": [{"name", "role", "names"}], "from"}`` for ``api``.

    ``members`` is the owner (role ``owner``) then the siblings (role ``sibling``); ``names`` are the
    dotted names a test may call each by. Empty members when the owner is a module or absent.
    """
    parts = api.split(".")
    owner_name = ".".join(parts[:-1])
    if importlib.util.find_spec("torch") is None:
        return {"owner": owner_name, "owner_kind": None, "from": "torch is not importable here: siblings not "
                "resolved, the owner taken by its spelling",
                "members": [{"name": owner_name, "role": "owner", "names": [owner_name]}]}
    import torch
    where = f"torch {torch.__version__.split('+')[0]}"
    try:
        chain = where_defined.resolve(owner_name.split("."))
    except Exception as exc:  # noqa: BLE001 - an absent owner is an answer, not a crash
        return {"owner": owner_name, "owner_kind": None, "from": f"{where}: {type(exc).__name__}: {exc}",
                "members": []}
    owner = chain[-1][1]
    kind = where_defined._kind(chain[-2][1] if len(chain) > 1 else None, owner)
    if kind == "module":
        api_object = getattr(owner, parts[-1], None)
        siblings = _siblings(api_object) if inspect.isclass(api_object) else []
        return {"owner": owner_name, "owner_kind": kind, "from": where,
                "members": [{"name": name, "role": "sibling", "names": _names_of(name)} for name in siblings]}
    home = f"{owner.__module__}.{owner.__name__}" if inspect.isclass(owner) else owner_name
    members = [{"name": home, "role": "owner", "names": list(dict.fromkeys([owner_name] + _names_of(home)))}]
    if inspect.isclass(owner):
        members += [{"name": name, "role": "sibling", "names": _names_of(name)} for name in _siblings(owner)]
    return {"owner": home, "owner_kind": kind, "from": where, "members": members}
