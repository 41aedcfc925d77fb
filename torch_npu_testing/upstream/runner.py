# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""``upstream run``: patch scratch copies of the upstream tests, run them, classify each test case.

Each patched file runs in its own subprocess (:mod:`torch_npu_testing.upstream.driver`) with the
chosen interpreter, from the scratch copy's ``test/`` directory, on the device the patched file
resolves. The driver records :class:`~torch_npu_testing.common.results.Case` records; their outcomes are then
matched with the manifest's expected failures for the installed torch version and that device:

========================  ==========================================================================
``passed``                passed
``failed`` / ``error``    failed (assertion) / raised; not expected -> the run fails
``skipped``               skipped, with the skip reason
``expected_failure``      failed or raised, and the manifest expects it here (reason from the manifest),
                          or upstream marks it ``@expectedFailure``
``unexpected_success``    passed although the manifest (or upstream's ``@expectedFailure``) expects it
                          to fail here: not a failure of the run, but update the manifest
========================  ==========================================================================

A test with subtests is one case per subtest; a manifest entry names the test and covers its cases.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..common import results
from ..common.atomic import write_text_atomic
from ..common.results import Outcome
from . import manifest
from .scratch import assess, ensure_empty_dir, prepare, require_all_apply

DRIVER = Path(__file__).resolve().with_name("driver.py")
OUTCOMES = tuple(outcome.value for outcome in Outcome)
KIND = "upstream"
DEFAULT_TIMEOUT = 1800


def fails_upstream_run(outcome):
    """Whether a classified outcome fails the upstream run: a failure the manifest does not expect.

    An unexpected success does not: it says the manifest needs updating (a note, not a failure).
    """
    return outcome.fails and outcome is not Outcome.UNEXPECTED_SUCCESS


@dataclass
class PatchRun:
    """Results of one patched file: ``data`` as written to the results JSON, ``tests`` its cases."""

    data: dict
    tests: list = field(default_factory=list)

    @property
    def unexpected(self):
        return [case for case in self.tests if fails_upstream_run(case.outcome)]


def classify(cases, failures, torch_version, device):
    """The driver's cases with the manifest's expected failures applied, sorted by test.

    For a test the manifest expects to fail here, its failing cases become ``expected_failure`` (with
    the manifest's reason); when none of its cases failed, its passing cases become
    ``unexpected_success``.
    """
    classified = []
    for test, group in results.by_test(cases):
        expected = manifest.expected_failure_for(failures, test, torch_version, device)
        failing = [case for case in group if case.outcome in (Outcome.FAILED, Outcome.ERROR)]
        for case in group:
            if expected is not None and case in failing:
                case = replace(case, outcome=Outcome.EXPECTED_FAILURE, reason=expected.reason,
                               details=case.details or case.reason)
            elif expected is not None and not failing and case.outcome is Outcome.PASSED:
                case = replace(case, outcome=Outcome.UNEXPECTED_SUCCESS,
                               reason=f"passed, but the manifest expects a failure here: {expected.reason}")
            classified.append(case)
    return sorted(classified, key=lambda case: case.id)


def stale_expectations(failures, cases, torch_version, device):
    """Manifest entries that apply here but name no test that ran (renamed or removed upstream)."""
    names = {case.id for case in cases}
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
    payload = json.loads(Path(results_file).read_text(encoding="utf-8"))
    if payload.get("format") != results.FORMAT:
        return None, f"the driver wrote results of format {payload.get('format')!r}, not {results.FORMAT!r}"
    return payload, None


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
                           "cases": [results.Case(file=patch.target, id="<run>", outcome=Outcome.ERROR,
                                                  reason=problem).to_dict()]}
            failures = manifest.expected_failures(data, patch.name)
            cases = [replace(case, file=patch.target) for case in results.cases_from_dicts(payload["cases"])]
            tests = classify(cases, failures, payload.get("torch"), payload.get("device"))
            entry = manifest.entry(data, patch.name)
            runs.append(PatchRun(data={
                "patch": patch.name,
                "base_key": patch.base_key,
                "base_used": status.base.how if status.base is not None else None,
                "target": patch.target,
                "source": str(source),
                "upstream": entry.get("upstream"),
                "recorded_base": status.recorded_base,
                "base_blob": status.actual_base,
                "base_matches": status.base_matches,
                "base_verified": status.base_verified,
                "applies": status.applies,
                "python_executable": str(python),
                "python": payload.get("python"),
                "torch": payload.get("torch"),
                "device": payload.get("device"),
                "seconds": payload.get("seconds"),
                "counts": results.tally(tests),
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
        item["cases"] = results.cases_to_dicts(patch_run.tests)
        patches.append(item)
    unexpected = sum(len(patch_run.unexpected) for patch_run in runs)
    return {
        "format": results.FORMAT,
        "kind": KIND,
        "source": str(source),
        "torch": runs[0].data["torch"] if runs else None,
        "device": runs[0].data["device"] if runs else None,
        "ok": unexpected == 0,
        "unexpected_failures": unexpected,
        "patches": patches,
    }


def skipped_document(reason):
    """The results of a run that did not happen (no PyTorch source), with the reason."""
    return {"format": results.FORMAT, "kind": KIND, "skipped": True, "reason": reason, "ok": True, "patches": []}


def report_lines(status, patch_run, data):
    """What ``upstream run`` prints for one patch: its base and torch, every case, the tracebacks of
    unexpected failures, the counts and verdict, and manifest entries that named no test."""
    info = patch_run.data
    base = status.base_text() + ("" if status.base_matches else "; the patch still applies")
    lines = [f"upstream: {info['patch']} [{manifest.upstream_ref(data, info['patch'])}]: {base}; "
             f"torch {info['torch']} on {info['device']}"]
    width = max(len(outcome) for outcome in OUTCOMES)
    lines += [f"  {case.outcome.value:<{width}}  {case.name}" + (f": {case.reason}" if case.reason else "")
              for case in patch_run.tests]
    for case in patch_run.unexpected:
        if case.details:
            lines += [f"--- {case.name}", case.details.rstrip()]
    counts = info["counts"]
    text = ", ".join(f"{counts[outcome.value]} {outcome.label}" for outcome in Outcome if counts[outcome.value])
    if text:
        text += f" ({counts['tests']} tests, {counts['cases']} cases)"
    verdict = "FAILED" if patch_run.unexpected else "ok"
    lines.append(f"upstream: {info['patch']}: {text or 'no tests'}: {verdict}")
    lines += [f"upstream: note: the manifest expects {name} to fail here, but no such test ran"
              for name in info["stale_expected_failures"]]
    return lines


def write_results(path, document):
    write_text_atomic(path, json.dumps(document, indent=2) + "\n")
