# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Render the evidence document (see :mod:`.collect`) as Markdown that pastes into an Ascend PR.

Order: verdict, a compact env x file table, the problems, then the PR template sections
【测试环境】 (probe per env), 【测试命令】 (the exact commands), 【测试日志】 (per env: every file with its
SHA-256 and every test with its outcome, the grad-mode isolation probe, API coverage) and
【upstream patch 实跑日志】 (per torch the upstream env ran under).

Outcomes and counts are those of :mod:`torch_npu_testing.common.results`: every test case is counted, a test
with subtests shows its cases, collapsed to one line when they all passed.
"""
import html
import shlex

from ..common import gaps, results, table as branches
from ..common.results import Outcome
from ..upstream.runner import fails_upstream_run
from .calls import calls_section
from .implementation import implementation_section, implementation_summary
from .markdown import cell, code, fence
from .strength import markdown_lines as strength_lines

MAX_DETAIL_LINES = 40  # traceback lines shown per failure; the full text is in report.json


_PLURALS = {Outcome.ERROR: "errors", Outcome.EXPECTED_FAILURE: "expected failures",
            Outcome.UNEXPECTED_SUCCESS: "unexpected successes"}


def outcome_words(outcome, number):
    """``2 errors``, ``1 expected failure``, ``3 passed``."""
    return f"{number} {_PLURALS.get(outcome, outcome.label) if number != 1 else outcome.label}"


def counts_text(counts, fails=lambda outcome: outcome.fails):
    """``12 passed, **1 failed**, 2 skipped`` (outcomes that fail a run in bold; zero counts left out)."""
    parts = []
    for outcome in Outcome:
        value = counts.get(outcome.value) or 0
        if value:
            words = outcome_words(outcome, value)
            parts.append(f"**{words}**" if fails(outcome) else words)
    return ", ".join(parts) or "0 tests"


def tests_and_cases(counts):
    return f"{counts.get('tests', 0)} tests, {counts.get('cases', 0)} cases"


def _yes_no(value):
    return {True: "yes", False: "**no**", None: "not recorded"}.get(value, str(value))


# --------------------------------------------------------------------------- summary
def _row_keys(envs):
    keys = []
    for entry in envs:
        if entry["state"] != "ok":
            continue
        for run in entry["results"]["runs"]:
            key = (run["path"], bool(run["initial_grad_mode"]))
            if key not in keys:
                keys.append(key)
    # the same file's runs together, the process's own grad mode first
    return sorted(keys, key=lambda k: (k[0], not k[1]))


def summary(doc):
    envs = doc["envs"]
    lines = ["| | " + " | ".join(code(e["name"]) + (" (maintenance)" if e.get("maintenance") else "")
                                 for e in envs) + " |",
             "| --- |" + " --- |" * len(envs)]

    def env_cell(entry):
        if entry["state"] != "ok":
            return "**" + {"missing": "no results", "corrupt": "corrupt results",
                           "unknown_format": "unknown results format",
                           "invalid": "incomplete results"}[entry["state"]] + "**"
        probe = entry["results"]["probe"]
        device = probe.get("device") or {}
        return cell(f"torch {(probe.get('torch') or {}).get('version')}, "
                    f"{device.get('type')} x{device.get('count')}"
                    + (" (simulated NPU (host memory, CPU kernels), not an NPU run)"
                       if device.get("simulated") else ""))

    lines.append("| environment | " + " | ".join(env_cell(e) for e in envs) + " |")
    for path, mode in _row_keys(envs):
        cells = []
        for entry in envs:
            if entry["state"] != "ok":
                cells.append("—")
                continue
            run = next((r for r in entry["results"]["runs"]
                        if r["path"] == path and bool(r["initial_grad_mode"]) == mode), None)
            cells.append("not run" if run is None else counts_text(run["counts"]))
        label = code(path) + ("" if mode else " (grad mode disabled at start)")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")

    def coverage_cell(entry):
        if entry["state"] != "ok":
            return "—"
        states = [row["state"] for row in entry["coverage"]]
        called, absent = states.count("called"), states.count("absent")
        bad = len(states) - called - absent
        text = f"{called}/{len(states)} called" + (f", {absent} absent in this torch" if absent else "")
        return text + (f", **{bad} not proven**" if bad else "")

    lines.append("| target APIs called by a test | " + " | ".join(coverage_cell(e) for e in envs) + " |")
    return lines


# --------------------------------------------------------------------------- sections
def env_heading(entry):
    """An env's heading and, for an env without usable results, the line saying why: ``(lines, usable)``."""
    maintenance = (f" (maintenance: Ascend branch {branches.branch_of_env(entry['name'])}, not required)"
                   if entry.get("maintenance") else "")
    lines = [f"### {entry['name']}{maintenance}", ""]
    if entry["state"] != "ok":
        return lines + [f"**{entry['message']}** ({code(entry['file'])})", ""], False
    return lines, True


def environment_section(entry):
    lines, usable = env_heading(entry)
    if not usable:
        return lines
    results = entry["results"]
    probe = results["probe"]
    torch_info = probe.get("torch") or {}
    npu = probe.get("torch_npu") or {}
    cann = probe.get("cann") or {}
    device = probe.get("device") or {}
    if npu.get("installed_version"):
        state = "imported" if npu.get("imported") else "installed but not imported"
        npu_text = f"{npu.get('version') or npu['installed_version']}, {state}, from {code(npu.get('file'))}"
    else:
        npu_text = "not installed"
    torch_text = f"{torch_info.get('version')} from {code(torch_info.get('file'))}"
    if torch_info.get("cuda_build"):
        torch_text += f" (CUDA {torch_info['cuda_build']} build)"
    rows = [
        ("Python", f"{probe.get('python')} ({code(probe.get('python_executable'))})"),
        ("Platform", f"{probe.get('platform')} ({probe.get('machine')})"),
        ("torch", torch_text),
        ("torch_npu", npu_text),
        ("CANN", f"{cann['version']} ({code(cann.get('file'))})" if cann.get("version") else "not found"),
        ("Device", f"{device.get('type')} x{device.get('count')}: {device.get('reason')}"
         + "".join(f"; note: {note}" for note in device.get("notes") or [])),
        ("Initial grad mode", "enabled" if probe.get("initial_grad_mode") else "disabled"),
        ("Run", f"started {results['started_at']}, {results.get('duration_s')} s, results {code(entry['file'])}"),
    ]
    lines += ["| | |", "| --- | --- |"] + [f"| {key} | {cell(value)} |" for key, value in rows]
    return lines + [f"- note: {note}" for note in entry["notes"]] + [""]


def _command_line(results):
    """The suite command as it ran: the env's interpreter, with the environment variables that matter."""
    argv = list(results["command"])
    executable = results["probe"].get("python_executable")
    if argv and executable:
        argv[0] = executable
    variables = {key: value for key, value in (results["probe"].get("environment") or {}).items()
                 if value is not None}
    prefix = " ".join(f"{key}={shlex.quote(str(value))}" for key, value in sorted(variables.items()))
    return f"cd {shlex.quote(results['cwd'])} && " + (prefix + " " if prefix else "") + shlex.join(argv)


def commands_section(doc):
    ok = [entry for entry in doc["envs"] if entry["state"] == "ok"]
    names = ",".join([entry["name"] for entry in doc["envs"]] + ["upstream", "report"])
    lines = ["All of it, from the repository root (tox builds each branch env):", "", "```bash",
             f"tox -e {names}", "```", ""]
    if ok:
        lines += ["What each env ran (its own interpreter; reproducible without tox):", "", "```bash"]
        for entry in ok:
            lines += [f"# {entry['name']}", _command_line(entry["results"])]
        lines += ["```", ""]
    ran = [upstream for upstream in doc["upstream"] if upstream["state"] == "ran"]
    if ran:
        lines += ["Upstream patches (as the `upstream` env runs them, once per torch):", "", "```bash"]
        for upstream in ran:
            sources = sorted({p["source"] for p in upstream["patches"] if p.get("source")})
            pythons = sorted({p["python_executable"] for p in upstream["patches"] if p.get("python_executable")})
            argv = [pythons[0] if len(pythons) == 1 else "python", "-m", "torch_npu_testing", "upstream", "run",
                    "--results", upstream["file"]]
            prefix = f"PYTORCH_SRC={shlex.quote(sources[0])} " if len(sources) == 1 else ""
            lines += [f"# torch {upstream['torch']}", f"cd {shlex.quote(doc['cwd'])} && {prefix}{shlex.join(argv)}"]
        lines += ["```", ""]
    if doc.get("command"):
        lines += ["This report:", "", "```bash", f"cd {shlex.quote(doc['cwd'])} && " + shlex.join(doc["command"]),
                  "```", ""]
    return lines


def _details_block(title, details):
    """A fenced block with the last MAX_DETAIL_LINES lines of a traceback (fence longer than any backtick run)."""
    text = (details or "").rstrip().splitlines()
    cut = len(text) - MAX_DETAIL_LINES
    shown = text[-MAX_DETAIL_LINES:] if cut > 0 else text
    head = title + (f", first {cut} lines cut (full text in report.json)" if cut > 0 else "")
    block = fence(shown)
    return [f"{head}:", "", block + "text"] + shown + [block, ""]


def _labels(cases):
    """The subtest labels of ``cases``, for an HTML block inside a table cell."""
    return ", ".join(html.escape(case.subtest or "(the test itself)", quote=False) for case in cases)


def _case_text(case):
    outcome = f"**{case.outcome}**" if case.outcome.fails else str(case.outcome)
    return outcome + (f": {case.reason}" if case.reason else "")


def test_cell(cases):
    """A test's outcome: its one case, or its cases by outcome; passing cases folded into one line."""
    if len(cases) == 1 and cases[0].subtest is None:
        return _case_text(cases[0])
    passed = [case for case in cases if case.outcome is Outcome.PASSED]
    folded = f"<details><summary>labels</summary>{_labels(passed)}</details>"
    if len(passed) == len(cases):
        return f"{len(cases)} cases, all passed {folded}"
    parts = [f"{len(cases)} cases"] + ([f"{len(passed)} passed {folded}"] if passed else [])
    for outcome in Outcome:
        if outcome is not Outcome.PASSED:
            parts += ["; ".join(f"{code(case.subtest or '(the test itself)')} {_case_text(case)}"
                                for case in cases if case.outcome is outcome)]
    return "; ".join(part for part in parts if part)


def run_section(run, file_status):
    counts = run["counts"]
    mode = "enabled" if run["initial_grad_mode"] else "disabled"
    lines = [f"#### {code(run['path'])}, grad mode {mode} at start", "",
             f"- SHA-256: {code(run['sha256'])}"]
    state = file_status.get(run["path"])
    if state == "not found":
        lines[-1] += " (the file is not here now: not compared)"
    elif state:
        lines[-1] += f" — **{state}**"
    lines.append(f"- {tests_and_cases(counts)}: passed {counts['passed']}, failed {counts['failed']}, skipped "
                 f"{counts['skipped']}, errors {counts['error']}"
                 + (f", expected failures {counts['expected_failure']}" if counts["expected_failure"] else "")
                 + (f", unexpected successes {counts['unexpected_success']}" if counts["unexpected_success"] else "")
                 + (f" ({run['duration_s']} s)" if run.get("duration_s") is not None else ""))
    limited = gaps.counts(run["cases"])
    if limited["device_limit"]:
        lines.append(f"- device limits: {gaps.counts_text(limited)}; gaps met: {len(gaps.from_cases(run['cases']))}")
    if run.get("import_error"):
        lines.append("- **the file could not be imported**")
    lines += ["", "| test | outcome |", "| --- | --- |"]
    cases = results.cases_from_dicts(run["cases"])
    lines += [f"| {cell(code(test))} | {cell(test_cell(group))} |" for test, group in results.by_test(cases)]
    lines.append("")
    for case in cases:
        if case.outcome.fails:
            lines += _details_block(f"{case.name} ({case.outcome})", case.details)
    return lines


def isolation_section(entry):
    items = entry["results"]["grad_mode_isolation"]
    lines = ["#### Grad-mode isolation probe", ""]
    if not items:
        return lines + ["Not run in this env (no grad-mode file ran, or --no-grad-mode-probe).", ""]
    lines += ["The grad-mode file run twice in one process, the main thread's grad mode set before its first test:",
              "", "| file | initial grad mode disabled | initial grad mode enabled | same outcome |",
              "| --- | --- | --- | --- |"]
    for item in items:
        enabled, disabled = item.get("enabled") or {}, item.get("disabled") or {}
        lines.append(f"| {code(item.get('path'))} | {counts_text(disabled)} | {counts_text(enabled)} | "
                     f"{_yes_no(item.get('same'))} |")
    return lines + [""]


def log_section(entry):
    lines, usable = env_heading(entry)
    if not usable:
        return lines
    results = entry["results"]
    total = results["totals"]
    lines += [f"Totals: {tests_and_cases(total)} run: {counts_text(total)}.", ""]
    for run in sorted(results["runs"], key=lambda r: (r["path"], not r["initial_grad_mode"])):
        lines += run_section(run, entry.get("file_status") or {})
    return lines + isolation_section(entry) + calls_section(entry) + implementation_section(entry)


def _upstream_ref(ref):
    """``pytorch/pytorch v2.9.0`` / ``pytorch/pytorch commit 0099ec9f1e34`` and the manifest's note, if any."""
    if not isinstance(ref, dict):
        return (str(ref) if ref else "(ref not recorded)"), None
    where = ref.get("tag") or (f"commit {ref['commit'][:12]}" if ref.get("commit") else "(ref not recorded)")
    return f"{ref.get('repo') or 'upstream'} {where}", ref.get("note")


def _base_text(patch):
    if patch["base_matches"] is None:
        return "not recorded"
    if patch["base_matches"]:
        return f"yes (blob {code(patch['recorded_base'] or '?')})"
    return (f"**no**: the patch records base {code(patch['recorded_base'] or '?')}, the source has "
            f"{code(patch['base_blob'] or '?')} (the patch still applies)")


def _upstream_title(upstream):
    """``torch 2.14.1+cpu (`upstream-2.14.1.json`)``: which run of the upstream env this is."""
    torch = f"torch {upstream['torch']}" if upstream.get("torch") else "torch not recorded"
    return torch + (f" ({code(upstream['file'])})" if upstream.get("file") else "")


def upstream_section(upstream):
    """One upstream results file (one torch): every patch, its cases and the failures' tracebacks."""
    if upstream["state"] == "absent" and upstream.get("file") is None:
        return [upstream["message"], ""]
    lines = [f"### {_upstream_title(upstream)}", ""]
    if upstream["state"] != "ran":
        text = upstream["message"]
        return lines + [f"**{text}**" if upstream["state"] in ("corrupt", "unknown_format") else text, ""]
    for patch in upstream["patches"]:
        ref, ref_note = _upstream_ref(patch["upstream"])
        cases = results.cases_from_dicts(patch["cases"])
        lines += [f"#### {code(patch['patch'])}", "",
                  f"- patches {code(patch['target'] or '?')} of {ref}" + (f" ({ref_note})" if ref_note else ""),
                  f"- PyTorch source: {code(patch['source']) if patch['source'] else 'not recorded'}",
                  f"- base file matches the patch: {_base_text(patch)}",
                  f"- patch applies: {_yes_no(patch['applies'])}",
                  f"- torch {patch['torch_version'] or 'not recorded'}, device {patch['device'] or 'not recorded'}, "
                  f"python {code(patch['python_executable'] or '?')}"
                  + (f", {patch['seconds']} s" if patch.get("seconds") is not None else ""),
                  f"- {tests_and_cases(patch['counts'])}: {counts_text(patch['counts'], fails_upstream_run)}", ""]
        if not cases:
            lines += ["No per-test results recorded.", ""]
            continue
        lines += ["| test | outcome |", "| --- | --- |"]
        lines += [f"| {cell(code(test))} | {cell(test_cell(group))} |" for test, group in results.by_test(cases)]
        lines.append("")
        for case in cases:
            if fails_upstream_run(case.outcome) and case.details:
                lines += _details_block(f"{case.name} ({case.outcome})", case.details)
    return lines + [f"- note: {note}" for note in upstream["notes"]] + ([""] if upstream["notes"] else [])


def upstream_summary(upstream):
    """One line per upstream results file for the top of the report."""
    if upstream["state"] != "ran":
        return f"{_upstream_title(upstream)}: {upstream['message']}" if upstream.get("file") else upstream["message"]
    return f"{_upstream_title(upstream)}: " + "; ".join(
        f"{p['patch'] or 'patch'}: " + counts_text(p["counts"], fails_upstream_run) for p in upstream["patches"])


# --------------------------------------------------------------------------- document
def render(doc):
    problems = doc["problems"]
    if problems:
        verdict = f"**Result: FAIL** — {len(problems)} problem(s), listed below."
    else:
        verdict = ("**Result: PASS** — every expected env ran, no test failed, every target API present in an "
                   "env was called by a test.")
    lines = ["# API-consistency evidence report", "", verdict, "",
             f"Generated {doc['generated_at']} from {code(doc['results_dir'])}; expected envs: "
             + ", ".join(code(name) for name in doc["expected_envs"]) + ".", ""]
    lines += [f"Note: {note}" for note in doc["notes"]] + ([""] if doc["notes"] else [])
    lines += summary(doc) + [""] + implementation_summary(doc) + strength_lines(doc.get("strength") or [])
    lines += ["Upstream patches:", ""] + [f"- {upstream_summary(upstream)}" for upstream in doc["upstream"]] + [""]
    if problems:
        lines += ["Problems:", ""] + [f"- {cell(problem)}" for problem in problems] + [""]
    lines += ["## 【测试环境】", ""]
    for entry in doc["envs"]:
        lines += environment_section(entry)
    lines += ["## 【测试命令】", ""] + commands_section(doc)
    lines += ["## 【测试日志】", ""]
    for entry in doc["envs"]:
        lines += log_section(entry)
    lines += ["## 【upstream patch 实跑日志】", ""]
    for upstream in doc["upstream"]:
        lines += upstream_section(upstream)
    return "\n".join(lines).rstrip() + "\n"
