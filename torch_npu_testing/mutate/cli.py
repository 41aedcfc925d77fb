# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""``python -m torch_npu_testing mutate FILE [--api NAME ...] [--jobs N] [--timeout S] [--json OUT]
[--fail-under PCT] [--quiet] [--timeout-kills] [--passing-only] [--device [TYPE]] [--only GLOB ...]``.

The APIs are FILE's rows of the one table (:file:`common/table.json`), or ``--api``. Exit status: 0, or 1
when the strength over all APIs is under ``--fail-under``; 2 with one line on stderr and nothing written
for bad input (an unknown API, a FILE that is no test file or has no tests, a baseline that fails: its
failing tests named, and both ways on: write them, or ``--passing-only``, which measures the passing tests
and names those it left out; an ``--only`` GLOB that matches no mutant). An API this torch lacks is "absent
in this torch" (exit 0), as ``report`` has it.
"""
import fnmatch
import json
import os
import sys
import time
import unittest

from ..common import table
from ..common.atomic import write_text_atomic
from ..common.errors import UsageError
from ..common.results import sha256_of
from ..common.toolspython import require_torch
from . import output, score


def add_arguments(parser):
    parser.add_argument("file", help="an API-consistency test file")
    parser.add_argument("--api", action="append", metavar="NAME",
                        help="a target API by dotted name (repeatable; default: FILE's APIs in the table)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="children at a time (default: cores)")
    parser.add_argument("--timeout", type=float, metavar="S",
                        help="seconds per mutant (default: 5 x the baseline's test time + 10)")
    parser.add_argument("--json", metavar="OUT", help="write the results document here")
    parser.add_argument("--fail-under", type=float, metavar="PCT", help="exit 1 when the strength is under PCT")
    parser.add_argument("--quiet", action="store_true", help="no progress lines and no table")
    parser.add_argument("--timeout-kills", action="store_true", help="count timeouts as kills")
    parser.add_argument("--internal-package", action="append", default=[], metavar="PACKAGE",
                        help="a package whose own calls of the API keep the real behaviour, as torch's do "
                             "(for an API outside torch; torch, functorch, torch_npu and torchgen always are)")
    parser.add_argument("--fresh-processes", action="store_true",
                        help="run every child as a fresh process instead of a fork (slower; for comparison)")
    parser.add_argument("--passing-only", action="store_true",
                        help="measure the tests that pass without a mutant; the failing ones (a draft's "
                             "placeholders) are left out, and named")
    parser.add_argument("--device", nargs="?", const="", metavar="TYPE",
                        help="also fault the device's kernels of the aten ops each API dispatches on the device "
                             "(default TYPE: the device the tests run on, the simulated NPU's npu)")
    parser.add_argument("--only", action="append", default=[], metavar="GLOB",
                        help="run only the mutants whose id (API:code, API:op:fault on the device) matches GLOB "
                             "(fnmatch; repeatable); the rest are left out, and counted")


def _api_names(args):
    if args.api:
        return list(dict.fromkeys(args.api))
    relative = os.path.relpath(os.path.abspath(args.file)).replace(os.sep, "/")
    names = [entry["name"] for entry in table.apis() if entry["test_file"] == relative]
    if not names:
        raise UsageError(f"{args.file} is not a test file of the table; name its APIs with --api")
    return names


def _check_file(path):
    if not os.path.isfile(path):
        raise UsageError(f"no such test file: {path}")
    if not path.endswith(".py"):
        raise UsageError(f"{path} is not a Python test file")


def _prepare(args, names):
    started = time.perf_counter()
    from . import child  # imports torch: the parent's import is measured from here

    if args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    try:
        prepared = child.prepare(args.file, names, args.internal_package)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    except ModuleNotFoundError as exc:
        if exc.name in args.internal_package:
            raise UsageError(f"--internal-package {exc.name}: no such module") from None
        raise UsageError(f"cannot import {args.file}: {type(exc).__name__}: {exc}") from None
    except Exception as exc:  # noqa: BLE001 - the file's own import error, in one line
        raise UsageError(f"cannot import {args.file}: {type(exc).__name__}: {exc}") from None
    known = {entry["name"] for entry in table.apis()}
    unknown = [name for name in prepared.absent if name not in known]
    if unknown:
        raise UsageError(f"unknown API {unknown[0]!r}: {prepared.absent[unknown[0]]}")
    if unittest.defaultTestLoader.loadTestsFromModule(prepared.module).countTestCases() == 0:
        raise UsageError(f"{args.file} has no tests")
    prepared.import_s = round(time.perf_counter() - started, 3)
    return prepared


def _device():
    from ..runtime.carried import device_type
    return device_type()


def _mutant_record(mutant, report, docstring, single_api):
    outcome, killed_by = score.outcome_of(report, mutant.api)
    tally = report.get("tallies", {}).get(mutant.api, {})
    record = {"id": mutant.id, "code": mutant.fault.code, "family": mutant.fault.family,
              "description": mutant.fault.description, "outcome": outcome, "killed_by": killed_by,
              "calls": tally.get("calls", 0), "changed": tally.get("changed", 0),
              "no_effect": tally.get("no effect", 0), "not_applicable": tally.get("not applicable", 0),
              "explained": None, "wall_s": report.get("wall_s")}
    if outcome == "survived":
        record["explained"] = score.explanation(docstring, mutant.id, mutant.fault.code, single_api)
    return record


def _chosen(globs, mutants):
    """The mutants whose id matches one of ``globs`` (all without ``--only``)."""
    return [m for m in mutants if not globs or any(fnmatch.fnmatchcase(m.id, glob) for glob in globs)]


def _check_only(globs, *mutant_lists):
    """Refuse an ``--only`` GLOB that matches no mutant of ``mutant_lists``."""
    everything = [m for mutants in mutant_lists for m in mutants]
    for glob in globs:
        if not _chosen([glob], everything):
            raise UsageError(f"--only {glob}: matches no mutant of {len(everything)} "
                             "(ids are API:code, API:op:fault for device mutants)")


def _timeout_for(args):
    def timeout(baseline):
        return args.timeout if args.timeout is not None else 5 * baseline["test_s"] + 10
    return timeout


def _refusal(prepared, failed):
    from . import child, session

    test_ids = child.test_ids(prepared.module)
    how, failing = session.failing_tests(failed.report, test_ids)
    return output.refusal(failed.report, len(test_ids), how, failing, str(failed))


def _run_session(args, prepared):
    """``(fresh, reasons, baseline, records)``: every mutant's record, in catalogue order."""
    from . import session

    docstring, single, records = prepared.module.__doc__, len(prepared.targets) == 1, {}
    chosen = _chosen(args.only, prepared.mutants)
    progress = output.Progress(len(chosen), time.perf_counter(), args.quiet)

    def done(report):
        mutant = prepared.mutants[report["index"]]
        records[mutant.index] = _mutant_record(mutant, report, docstring, single)
        progress.line(mutant.id, records[mutant.index]["outcome"], records[mutant.index]["killed_by"],
                      time.perf_counter())

    def restart():
        records.clear()
        progress.done = 0

    try:
        fresh, reasons, baseline = session.run_session(prepared, _device(), args.jobs, _timeout_for(args), done,
                                                       restart, args.fresh_processes, args.passing_only,
                                                       [m.index for m in chosen])
    except session.BaselineFailed as failed:
        raise UsageError(_refusal(prepared, failed)) from None
    for reason in reasons:
        print(f"mutate: fresh process per mutant: {reason}", file=sys.stderr)
    return fresh, reasons, baseline, [records[m.index] for m in chosen]


def _api_blocks(args, prepared, records, baseline):
    blocks = []
    for target in prepared.targets:
        mine = [record for record in records if record["id"].startswith(target.name + ":")]
        blocks.append({"name": target.name, "status": "present", "kind": target.kind, "api_kind": target.contract,
                       "baseline_calls": baseline.get("tallies", {}).get(target.name, {}).get("calls", 0),
                       "strength": score.strength(mine, args.timeout_kills), "mutants": mine})
    for name, reason in prepared.absent.items():
        blocks.append({"name": name, "status": "absent", "reason": reason, "kind": None, "api_kind": None,
                       "mutants": []})
    return blocks


def _device_type(args):
    """The device of ``--device`` (None without it); a device that cannot be forked is refused up front."""
    from . import runner

    if args.device is None:
        return None
    device = args.device or _device()
    if device != "cpu" and not runner.simulated(device):
        raise UsageError(f"--device: the device {device} is an accelerator runtime, which must not be forked; "
                         "device mutants run on the simulated NPU (TORCH_NPU_TESTING_STANDIN_NPU=simulated)")
    return device


def _check_device_only(args, prepared, mutants):
    """The device mutants ``--only`` keeps; a GLOB matching no mutant, generic or device, is refused."""
    _check_only(args.only, prepared.mutants, mutants)
    return _chosen(args.only, mutants)


def _device_blocks(args, prepared, blocks, device):
    """Run the device session and give each present API its ``device`` block; the device's total percent."""
    from . import device_output, device_session
    from .session import BaselineFailed

    docstring, single, records = prepared.module.__doc__, len(prepared.targets) == 1, {}
    progress = output.Progress(0, time.perf_counter(), args.quiet)

    plan = device_session.DevicePlan(device, [], lambda mutants: _check_device_only(args, prepared, mutants))

    def done(report):
        mutant = plan.mutants[report["index"]]
        records[mutant.index] = device_output.mutant_record(mutant, report, docstring, single)
        progress.total = len(plan.chosen)
        progress.line(mutant.id, records[mutant.index]["outcome"], records[mutant.index]["killed_by"],
                      time.perf_counter())

    try:
        baseline = device_session.run_session(prepared, plan, args.jobs, _timeout_for(args), done)
    except BaselineFailed as failed:
        raise UsageError(f"the device baseline fails (no mutant applied): {failed}") from None
    ordered = [records[m.index] for m in plan.mutants if m.index in records]
    scored = []
    for api_block in blocks:
        if api_block["status"] == "present":
            api_block["device"] = device_output.block(api_block["name"], device, baseline, ordered,
                                                      args.timeout_kills)
            if api_block["device"]["status"] == "scored":
                scored.append(api_block["device"]["strength"])
    return {"device": device, "baseline_test_s": baseline["test_s"], "mutants": len(ordered),
            "catalogue": len(plan.mutants),
            "vehicles": baseline.get("device", {}).get("vehicles", {}), "percent": score.total_percent(scored)}


def _document(args, prepared, mode, blocks, timing, mutants):
    import torch
    from .child import test_ids

    fresh, reasons, baseline = mode
    present = [b["strength"] for b in blocks if b["status"] == "present"]
    return {"format": output.FORMAT, "file": args.file, "sha256": sha256_of(args.file),
            "torch_version": torch.__version__, "mode": "fresh" if fresh else "fork", "fresh_reasons": reasons,
            "jobs": args.jobs, "timeout_s": timing.pop("timeout_s"), "timeout_kills": args.timeout_kills,
            "passing_only": args.passing_only, "tests": len(test_ids(prepared.module)),
            "only": list(args.only), "only_left_out": {"generic": len(prepared.mutants) - len(mutants)},
            "left_out": baseline.get("failures", []) if args.passing_only else [],
            "timing": timing, "apis": blocks, "percent": score.total_percent(present),
            "reach_percent": score.total_percent(present, reach=True)}


def _print(args, blocks, document, count):
    present = [block for block in blocks if block["status"] == "present"]
    if not args.quiet:
        tables = [output.table(block) for block in present]
        tables += [output.table(dict(block["device"], name=block["name"] + " on the device", kind=block["kind"]))
                   for block in present if block.get("device", {}).get("status") == "scored"]
        print("\n\n".join(tables) + "\n")
    if args.passing_only:
        print(output.passing_only_line(document))
    if args.only:
        print(output.only_line(document))
    print("\n".join(line for block in blocks for line in output.api_lines(block)))
    if document.get("device"):
        from .device_output import lines

        print("\n".join(line for block in present for line in lines(block["name"], block["device"])))
    print(output.timing_line(document["timing"], count, args.jobs), file=sys.stderr)


def _under(args, document):
    """The exit status of ``--fail-under`` (generic and, with ``--device``, device strength)."""
    if args.fail_under is None:
        return 0
    status = 0
    device = document.get("device") or {}
    for label, percent in (("strength", document["percent"]), ("device strength", device.get("percent"))):
        if label == "device strength" and percent is None:
            continue  # no --device, or no API with device ops of its own: nothing scored, stated per API
        if (percent or 0) < args.fail_under:
            print(f"mutate: {label} {percent}% is under --fail-under {args.fail_under}%", file=sys.stderr)
            status = 1
    return status


def main(args):
    require_torch("mutate")
    started = time.perf_counter()
    _check_file(args.file)
    prepared = _prepare(args, _api_names(args))
    if not prepared.targets:  # every API absent in this torch: said so, whatever --only asks
        blocks = _api_blocks(args, prepared, [], {})
        print("\n".join(line for block in blocks for line in output.api_lines(block)))
        return 0
    if args.device is None:
        _check_only(args.only, prepared.mutants)
    device_type = _device_type(args)
    fresh, reasons, baseline, records = _run_session(args, prepared)
    test_s, timeout = baseline["test_s"], _timeout_for(args)(baseline)
    blocks = _api_blocks(args, prepared, records, baseline)
    device = _device_blocks(args, prepared, blocks, device_type) if device_type else None
    wall = time.perf_counter() - started
    work = len(records) * test_s + (device["mutants"] * device["baseline_test_s"] if device else 0)
    timing = {"parent_import_s": prepared.import_s, "baseline_test_s": test_s, "wall_s": round(wall, 3),
              "target_s": round(1.25 * (prepared.import_s + work / args.jobs), 3), "timeout_s": timeout}
    document = _document(args, prepared, (fresh, reasons, baseline), blocks, timing, records)
    document["device"] = device
    if device:
        document["only_left_out"]["device"] = device["catalogue"] - device["mutants"]
    _print(args, blocks, document, len(records) + (device["mutants"] if device else 0))
    if args.json:
        write_text_atomic(args.json, json.dumps(document, indent=1) + "\n")
    return _under(args, document)
