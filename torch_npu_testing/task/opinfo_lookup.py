# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Which entries of torch's OpInfo database (``op_db``) describe one API; run in-process or by path.

    PY /path/to/opinfo_lookup.py torch.Tensor.addcdiv     # prints one JSON object

Like :mod:`where_defined`, this file needs only the standard library and torch, and never imports from
``torch_npu_testing``: ``new`` runs it by path in every interpreter it probes.

An entry matches when the API's object is the entry's function (``op``), its method or in-place variant,
or one of its aliases' (``torch.moveaxis`` is an alias of ``movedim``, ``torch.Tensor.addcdiv`` the method
variant of ``addcdiv``), or, where the entry wraps its function, when the API's dotted name is the entry's
name. Every entry that matches is returned (``nn.functional.pad`` has five, one per ``variant_test_name``).

The object printed: ``{"python", "torch", "error", "entries": [...]}``; ``error`` says why nothing could be
looked up (``op_db`` failed to import). Each entry: ``name``, ``variant_test_name``, ``matched_as``
(``function``, ``method``, ``inplace`` or ``alias <name>``), ``api_form`` (how the draft calls the API:
``{"form", "target"}``), ``variants`` (the other variants that can be called by a dotted name: ``label``,
``form``, ``target``, ``requires`` (the entry attribute a release must have for the variant)), ``out``
(the function called with ``out=``, or null), ``has_ref``, ``supports_autograd``, ``has_error_inputs``.
Forms: ``function`` (``T(input, ...)``), ``method`` (``input.T(...)``), ``inplace_method``
(``input.T_(...)``), ``inplace_kwarg`` (``T(input, ..., inplace=True)``).
"""
import importlib
import inspect
import json
import os
import sys


def resolve(name):
    """The object a dotted ``torch...`` name is bound to (submodules imported); raises AttributeError."""
    import torch
    current, parts = torch, name.split(".")
    for index, part in enumerate(parts[1:], start=1):
        try:
            current = getattr(current, part)
        except AttributeError:
            try:
                current = importlib.import_module(".".join(parts[:index + 1]))
            except ImportError:
                raise AttributeError(f"{'.'.join(parts[:index])} has no attribute {part}") from None
    return current


def bound_to(dotted, value):
    """True when ``dotted`` names exactly ``value`` in this torch."""
    try:
        return value is not None and resolve(dotted) is value
    except AttributeError:
        return False


def function_name(op_name, value):
    """The dotted name of an entry's function (``torch.nn.functional.pad``), or None for a wrapper."""
    candidate = "torch." + op_name
    return candidate if bound_to(candidate, value) else None


def takes_inplace(value):
    try:
        return "inplace" in inspect.signature(value).parameters
    except (TypeError, ValueError):
        return False


def variants_of(op):
    """Every variant of ``op`` that can be called by a dotted name, as ``{label, form, target, requires}``."""
    import torch
    found = []
    short = op.name.rsplit(".", 1)[-1]
    function = function_name(op.name, op.op)
    if function:
        found.append({"label": function, "form": "function", "target": function, "requires": "op"})
    if op.method_variant is not None and getattr(torch.Tensor, short, None) is op.method_variant:
        found.append({"label": f"Tensor.{short}", "form": "method", "target": short, "requires": "method_variant"})
    if op.inplace_variant is not None:
        if getattr(torch.Tensor, short + "_", None) is op.inplace_variant:
            found.append({"label": f"Tensor.{short}_", "form": "inplace_method", "target": short + "_",
                          "requires": "inplace_variant"})
        elif function and takes_inplace(op.op):
            found.append({"label": f"{function}(inplace=True)", "form": "inplace_kwarg", "target": function,
                          "requires": "inplace_variant"})
    for alias in op.aliases:
        requires = f"alias:{alias.name}:"
        if bound_to("torch." + alias.name, alias.op):
            found.append({"label": "torch." + alias.name, "form": "function", "target": "torch." + alias.name,
                          "requires": requires + "op"})
        if alias.method_variant is not None and getattr(torch.Tensor, alias.name, None) is alias.method_variant:
            found.append({"label": f"Tensor.{alias.name}", "form": "method", "target": alias.name,
                          "requires": requires + "method_variant"})
    return found


def api_form(api, matched):
    """How a draft calls ``api``: a ``torch.Tensor.X`` name as a method (in-place when it ends in ``_``), any
    other name as a function."""
    if api.startswith("torch.Tensor."):
        short = api[len("torch.Tensor."):]
        return {"form": "inplace_method" if matched == "inplace" else "method", "target": short}
    return {"form": "function", "target": api}


def match(op, api, value):
    """How ``value`` (the object ``api`` names) is one of ``op``'s callables, or None."""
    if value is not None and value is op.op:
        return "function"
    if value is not None and value is op.method_variant:
        return "method"
    if value is not None and value is op.inplace_variant:
        return "inplace"
    for alias in op.aliases:
        if value is not None and value in (alias.op, alias.method_variant, alias.inplace_variant):
            return f"alias {alias.name}"
    if api == "torch." + op.name:
        return "function"
    return None


def describe(op, api, matched):
    form = api_form(api, matched)
    variants = [v for v in variants_of(op) if not (v["form"] == form["form"] and v["target"] == form["target"])]
    function = function_name(op.name, op.op)
    out = (function or (form["target"] if form["form"] == "function" else None)) if op.supports_out else None
    return {"name": op.name, "variant_test_name": op.variant_test_name, "matched_as": matched, "api_form": form,
            "variants": variants, "out": out, "has_ref": op.ref is not None,
            "supports_autograd": bool(op.supports_autograd), "has_error_inputs": op.error_inputs_func is not None}


def lookup(api):
    """The JSON-ready result for ``api`` in this interpreter (never raises)."""
    os.environ.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")
    result = {"python": sys.executable, "torch": None, "error": None, "entries": []}
    try:
        import torch
    except Exception as exc:  # noqa: BLE001 - report any import failure as data
        result["error"] = f"torch is not importable: {type(exc).__name__}: {exc}"
        return result
    result["torch"] = torch.__version__.split("+")[0]
    try:
        from torch.testing._internal.common_methods_invocations import op_db
    except Exception as exc:  # noqa: BLE001 - a broken test package is the answer, not a crash
        result["error"] = f"op_db failed to import: {type(exc).__name__}: {exc}"
        return result
    try:
        value = resolve(api)
    except AttributeError:
        value = None
    for op in op_db:
        matched = match(op, api, value)
        if matched:
            result["entries"].append(describe(op, api, matched))
    return result


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    print(json.dumps(lookup(argv[0])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
