# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Observations of an API's generic contract, by kind: the same functions run in ``new``'s probe (in each
torch it drafts for) and, copied by source into the draft, in the drafted tests.

Each ``observe_*`` returns plain data (dicts, lists, strings, numbers, booleans): what the API did to the
global state, what a call returned (dtype, shape, strides, values), what it raised (the exception type).
``new`` writes the probe's answer per torch release into the draft as its expectations; a drafted test
observes again and compares. The functions use only torch, the standard library and ``run_in_thread`` (the
kit's one thread runner, which a draft imports and the probe is handed), as their source runs where the
kit is not installed; :data:`HELPERS` names what a draft copies, in order.
"""
import functools
import json
import re

import torch

from ..runtime.carried import run_in_thread


def extra_state():
    """More global state a draft watches (a config module's patched key); none unless the draft says so."""
    return {}


def global_state():
    """The global state the kit's guard knows: grad mode, inference mode, forward AD, default dtype,
    deterministic algorithms; and :func:`extra_state`."""
    return {"grad": torch.is_grad_enabled(), "inference": torch.is_inference_mode_enabled(),
            "forward_ad": torch._C._is_fwd_grad_enabled(), "default_dtype": str(torch.get_default_dtype()),
            "deterministic": torch.are_deterministic_algorithms_enabled(), **extra_state()}


def changed(before, after=None):
    """The entries of the global state that differ from ``before`` (now, or ``after``)."""
    after = global_state() if after is None else after
    return {key: value for key, value in after.items() if before.get(key) != value}


def plain(value):
    """``value`` as JSON would give it back (tuples become lists), so a probe's answer compares equal."""
    return json.loads(json.dumps(value))


def flat(value, path=""):
    """``value`` as ``{path: leaf}`` (``1/result/tensor``): nested dicts and lists of containers flattened, a
    list of numbers or strings kept as one leaf, so a draft states each observation two levels deep."""
    if isinstance(value, dict) and value:
        items = value.items()
    elif isinstance(value, list) and any(isinstance(item, (dict, list)) for item in value):
        items = enumerate(value)
    else:
        return {path or "/": value}
    found = {}
    for key, item in items:
        found.update(flat(item, f"{path}/{key}" if path else str(key)))
    return found


def outcome(action):
    """``["ok", result]``, or ``["raises", exception type, its message]`` (addresses masked, at most 160
    characters); the global state restored either way."""
    saved = torch.is_grad_enabled()
    try:
        return ["ok", action()]
    except Exception as exc:  # noqa: BLE001 - the type and message are the observation
        return ["raises", type(exc).__name__, re.sub(r"0x[0-9a-fA-F]+", "0x?", str(exc))[:160]]
    finally:
        torch.set_grad_enabled(saved)


def from_both(run):
    """``run()`` from grad mode on and from grad mode off (a switch that changes nothing from one start
    still shows what it does from the other), each in a new thread: grad and inference mode start at their
    defaults there, and whatever the API leaves set (upstream's re-entry of one inference_mode object does)
    ends with the thread instead of leaking into the test's."""
    def start_at(mode):
        torch.set_grad_enabled(mode)
        return run()
    return {"from grad " + ("on" if mode else "off"): run_in_thread(start_at, mode) for mode in (True, False)}


def observe_enter(make):
    """What making and entering the context manager ``make()`` changes, inside and after."""
    def run():
        before = global_state()
        manager = make()
        made = changed(before)
        with manager as value:
            inside = changed(before)
        return {"made": made, "inside": inside, "after": changed(before),
                "as": "self" if value is manager else type(value).__name__}
    return plain(from_both(lambda: outcome(run)))


def observe_exception(make):
    """An exception in the block: does it propagate, and what is left changed after."""
    def run():
        before = global_state()
        try:
            with make():
                raise KeyError("raised in the block")
        except KeyError:
            return {"propagated": True, "after": changed(before)}
        return {"propagated": False, "after": changed(before)}
    return plain(from_both(lambda: outcome(run)))


def _decorated_target(form, seen, before):
    def probe(*args):
        """A probe."""
        seen["inside"] = changed(before)
        if form == "raising":
            raise KeyError("raised in the call")
        return "result"

    def generator():
        """A probe."""
        seen["inside"] = changed(before)
        yield "result"

    class Holder:
        def method(self):
            """A probe."""
            return probe()

    class Decorated:
        """A probe."""

        def __init__(self):
            seen["inside"] = changed(before)
    targets = {"function": (probe, lambda d: d()), "raising": (probe, lambda d: d()),
               "method": (Holder.method, lambda d: d(Holder())), "generator": (generator, lambda d: list(d())),
               "class": (Decorated, lambda d: type(d()).__name__),
               "partial": (functools.partial(probe, 1), lambda d: d())}
    return targets[form]


def observe_decorated(make, form):
    """``make()`` as a decorator on a function (one that raises too), a method, a generator, a class or a
    ``functools.partial``: the call's result, the state inside and after, the metadata kept."""
    return from_both(lambda: _decorated(make, form))


def _decorated(make, form):
    before, seen = global_state(), {}
    target, call = _decorated_target(form, seen, before)
    decorated = outcome(lambda: make()(target))
    if decorated[0] != "ok":
        return plain({"decorate": decorated})
    function = decorated[1]
    result = outcome(lambda: call(function))
    return plain({"decorate": "ok", "call": result, "inside": seen.get("inside"), "after": changed(before),
                  "name": getattr(function, "__name__", None) == getattr(target, "__name__", None),
                  "doc": getattr(function, "__doc__", None) == getattr(target, "__doc__", None),
                  "wrapped": getattr(function, "__wrapped__", None) is target})


def observe_nested(make, same):
    """Two levels of ``with``: the same object entered twice (``same``), or two made ones."""
    def run():
        before, seen = global_state(), {}
        outer = make()
        with outer:
            with (outer if same else make()):
                seen["inner"] = changed(before)
            seen["between"] = changed(before)
        seen["after"] = changed(before)
        return seen
    return plain(from_both(lambda: outcome(run)))


def observe_thread(make):
    """What another thread sees while this one is inside the block (the state is per thread or not)."""
    before = global_state()
    with make():
        return plain({"other": run_in_thread(lambda: changed(before))})


def observe_copy(copy, make_original):
    """``copy(original)``: a new object of the same type (a subclass too), equal state, independent."""
    def run():
        original = make_original()
        state = dict(vars(original))
        duplicate = copy(original)
        subclass = type("Sub", (type(original),), {})
        original_sub = make_original()
        original_sub.__class__ = subclass
        with duplicate:
            pass
        return {"same_type": type(duplicate) is type(original), "new_object": duplicate is not original,
                "equal_state": vars(duplicate).keys() == state.keys(), "original_untouched": vars(original) == state,
                "subclass_kept": type(copy(original_sub)) is subclass}
    return plain(outcome(run))


def describe(value, depth=0):
    """A value as data: tensors by dtype, shape, strides, requires_grad and values (on the CPU); containers by
    their type and items (namedtuples by name and fields); modules and other objects by type."""
    if isinstance(value, torch.Tensor):
        values = value.detach().cpu().to(torch.complex128 if value.is_complex() else torch.float64)
        flat = [float(f"{v:.8g}") if not isinstance(v, complex) else [float(f"{v.real:.8g}"), float(f"{v.imag:.8g}")]
                for v in values.flatten().tolist()[:64]]
        return {"tensor": [str(value.dtype), list(value.shape), list(value.stride()), value.requires_grad, flat]}
    if depth > 4:
        return {"deep": type(value).__name__}
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return {type(value).__name__: {key: describe(item, depth + 1) for key, item in zip(value._fields, value)}}
    if isinstance(value, (tuple, list)):
        return {type(value).__name__: [describe(item, depth + 1) for item in value]}
    if isinstance(value, dict):
        return {"dict": {str(key): describe(item, depth + 1) for key, item in value.items()}}
    if isinstance(value, torch.nn.Module):
        return {"module": type(value).__name__}
    if isinstance(value, (bool, int, float, str, type(None), torch.dtype)):
        return value if not isinstance(value, torch.dtype) else str(value)
    return {"object": type(value).__name__}


def _tensors(value):
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (tuple, list)):
        return [tensor for item in value for tensor in _tensors(item)]
    if isinstance(value, torch.nn.Module):
        return list(value.parameters()) + list(value.buffers())
    return []


def observe_call(build, call):
    """``call(*build())``: the result, inputs written (version counters), outputs that alias an input, the
    global state after, and the gradients a reverse pass gives the inputs (when the result requires grad)."""
    def run():
        torch.manual_seed(0)
        inputs = build()
        tensors = _tensors(inputs)
        versions = [tensor._version for tensor in tensors]
        before = global_state()
        result = call(*inputs)
        state = changed(before)
        storages = {tensor.untyped_storage().data_ptr() for tensor in tensors if tensor.layout == torch.strided}
        outputs = _tensors(result)
        seen = {"result": describe(result), "written": [t._version != v for t, v in zip(tensors, versions)],
                "aliases": [out.layout == torch.strided and out.untyped_storage().data_ptr() in storages
                            for out in outputs], "state": state}
        grads = [out for out in outputs if out.requires_grad and out.is_floating_point()]
        if grads:
            torch.autograd.backward([out.sum() for out in grads])
            seen["grads"] = [describe(tensor.grad) for tensor in tensors if tensor.requires_grad]
        return seen
    return plain(outcome(run))


def observe_patch(module, make_patch, key, value):
    """A config module patched by ``make_patch(*args, **kwargs)`` (the API, ``module.patch`` as the test looks
    it up): the value inside and after for every form, as a decorator, and the module's copy, save and hash
    while the patch is active."""
    def inside(make):
        before = getattr(module, key)
        with make():
            seen = [getattr(module, key), module.get_config_copy()[key], module.save_config() != saved,
                    module.get_hash() != hashed]
        return seen + [getattr(module, key) == before]
    saved, hashed = module.save_config(), module.get_hash()
    forms = {"key, value": lambda: make_patch(key, value), "dict": lambda: make_patch({key: value}),
             "keywords": lambda: make_patch(**{key: value}), "empty": lambda: make_patch()}
    seen = {name: outcome(lambda make=make: inside(make)) for name, make in forms.items()}
    seen["decorator"] = outcome(lambda: [make_patch(key, value)(lambda: getattr(module, key))(),
                                         getattr(module, key)])
    seen["lone key"] = outcome(lambda: make_patch(key).__enter__())
    seen["dict and keywords"] = outcome(lambda: make_patch({key: value}, **{key: value}).__enter__())
    seen["unknown key"] = outcome(lambda: inside(lambda: make_patch("no_such_key_for_the_draft", value)))
    return plain(seen)


def to_device(value, device):
    """``value`` with every tensor and module moved to ``device`` (containers rebuilt)."""
    if isinstance(value, (torch.Tensor, torch.nn.Module)):
        return value.to(device)
    if isinstance(value, dict):
        return {key: to_device(item, device) for key, item in value.items()}
    if isinstance(value, (tuple, list)):
        return type(value)(to_device(item, device) for item in value)
    return value


def first_difference(observed, wanted, rel=1e-5, path="observation"):
    """Where ``observed`` differs from ``wanted`` (None when it does not): floats within ``rel`` (relative, and
    as much absolute), the rest exactly, so a different reduction order is no difference and a value
    moved by 1e-3 is."""
    if isinstance(wanted, dict) and isinstance(observed, dict):
        if observed.keys() != wanted.keys():
            return f"{path}: keys {sorted(observed)} != {sorted(wanted)}"
        found = (first_difference(observed[k], wanted[k], rel, f"{path}[{k!r}]") for k in wanted)
        return next((difference for difference in found if difference), None)
    if isinstance(wanted, list) and isinstance(observed, list):
        if len(observed) != len(wanted):
            return f"{path}: {len(observed)} items != {len(wanted)}"
        found = (first_difference(o, w, rel, f"{path}[{i}]") for i, (o, w) in enumerate(zip(observed, wanted)))
        return next((difference for difference in found if difference), None)
    if isinstance(wanted, float) and isinstance(observed, float) and not isinstance(observed, bool):
        close = abs(observed - wanted) <= rel * max(abs(wanted), 1.0) or observed == wanted
        return None if close else f"{path}: {observed!r} != {wanted!r}"
    return None if observed == wanted and type(observed) is type(wanted) else f"{path}: {observed!r} != {wanted!r}"


def observe_bad_call(call):
    """The exception type a bad call raises (``["ok", ...]`` when it does not)."""
    return plain(outcome(lambda: describe(call())))


HELPERS = (extra_state, global_state, changed, plain, flat, outcome, from_both, observe_enter, observe_exception,
           _decorated_target, observe_decorated, _decorated, observe_nested, observe_thread, observe_copy, describe,
           _tensors, observe_call, observe_patch, to_device, first_difference, observe_bad_call)
