# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Which device dispatches are the API's own: recorded in the baseline, faulted in a device mutant.

A dispatch of an aten op is the API's when it runs on the device (a plain tensor argument or result on the
device type) *and* within one of the API's in-scope calls (:mod:`.scope` decides those, as for generic
mutants), which include what the API returns:

- the call itself (:meth:`ApiScopes.enter`: the API's hook runs the real call inside it);
- calls of a callable the API returned (a compiled function): each call is inside the scope too;
- ops on a tensor the API batched (``_add_batch_dim``'s BatchedTensor): under vmap, the batching rules
  dispatch on the physical tensor, so a dispatch while a vmap level is open with an argument that shares
  the storage of a tensor the API batched (while that tensor lives) is the API's. Inside a dispatch
  functorch shows no level, so the levels are counted where they open and close
  (:meth:`ApiScopes.count_vmap_levels`); the same storage used unbatched inside an open level counts too.
  Results of those dispatches are not followed: ``y.sin()`` is the batched op, ``y.sin() * 2`` a vehicle.

Everything else on the device is the test's vehicle (``x * k`` in a grad-mode region, a reference) and is
never faulted. :class:`DeviceOps` is a ``TorchDispatchMode``: it records (baseline) or faults (a mutant) the
API's dispatches and passes every other one through unchanged. FakeTensors, functional and other subclass
tensors are never the device's: a tracing pass sees them, a device kernel does not.
"""
import collections
import weakref

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from . import device_ops
from .faults import Tally

_PLAIN = (torch.Tensor, torch.nn.Parameter)


def op_name(op):
    """``aten.mul.Tensor``: the overload's name as mutant ids carry it."""
    return str(op)


def _storage(x):
    try:
        return x.untyped_storage().data_ptr()
    except (RuntimeError, NotImplementedError):
        return None


def _rebind(replacements):
    """Bind every module attribute that is a key of ``replacements`` to its value (torch binds the C
    functions under other names: ``predispatch._vmap_increment_nesting_impl``); ``[(module, name, original)]``."""
    import sys

    replaced = []
    for module in list(sys.modules.values()):
        for name, value in list(getattr(module, "__dict__", {}).items()):
            try:
                new = replacements.get(value)
            except TypeError:  # an unhashable attribute
                continue
            if new is not None:
                setattr(module, name, new)
                replaced.append((module, name, value))
    return replaced


class ApiScopes:
    """Per API: how deep inside its in-scope calls the process is, and the storages it batched."""

    def __init__(self):
        self.vmap_levels = 0
        self.depth = collections.Counter()
        self.batched = collections.defaultdict(dict)  # storage -> weak reference to the physical tensor

    def enter(self, api, real, args, kwargs):
        """The real call of ``api`` with its dispatches in scope; a returned callable and batched tensors too."""
        from . import returned

        self.depth[api] += 1
        try:
            result = real(*args, **kwargs)
        finally:
            self.depth[api] -= 1
        if returned.is_plain_callable(result):
            return returned.wrap_callable(result, lambda fn, a, k: self.enter(api, fn, a, k))
        self._note_batched(api, result)
        return result

    def count_vmap_levels(self):
        """Count the vmap levels that open and close, wherever torch or a test opens one; returns ``restore``."""
        functorch = getattr(torch._C, "_functorch", None)
        if functorch is None or not hasattr(functorch, "_vmap_increment_nesting"):
            return lambda: None
        real_increment, real_decrement = functorch._vmap_increment_nesting, functorch._vmap_decrement_nesting

        def increment(*args, **kwargs):
            level = real_increment(*args, **kwargs)
            self.vmap_levels += 1
            return level

        def decrement(*args, **kwargs):
            self.vmap_levels = max(0, self.vmap_levels - 1)
            return real_decrement(*args, **kwargs)
        replaced = _rebind({real_increment: increment, real_decrement: decrement})

        def restore():
            for holder, name, original in replaced:
                setattr(holder, name, original)
        return restore

    def _note_batched(self, api, result):
        functorch = getattr(torch._C, "_functorch", None)
        for leaf in device_ops.tensor_leaves(result):
            batched = False
            while functorch is not None and functorch.is_batchedtensor(leaf):
                leaf, batched = functorch.get_unwrapped(leaf), True
            storage = _storage(leaf) if batched and type(leaf) in _PLAIN else None
            if storage:
                self.batched[api][storage] = weakref.ref(leaf)

    def active(self, tensors):
        """The APIs whose scope a dispatch on ``tensors`` is in."""
        found = [api for api, depth in self.depth.items() if depth > 0]
        if not self.vmap_levels:
            return found
        storages = {_storage(t) for t in tensors if type(t) in _PLAIN}
        for api, batched in self.batched.items():
            if api not in found and any(batched[s]() is not None for s in storages & batched.keys()):
                found.append(api)
        return found


class DeviceOps(TorchDispatchMode):
    """Records the API's device dispatches (``fault`` None) or faults one op's (a device mutant).

    ``record[api][op name]`` = ``{"calls": n, "features": set, "tests": set of test ids}``; ``vehicles[op name]``
    counts the device
    dispatches outside every API's scope. In a mutant, ``tally`` counts the faulted op's in-scope calls and
    verdicts (:class:`.faults.Tally`)."""

    supports_higher_order_operators = True  # with_effects, invoke_subgraph: passed through, their ops seen

    def __init__(self, device_type, scopes, mutant=None):
        super().__init__()
        self.device_type, self.scopes, self.mutant = device_type, scopes, mutant
        self.record = collections.defaultdict(dict)
        self.vehicles = collections.Counter()
        self.tally, self.state, self.busy = Tally(), {}, False
        self.test = None  # the running test's id (set by the child as each test starts)

    def _on_device(self, tensors):
        return any(type(t) in _PLAIN and t.device.type == self.device_type for t in tensors)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if self.busy or (self.mutant is not None and op_name(func) != self.mutant[1]):
            return func(*args, **kwargs)  # a mutant's fast path: every other op as it is
        if not isinstance(func, torch._ops.OpOverload) or not all(t in _PLAIN for t in types):
            return func(*args, **kwargs)  # a higher-order operator runs its aten ops through this mode again
        inputs = device_ops.tensor_leaves((args, kwargs))
        apis = self.scopes.active(inputs) if self._on_device(inputs) else []
        if self.mutant is not None:
            result = self._fault(func, args, kwargs, apis)
        else:
            result = self._record(func, args, kwargs, apis, inputs)
        return result

    def _record(self, func, args, kwargs, apis, inputs):
        try:
            result = func(*args, **kwargs)
        except Exception:
            self._note(func, args, kwargs, apis, inputs, None, True)
            raise
        self._note(func, args, kwargs, apis, inputs, result, False)
        return result

    def _note(self, func, args, kwargs, apis, inputs, result, raised):
        name = op_name(func)
        if not apis:
            if self._on_device(inputs + device_ops.tensor_leaves(result)):
                self.vehicles[name] += 1
            return
        self.busy = True
        try:
            features = device_ops.dispatch_features(func, args, kwargs, result, raised)
        finally:
            self.busy = False
        for api in apis:
            entry = self.record[api].setdefault(name, {"calls": 0, "features": set(), "tests": set()})
            entry["calls"] += 1
            entry["tests"].add(self.test)
            entry["features"] |= features | ({"repeated"} if entry["calls"] > 1 else set())

    def _fault(self, func, args, kwargs, apis):
        from .device_faults import Call

        api, name, fault = self.mutant
        if api not in apis or op_name(func) != name:
            return func(*args, **kwargs)
        self.tally.calls += 1
        from .device_catalogue import apply

        self.busy = True
        try:
            return apply(fault, Call(func, args, kwargs, lambda a, k: func(*a, **k), self.state), self.tally)
        finally:
            self.busy = False

    def report(self):
        """The JSON-able record: per API, per op, calls and sorted features; the vehicles' counts."""
        return {"ops": {api: {name: {"calls": e["calls"], "features": sorted(e["features"]),
                                     "tests": sorted(t for t in e["tests"] if t)}
                              for name, e in sorted(ops.items())} for api, ops in self.record.items()},
                "vehicles": dict(sorted(self.vehicles.items()))}
