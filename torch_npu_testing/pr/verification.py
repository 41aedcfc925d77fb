# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""【功能验证】 from ``verify``: the PR's files as they are in DEST, each run whole the way Ascend CI runs it.

The section claims no more than was run. Its first line says when nothing ran on an NPU ("not run on an
NPU: cpu, stand-in torch_npu"); it names DEST's HEAD commit and each PR file's SHA-256 as verify recorded
them; what needs a device this host lacks, what could not import here and what ran under the stand-in is
said where it is shown. The kit's own files (the suite's results: implementation coverage, the API-call
proof) are supporting evidence: the coverage lines say so and the rest is in the attachment.
"""
import shlex

from ..report.render import environment_section
from . import devicegaps, log
from .fit import LOG_END, LOG_START
from .task_sections import box_lines, code, gap_lines
from .verified import not_on_npu_line, stand_in_label


def _files_table(record):
    lines = ["| file | SHA-256 of the bytes verify ran | in DEST | their tests | kit tests |",
             "| --- | --- | --- | --- | --- |"]
    lines += [f"| {code(item['path'])} | {code(item['sha256'])} | {item['at_head']} | {len(item['their_tests'])} | "
              f"{len(item['kit_tests'])} |" for item in record["files"]]
    lines += [""] + [f"- {code(item['path'])}: not run by verify ({item['why']}; see 【upstream patch 实跑日志】)"
                     for item in record["patches_skipped"]]
    return lines + ([""] if record["patches_skipped"] else [])


def _environment(record, verify_path):
    lines = []
    for env in record["envs"]:
        entry = {"name": env["name"], "state": "ok", "results": env["results"], "file": verify_path,
                 "notes": [note for note in (stand_in_label(record), env["runner"]["why"]) if note],
                 "maintenance": False}
        lines += environment_section(entry)
    return lines


def _command(run):
    variables = {key: value for key, value in run["verify"]["environment"].items()
                 if value is not None and key in ("TORCH_DEVICE_BACKEND_AUTOLOAD", "IN_CI", "TEST_REPORT_PATH",
                                                  "TORCH_NPU_TESTING_STANDIN_NPU",
                                                  "TORCH_NPU_TESTING_LIMITS")}
    prefix = " ".join(f"{key}={shlex.quote(value)}" for key, value in sorted(variables.items()))
    return f"cd {shlex.quote(run['verify']['cwd'])} && " + (prefix + " " if prefix else "") + \
        shlex.join(run["verify"]["command"])


def _commands(record):
    lines = ["Each file as verify ran it (DEST's own `run_test.py` where it starts, else the file itself; the "
             "file's runner writes the JUnit XML the outcomes come from):", "", "```bash"]
    for env in record["envs"]:
        lines.append(f"# {env['name']}: {env['runner']['why']}")
        for run in env["results"]["runs"]:
            if run["verify"]["kind"] == "file":
                lines.append(_command(run))
            probe = run["verify"].get("grad_mode_probe")
            if isinstance(probe, dict):
                lines.append(f"cd {shlex.quote(probe['cwd'])} && {shlex.join(probe['command'])}  # grad-mode probe")
    return lines + ["```", "", "This record:", "", "```bash", shlex.join(record["command"]), "```", ""]


def _coverage_and_checks(facts):

    return (["### 实现覆盖率 / implementation coverage (the kit's own files, run by the kit's suite: supporting "
             "evidence; lines and branches of the API's Python code the tests reach)", ""] + facts["coverage"] + [""]
            + facts.get("strength", [])
            + ["### 自检 / checks (each says the source it reads)", ""] + box_lines(facts["kit_checks"]))


def section(facts, options):
    """The lines of 【功能验证】 (without its heading)."""
    verify = facts["verify"]
    record = verify["record"]
    if record is None:
        return (["> ⚠ 缺少 / missing: " + "; ".join(verify["problems"]), ""] + gap_lines(facts, "功能验证")
                + _coverage_and_checks(facts))
    first = not_on_npu_line(record)
    names = ", ".join(code(api["name"]) for api in facts["apis"])
    lines = ([f"**{first}**", ""] if first else []) + [
        f"测试场景 / what is tested: the consistency of {names} with upstream PyTorch, in the PR's own files as they "
        f"are in DEST {code(record['dest']['dir'])} at HEAD {code(record['dest']['head'])}: each file run whole by "
        f"`verify` from `test/` the way Ascend CI runs it, their tests and the kit's together, under "
        f"{', '.join(code(env['name']) for env in record['envs'])}.", ""]
    if verify["state"] == "stale":
        lines += ["> ⚠ " + problem for problem in verify["problems"]] + [""]
    lines += ["### PR 文件 / the PR's files", ""] + _files_table(record)
    lines += ["### 测试环境 / environment", ""] + _environment(record, verify["path"]) + gap_lines(facts, "功能验证")
    lines += devicegaps.lines(verify.get("device_gaps"), options)
    lines += ["### 测试命令 / commands", ""] + _commands(record)
    lines += _coverage_and_checks(facts)
    lines += ["### 测试日志 / test log (verify's)", "",
              "Per env and file, every test of the file with whose it is and its outcome; counts are of tests "
              "(JUnit XML has no passing subtests). The kit's own files' per-case log is in the attached "
              f"`{facts.get('evidence_name')}` (supporting evidence).", "", LOG_START]
    lines += log.verify_log_lines(record, options.get("log_level", "methods"), options.get("max_trace"),
                                  verify["path"])
    return lines + [LOG_END, ""]
