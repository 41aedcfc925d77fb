# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""The grad-mode isolation probe on DEST's file: the kit's ``grad-modes`` command, loaded from DEST.

A file whose contract includes both initial grad modes (:data:`torch_npu_testing.common.layout.GRAD_MODE_FILES`)
is also run with grad mode disabled and then enabled at start, by
:func:`torch_npu_testing.suite.grad_modes.run_under_grad_modes` (no second probe): the same interpreter
runs ``python -m torch_npu_testing grad-modes test/<dir>/<name>.py --json OUT`` from ``DEST/test`` with the
kit on ``PYTHONPATH``, and its two runs and probe are recorded with paths relative to DEST.
"""
import json
import os
import tempfile

from ..common.results import cases_from_dicts
from . import classify
from .runfile import execute
from .standin import KIT_ROOT as KIT_PARENT


def probe_file(python, target, dest, extra_env):
    """``(runs, probe, record)``: the two grad-mode runs (results-model runs), the probe, and how it ran."""
    cwd = os.path.join(dest, "test")
    env = dict(os.environ, **extra_env)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [env.get("PYTHONPATH"), KIT_PARENT]))
    with tempfile.TemporaryDirectory(prefix="verify-grad-") as folder:
        out = os.path.join(folder, "grad-modes.json")
        argv = [python, "-m", "torch_npu_testing", "grad-modes", target.test_dir_name + ".py", "--json", out]
        rc, output, seconds = execute(argv, cwd, env)
        try:
            with open(out, encoding="utf-8") as handle:
                document = json.load(handle)
        except (OSError, ValueError) as exc:
            document = None
            output += f"\n(verify: grad-modes wrote no readable JSON: {exc})\n"
    record = {"command": argv, "cwd": cwd, "rc": rc, "duration_s": seconds, "output": output[-20_000:]}
    if document is None:
        return [], None, dict(record, problems=[f"grad-mode probe of {target.rel_path} wrote no results (rc {rc})"])
    runs = [_relabel(run, target) for run in document.get("runs", [])]
    probes = [dict(item, path=target.rel_path) for item in document.get("grad_mode_isolation", [])]
    probe = probes[0] if probes else None
    problems = [] if probe and probe.get("same") else [
        f"grad-mode probe of {target.rel_path}: outcomes differ between the two initial grad modes"]
    problems += [f"grad-mode probe ran other bytes of {target.rel_path} ({run['sha256'][:12]})" for run in runs
                 if run.get("sha256") != target.sha256]
    return runs, probe, dict(record, problems=problems)


def _relabel(run, target):
    """A grad-modes run with its path relative to DEST, its output kept and verify's judgement added."""
    cases = cases_from_dicts(run.get("cases", []))
    needs, problems = classify.judge(cases, target.kit_ids)
    if run.get("import_error") or not cases:
        problems = [f"{target.rel_path} could not be imported in the grad-mode probe"]
    mode = "enabled" if run.get("initial_grad_mode") else "disabled"
    problems = [f"grad mode {mode} at start: {problem}" for problem in problems]
    output = run.pop("output", "")
    relabeled = dict(run, path=target.rel_path, cases=[dict(case, file=target.rel_path) for case in run["cases"]])
    relabeled["verify"] = {"kind": "grad-mode probe", "output": output[-20_000:], "needs": needs, "problems": problems}
    return relabeled
