# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Read the results folder into one evidence document, and decide what in it is a problem.

Nothing found is dropped silently: an expected env without a results file, a file that is not JSON, a
file of another results format, a file missing required fields, each becomes an env entry with a
``state`` other than ``"ok"`` and a one-line ``message``; the problems list says what makes the report
fail. The document (``report.json`` beside the Markdown) keeps every env's raw results, so the Markdown
can be checked against what it was made from.
"""
import datetime
import fnmatch
import glob
import json
import os

from ..common import results, table as branches
from ..common.results import Outcome, sha256_of
from ..common.layout import GRAD_MODE_FILES
from ..upstream.runner import KIND as UPSTREAM_KIND, fails_upstream_run
from .calls import api_coverage
from .implementation import implementation_coverage
from .strength import rows as strength_rows

REPORT_FORMAT = "torch_npu_testing.report/2"
DEFAULT_ENVS = tuple(branches.default_envs())
ENVS_VARIABLE = "TORCH_NPU_TESTING_REPORT_ENVS"
UPSTREAM_FILE = "upstream.json"
UPSTREAM_GLOB = "upstream-*.json"  # one per torch the upstream env ran: upstream-2.14.1.json
MISSING_MESSAGE = "no results: env did not run or crashed before writing results"
REQUIRED_FIELDS = {"env": (str, type(None)), "started_at": str, "command": list, "cwd": str, "probe": dict,
                   "runs": list, "grad_mode_isolation": list, "totals": dict}
REQUIRED_RUN_FIELDS = {"path": str, "sha256": str, "initial_grad_mode": bool, "cases": list, "counts": dict}


def expected_envs(option=None, environ=None):
    """The envs the report must show: ``--envs``, else $TORCH_NPU_TESTING_REPORT_ENVS, else every env of
    the supported branches (:func:`torch_npu_testing.common.table.default_envs`)."""
    environ = os.environ if environ is None else environ
    text = option if option is not None else environ.get(ENVS_VARIABLE)
    if text is None:
        return list(DEFAULT_ENVS)
    return [name for name in (part.strip() for part in text.replace(" ", ",").split(",")) if name]


# --------------------------------------------------------------------------- reading files
def _read_json(path):
    """``(data, None)`` or ``(None, message)`` for a file that cannot be read or is not JSON."""
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except (OSError, UnicodeDecodeError) as exc:
        return None, f"cannot read results file: {exc}"
    if not text.strip():
        return None, "results file is empty (the env stopped while writing it?)"
    try:
        return json.loads(text), None
    except ValueError as exc:
        return None, f"results file is not valid JSON ({exc})"


def _type_errors(mapping, fields, where):
    errors = []
    for key, kind in fields.items():
        if key not in mapping:
            errors.append(f"{where}missing '{key}'")
        elif not isinstance(mapping[key], kind):
            errors.append(f"{where}'{key}' is {type(mapping[key]).__name__}")
    return errors


def validate_results(data):
    """The reasons ``data`` cannot be rendered as suite results (empty list: it can)."""
    errors = _type_errors(data, REQUIRED_FIELDS, "")
    for index, run in enumerate(data.get("runs") if isinstance(data.get("runs"), list) else []):
        if not isinstance(run, dict):
            errors.append(f"runs[{index}] is not an object")
            continue
        errors += _type_errors(run, REQUIRED_RUN_FIELDS, f"runs[{index}]: ")
        if isinstance(run.get("cases"), list):
            try:
                results.cases_from_dicts(run["cases"])
            except ValueError as exc:
                errors.append(f"runs[{index}]: {exc}")
    return errors


def _format_message(found, rerun):
    """One line for a results file of another format: what it is, and the command that rewrites it."""
    return (f"results format {found!r} is not {results.FORMAT!r} (written by an older or newer torch_npu_testing, "
            f"or not a results file): not interpreted; re-run it ({rerun})")


def read_env(name, path):
    """One env entry: ``state`` ok / missing / corrupt / unknown_format / invalid, with a message.

    ``maintenance`` marks an env of a branch in maintenance (:mod:`torch_npu_testing.common.table`).
    """
    entry = {"name": name, "file": path, "state": "ok", "message": None, "results": None, "notes": [],
             "maintenance": branches.is_maintenance_env(name)}
    if not os.path.exists(path):
        entry.update(state="missing", message=MISSING_MESSAGE)
        if os.path.exists(path + ".tmp"):
            entry["message"] += f" (a partial {os.path.basename(path)}.tmp was left behind)"
        return entry
    data, error = _read_json(path)
    if error:
        entry.update(state="corrupt", message=error)
        return entry
    found = data.get("format") if isinstance(data, dict) else None
    if found != results.FORMAT:
        entry.update(state="unknown_format", results=data, message=_format_message(found, f"tox -e {name}"))
        return entry
    errors = validate_results(data)
    if errors:
        entry.update(state="invalid", results=data, message="results file is incomplete: " + "; ".join(errors[:5])
                     + (f" (and {len(errors) - 5} more)" if len(errors) > 5 else ""))
        return entry
    entry["results"] = data
    if data.get("env") and data["env"] != name:
        entry["notes"].append(f"the results say env {data['env']!r}; the file name says {name!r}")
    return entry


def is_upstream_file(name):
    """``upstream.json`` or ``upstream-<torch>.json``: results of the upstream env, not of a branch env."""
    return name == UPSTREAM_FILE or fnmatch.fnmatch(name, UPSTREAM_GLOB)


def find_envs(results_dir, expected, skip=()):
    """Expected envs first (in the given order), then any other results file found, sorted."""
    found = {}
    skip = {os.path.abspath(path) for path in skip}
    for path in sorted(glob.glob(os.path.join(results_dir, "*.json"))):
        name = os.path.basename(path)
        # report.json: --out == --results
        if not (is_upstream_file(name) or name == "report.json" or os.path.abspath(path) in skip):
            found[os.path.splitext(name)[0]] = path
    names = list(expected) + sorted(set(found) - set(expected))
    return [read_env(name, found.get(name, os.path.join(results_dir, name + ".json"))) for name in names]


# --------------------------------------------------------------------------- upstream
def upstream_files(results_dir, given=None):
    """The upstream results to read: ``given`` (``--upstream``, repeatable), else ``upstream.json`` and
    every ``upstream-<torch>.json`` in the results folder."""
    if given:
        return [os.path.abspath(path) for path in given]
    names = sorted(name for name in (os.listdir(results_dir) if os.path.isdir(results_dir) else [])
                   if is_upstream_file(name))
    return [os.path.join(results_dir, name) for name in names]


def read_upstreams(paths):
    """One upstream entry per file (one per torch it ran under); one ``absent`` entry when there is none."""
    if not paths:
        return [{"file": None, "state": "absent", "torch": None, "patches": [], "notes": [], "data": None,
                 "message": ("not run: no upstream results (the `upstream` env did not run, or no PyTorch "
                             "source was given: set PYTORCH_SRC to a PyTorch checkout)")}]
    return [read_upstream(path) for path in paths]


def read_upstream(path):
    """One upstream results file (``upstream run --results``): state ``absent`` / ``skipped`` / ``ran`` /
    ``corrupt`` / ``unknown_format``.

    Outcomes are the classified cases of :mod:`torch_npu_testing.upstream.runner`; what fails the run is
    :func:`~torch_npu_testing.upstream.runner.fails_upstream_run`. An unexpected success does not: it
    is shown as a note (the manifest needs updating).
    """
    entry = {"file": path, "state": "ran", "message": None, "torch": None, "patches": [], "notes": [],
             "data": None}
    if not os.path.exists(path):
        entry.update(state="absent", message=f"not run: {os.path.basename(path)} does not exist")
        return entry
    data, error = _read_json(path)
    if error:
        entry.update(state="corrupt", message=error)
        return entry
    entry["data"] = data
    found = data.get("format") if isinstance(data, dict) else None
    if found != results.FORMAT or data.get("kind") != UPSTREAM_KIND:
        entry.update(state="unknown_format", message=_format_message(found, "tox -e upstream")
                     if found != results.FORMAT else f"not upstream results (kind {data.get('kind')!r})")
        return entry
    entry["torch"] = data.get("torch")
    if data.get("skipped"):
        entry.update(state="skipped", message=f"not run: {data.get('reason') or 'skipped (no reason recorded)'}")
        return entry
    patches = data.get("patches")
    if not isinstance(patches, list) or not patches:
        entry.update(state="corrupt", message="upstream results list no patch")
        return entry
    try:
        entry["patches"] = [_read_patch(raw if isinstance(raw, dict) else {}) for raw in patches]
    except ValueError as exc:
        entry.update(state="corrupt", message=f"upstream results are incomplete: {exc}", patches=[])
        return entry
    for patch in entry["patches"]:
        entry["notes"] += patch["notes"]
    return entry


def _read_patch(raw):
    cases = results.cases_from_dicts(raw.get("cases", []))
    name = raw.get("patch") or "patch (name not recorded)"
    where = f"upstream {name} (torch {raw.get('torch')})"
    notes = [f"{where}: {case.name} passed although the manifest expects it to fail here "
             f"({case.reason}); update the manifest" for case in cases if case.outcome is Outcome.UNEXPECTED_SUCCESS]
    notes += [f"{where}: the manifest expects {test} to fail here, but no such test ran"
              for test in raw.get("stale_expected_failures") or []]
    return {
        "patch": name, "target": raw.get("target"), "upstream": raw.get("upstream"), "source": raw.get("source"),
        "base_matches": raw.get("base_matches"), "recorded_base": raw.get("recorded_base"),
        "base_blob": raw.get("base_blob"), "applies": raw.get("applies"),
        "python_executable": raw.get("python_executable"), "torch_version": raw.get("torch"),
        "device": raw.get("device"), "seconds": raw.get("seconds"), "cases": raw.get("cases", []),
        "counts": results.tally(cases), "notes": notes,
    }


def upstream_problems(upstream):
    if upstream["state"] in ("corrupt", "unknown_format"):
        return [f"upstream: {upstream['message']} ({upstream['file']})"]
    problems = []
    for patch in upstream["patches"]:
        where = f"upstream {patch['patch']} (torch {patch['torch_version']})"
        cases = results.cases_from_dicts(patch["cases"])
        if patch["applies"] is False:
            problems.append(f"{where}: the patch does not apply")
        if not cases:
            problems.append(f"{where}: no test ran")
        problems += [f"{where}: {case.name} {case.outcome}" + (f" ({case.reason})" if case.reason else "")
                     for case in cases if fails_upstream_run(case.outcome)]
    return problems


# --------------------------------------------------------------------------- judging one env
def check_files_unchanged(data):
    """For each run: ``None`` (same file now), a message (changed), or ``"not found"`` (not compared)."""
    cwd = data.get("cwd") or "."
    status = {}
    for run in data["runs"]:
        path = run["path"] if os.path.isabs(run["path"]) else os.path.join(cwd, run["path"])
        if run["path"] in status:
            continue
        if not os.path.isfile(path):
            status[run["path"]] = "not found"
        else:
            now = sha256_of(path)
            status[run["path"]] = None if now == run["sha256"] else f"changed since this run (now {now})"
    return status


def judge_env(entry, manifest, all_paths):
    """Fill ``entry`` with ``coverage``, ``file_status`` and the list ``problems``."""
    name = entry["name"]
    if entry["state"] != "ok":
        entry["problems"] = [f"{name}: {entry['message']} ({entry['file']})"]
        return entry
    data = entry["results"]
    runs = data["runs"]
    problems = [] if runs else [f"{name}: no test file ran"]
    for run in runs:
        problems += _run_problems(name, run)
    ran = {run["path"] for run in runs}
    problems += [f"{name}: {path} was not run in this env (other envs ran it)" for path in sorted(all_paths - ran)]
    entry["file_status"] = check_files_unchanged(data)
    problems += [f"{name}: {path} {state}; the results are stale, re-run the env"
                 for path, state in entry["file_status"].items() if state and state != "not found"]
    problems += _isolation_problems(name, data, ran)
    entry["coverage"] = api_coverage(data, manifest)
    entry["implementation_coverage"] = implementation_coverage(data, manifest)
    problems += [f"{name}: API {row['name']}: {row['text']}" for row in entry["coverage"]
                 if row["state"] not in ("called", "absent")]
    entry["problems"] = problems
    return entry


def _run_problems(name, run):
    where = f"{name}: {run['path']}" + ("" if run["initial_grad_mode"] else " (grad mode disabled at start)")
    if run.get("import_error"):
        return [f"{where} could not be imported"]
    if not run["cases"]:
        return [f"{where}: no test ran"]
    return [f"{where}: {case.name} {case.outcome}" for case in results.cases_from_dicts(run["cases"])
            if case.outcome.fails]


def _isolation_problems(name, data, ran):
    problems = []
    probed = {item.get("path") for item in data["grad_mode_isolation"] if isinstance(item, dict)}
    for path in GRAD_MODE_FILES:
        if path in ran and path not in probed:
            problems.append(f"{name}: grad-mode isolation probe of {path} was not run (--no-grad-mode-probe?)")
    for item in data["grad_mode_isolation"]:
        for label in ("enabled", "disabled"):
            if results.failed_count(item.get(label) or {}):
                problems.append(f"{name}: {item.get('path')} fails with grad mode {label} at start")
        if not item.get("same"):
            problems.append(f"{name}: {item.get('path')} outcomes depend on the initial grad mode")
    return problems


# --------------------------------------------------------------------------- the document
def collect_results(results_dir, expected, manifest, upstream_paths=None, command=None):
    """The evidence document: every env (expected and found), upstream per torch, problems, verdict."""
    results_dir = os.path.abspath(results_dir)
    upstream_paths = upstream_files(results_dir, upstream_paths)
    envs = find_envs(results_dir, expected, skip=upstream_paths)
    all_paths = set()
    for entry in envs:
        if entry["state"] == "ok":
            all_paths.update(run["path"] for run in entry["results"]["runs"])
    for entry in envs:
        judge_env(entry, manifest, all_paths)
    upstreams = read_upstreams(upstream_paths)
    problems = [problem for entry in envs for problem in entry["problems"]]
    problems += [problem for upstream in upstreams for problem in upstream_problems(upstream)]
    notes = [note for upstream in upstreams for note in upstream["notes"]]
    if not os.path.isdir(results_dir):
        notes.insert(0, f"the results folder {results_dir} does not exist")
    return {
        "format": REPORT_FORMAT,
        "generated_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "command": command,
        "cwd": os.getcwd(),
        "results_dir": results_dir,
        "expected_envs": list(expected),
        "manifest": manifest,
        "envs": envs,
        "upstream": upstreams,
        "strength": strength_rows(results_dir),
        "notes": notes,
        "problems": problems,
        "verdict": "fail" if problems else "pass",
    }
