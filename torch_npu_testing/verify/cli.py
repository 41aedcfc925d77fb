# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""``python -m torch_npu_testing verify BRANCH DEST``: options, the order of the runs, the exit status.

Everything is checked before anything runs (DEST, the files export writes, the interpreters); then per
interpreter: the env probe, whether DEST's run_test.py starts, each file whole, the grad-mode probe on a
grad-mode file. One progress line per file and env goes to stderr as each finishes. Exit 0 when every kit
test passed (their tests that need a missing device, and files that need an Ascend host, are listed, not
counted against it); 1 when a kit test failed, errored, or skipped without a reason, or another problem
of the record; 2 (one line, nothing written) for bad input.
"""
import os
import sys
import tempfile
import time

from ..common import gaps
from ..common.layout import GRAD_MODE_FILES
from . import command as command_module, envprobe, gradprobe, interpreters, record, runfile, standin
from .targets import plan_verify


def add_arguments(parser):
    parser.add_argument("branch", help="Ascend/pytorch branch whose exported files to run: master, v2.12.0, "
                                       "v2.11.0, v2.7.1")
    parser.add_argument("dest", help="the Ascend/pytorch checkout export wrote into (its top)")
    parser.add_argument("--api", action="append", metavar="NAME",
                        help="the task: run the files export writes for this API (repeatable; default: what the "
                             "last export of BRANCH into DEST wrote, as export recorded it)")
    parser.add_argument("--env", action="append", metavar="ENV",
                        help="run under KIT/.tox/ENV/bin/python (repeatable; default: every env of the branch)")
    parser.add_argument("--python", action="append", metavar="PY",
                        help="run under this interpreter instead (repeatable; keyed by its torch version)")
    parser.add_argument("--stand-in-npu", nargs="?", const="none", choices=standin.MODES,
                        metavar="simulated|available",
                        help="put a stand-in torch_npu (plus DEST's torch_npu/testing/testcase.py) ahead of "
                             "site-packages; =simulated runs the files on the simulated NPU (host memory, CPU "
                             "kernels); =available makes it report one NPU with no device. Never an NPU run")
    parser.add_argument("--out", default=record.DEFAULT_OUT,
                        help="folder for verify-BRANCH[--API].json (default: reports)")
    parser.add_argument("--kit", default=".", help="the kit checkout (its .tox envs and test_upstream/; default: .)")


def progress(env, run):
    """``master_213  test/functorch/test_x.py  tests=.. passed=..  ok`` (one line on stderr)."""
    counts = run["counts"]
    verdict = "FAILED" if run["verify"]["problems"] else "ok"
    not_run = run["verify"].get("not_run")
    extra = f"not run: {not_run}" if not_run else ", ".join(f"needs {d}: {n}" for d, n in _needs(run).items())
    mode = "" if run["verify"]["kind"] == "file" else (" grad " + ("on" if run["initial_grad_mode"] else "off"))
    print(f"verify {env}  {run['path']}{mode}  tests={counts['tests']} cases={counts['cases']} "
          f"passed={counts['passed']} "
          f"failed={counts['failed']} error={counts['error']} skipped={counts['skipped']}{_limit_skips(run)}  {verdict}"
          + (f" ({extra})" if extra else ""), file=sys.stderr, flush=True)


def _limit_skips(run):
    """`` (device limit 3)``: the skips of ``run`` for a device limit, when any."""
    skipped = gaps.counts(run["cases"])["device_limit"]
    return f" (device limit {skipped})" if skipped else ""


def _needs(run):
    counted = {}
    for device in run["verify"]["needs"].values():
        counted[device] = counted.get(device, 0) + 1
    return counted


def run_env(name, python, plan, extra_env, command):
    """One interpreter's entry of the record: probe, runner check, every file, grad-mode probes."""
    started_at, started = record.now(), time.perf_counter()
    test_dir = os.path.join(plan.dest, "test")
    probe = envprobe.probe_env(python, test_dir, dict(extra_env, **(
        {"TORCH_DEVICE_BACKEND_AUTOLOAD": "1"} if extra_env else {})))
    device = (probe.get("device") or {}).get("type", "cpu")
    starts, why = command_module.runner_starts(python, test_dir, extra_env)
    how = {"command": "run_test.py" if starts else "direct", "why": why}
    runs, isolation, problems = [], [], []
    for target in plan.files:
        run = runfile.run_file(python, target, plan.dest, starts, how, extra_env, device)
        runs.append(run)
        progress(name, run)
        if target.rel_path not in GRAD_MODE_FILES:
            continue
        if run["verify"]["not_run"]:
            run["verify"]["grad_mode_probe"] = f"not run: {run['verify']['not_run']}"
            continue
        grad_env = dict(extra_env, **({"TORCH_DEVICE_BACKEND_AUTOLOAD": "1"} if extra_env else {}))
        grad_runs, probe_item, grad_record = gradprobe.probe_file(python, target, plan.dest, grad_env)
        for grad_run in grad_runs:
            runs.append(grad_run)
            progress(name, grad_run)
        isolation += [probe_item] if probe_item else []
        run["verify"]["grad_mode_probe"] = grad_record
        problems += grad_record["problems"]
    results = record.env_results(name, plan.dest, command, probe, runs, isolation, started_at,
                                 round(time.perf_counter() - started, 3))
    return {"name": name, "python": python, "runner": {"starts": starts, "why": why}, "results": results,
            "problems": problems}


def command_line(args):
    """The command as a user types it, from the parsed options."""
    line = ["python", "-m", "torch_npu_testing", "verify", args.branch, args.dest]
    line += [part for name in args.api or () for part in ("--api", name)]
    line += [part for env in args.env or () for part in ("--env", env)]
    line += [part for python in args.python or () for part in ("--python", python)]
    if args.stand_in_npu:
        line.append("--stand-in-npu" + ("" if args.stand_in_npu == "none" else f"={args.stand_in_npu}"))
    return line + ["--out", args.out] + (["--kit", args.kit] if args.kit != "." else [])


def main(args):
    started_at, started = record.now(), time.perf_counter()
    command = command_line(args)
    plan = plan_verify(args.kit, args.branch, args.dest, args.api)
    chosen = interpreters.choose(args.branch, args.kit, args.env, args.python)
    with tempfile.TemporaryDirectory(prefix="verify-standin-") as folder:
        stand_in, extra_env = None, {}
        if args.stand_in_npu:
            label = standin.label(args.stand_in_npu)
            stand_in = dict(standin.build(plan.dest, folder), mode=args.stand_in_npu, label=label)
            extra_env = standin.environment(folder, args.stand_in_npu)
            if args.stand_in_npu == "simulated":
                for _, python in chosen:
                    standin.prepare_device(python, folder)
            print(f"verify: {label} (mode {args.stand_in_npu})", file=sys.stderr, flush=True)
        envs = [run_env(name, python, plan, extra_env, command) for name, python in chosen]
    doc = record.document(plan, envs, stand_in, command, started_at, round(time.perf_counter() - started, 3))
    path = record.write(doc, args.out)
    print(summary(doc, path))
    return 1 if doc["problems"] else 0


def summary(doc, path):
    task = ", ".join(doc.get("api_names") or ["every API of the branch"])
    lines = [f"verify {doc['branch']}: DEST {doc['dest']['dir']} at {doc['dest']['head'][:12]}"
             + (f"; {doc['stand_in']['label']}" if doc["stand_in"] else "")
             + f"; task: {task} (from {doc.get('task_from')})"]
    lines += [f"  {item['path']}  sha256 {item['sha256']}  ({item['at_head']})" for item in doc["files"]]
    lines += [f"  skipped: {item['path']} ({item['why']})" for item in doc["patches_skipped"]]
    lines += gaps_lines(doc["gaps"])
    lines += [f"  problem: {problem}" for problem in doc["problems"]]
    lines.append(f"results: {path}  ({'PASS' if doc['verdict'] == 'pass' else 'FAIL'}; counts are of tests: JUnit "
                 "XML has no passing subtests)")
    apis = "".join(f" --api {name}" for name in doc.get("api_names") or ())
    lines.append(f"next: python -m torch_npu_testing pr {doc['branch']} --ascend {doc['dest']['dir']}{apis}")
    return "\n".join(lines)


def gaps_lines(summary):
    """``  device gaps met: 3 (limits: T)`` and per env and file its counts; nothing when no run was on a device
    and none was met."""
    if not summary["on_device"] and not summary["rows"]:
        return []
    lines = [f"  device gaps met: {len(summary['rows'])}" + (f" (limits: {', '.join(summary['limits'])})"
                                                             if summary["limits"] else " (no limits table)")]
    return lines + [f"    {item['env']}  {item['path']}"
                    + (" (grad-mode probe: every subtest)" if item["run"] == record.PROBE_RUN else "")
                    + f": {gaps.counts_text(item)}" for item in summary["files"]]
