# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""``new``'s probe of an API's kind and generic contract, run by path in each interpreter it drafts for.

    PY kind_probe.py info API        # {"torch", "contract", "form", "copy", "owner", "params", "config_keys"}
    PY kind_probe.py observe FILE    # {"torch", "observed": {name: observation}} of a probe text

``info`` classifies the API with :mod:`apikind` and reads its parameters (``inspect.signature``, else the
docstring's first line); for a config module, its boolean keys that enter its hash. ``observe`` runs a probe
text ``new`` wrote (the draft's helpers and setup) and evaluates each ``OBSERVATIONS`` expression, with the
kit's one thread runner (``runtime/carried.py``, standard library only, loaded by path) as the draft has it.
Needs only torch and the standard library, and this folder on ``sys.path`` (by path, it is).
"""
import importlib
import inspect
import json
import os
import sys
import types

import apikind

sys.path.insert(1, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "runtime"))
import carried  # noqa: E402 - the runtime's standalone block, by path


def _resolve(name):
    import torch
    current, owner = torch, None
    for index, part in enumerate(name.split(".")[1:], start=2):
        owner = current
        try:
            current = getattr(current, part)
        except AttributeError:
            current = importlib.import_module(".".join(name.split(".")[:index]))
    return current, owner


def _params(obj, form):
    try:
        signature = inspect.signature(obj.__init__ if isinstance(obj, type) else obj)
    except (TypeError, ValueError):
        found, _ = apikind.docstring_params(obj)
        return [{"name": n, "kind": k, "default": None if d is apikind.NO_DEFAULT else repr(d), "annotation": a}
                for n, k, d, a in found]
    kinds = {inspect.Parameter.KEYWORD_ONLY: "keyword", inspect.Parameter.VAR_POSITIONAL: "var_positional",
             inspect.Parameter.VAR_KEYWORD: "var_keyword"}
    params = [{"name": p.name, "kind": kinds.get(p.kind, "positional"),
               "default": None if p.default is p.empty else repr(p.default),
               "annotation": "" if p.annotation is p.empty else str(getattr(p.annotation, "__name__", p.annotation))}
              for p in signature.parameters.values()]
    skip_self = isinstance(obj, type) or form in ("method", "C method")
    return params[1:] if skip_self and params and params[0]["name"] in ("self", "cls") else params


def _config_keys(module):
    ignored = set(getattr(module, "_compile_ignored_keys", ()) or ())
    config = module.get_config_copy()
    return sorted(key for key, value in config.items() if isinstance(value, bool) and key not in ignored
                  and "." not in key)


def info(name):
    import torch
    obj, owner = _resolve(name)
    kind = apikind.classify(obj, owner, name.rsplit(".", 1)[-1])
    config = obj if isinstance(obj, types.ModuleType) else getattr(obj, "__self__", None)
    parts = name.split(".")
    prefixes = [".".join(parts[:i]) for i in range(2, len(parts))]
    modules = [prefix for prefix in prefixes if isinstance(sys.modules.get(prefix), types.ModuleType)]
    return {"torch": torch.__version__.split("+")[0], "contract": kind.contract, "form": kind.form, "modules": modules,
            "copy": kind.copy, "is_class": isinstance(obj, type),
            "params": _params(obj, kind.form) if kind.contract != "other" and not kind.copy else [],
            "owner_params": _params(owner, None) if kind.copy else [],
            "config_keys": _config_keys(config) if kind.contract == "config module" else [],
            "config_defaults": {k: getattr(config, k) for k in _config_keys(config)}
            if kind.contract == "config module" else {}}


def observe(path):
    import torch
    namespace = {"__name__": "kind_probe_text", "run_in_thread": carried.run_in_thread}
    with open(path, encoding="utf-8") as handle:
        exec(compile(handle.read(), path, "exec"), namespace)  # noqa: S102 - the probe text new wrote
    observed = {key: namespace["plain"](eval(text, namespace)) for key, text in namespace["OBSERVATIONS"].items()}
    return {"torch": torch.__version__.split("+")[0], "observed": observed}


def main(argv):
    verb, value = argv
    print(json.dumps(info(value) if verb == "info" else observe(value)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
