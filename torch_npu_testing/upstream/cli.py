# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""``python -m torch_npu_testing upstream <command>``: the test_upstream patches against a PyTorch checkout.

Commands (the checkout is ``--source DIR`` or ``$PYTORCH_SRC``):

- ``check``   per patch: does it apply, is the base file the recorded base. Touches nothing.
- ``run``     apply the patches to a scratch copy, run the patched tests with this torch on the
              resolved device, report each test; exit 1 only for failures the manifest does not expect.
- ``apply`` / ``revert``  in the checkout itself, all patches or none, never leaving .rej/.orig files.
- ``scratch`` write patched copies of the upstream files to a new directory, to edit them.
- ``refresh`` (alias ``diff``) regenerate patches from an edited scratch copy; record the new base.

Exit status: 0 fine, 1 a patch does not apply (check) or unexpected test failures (run), 2 a problem
the user can fix (one line on stderr; nothing was changed).
"""
import os
import shutil
import sys
from pathlib import Path

from ..errors import UsageError
from . import inplace, manifest, patches, refresh, runner, scratch, source

SUBCOMMANDS = ("check", "run", "apply", "revert", "scratch", "refresh", "diff")


def add_arguments(parser):
    sub = parser.add_subparsers(dest="upstream_command", metavar="COMMAND")
    sub.required = True

    def common(name, help_text, aliases=()):
        command = sub.add_parser(name, help=help_text, description=help_text, aliases=list(aliases))
        command.add_argument("--source", metavar="DIR",
                             help=f"PyTorch checkout (default: ${source.SOURCE_ENV})")
        command.add_argument("--patch", action="append", metavar="NAME", dest="patch_names",
                             help="only this patch (repeatable; name, upstream path or file stem)")
        command.add_argument("--patches", metavar="DIR", help="patches directory (default: test_upstream/)")
        command.add_argument("--manifest", metavar="FILE", help="manifest (default: <patches>/manifest.json)")
        return command

    common("check", "report per patch whether it applies and whether the base is the recorded base")
    run = common("run", "run the patched upstream tests in a scratch copy and report each test")
    run.add_argument("--results", metavar="FILE.json", help="write machine-readable results here")
    run.add_argument("--if-source", action="store_true",
                     help="without a source (no --source, no $PYTORCH_SRC) say so and exit 0")
    run.add_argument("--python", metavar="PY", help="interpreter that runs the tests (default: this one)")
    run.add_argument("--scratch", metavar="DIR", help="use (and keep) this new directory as the scratch copy")
    run.add_argument("--keep-scratch", action="store_true", help="keep the temporary scratch copy and logs")
    run.add_argument("--timeout", type=int, default=runner.DEFAULT_TIMEOUT, metavar="S",
                     help=f"seconds per patched file (default {runner.DEFAULT_TIMEOUT})")
    run.add_argument("--verbose", "-v", action="store_true", help="show the test output as well")
    common("apply", "apply all selected patches in the checkout (all or none)")
    common("revert", "revert all selected patches in the checkout (all or none)")
    scratch_cmd = common("scratch", "write patched copies of the upstream files into a new directory")
    scratch_cmd.add_argument("--dest", required=True, metavar="DIR", help="new (or empty) directory")
    scratch_cmd.add_argument("--add", action="append", metavar="UPSTREAM_PATH",
                             help="also copy this upstream file unpatched, to start a new patch (repeatable)")
    refresh_cmd = common("refresh", "regenerate patches from an edited scratch copy", aliases=("diff",))
    refresh_cmd.add_argument("--scratch", required=True, metavar="DIR", help="the edited scratch copy")
    refresh_cmd.add_argument("--add", action="append", metavar="UPSTREAM_PATH",
                             help="create a new patch for this upstream file (repeatable)")
    refresh_cmd.add_argument("--upstream-tag", metavar="TAG", help="record this upstream tag (e.g. v2.13.0)")
    refresh_cmd.add_argument("--upstream-commit", metavar="SHA", help="record this upstream commit")


def _paths(args):
    patches_dir = Path(args.patches) if args.patches else patches.default_patches_dir()
    manifest_path = Path(args.manifest) if args.manifest else manifest.default_manifest_path(patches_dir)
    return patches_dir, manifest_path


def _say(text=""):
    print(text, flush=True)


def main(args):
    command = args.upstream_command
    if command == "diff":
        command = "refresh"
    return {"check": cmd_check, "run": cmd_run, "apply": cmd_apply, "revert": cmd_revert,
            "scratch": cmd_scratch, "refresh": cmd_refresh}[command](args)


def _load(args):
    patches_dir, manifest_path = _paths(args)
    selected = patches.select(patches_dir, args.patch_names)
    data = manifest.load(manifest_path)
    return selected, data


def cmd_check(args):
    checkout = source.require_source(args.source)
    selected, data = _load(args)
    statuses = scratch.assess(checkout, selected, data)
    _say(f"upstream: checkout {checkout}")
    for status in statuses:
        _say(f"  {status.describe()} [{manifest.upstream_ref(data, status.patch.name)}]")
    return 0 if all(status.applies for status in statuses) else 1


def cmd_apply(args):
    checkout = source.require_source(args.source)
    selected, data = _load(args)
    statuses = inplace.apply_in_place(checkout, selected, data)
    for status in statuses:
        note = "" if status.base_matches else f" (base is not the recorded base {status.recorded_base[:12]})"
        _say(f"upstream: applied {status.patch.name} to {checkout / status.patch.target}{note}")
    return 0


def cmd_revert(args):
    checkout = source.require_source(args.source)
    selected, data = _load(args)
    statuses = inplace.revert_in_place(checkout, selected, data)
    for status in statuses:
        _say(f"upstream: reverted {status.patch.name} in {checkout / status.patch.target}")
    return 0


def cmd_scratch(args):
    checkout = source.require_source(args.source)
    selected, data = _load(args)
    dest = scratch.ensure_empty_dir(args.dest)
    statuses = scratch.assess(checkout, selected, data)
    for status in statuses:
        if status.state == scratch.MISSING_BASE:
            raise UsageError(f"{status.patch.name}: base file {status.patch.target} is missing in {checkout}")
    for path in args.add or []:
        if not (checkout / path).is_file():
            raise UsageError(f"--add {path}: no such file in {checkout}")
    scratch.prepare(checkout, statuses, data, dest)
    for path in args.add or []:
        scratch.copy_into(checkout / path, Path(dest) / path)
    for status in statuses:
        if status.applies:
            _say(f"upstream: {Path(dest) / status.patch.target}: patched copy ({status.patch.name})")
        else:
            _say(f"upstream: {Path(dest) / status.patch.target}: UNPATCHED copy, the patch {status.state}"
                 f"{' (' + status.detail + ')' if status.detail else ''}; redo its changes from "
                 f"{status.patch.path}")
    for path in args.add or []:
        _say(f"upstream: {Path(dest) / path}: unpatched copy for a new patch")
    _say(f"upstream: edit, then: python -m torch_npu_testing upstream refresh --scratch {dest}")
    return 0


def cmd_refresh(args):
    record = scratch.read_record(args.scratch)
    checkout = source.require_source(args.source or record.get("source"))
    patches_dir, manifest_path = _paths(args)
    done = refresh.refresh(patches_dir, manifest_path, args.scratch, checkout, requested=args.patch_names,
                           added=args.add, commit=args.upstream_commit, tag=args.upstream_tag)
    for name, base_blob, ref in done:
        ref_text = f"upstream {ref}" if ref else "upstream ref unrecorded (pass --upstream-tag/--upstream-commit)"
        _say(f"upstream: wrote {patches_dir / name}; base {base_blob[:12]}, {ref_text}")
    _say(f"upstream: updated {manifest_path}")
    return 0


def cmd_run(args):
    given = source.given_source(args.source)
    if given is None:
        if args.if_source:
            _say(f"upstream: skipped: {source.NO_SOURCE}")
            if args.results:
                runner.write_results(args.results, {"kind": "torch_npu_testing.upstream", "format": 1,
                                                    "skipped": True, "reason": source.NO_SOURCE, "ok": True,
                                                    "patches": []})
            return 0
        raise UsageError(source.NO_SOURCE)
    checkout = source.validate(given)
    selected, data = _load(args)
    python = _interpreter(args.python) if args.python else None
    statuses, runs, kept = runner.run(checkout, selected, data, python=python, scratch=args.scratch,
                                      keep=args.keep_scratch, timeout=args.timeout, echo=args.verbose)
    for status, patch_run in zip(statuses, runs):
        _report_patch(status, patch_run, data)
    document = runner.results_document(checkout, runs)
    if args.results:
        runner.write_results(args.results, document)
        _say(f"upstream: results written to {args.results}")
    if kept:
        _say(f"upstream: scratch copy kept in {kept}")
    return 0 if document["ok"] else 1


def _interpreter(value):
    """An absolute interpreter path (not symlink-resolved: a venv's python must stay a venv's python)."""
    if os.sep in value or (os.altsep and os.altsep in value):
        path = os.path.abspath(os.path.expanduser(value))
    else:
        path = shutil.which(value)
    if not path or not os.path.isfile(path) or not os.access(path, os.X_OK):
        raise UsageError(f"--python {value}: no such executable")
    return path


def _report_patch(status, patch_run, data):
    info = patch_run.data
    base = ("base is the recorded base" if status.base_matches else
            f"base is NOT the recorded base {status.recorded_base[:12]} (found {status.actual_base[:12]}); "
            "the patch still applies")
    _say(f"upstream: {info['patch']} [{manifest.upstream_ref(data, info['patch'])}]: {base}; "
         f"torch {info['torch']} on {info['device']}")
    width = max((len(outcome) for outcome in runner.OUTCOMES), default=10)
    for test in patch_run.tests:
        reason = f": {test['reason']}" if test.get("reason") else ""
        _say(f"  {test['outcome']:<{width}}  {test['name']}{reason}")
    for test in patch_run.unexpected:
        if test.get("traceback"):
            _say(f"--- {test['name']}")
            sys.stdout.write(test["traceback"].rstrip() + "\n")
    counts = ", ".join(f"{count} {outcome.replace('_', ' ')}" for outcome, count in info["counts"].items() if count)
    verdict = "FAILED" if patch_run.unexpected else "ok"
    _say(f"upstream: {info['patch']}: {counts or 'no tests'}: {verdict}")
    for name in info["stale_expected_failures"]:
        _say(f"upstream: note: the manifest expects {name} to fail here, but no such test ran")
