# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""What a test's outcome means for verify: whose test it is, and whether it failed only for a missing device.

- The kit's tests (the ids inside the kit's block) must pass: a kit test that fails, errors, succeeds
  unexpectedly or skips without a reason fails verify.
- Their tests (the branch's own) are reported as they ran. One of theirs that failed or errored only
  because this host lacks the device it names (``npu:0``, ``torch.npu``, a CUDA build with no GPU) is
  listed as ``needs <device>`` with its error and does not fail verify; any other failure of theirs is
  listed and does fail it (the PR would ship a file whose merged tests fail).
- A file that cannot import for such a reason is ``not run: needs an Ascend host``.
"""
import re

from ..common.results import Outcome

# (pattern over the error's type, message and traceback, the device it names)
DEVICE_PATTERNS = (
    (r"No module named 'torch_npu'|torch_npu|torch\.npu|\bnpu:\d|'npu' backend|PrivateUse1|\bnpu\b", "npu"),
    (r"Torch not compiled with CUDA enabled|Found no NVIDIA driver|No CUDA GPUs are available|"
     r"CUDA driver initialization failed|cuda runtime error|\bcuda:\d|CUDA error", "cuda"),
)
ASCEND_HOST = "needs an Ascend host"


def needed_device(text):
    """The device an error names as missing (``npu``, ``cuda``), or None."""
    for pattern, device in DEVICE_PATTERNS:
        if text and re.search(pattern, text):
            return device
    return None


def case_text(case):
    """The error's words without the traceback's file lines and code lines (paths such as ``test/npu/`` name
    no device)."""
    lines = [line for line in (case.details or "").splitlines() if line.strip() and not line.startswith("  ")]
    return "\n".join([case.reason or ""] + lines)


def kit_problem(case):
    """Why a kit test's case fails verify, or None."""
    if case.outcome.fails:
        return f"{case.name} {case.outcome.label}" + (f": {case.reason}" if case.reason else "")
    if case.outcome is Outcome.SKIPPED and not (case.reason or "").strip():
        return f"{case.name} skipped without a reason"
    return None


def judge(cases, kit_ids):
    """``(needs, problems)`` of one run: ``{test id: device}`` for their tests that failed only for a
    missing device, and the reasons the run fails verify (kit tests, and their other failures)."""
    kit_ids = set(kit_ids)
    needs, problems = {}, []
    for case in cases:
        if case.id in kit_ids:
            problem = kit_problem(case)
            if problem:
                problems.append(f"kit test {problem}")
            continue
        if not case.outcome.fails:
            continue
        device = needed_device(case_text(case))
        if device and case.outcome is not Outcome.UNEXPECTED_SUCCESS:
            needs[case.id] = device
        else:
            reason = f": {case.reason}" if case.reason else ""
            problems.append(f"their test {case.name} {case.outcome.label}{reason}")
    return needs, problems
