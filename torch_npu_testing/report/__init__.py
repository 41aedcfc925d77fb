# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""``report``: the evidence an Ascend PR needs, generated from the results the branch envs wrote.

``python -m torch_npu_testing report --results .tox/results --out reports`` reads every ``<env>.json``
the suite wrote (``suite --results``) and the upstream results (``upstream run --results``), one
``upstream-<torch>.json`` per torch the upstream env ran (or one ``upstream.json``), and writes
``report.md`` (sections 【测试环境】, 【测试命令】, 【测试日志】, 【upstream patch 实跑日志】, after a compact
env x file table) and ``report.json`` (the document the Markdown was rendered from, raw results
included). It prints the Markdown's path.

Exit status 1 when anything is missing or wrong: an expected env without results, a corrupt or
unknown-format results file, a failed test, a grad-mode-dependent file, a target API present in an env
but called explicitly by no test, a test file changed since its results were written, an upstream
failure. Status 0 means the report is clean evidence. The report itself needs no torch.
"""
import json
import os
import sys

from ..common.table import TABLE_PATH, load_apis
from ..common.atomic import write_text_atomic
from ..common.errors import UsageError
from .collect import DEFAULT_ENVS, ENVS_VARIABLE, collect_results, expected_envs
from .render import render

__all__ = ["add_arguments", "collect_results", "main", "render", "write_report"]

MARKDOWN_NAME = "report.md"
JSON_NAME = "report.json"


def write_report(doc, out_dir):
    """Write ``report.md`` and ``report.json`` into ``out_dir``; return the Markdown path."""
    os.makedirs(out_dir, exist_ok=True)
    markdown_path = os.path.join(out_dir, MARKDOWN_NAME)
    for path, text in ((os.path.join(out_dir, JSON_NAME), json.dumps(doc, indent=1, ensure_ascii=False) + "\n"),
                       (markdown_path, render(doc))):
        write_text_atomic(path, text)
    return markdown_path


def add_arguments(parser):
    parser.add_argument("--results", default=os.path.join(".tox", "results"),
                        help="folder with the envs' results files (default: .tox/results)")
    parser.add_argument("--out", default="reports", help="folder to write report.md and report.json into")
    parser.add_argument("--envs", help=f"comma-separated envs that must have results (default: ${ENVS_VARIABLE} "
                                       f"or {','.join(DEFAULT_ENVS)})")
    parser.add_argument("--upstream", action="append", metavar="FILE",
                        help="upstream results file (repeatable; default: RESULTS/upstream.json and every "
                             "RESULTS/upstream-<torch>.json)")
    parser.add_argument("--manifest", default=TABLE_PATH, help="target API manifest (default: the package's)")


def main(args):
    try:
        manifest = load_apis(args.manifest)
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot read the API manifest: {exc}") from None
    envs = expected_envs(args.envs)
    if not envs:
        raise UsageError("--envs names no env")
    command = ["python", "-m", "torch_npu_testing", "report", "--results", args.results, "--out", args.out]
    for option, value, default in (("--envs", args.envs, None), ("--manifest", args.manifest, TABLE_PATH)):
        if value != default:
            command += [option, value]
    for value in args.upstream or []:
        command += ["--upstream", value]
    doc = collect_results(args.results, envs, manifest, args.upstream, command=command)
    path = write_report(doc, args.out)
    problems = doc["problems"]
    print(f"report: {'FAIL, ' + str(len(problems)) + ' problem(s)' if problems else 'PASS'}", file=sys.stderr)
    for problem in problems:
        print(f"  - {problem}", file=sys.stderr)
    print(path)
    return 1 if problems else 0
