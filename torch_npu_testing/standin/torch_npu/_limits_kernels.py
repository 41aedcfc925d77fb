# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""The simulated NPU refusing what Ascend's docs do not allow (:mod:`._limits` says what; this installs it).

On when ``$TORCH_NPU_TESTING_LIMITS`` names a table written by ``python -m torch_npu_testing limits``
(:func:`install_from_environment`, called as the device loads).

:func:`install` replaces, on the device only (``torch.library`` ``impl(..., "PrivateUse1")``; the CPU's kernels
stay exact), the kernel of every aten overload whose documented API carries a limit. The replacement checks
the call (:func:`._limits.refusal`): a refused call raises ``RuntimeError`` in torch_npu's shape
("aclnnMul not implemented for DT_DOUBLE ..."); an allowed one runs the CPU kernel on CPU tensors that alias the
device's host memory, as the device's own fallback does, so in-place and ``out=`` calls write the device tensor.

Not replaced, and listed by :func:`install` (``skipped``): overloads that return a view of an input (their
aliasing is the device's own kernel's), that draw random numbers (the device's generator), composite ones
(autograd decomposes them; the operators they decompose into are checked), the device's own kernels
(creation, copies, views: data movement) and names torch does not have.

Every refusal is kept in :data:`MET` (``{(op, dtype or "-"): message}``): at exit the process prints one line
per gap it met on stderr and, when ``$TORCH_NPU_TESTING_GAPS`` names a file, appends them to it as JSON lines
(``{"op", "dtype", "message"}``).
"""
import atexit
import ctypes
import json
import os
import sys

from . import _limits as device_limits

GAPS = "TORCH_NPU_TESTING_GAPS"
OWN_KERNELS = frozenset(("empty", "empty_strided", "_copy_from", "_copy_from_and_resize", "as_strided", "view",
                         "_reshape_alias", "resize_", "set_", "_local_scalar_dense"))


def host_alias(tensor):
    """A CPU tensor over the same host memory as the simulated device's strided ``tensor``."""
    import torch
    storage = tensor.untyped_storage()
    if storage.nbytes() == 0:
        alias = torch.empty_strided(tensor.shape, tensor.stride(), dtype=tensor.dtype)
    else:
        buffer = (ctypes.c_char * storage.nbytes()).from_address(storage.data_ptr())
        alias = torch.frombuffer(buffer, dtype=torch.uint8).view(tensor.dtype).as_strided(
            tensor.shape, tensor.stride(), tensor.storage_offset())
    if tensor.is_conj():
        alias = alias.conj()
    if tensor.is_neg():
        alias = alias._neg_view()
    return alias


def adopt(value, device):
    """A new device tensor holding the CPU tensor ``value``: a copy of its storage, the same sizes, strides and
    offset (the device's own creation and ``set_`` kernels, a host copy of the bytes)."""
    import torch
    if value.layout != torch.strided:
        return value.to(device)
    source = torch.empty(0, dtype=torch.uint8).set_(value.untyped_storage())
    storage = torch.empty(source.numel(), dtype=torch.uint8, device=device)
    host_alias(storage).copy_(source)
    return torch.empty(0, dtype=value.dtype, device=device).set_(
        storage.untyped_storage(), value.storage_offset(), value.shape, value.stride())


def run_on_host(op, device_type, args, kwargs):
    """``op`` run by the CPU kernel, as the device's fallback runs it: arguments it reads are CPU aliases of the
    device's memory, arguments it writes are CPU copies written back (resized first when ``out=`` grew), a
    returned argument comes back as that device tensor and a new result is adopted by the device."""
    import torch
    schema = op._schema
    names = [arg.name for arg in schema.arguments]
    written = {arg.name: frozenset(arg.alias_info.before_set) for arg in schema.arguments
               if arg.alias_info is not None and arg.alias_info.is_write}
    bound = dict(zip(names, args))
    bound.update(kwargs)
    devices, host, back = [], {}, []
    for name, value in bound.items():
        if isinstance(value, torch.Tensor) and value.device.type == device_type:
            devices.append(value.device)
            if value.layout != torch.strided:
                host[name] = value.cpu()
            else:
                host[name] = host_alias(value).clone() if name in written else host_alias(value)
                if name in written:
                    back.append((name, value))
        elif isinstance(value, (list, tuple)) and any(isinstance(v, torch.Tensor) and v.device.type == device_type
                                                      for v in value):
            host[name] = type(value)(host_alias(v) if isinstance(v, torch.Tensor) and v.device.type == device_type
                                     and v.layout == torch.strided else v.cpu() if isinstance(v, torch.Tensor)
                                     else v for v in value)
            devices += [v.device for v in value if isinstance(v, torch.Tensor) and v.device.type == device_type]
        elif isinstance(value, torch.device) and value.type == device_type:
            devices.append(value)
            host[name] = torch.device("cpu")
    call = dict(bound, **host)
    result = op(*[call[name] for name in names[:len(args)]], **{name: call[name] for name in kwargs})
    for name, original in back:
        if original.shape != host[name].shape:
            original.resize_(host[name].shape)
        host_alias(original).copy_(host[name])
    target = devices[0] if devices else torch.device(device_type)
    asked = bound.get("device")
    stays = asked is not None and torch.device(asked).type != device_type  # .cpu(), .to("cpu"): a host result
    by_set = {alias_set: bound[name] for name, alias_set in written.items()}
    returns = result if isinstance(result, (tuple, list)) else (result,)
    out = []
    for ret, value in zip(schema.returns, returns):
        if ret.alias_info is not None and ret.alias_info.is_write:
            out.append(by_set.get(frozenset(ret.alias_info.before_set), value))
        elif isinstance(value, torch.Tensor) and value.device.type == "cpu" and not stays:
            out.append(adopt(value, target))
        else:
            out.append(value)
    return tuple(out) if isinstance(result, (tuple, list)) else out[0]


def _returns_view(schema):
    return any(ret.alias_info is not None and not ret.alias_info.is_write for ret in schema.returns)


def _composite(op):
    """A CompositeImplicitAutograd overload: a device kernel for it would bypass its autograd decomposition."""
    import torch
    try:
        return torch._C._dispatch_has_kernel_for_dispatch_key(op.name(), "CompositeImplicitAutograd")
    except RuntimeError:  # aten::acos.int and the like: TorchScript's, not the dispatcher's
        return True


RANDOM_WORDS = ("rand", "normal", "bernoulli", "dropout", "multinomial", "poisson", "uniform", "exponential",
                "geometric", "cauchy", "rrelu")


def _draws_random(schema):
    return (any("Generator" in str(arg.type) for arg in schema.arguments)
            or any(word in schema.name for word in RANDOM_WORDS))


def kernel_for(op, name, plan_op, product, device_type):
    names = [arg.name for arg in op._schema.arguments]

    def is_device(tensor):
        return tensor.device.type == device_type

    def kernel(*args, **kwargs):
        values = dict(zip(names, args))
        values.update(kwargs)
        refuse(name, device_limits.refusal(name, plan_op, values, product, is_device))
        result = run_on_host(op, device_type, args, kwargs)
        if name in device_limits.MOVEMENT:  # data movement: the device may not hold what it made
            outputs = result if isinstance(result, (tuple, list)) else (result,)
            refuse(name, device_limits.refusal(name, plan_op, {"result": list(outputs)}, product, is_device))
        return result
    return kernel


MET = {}


def refuse(name, message):
    if message:
        dtype = message.split(" not implemented for ", 1)[1].split()[0] if " not implemented for " in message else "-"
        MET.setdefault((name, dtype), message)
        raise RuntimeError(message)


def report_met(environ=None, stream=None):
    """The gaps met, one line each on ``stream`` (stderr), and appended to ``$TORCH_NPU_TESTING_GAPS``."""
    environ = os.environ if environ is None else environ
    if not MET:
        return
    stream = sys.stderr if stream is None else stream
    for (name, dtype), message in sorted(MET.items()):
        print(f"simulated NPU limit met: {name} {dtype}: {message}", file=stream)
    path = environ.get(GAPS, "").strip()
    if path:
        with open(path, "a", encoding="utf-8") as handle:
            for (name, dtype), message in sorted(MET.items()):
                handle.write(json.dumps({"op": name, "dtype": dtype, "message": message}, ensure_ascii=False) + "\n")


def _limited(plan_op):
    return (plan_op["refused"] or plan_op["formats"] or plan_op.get("excluded")
            or any(v is not None for v in plan_op["dtypes"].values()))


def install(table, device_type="npu", key="PrivateUse1"):
    """Replace the device kernels the table limits. Returns ``{"library", "installed": [overload...],
    "skipped": {overload: why}, "conflicts": [...]}``; keep ``library`` alive (dropping it removes them)."""
    import torch
    ops, conflicts = device_limits.plan(table)
    library = torch.library.Library("aten", "IMPL")
    installed, skipped = [], {}
    for name, plan_op in sorted(ops.items()):
        if not _limited(plan_op):
            continue
        packet = getattr(torch.ops.aten, name, None) if name.isidentifier() else None
        if packet is None or not hasattr(packet, "overloads"):
            skipped[name] = "no aten operator of that name"
            continue
        for overload in packet.overloads():
            op = getattr(packet, overload)
            full = f"{name}.{overload}" if overload != "default" else name
            why = ("the device's own kernel (data movement)" if name in OWN_KERNELS else
                   None if plan_op["refused"] else  # refused outright: it never runs
                   "composite or not a dispatcher operator" if _composite(op) else
                   "returns a view of an input" if _returns_view(op._schema) else
                   "draws random numbers from the device's generator" if _draws_random(op._schema) else None)
            if why:
                skipped[full] = why
                continue
            library.impl(full, kernel_for(op, name, plan_op, table.get("product"), device_type), key)
            installed.append(full)
    return {"library": library, "installed": installed, "skipped": skipped, "conflicts": conflicts}


_INSTALLED = []


def install_from_environment(environ=None):
    """Install the table named by ``$TORCH_NPU_TESTING_LIMITS`` once (nothing when unset); the state or None."""
    table = device_limits.table_from_environment(environ)
    if table is None:
        return None
    if not _INSTALLED:
        _INSTALLED.append(install(table))
        atexit.register(report_met)
    return _INSTALLED[0]
