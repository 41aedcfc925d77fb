# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""The test logs of the description: verify's of the PR's files in DEST (:func:`verify_log_lines`: every test
of a file with whose it is and its outcome), and one suite run's (:func:`run_lines`): each test method with
its outcome and its number of cases; passing subtests collapsed into the count; every failure in full.

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
from ..report.render import cell, code, counts_text, tests_and_cases

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


# --------------------------------------------------------------------------- verify's log of the PR's files
def _whose(test, kit_ids):
    return "kit" if test in kit_ids else "theirs"


def _verify_row(test, group, run, kit_ids):
    needs = run["verify"]["needs"].get(test)
    text = _outcome_text(group)
    if needs:
        reason = next((case.reason for case in group if case.reason), "")
        text = f"needs {needs} (not on this host): {reason}"
    return f"| {code(test)} | {_whose(test, kit_ids)} | {cell(text)} |"


def _verify_classes(groups, run, kit_ids):
    classes = {}
    for test, cases in groups:
        classes.setdefault((test.split(".", 1)[0], _whose(test, kit_ids)), []).append((test, cases))
    rows = ["| class | whose | tests | outcome |", "| --- | --- | --- | --- |"]
    for (name, whose), tests in classes.items():
        counts = results_model.tally([case for _, group in tests for case in group])
        needing = sum(1 for test, _ in tests if test in run["verify"]["needs"])
        rows.append(f"| {code(name)} | {whose} | {len(tests)} | {cell(counts_text(counts))}"
                    + (f"; {needing} need a device this host lacks" if needing else "") + " |")
    return rows


def verify_run_lines(run, env, kit_ids, level, max_trace=None, where="the verify record"):
    """One whole-file run of verify: heading with counts, its tests (theirs and the kit's), failures."""
    cases = results_model.cases_from_dicts(run["cases"])
    how = run["verify"].get("how", {}).get("command", "")
    lines = [f"#### {code(run['path'])} ({env}, whole file, {how}): {run['counts']['tests']} tests, "
             f"{counts_text(run['counts'])}", ""]
    if run["verify"].get("not_run"):
        ids = run["verify"].get("ids_from_ast") or []
        return lines + [f"**not run: {run['verify']['not_run']}** — the file cannot import here: "
                        f"{cases[0].reason}", "",
                        f"Its tests (from the AST; {sum(1 for t in ids if t in kit_ids)} kit, "
                        f"{sum(1 for t in ids if t not in kit_ids)} theirs): " + ", ".join(code(t) for t in ids), ""]
    groups = results_model.by_test(cases)
    if level == "methods":
        lines += ["| test | whose | outcome |", "| --- | --- | --- |"]
        lines += [_verify_row(test, group, run, kit_ids) for test, group in groups] + [""]
    elif level == "classes":
        lines += _verify_classes(groups, run, kit_ids) + [""]
    shown = [case for case in cases if case.id not in run["verify"]["needs"]]
    return lines + failure_lines(shown, env, max_trace, where)


def grad_probe_lines(runs, env, item):
    """The grad-mode probe on DEST's file: both runs' counts and whether the outcomes were the same."""
    lines = []
    for run in sorted(runs, key=lambda r: r["initial_grad_mode"]):
        mode = "enabled" if run["initial_grad_mode"] else "disabled"
        lines.append(f"- grad-mode probe on {code(run['path'])} ({env}, loaded from DEST, grad mode {mode} at "
                     f"start): {tests_and_cases(run['counts'])}, {counts_text(run['counts'])}")
    if item is not None:
        same = "same outcomes" if item.get("same") else "**different outcomes**"
        lines.append(f"- grad-mode isolation probe: {same} with grad mode enabled and disabled at start")
    return lines + ([""] if lines else [])


def verify_log_lines(record, level="methods", max_trace=None, where="the verify record"):
    """verify's log of every env: each PR file run whole, then the grad-mode probe on it."""
    kit = {item["path"]: set(item["kit_tests"]) for item in record["files"]}
    lines = []
    for env in record["envs"]:
        lines += [f"### {env['name']} (`verify`, {code(env['python'])})", ""]
        runs = env["results"]["runs"]
        for run in [r for r in runs if r["verify"]["kind"] == "file"]:
            lines += verify_run_lines(run, env["name"], kit.get(run["path"], set()), level, max_trace, where)
            grad = [r for r in runs if r["verify"]["kind"] != "file" and r["path"] == run["path"]]
            item = next((i for i in env["results"]["grad_mode_isolation"] if i.get("path") == run["path"]), None)
            if grad or item:
                lines += grad_probe_lines(grad, env["name"], item)
            elif isinstance(run["verify"].get("grad_mode_probe"), str):
                lines += [f"- grad-mode probe on {code(run['path'])}: {run['verify']['grad_mode_probe']}", ""]
    return lines
