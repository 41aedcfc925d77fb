# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""The simulated NPU's documented limits: which aten call the device refuses, and with what message.

Input: a table written by ``python -m torch_npu_testing limits`` (``torch_npu_testing.limits/1``), named by
``$TORCH_NPU_TESTING_LIMITS``. Three stated mappings, each one table here:

- :data:`API_OPS` and :func:`aten_names`: a documented Python API to the aten operators it dispatches
  (``torch.mul``, ``torch.Tensor.mul`` -> ``aten::mul``, every overload; ``torch.special.x`` ->
  ``special_x``; a few stated by name);
- :data:`ARG_NAMES`: a note's argument name to the schema's (``input`` -> ``self``), a name the schema has
  kept as it is; ``*`` is every tensor argument;
- dtype names: the table already holds torch's names (``float64``; the docs' words are mapped by
  ``task/limits_notes.py``), :data:`DT_NAMES` gives torch_npu's ``DT_*`` spelling for messages.

Data movement is not compute: copies, factories and views (:data:`MOVEMENT`) take the most permissive
documented note of them all (the union of their dtypes; no format limit when any of them has none), so a
``.to(device)`` of a float64 tensor is not refused because one alias's note is narrower; :func:`plan` lists
every such conflict. An aten operator reached from several documented APIs (``torch.sum`` and
``torch.Tensor.sum``) takes the union of their notes too, and the conflict is listed. An API marked ✘ for the
table's product refuses outright. This module imports the standard library only (torch by the caller).
"""
import json
import os

SWITCH = "TORCH_NPU_TESTING_LIMITS"
FORMAT = "torch_npu_testing.limits/1"
MODULE_PREFIXES = {"torch.Tensor.": "", "torch.nn.functional.": "", "torch.special.": "special_",
                   "torch.linalg.": "linalg_", "torch.fft.": "fft_", "torch.": ""}
API_OPS = {  # documented APIs whose aten operator has another name
    "torch.Tensor.to": ["_to_copy"], "torch.Tensor.cpu": ["_to_copy"], "torch.Tensor.type": ["_to_copy"],
    "torch.Tensor.copy_": ["copy_"], "torch.Tensor.__getitem__": ["index", "select", "slice"],
    "torch.nn.functional.pad": ["constant_pad_nd"], "torch.Tensor.item": ["_local_scalar_dense"],
}
ARG_NAMES = {"input": "self", "x": "self", "tensor": "self", "tensors": "tensors"}
MOVEMENT = frozenset((
    "_to_copy", "to", "copy_", "_copy_from", "_copy_from_and_resize", "clone", "contiguous", "detach", "alias",
    "lift_fresh", "empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "zeros", "zeros_like",
    "new_zeros", "ones", "ones_like", "new_ones", "full", "full_like", "new_full", "fill_", "zero_",
    "scalar_tensor", "_local_scalar_dense", "view", "_reshape_alias", "reshape", "as_strided", "expand",
    "expand_as", "permute", "transpose", "t", "select", "slice", "narrow", "squeeze", "unsqueeze", "flatten",
    "unflatten", "unbind", "split", "split_with_sizes", "chunk", "view_as_real", "view_as_complex", "conj",
    "_conj", "resolve_conj", "resolve_neg", "_neg_view", "set_", "resize_", "cat", "stack", "movedim",
))
DT_NAMES = {"float32": "DT_FLOAT", "float16": "DT_FLOAT16", "bfloat16": "DT_BF16", "float64": "DT_DOUBLE",
            "complex32": "DT_COMPLEX32", "complex64": "DT_COMPLEX64", "complex128": "DT_COMPLEX128",
            "bool": "DT_BOOL", "float8_e4m3fn": "DT_FLOAT8_E4M3FN", "float8_e5m2": "DT_FLOAT8_E5M2"}


class LimitsError(ValueError):
    """The table named by the switch cannot be used (missing, not JSON, another format)."""


def load(path):
    try:
        with open(path, encoding="utf-8") as handle:
            table = json.load(handle)
    except (OSError, ValueError) as exc:
        raise LimitsError(f"{SWITCH}={path}: cannot read the limits table ({exc})") from None
    if not isinstance(table, dict) or table.get("format") != FORMAT:
        raise LimitsError(f"{SWITCH}={path}: not a {FORMAT} table (write one with python -m torch_npu_testing limits)")
    return table


def aten_names(api):
    """The aten operator names a documented API dispatches, by :data:`API_OPS` else by the prefix rule."""
    if api in API_OPS:
        return list(API_OPS[api])
    for prefix, aten_prefix in MODULE_PREFIXES.items():
        if api.startswith(prefix):
            rest = api[len(prefix):]
            return [aten_prefix + rest] if rest and "." not in rest else []
    return []


def dt_name(dtype_name):
    return DT_NAMES.get(dtype_name, "DT_" + dtype_name.upper())


def _mapped(limits, flat):
    """A note's dtypes keyed by schema argument (:data:`ARG_NAMES`), or under ``*`` only when ``flat``."""
    dtypes = {}
    for arg, allowed in limits.get("dtypes", {}).items():
        dtypes.setdefault("*" if flat else ARG_NAMES.get(arg, arg), set()).update(allowed)
    return dtypes


def combine(said, flat=False):
    """The most permissive of several notes: per argument the union of what they allow, an argument that one
    note leaves free stays free (None); formats limited only when every note limits them. Entries without a
    note document nothing and are left out (when none has one, nothing is limited)."""
    said = [limits for limits in said if limits]
    mapped = [_mapped(limits, flat) for limits in said]
    dtypes = {}
    for arg in set().union(*mapped) if mapped else ():
        sets = [one.get(arg) for one in mapped]
        dtypes[arg] = None if any(allowed is None for allowed in sets) else set().union(*sets)
    excluded = {}
    for arg in set().union(*(limits.get("excluded", {}) for limits in said)) if said else ():
        sets = [set(limits.get("excluded", {}).get(arg, ())) for limits in said]
        excluded[arg if arg == "*" else ARG_NAMES.get(arg, arg)] = set.intersection(*sets)
    formats = None
    if said and all("formats" in limits for limits in said):
        formats = set().union(*(set(limits["formats"].get("memory_format", ())) for limits in said))
    return {"dtypes": dtypes, "excluded": {arg: words for arg, words in excluded.items() if words},
            "formats": formats}


def plan(table):
    """``(ops, conflicts)``: ``{aten name: {"apis", "dtypes": {schema arg or "*": set or None}, "formats",
    "refused"}}`` and one line per operator (or data movement) whose documented notes disagree."""
    said, marks = {}, {}
    for api, entry in table["entries"].items():
        for name in aten_names(api):
            key = "data movement" if name in MOVEMENT else name
            said.setdefault(key, []).append((api, entry.get("limits") or {}))
            marks.setdefault(key, []).append(entry.get("supported"))
    ops = {}
    for key, notes in said.items():
        apis = sorted({api for api, _ in notes})
        merged = combine([limits for _, limits in notes], flat=key == "data movement")
        ops[key] = dict(merged, apis=apis, refused=all(mark is False for mark in marks[key]))
    movement = ops.pop("data movement", {"apis": [], "dtypes": {}, "excluded": {}, "formats": None, "refused": False})
    movement["label"] = f"copies, factories and views (the most permissive of {len(movement['apis'])} documented APIs)"
    for name in MOVEMENT:
        ops[name] = dict(movement, refused=False)
    conflicts = [f"{key}: " + "; ".join(f"{api} {_says(limits)}" for api, limits in notes)
                 for key, notes in sorted(said.items())
                 if len({_says(limits) for _, limits in notes if limits}) > 1]
    return ops, conflicts


def _says(limits):
    parts = [f"{arg}: {','.join(sorted(allowed))}" for arg, allowed in sorted(_mapped(limits, False).items())]
    parts += [f"formats: {','.join(words)}" for words in limits.get("formats", {}).values()]
    return "(" + ("; ".join(parts) or "no limit") + ")"


def refusal(name, op, values, product, is_device):
    """The refusal message for one call of aten ``name`` (its ``op`` plan) on ``values`` (``{schema argument:
    value}``), or None. ``is_device(tensor)`` tells the device's tensors from the CPU's."""
    if op["refused"]:
        return f"aclnn{_camel(name)}: {', '.join(op['apis'])} is not supported on {product} (✘ in Ascend's docs)"
    for note_arg, allowed in op["dtypes"].items():
        if allowed is None:
            continue
        wanted = list(values.values()) if note_arg == "*" else [values.get(note_arg)]
        for value in wanted:
            for tensor in value if isinstance(value, (list, tuple)) else [value]:
                dtype = _dtype_name(tensor, is_device)
                if dtype is not None and dtype not in allowed:
                    said = op.get("label") or ", ".join(op["apis"])
                    return (f"aclnn{_camel(name)} not implemented for {dt_name(dtype)} (simulated NPU limits: "
                            f"{said} take {', '.join(sorted(allowed))})")
    for note_arg, words in op.get("excluded", {}).items():
        wanted = list(values.values()) if note_arg == "*" else [values.get(note_arg)]
        for value in wanted:
            for tensor in value if isinstance(value, (list, tuple)) else [value]:
                dtype = _dtype_name(tensor, is_device)
                if dtype in words:
                    return (f"aclnn{_camel(name)} not implemented for {dt_name(dtype)} (simulated NPU limits: "
                            f"{op.get('label') or ', '.join(op['apis'])} exclude {', '.join(sorted(words))})")
    fmt = values.get("memory_format")
    if op["formats"] and fmt is not None and str(fmt).replace("torch.", "") not in op["formats"]:
        return f"aclnn{_camel(name)}: memory_format {fmt} is not supported (documented: {sorted(op['formats'])})"
    return None


def _dtype_name(value, is_device):
    dtype = getattr(value, "dtype", None)
    if dtype is None or not is_device(value):
        return None
    return str(dtype).replace("torch.", "")


def _camel(name):
    return "".join(part[:1].upper() + part[1:] for part in name.strip("_").split("_"))


def table_from_environment(environ=None):
    """The table named by :data:`SWITCH`, or None when it is unset or empty."""
    path = (os.environ if environ is None else environ).get(SWITCH, "").strip()
    return load(path) if path else None
