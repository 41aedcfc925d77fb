# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""``upstream run``: patch scratch copies of the upstream tests, run them, classify each test.

Each patched file runs in its own subprocess (:mod:`torch_npu_testing.upstream.driver`) with the
chosen interpreter, from the scratch copy's ``test/`` directory, on the device the patched file
resolves. Outcomes are then matched with the manifest's expected failures for the installed torch
version and that device:

========================  ==========================================================================
``passed``                passed
``failed`` / ``error``    failed (assertion) / raised; not expected -> the run fails
``skipped``               skipped, with the skip reason
``expected_failure``      failed or raised, and the manifest expects it here (reason from the manifest)
``unexpectedly_passing``  passed although the manifest expects it to fail here (update the manifest)
========================  ==========================================================================
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from . import manifest
from .scratch import assess, ensure_empty_dir, prepare, require_all_apply

DRIVER = Path(__file__).resolve().with_name("driver.py")
OUTCOMES = ("passed", "failed", "error", "skipped", "expected_failure", "unexpectedly_passing")
UNEXPECTED = ("failed", "error")
DEFAULT_TIMEOUT = 1800


@dataclass
class PatchRun:
    """Results of one patched file, as written to the results JSON."""

    data: dict
    tests: list = field(default_factory=list)

    @property
    def unexpected(self):
        return [test for test in self.tests if test["outcome"] in UNEXPECTED]


def classify(records, failures, torch_version, device):
    """Turn the driver's raw records into final outcomes using the manifest's expected failures."""
    tests = []
    for record in records:
        record = dict(record)
        expected = manifest.expected_failure_for(failures, record["name"], torch_version, device)
        if expected is not None and record["outcome"] in UNEXPECTED:
            record["detail"] = record.get("reason", "")
            record["outcome"] = "expected_failure"
            record["reason"] = expected.reason
        elif expected is not None and record["outcome"] == "passed":
            record["outcome"] = "unexpectedly_passing"
            record["reason"] = f"passed, but the manifest expects a failure here: {expected.reason}"
        tests.append(record)
    return tests


def stale_expectations(failures, tests, torch_version, device):
    """Manifest entries that apply here but name no test that ran (renamed or removed upstream)."""
    names = [test["name"] for test in tests]
    return [failure.test for failure in failures
            if failure.applies(torch_version, device)
            and not any(manifest._same_test(failure.test, name) for name in names)]


def _environment():
    env = dict(os.environ)
    # torch_npu installed without CANN breaks `import torch` through backend autoload.
    env.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.setdefault("PYTHONUNBUFFERED", "1")
    return env


def run_driver(python, test_file, results_file, log_file, cwd, timeout, echo=False):
    """Run the driver; returns ``(payload, problem)``: problem is a one-line string when no results came."""
    command = [str(python), str(DRIVER), str(test_file), str(results_file)]
    with open(log_file, "w", encoding="utf-8") as log:
        try:
            completed = subprocess.run(command, check=False, cwd=str(cwd), env=_environment(), stdout=log,
                                       stderr=subprocess.STDOUT, timeout=timeout)
        except FileNotFoundError:
            return None, f"interpreter {python} not found"
        except subprocess.TimeoutExpired:
            return None, f"timed out after {timeout} s"
    if echo:
        sys.stdout.write(Path(log_file).read_text(encoding="utf-8", errors="replace"))
    if not Path(results_file).is_file():
        tail = [line for line in Path(log_file).read_text(encoding="utf-8", errors="replace").splitlines()
                if line.strip()][-1:]
        return None, (f"the test process exited with status {completed.returncode} without results"
                      + (f" ({tail[0].strip()})" if tail else ""))
    return json.loads(Path(results_file).read_text(encoding="utf-8")), None


def run(source, patches, data, python=None, scratch=None, keep=False, timeout=DEFAULT_TIMEOUT, echo=False):
    """Check, patch, run and classify. Raises UsageError (nothing run) when a patch cannot be applied.

    Returns ``(statuses, [PatchRun], scratch_path_or_None)``; the scratch is removed unless kept.
    """
    python = python or sys.executable
    statuses = assess(source, patches, data)
    require_all_apply(statuses, "run")
    if scratch is not None:
        root = ensure_empty_dir(scratch)
        keep = True
    else:
        root = Path(tempfile.mkdtemp(prefix="tnt-upstream-run-"))
    try:
        prepare(source, statuses, data, root)
        results_dir = root / ".results"
        results_dir.mkdir(exist_ok=True)
        cwd = root / "test" if (root / "test").is_dir() else root
        runs = []
        for number, status in enumerate(statuses):
            patch = status.patch
            results_file = results_dir / f"{number}.json"
            log_file = results_dir / f"{number}.log"
            payload, problem = run_driver(python, root / patch.target, results_file, log_file, cwd, timeout, echo)
            if payload is None:
                payload = {"torch": None, "device": None, "python": None,
                           "tests": [{"name": "<run>", "outcome": "error", "reason": problem}]}
            failures = manifest.expected_failures(data, patch.name)
            tests = classify(payload["tests"], failures, payload.get("torch"), payload.get("device"))
            counts = {outcome: sum(1 for test in tests if test["outcome"] == outcome) for outcome in OUTCOMES}
            entry = manifest.entry(data, patch.name)
            runs.append(PatchRun(data={
                "patch": patch.name,
                "target": patch.target,
                "source": str(source),
                "upstream": entry.get("upstream"),
                "recorded_base": status.recorded_base,
                "base_blob": status.actual_base,
                "base_matches": status.base_matches,
                "applies": status.applies,
                "python_executable": str(python),
                "python": payload.get("python"),
                "torch": payload.get("torch"),
                "device": payload.get("device"),
                "seconds": payload.get("seconds"),
                "counts": counts,
                "stale_expected_failures": stale_expectations(
                    failures, tests, payload.get("torch"), payload.get("device")),
                "log": str(log_file) if keep else None,
            }, tests=tests))
        return statuses, runs, (root if keep else None)
    finally:
        if not keep:
            shutil.rmtree(root, ignore_errors=True)


def results_document(source, runs):
    """The machine-readable results (``--results FILE.json``), read by the evidence report."""
    patches = []
    for patch_run in runs:
        item = dict(patch_run.data)
        item["tests"] = patch_run.tests
        patches.append(item)
    unexpected = sum(len(patch_run.unexpected) for patch_run in runs)
    return {
        "kind": "torch_npu_testing.upstream",
        "format": 1,
        "source": str(source),
        "torch": runs[0].data["torch"] if runs else None,
        "device": runs[0].data["device"] if runs else None,
        "ok": unexpected == 0,
        "unexpected_failures": unexpected,
        "outcomes": list(OUTCOMES),
        "patches": patches,
    }


def write_results(path, document):
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)
