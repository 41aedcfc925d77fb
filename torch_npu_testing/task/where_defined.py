# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Where the installed torch defines one API; run in-process or by path in another interpreter.

    PY /path/to/where_defined.py torch.autograd.grad_mode.set_grad_enabled.clone   # prints one JSON object

This file needs only the standard library and torch (imported when a name is resolved), because the
interpreters it runs in (tox envs, an Ascend image) need not have the kit installed. It must therefore
never import from ``torch_npu_testing``.

Resolution: import ``torch``, then walk the parts; a part that is not an attribute of a module is
imported as a submodule. The last part is read with ``inspect.getattr_static`` from its owner, so a
property or a C getset descriptor (``torch.Tensor.ndim``) is reported as an attribute, not as its value.

The result (one row of ``locate``'s JSON ``results``) has: ``python``, ``torch`` (version or null),
``found``, ``kind`` (module, class, function, method, attribute), ``implementation`` (``python`` when
the definition has Python source, else ``c``), ``module``, ``file`` (relative to the torch package, or
absolute outside it), ``first_line`` / ``last_line``, ``signature``, ``doc`` (first docstring line),
``public`` with ``private_reason`` (an underscore in a part, or the top-level name is missing from its
module's ``__all__``), ``aliases`` (other public dotted names bound to the same objects, e.g.
``torch.set_grad_enabled.clone``) and ``error``.
"""
import importlib
import inspect
import json
import os
import sys
import types


def underscore_reason(parts):
    """Why the spelling makes the API private (``None`` when no part starts with an underscore)."""
    for part in parts:
        if part.startswith("_") and not (len(part) > 4 and part.startswith("__") and part.endswith("__")):
            return f"{part} starts with an underscore"
    return None


def _empty(name):
    return {"api": name, "python": sys.executable, "torch": None, "found": False, "kind": None,
            "implementation": None, "module": None, "file": None, "first_line": None, "last_line": None,
            "signature": None, "doc": None, "public": None, "private_reason": None, "aliases": [], "error": None}


def resolve(parts):
    """``[(dotted, object), ...]`` for every prefix of ``parts``; raises AttributeError/ImportError."""
    import torch
    chain = [("torch", torch)]
    current = torch
    for index, part in enumerate(parts[1:], start=1):
        dotted = ".".join(parts[:index + 1])
        owner = current
        try:
            # Classes: the raw descriptor (property, getset); modules: the value (bound config methods...).
            current = getattr(owner, part) if isinstance(owner, types.ModuleType) else \
                inspect.getattr_static(owner, part)
        except AttributeError:
            if not isinstance(owner, types.ModuleType):
                raise AttributeError(f"{chain[-1][0]} has no attribute {part}") from None
            try:
                current = importlib.import_module(dotted)
            except ModuleNotFoundError:
                raise AttributeError(f"{chain[-1][0]} has no attribute {part}") from None
        chain.append((dotted, current))
    return chain


def _is_data_descriptor(value):
    return isinstance(value, (property, types.GetSetDescriptorType, types.MemberDescriptorType))


def _kind(owner, value):
    if isinstance(value, types.ModuleType):
        return "module"
    if inspect.isclass(value):
        return "class"
    if _is_data_descriptor(value):
        return "attribute"
    if isinstance(value, (staticmethod, classmethod)) or (inspect.isclass(owner) and callable(value)):
        return "method"
    if callable(value):
        return "function"
    return "attribute"


def _code_target(value):
    """The object whose source defines ``value`` (None for C definitions and plain data)."""
    if isinstance(value, (staticmethod, classmethod)):
        value = value.__func__
    if isinstance(value, property):
        value = value.fget
    if inspect.ismethod(value):
        value = value.__func__
    if inspect.isfunction(value):
        return inspect.unwrap(value)
    if inspect.isclass(value) or isinstance(value, types.ModuleType):
        return value
    return None


def _relative(path):
    import torch
    root = os.path.dirname(os.path.realpath(torch.__file__))
    real = os.path.realpath(path)
    if real.startswith(root + os.sep):
        return os.path.relpath(real, root).replace(os.sep, "/")
    return real


def _first_doc_line(value):
    try:
        doc = inspect.getdoc(value)
    except Exception:  # noqa: BLE001 - odd objects
        doc = None
    for line in (doc or "").splitlines():
        if line.strip():
            return line.strip()
    return None


def _module_of(chain, value, kind):
    modules = [dotted for dotted, obj in chain if isinstance(obj, types.ModuleType)]
    if kind == "module":
        return chain[-1][0]
    if kind in ("function", "class"):
        target = _code_target(value) if kind == "function" else value
        module = getattr(target if target is not None else value, "__module__", None)
        if isinstance(module, str):
            return module
    return modules[-1]


def export_reason(chain):
    """Private reason when the first non-module part is exported neither by the module on the path nor by
    the module that defines it (``torch.set_grad_enabled`` is in ``torch.autograd.grad_mode.__all__``)."""
    for position in range(1, len(chain)):
        dotted, obj = chain[position]
        module_name, module = chain[position - 1]
        if isinstance(module, types.ModuleType) and not isinstance(obj, types.ModuleType):
            name = dotted.rsplit(".", 1)[-1]
            candidates = [(module_name, module)]
            home = getattr(obj, "__module__", None)
            if isinstance(home, str) and home in sys.modules and home != module_name:
                candidates.append((home, sys.modules[home]))
            checked = []
            for candidate_name, candidate in candidates:
                exported = getattr(candidate, "__all__", None)
                if exported is None or name in exported:
                    return None
                checked.append(f"{candidate_name}.__all__")
            return f"{name} is not in {' or '.join(checked)}"
    return None


def _same(a, b):
    return a is b or (inspect.ismethod(a) and inspect.ismethod(b) and a == b)


def _candidate_modules(chain, obj):
    """The modules along the path, plus the module defining ``obj`` and its parent packages."""
    names = [dotted for dotted, value in chain if isinstance(value, types.ModuleType)]
    home = getattr(obj, "__module__", None)
    if isinstance(home, str):
        pieces = home.split(".")
        names += [".".join(pieces[:i]) for i in range(1, len(pieces) + 1)]
    seen = []
    for name in names:
        if name not in seen and name in sys.modules:
            seen.append(name)
    return [(name, sys.modules[name]) for name in seen]


def aliases(chain):
    """Other dotted names bound to the same objects (re-exports): ``torch.set_grad_enabled`` for
    ``torch.autograd.grad_mode.set_grad_enabled``; names below the object keep their spelling."""
    parts = chain[-1][0].split(".")
    found = []
    for index in range(1, len(chain)):
        obj = chain[index][1]
        if isinstance(obj, types.ModuleType):
            continue  # modules are imported under their own names; the names below them are matched
        for module_name, module in _candidate_modules(chain, obj):
            for key, value in list(vars(module).items()):
                if key != parts[index] and key.startswith("_") and not key.startswith("__"):
                    continue
                if _same(value, obj):
                    alias = ".".join([module_name, key] + parts[index + 1:])
                    if alias != chain[-1][0] and alias not in found:
                        found.append(alias)
    return found


def locate(name):
    row = _empty(name)
    parts = name.split(".")
    os.environ.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")
    try:
        import torch
    except Exception as exc:  # noqa: BLE001 - report any import failure as data
        row["error"] = f"torch is not importable: {type(exc).__name__}: {exc}"
        return row
    row["torch"] = torch.__version__.split("+")[0]
    try:
        chain = resolve(parts)
    except Exception as exc:  # noqa: BLE001 - a missing name or a failing import is the answer
        row["error"] = f"{type(exc).__name__}: {exc}"
        return row
    owner = chain[-2][1]
    value = chain[-1][1]
    kind = _kind(owner, value)
    target = _code_target(value)
    row.update(found=True, kind=kind, module=_module_of(chain, value, kind))
    row["implementation"] = "c"
    if target is not None:
        try:
            lines, first = inspect.getsourcelines(target)
            row["file"] = _relative(inspect.getsourcefile(target))
            row["first_line"] = first if first else 1
            row["last_line"] = (first if first else 1) + len(lines) - 1
            row["implementation"] = "python"
        except (OSError, TypeError):
            pass
    if kind in ("function", "method", "class"):
        try:
            bound = value.__func__ if isinstance(value, (staticmethod, classmethod)) else value
            row["signature"] = str(inspect.signature(bound))
        except (TypeError, ValueError):
            pass
    row["doc"] = _first_doc_line(value)
    reason = underscore_reason(parts) or export_reason(chain)
    row["public"] = reason is None
    row["private_reason"] = reason
    try:
        row["aliases"] = aliases(chain)
    except Exception:  # noqa: BLE001 - aliases are a convenience; never fail the probe over them
        row["aliases"] = []
    return row


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    print(json.dumps([locate(name) for name in argv]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
