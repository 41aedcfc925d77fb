# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""``bench --mutate FILE``: one timed run of ``mutate FILE`` against its wall-time target.

The target is 1.25 x (parent import + N x T / jobs), T the baseline child's test time: the import is paid
once, not N times. The run is one fresh subprocess (``PY -m torch_npu_testing mutate FILE --quiet --json
TMP``, timed by :func:`torch_npu_testing.suite.bench_steps.time_step`, Python's start included); the figures of
the target come from its JSON. It is measured once, apart from bench's repeated rounds. Exit status 0
whatever the verdict; 1 when the mutate run itself fails (bench's rule).
"""
import json
import os
import shlex
import tempfile

from .bench_steps import CommandFailed, Step, time_step


def measure(python, file, root, timeout_s, extra=""):
    """``{"wall_s", "timing", "mutants", "jobs", "verdict"}`` of one run."""
    with tempfile.TemporaryDirectory(prefix="tnt-bench-mutate-") as scratch:
        out = os.path.join(scratch, "mutate.json")
        step = Step("mutate", [python, "-m", "torch_npu_testing", "mutate", file, "--quiet", "--json", out]
                    + shlex.split(extra))
        wall = time_step(step, root, timeout_s)
        with open(out, encoding="utf-8") as handle:
            document = json.load(handle)
    timing = document["timing"]
    count = sum(len(block["mutants"]) for block in document["apis"])
    target = 1.25 * (timing["parent_import_s"] + count * timing["baseline_test_s"] / document["jobs"])
    return {"file": file, "wall_s": round(wall, 3), "target_s": round(target, 3), "timing": timing, "mutants": count,
            "jobs": document["jobs"], "verdict": "within target" if wall <= target else "over target"}


def line(row):
    timing = row["timing"]
    return (f"mutate {row['file']}: {row['wall_s']:.1f}s wall; target 1.25 x (import "
            f"{timing['parent_import_s']:.1f}s + {row['mutants']} x {timing['baseline_test_s']:.2f}s / "
            f"{row['jobs']}) = {row['target_s']:.1f}s: {row['verdict']}")


def bench_mutate(python, file, root, timeout_s, extra, stream, progress_stream):
    """Print the one line of :func:`line` (bench's ``--mutate``); 1 when the run fails."""
    try:
        row = measure(python, file, root, timeout_s, extra)
    except CommandFailed as exc:
        print(f"torch_npu_testing: error: bench: {exc}", file=progress_stream, flush=True)
        return 1
    print(line(row), file=stream, flush=True)
    return 0
