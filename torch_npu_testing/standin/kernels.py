# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Replace one op's kernel on the simulated NPU only, and put it back (the CPU's kernel is never touched).

::

    from torch_npu_testing.standin import kernels

    def wrong_mul(a, b):                      # receives the npu tensors
        return kernels.on_host("mul.Tensor", a, b) + 1

    handle = kernels.replace("mul.Tensor", wrong_mul)   # torch.mul on npu now adds 1; on cpu it does not
    kernels.restore(handle)                             # the device's own kernel again
    with kernels.replaced("mul.Tensor", wrong_mul):     # the same, for a block
        ...

``op`` is an aten overload name as ``torch.library`` writes it (``"mul.Tensor"``, ``"sum"``,
``"view_as_real"``). The replacement is a ``torch.library.Library("aten", "IMPL")`` registration for the
``PrivateUse1`` key (the device torch_npu names ``npu``); :func:`restore` destroys that library, which
removes the registration. :func:`on_host` runs the op's CPU kernel on host copies of the arguments and
moves the results back to the device of the first npu argument, so a replacement can start from the
right answer without calling itself.
"""
import contextlib

DEVICE_KEY = "PrivateUse1"


def _overload(op):
    import torch
    name, _, overload = op.partition(".")
    packet = getattr(torch.ops.aten, name)
    return getattr(packet, overload or "default")


def replace(op, fn):
    """Register ``fn`` as ``aten::op``'s kernel on the simulated NPU; returns the handle for :func:`restore`."""
    import torch
    _overload(op)   # AttributeError naming the op when there is no such overload
    library = torch.library.Library("aten", "IMPL")
    library.impl(op, fn, DEVICE_KEY)
    return library


def restore(handle):
    """Remove a replacement made by :func:`replace` (the device's own kernel serves the op again)."""
    handle._destroy()


@contextlib.contextmanager
def replaced(op, fn):
    handle = replace(op, fn)
    try:
        yield handle
    finally:
        restore(handle)


def on_host(op, *args, **kwargs):
    """``aten::op`` computed by the CPU's kernel; tensor results come back on the first npu argument's device."""
    import torch
    from torch.utils._pytree import tree_flatten, tree_map

    leaves, _ = tree_flatten((args, kwargs))
    device = next((leaf.device for leaf in leaves if isinstance(leaf, torch.Tensor) and leaf.device.type == "npu"),
                  None)
    to_cpu = lambda value: value.cpu() if isinstance(value, torch.Tensor) else value
    result = _overload(op)(*tree_map(to_cpu, args), **tree_map(to_cpu, kwargs))
    if device is None:
        return result
    return tree_map(lambda value: value.to(device) if isinstance(value, torch.Tensor) else value, result)
