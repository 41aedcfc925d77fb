# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""The generic fault catalogue: which faults an API gets, chosen by its kind and signature, before any call.

- parameters: each parameter with a default is ignored when another value is passed; each parameter
  without one that is (or may be) an integer is off by one; ``**kwargs`` dropped;
- tensor arguments (when a parameter may hold tensors, or the API returns a callable): passed as contiguous
  copies; in-place writes lost;
- tensor results (when the return may hold tensors or a callable, whose outputs are then faulted): the
  :data:`RESULT_FAULTS`;
- errors: another exception type with the same message; the exception swallowed;
- context managers and decorators (when the API returns one: its return annotation names a context-manager
  class, or it is the ``clone``/``copy`` of one): ``__exit__`` not restoring, ``__enter__`` doing nothing,
  the function returned undecorated, the wrapper without ``functools.wraps``;
- state (every kind but a method of a context-manager class, a grad-mode switch itself): grad mode flipped;
- copies (a method named ``clone``, ``copy`` or ``__copy__``): ``self`` returned;
- subsystems (:mod:`.subsystem_faults`, last): autograd, tensor identity, containers, nn.Module, autocast,
  default dtype, RNG, Python level, warnings and messages, one generic fault each.

The catalogue is the same list in every process for the same API and torch, so a mutant is named by its
index and its id ``API:code`` (``torch._functorch.config.patch:param-default:arg1``).
"""
import re
from dataclasses import dataclass

from ..task.apikind import COPY_NAMES
from . import context_faults, faults, subsystem_faults, tensors
from .faults import Fault
from .targets import Target

RESULT_FAULTS = (
    ("result-shift", "floating and complex values moved by (|v| + 1) * 1e-3", tensors.shift, False),
    ("result-int+1", "integers: the first element + 1", tensors.first_plus_one, False),
    ("result-bf16", "float32/float64 values rounded to bfloat16 precision", tensors.bfloat16_rounding, False),
    ("result-narrow", "dtype narrowed: float64->float32, int64->int32, complex128->complex64, bool->uint8",
     tensors.narrow_dtype, False),
    ("result-contiguous", "made contiguous (strides and memory format lost)", tensors.contiguous, False),
    ("result-resolved", "conj and neg bits resolved", tensors.resolve_bits, False),
    ("result-detached", "detached (requires_grad and history dropped)", tensors.detach, False),
    ("result-view-copy", "a view of an input returned as a copy", tensors.view_as_copy, True),
    ("result-transposed", "the last two dims transposed where they are equal", tensors.transpose_square, False),
    ("result-cpu", "returned on the CPU (a port that forgets the device; no effect on a CPU run)",
     tensors.to_cpu, False),
)
_TENSOR_PARAM = re.compile(r"Tensor|Module|tuple|list|Sequence|Iterable")
_INTEGER = re.compile(r"\bint\b|SupportsInt|SupportsIndex")
_TENSOR_RESULT = re.compile(r"Tensor|Callable|Module|tuple|list|dict|Sequence|Any")


@dataclass(frozen=True)
class Mutant:
    api: str
    index: int
    fault: Fault

    @property
    def id(self):
        return f"{self.api}:{self.fault.code}"


def _param_faults(target: Target):
    params, found = target.params, []
    for param in params:
        if param.kind in ("positional", "keyword") and param.has_default:
            found.append(faults.param_default(param, params))
        elif param.kind == "positional" and (not param.annotation or _INTEGER.search(param.annotation)):
            found.append(faults.param_off_by_one(param, params))
        elif param.kind == "var_keyword":
            found.append(faults.kwargs_dropped(param, params))
    return found


def takes_tensors(target):
    return "Callable" in target.returns or any(
        p.kind != "self" and (not p.annotation or _TENSOR_PARAM.search(p.annotation)) for p in target.params)


def may_return_tensors(target):
    return not target.returns or bool(_TENSOR_RESULT.search(target.returns))


def returns_context_manager(target):
    cls = target.returns_class
    if cls is not None:
        return hasattr(cls, "__enter__") and hasattr(cls, "__exit__")
    return not target.returns or (target.cm_class and target.attr in COPY_NAMES)


def faults_for(target: Target):
    """The faults of ``target``, in catalogue order (see the module docstring)."""
    found = _param_faults(target)
    if takes_tensors(target):
        found += [faults.contiguous_arguments(), faults.inplace_dropped()]
    if may_return_tensors(target):
        found += [faults.result_fault(code, text, transform, storage) for code, text, transform, storage
                  in RESULT_FAULTS]
    found += faults.error_faults()
    if returns_context_manager(target):
        found += context_faults.context_faults()
    if not target.cm_class:
        found.append(faults.grad_mode_flipped())
    if target.kind in ("method", "shared method") and target.attr in COPY_NAMES:
        found.append(faults.copy_returns_self(target.attr))
    found += subsystem_faults.faults_for(target, takes_tensors(target), may_return_tensors(target), COPY_NAMES)
    return found


def catalogue(targets):
    """Every mutant of ``targets`` (in order), indexed from 0 across them."""
    mutants = []
    for target in targets:
        for fault in faults_for(target):
            mutants.append(Mutant(target.name, len(mutants), fault))
    return mutants
