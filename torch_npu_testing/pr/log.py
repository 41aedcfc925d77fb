# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""The test log of the description: per env and file, each test method with its outcome and its number of
cases; passing subtests collapsed into the count; every failure in full.

Three levels of detail, the first that fits is used (:mod:`.render` decides, never silently):

- ``methods``: a row per test method;
- ``classes``: a line per test class (its methods counted), the failing methods still one by one;
- ``files``: a line per file and run, the failing methods still one by one.

Failures (failed, error, unexpected success) always keep their test id, subtest and reason; their
tracebacks are shown in full unless ``max_trace`` cuts them, which the text then says. The per-case log
is in the evidence file (:mod:`.evidence`).
"""

from ..common import results as results_model
from ..common.results import Outcome
from ..report.markdown import fence
from ..report.render import cell, code, counts_text, env_heading, tests_and_cases

LEVELS = ("methods", "classes", "files")


def _outcome_text(cases):
    """``passed`` / ``skipped: why`` / ``**failed**`` ... of one test's cases, subtests collapsed."""
    outcomes = {}
    for case in cases:
        outcomes.setdefault(case.outcome, []).append(case)
    parts = []
    for outcome in Outcome:
        group = outcomes.get(outcome)
        if not group:
            continue
        word = f"**{outcome.value}**" if outcome.fails else outcome.value
        reason = next((case.reason for case in group if case.reason), None)
        if outcome is Outcome.SKIPPED and reason:
            word += f": {reason}"
        parts.append(word if len(outcomes) == 1 else f"{len(group)} {word}")
    return ", ".join(parts)


def failure_lines(cases, env, max_trace=None, where="the evidence file"):
    """Every failing case of a run: its id, subtest, outcome, reason and traceback."""
    lines = []
    for case in cases:
        if not case.outcome.fails:
            continue
        lines.append(f"- **{case.outcome.value}** {code(case.name)}" + (f": {case.reason}" if case.reason else ""))
        trace = (case.details or "").rstrip().splitlines()
        if not trace:
            continue
        cut = len(trace) - max_trace if max_trace is not None and len(trace) > max_trace else 0
        shown = trace[cut:]
        block = fence(shown)
        note = [f"  (first {cut} traceback lines cut; in full in {where}, env {env})"] if cut else []
        lines += note + ["", "  " + block + "text"] + ["  " + line for line in shown] + ["  " + block, ""]
    return lines


def _class_rows(groups):
    classes = {}
    for test, cases in groups:
        classes.setdefault(test.split(".", 1)[0], []).append((test, cases))
    rows = []
    for name, tests in classes.items():
        cases = [case for _, group in tests for case in group]
        counts = results_model.tally(cases)
        rows.append(f"| {code(name)} | {len(tests)} | {len(cases)} | {cell(counts_text(counts))} |")
    return ["| class | tests | cases | outcome |", "| --- | --- | --- | --- |"] + rows


def run_lines(run, env, level, max_trace=None, where="the evidence file"):
    cases = results_model.cases_from_dicts(run["cases"])
    mode = "enabled" if run["initial_grad_mode"] else "disabled"
    lines = [f"#### {code(run['path'])} ({env}, grad mode {mode} at start): {tests_and_cases(run['counts'])}, "
             f"{counts_text(run['counts'])}", ""]
    if run.get("import_error"):
        lines += ["**the file could not be imported**", ""]
    groups = results_model.by_test(cases)
    if level == "methods":
        lines += ["| test | outcome | cases |", "| --- | --- | --- |"]
        lines += [f"| {code(test)} | {cell(_outcome_text(group))} | {len(group)} |" for test, group in groups]
        lines.append("")
    elif level == "classes":
        lines += _class_rows(groups) + [""]
    return lines + failure_lines(cases, env, max_trace, where)


def env_lines(entry, level, max_trace=None, where="the evidence file"):
    lines, usable = env_heading(entry)
    if not usable:
        return lines
    total = entry["results"]["totals"]
    lines += [f"Totals: {tests_and_cases(total)} run: {counts_text(total)}.", ""]
    for run in sorted(entry["results"]["runs"], key=lambda r: (r["path"], not r["initial_grad_mode"])):
        lines += run_lines(run, entry["name"], level, max_trace, where)
    for item in entry["results"].get("grad_mode_isolation") or []:
        same = "same outcomes" if item.get("same") else "**different outcomes**"
        lines += [f"- grad-mode isolation probe, {code(item.get('path'))}: {same} with grad mode enabled and "
                  "disabled at start", ""]
    return lines


def log_lines(doc, level="methods", max_trace=None, where="the evidence file"):
    """The log of every env of the report document ``doc`` at ``level`` (one of :data:`LEVELS`)."""
    return [line for entry in doc["envs"] for line in env_lines(entry, level, max_trace, where)]
