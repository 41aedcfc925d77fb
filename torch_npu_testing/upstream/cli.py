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
- ``derive``  write the base a patch is made against (e.g. the v2.12 file, derived from a newer upstream
              file by dropping later tests and the manifest's edits) into a new fake PyTorch root and
              check its git blob against the recorded base: exit 1 when it is not that base.
- ``superset`` check that a patch (the kit's) keeps every adaptation of another patch of the same
              file (e.g. Ascend's merged one) and skips on the device no test that one lets run.

Patches live in ``test_upstream/<base>/``: one per upstream base of a file (``--base KEY`` selects a
base). ``run`` applies a patch only where its base fits: ``--each-torch`` runs each patch under the
torch releases of its manifest ``run_under``.

Exit status: 0 fine, 1 a patch does not apply (check) or unexpected test failures (run), 2 a problem
the user can fix (one line on stderr; nothing was changed).
"""
import os
import shutil
import sys
from pathlib import Path

from ..common.errors import UsageError
from . import derive, inplace, manifest, patches, refresh, runner, scratch, source, superset, torches

SUBCOMMANDS = ("check", "run", "apply", "revert", "scratch", "refresh", "diff", "derive", "superset")


def add_arguments(parser):
    sub = parser.add_subparsers(dest="upstream_command", metavar="COMMAND")
    sub.required = True

    def common(name, help_text, aliases=()):
        command = sub.add_parser(name, help=help_text, description=help_text, aliases=list(aliases))
        command.add_argument("--source", metavar="DIR",
                             help=f"PyTorch checkout (default: ${source.SOURCE_ENV})")
        command.add_argument("--patch", action="append", metavar="NAME", dest="patch_names",
                             help="only this patch (repeatable; name, upstream path or file stem)")
        command.add_argument("--base", action="append", metavar="KEY", dest="base_keys",
                             help="only the patches of this upstream base (repeatable; its dir in test_upstream/)")
        command.add_argument("--patches", metavar="DIR", help="patches directory (default: test_upstream/)")
        command.add_argument("--manifest", metavar="FILE", help="manifest (default: <patches>/manifest.json)")
        return command

    common("check", "report per patch whether it applies and whether the base is the recorded base")
    run = common("run", "run the patched upstream tests in a scratch copy and report each test")
    run.add_argument("--results", metavar="FILE.json", help="write machine-readable results here")
    run.add_argument("--if-source", action="store_true",
                     help="without a source (no --source, no $PYTORCH_SRC) say so and exit 0")
    run.add_argument("--python", metavar="PY", help="interpreter that runs the tests (default: this one)")
    run.add_argument("--each-torch", action="store_true",
                     help="run once under each torch release the manifest lists (run_under), each in its own venv")
    run.add_argument("--torch", action="append", metavar="X.Y.Z", dest="torch_releases",
                     help="with --each-torch: these releases instead of the manifest's (repeatable)")
    run.add_argument("--venvs", metavar="DIR", help="with --each-torch: where the per-release venvs live "
                     "(default: .upstream-venvs/)")
    run.add_argument("--reuse-envs", metavar="TOXWORKDIR",
                     help="with --each-torch: use a branch env's interpreter there (<dir>/<env>/bin/python, "
                     "env from the branch table) when it has that torch, instead of a new venv")
    run.add_argument("--results-dir", metavar="DIR",
                     help="write upstream.json (or, with --each-torch, upstream-<torch>.json per release) here")
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
    derive_cmd = common("derive", "write the base of each selected patch (derived where needed) to a new "
                        "fake PyTorch root and check its blob against the recorded base (exit 1 if it differs)")
    derive_cmd.add_argument("--dest", required=True, metavar="DIR", help="new (or empty) directory")
    superset_cmd = common("superset", "check that the selected patch keeps every adaptation of --other")
    superset_cmd.add_argument("--other", required=True, metavar="PATCH", help="the other patch (e.g. Ascend's)")
    superset_cmd.add_argument("--device", default="npu", help="device whose skips are compared (default npu)")


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
            "scratch": cmd_scratch, "refresh": cmd_refresh, "derive": cmd_derive,
            "superset": cmd_superset}[command](args)


def _load(args, unique_targets=False):
    """The selected patches and the manifest; with ``unique_targets`` two patches of one upstream file (two
    bases) are refused: they cannot share one copy of the file."""
    patches_dir, manifest_path = _paths(args)
    selected = patches.select(patches_dir, args.patch_names, args.base_keys)
    data = manifest.load(manifest_path)
    if unique_targets:
        torches.require_unique_targets(selected)
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
    selected, data = _load(args, unique_targets=True)
    statuses = inplace.apply_in_place(checkout, selected, data)
    for status in statuses:
        note = "" if status.base_matches else f" (base is not the recorded base {status.recorded_base[:12]})"
        _say(f"upstream: applied {status.patch.name} to {checkout / status.patch.target}{note}")
    return 0


def cmd_revert(args):
    checkout = source.require_source(args.source)
    selected, data = _load(args, unique_targets=True)
    statuses = inplace.revert_in_place(checkout, selected, data)
    for status in statuses:
        _say(f"upstream: reverted {status.patch.name} in {checkout / status.patch.target}")
    return 0


def cmd_scratch(args):
    checkout = source.require_source(args.source)
    selected, data = _load(args, unique_targets=True)
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
                           added=args.add, commit=args.upstream_commit, tag=args.upstream_tag,
                           base_key=(args.base_keys or [None])[0])
    for name, base_blob, ref in done:
        ref_text = f"upstream {ref}" if ref else "upstream ref unrecorded (pass --upstream-tag/--upstream-commit)"
        _say(f"upstream: wrote {patches_dir / name}; base {base_blob[:12]}, {ref_text}")
    _say(f"upstream: updated {manifest_path}")
    return 0


def cmd_run(args):
    if args.each_torch and args.python:
        raise UsageError("--each-torch and --python exclude each other (--each-torch picks the interpreters)")
    if (args.torch_releases or args.venvs or args.reuse_envs) and not args.each_torch:
        raise UsageError("--torch, --venvs and --reuse-envs go with --each-torch")
    if args.results and args.results_dir:
        raise UsageError("--results and --results-dir exclude each other")
    if args.each_torch and args.results:
        raise UsageError("--each-torch writes one file per torch: use --results-dir DIR, not --results")
    given = source.given_source(args.source)
    if given is None:
        if args.if_source:
            _say(f"upstream: skipped: {source.NO_SOURCE}")
            results_path = args.results or _fresh_results_dir(args.results_dir, "upstream.json")
            if results_path:
                runner.write_results(results_path, runner.skipped_document(source.NO_SOURCE))
            return 0
        raise UsageError(source.NO_SOURCE)
    checkout = source.validate(given)
    selected, data = _load(args)
    if not args.each_torch:
        python = _interpreter(args.python) if args.python else None
        if torches.shared_targets(selected):
            found = torches.installed_torch(python or sys.executable)
            selected = torches.patches_for_release(selected, data, found.split("+")[0] if found else "")
        return _run_under(args, checkout, selected, data, python,
                          args.results or _fresh_results_dir(args.results_dir, "upstream.json"), args.scratch)
    releases = torches.releases_to_run(data, [patch.name for patch in selected], args.torch_releases)
    plan = [(release, torches.patches_for_release(selected, data, release)) for release in releases]
    venvs = args.venvs or os.path.join(os.getcwd(), ".upstream-venvs")
    status = 0
    for index, (release, chosen) in enumerate(plan):
        _say(f"upstream: === torch {release}: {', '.join(patch.name for patch in chosen)} ===")
        python = torches.interpreter_for(release, venvs, say=_say, reuse_dir=args.reuse_envs)
        results_path = (_fresh_results_dir(args.results_dir, f"upstream-{release}.json", clear=index == 0)
                        if args.results_dir else None)
        scratch_dir = os.path.join(args.scratch, f"torch-{release}") if args.scratch else None
        status = max(status, _run_under(args, checkout, chosen, data, str(python), results_path, scratch_dir))
    return status


def _fresh_results_dir(directory, name, clear=True):
    """``directory/name``; with ``clear``, earlier upstream results there are removed first (they would be
    read as this run's)."""
    if not directory:
        return None
    os.makedirs(directory, exist_ok=True)
    if clear:
        for old in Path(directory).glob("upstream*.json"):
            old.unlink()
    return os.path.join(directory, name)


def _run_under(args, checkout, selected, data, python, results_path, scratch_dir):
    statuses, runs, kept = runner.run(checkout, selected, data, python=python, scratch=scratch_dir,
                                      keep=args.keep_scratch, timeout=args.timeout, echo=args.verbose)
    for status, patch_run in zip(statuses, runs):
        _report_patch(status, patch_run, data)
    document = runner.results_document(checkout, runs)
    if results_path:
        runner.write_results(results_path, document)
        _say(f"upstream: results written to {results_path}")
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
    for line in runner.report_lines(status, patch_run, data):
        _say(line)


def cmd_derive(args):
    """Write the base of each selected patch into a new fake PyTorch root; say what it is."""
    checkout = source.require_source(args.source)
    selected, data = _load(args, unique_targets=True)
    dest = scratch.ensure_empty_dir(args.dest)
    bases = []
    for patch in selected:
        recorded = scratch.recorded_base_of(patch, data)
        base = derive.resolve_base(checkout, patch, data)
        if base is None:
            raise UsageError(f"{patch.name}: base file {patch.target} is missing in {checkout}")
        bases.append((patch, base, recorded))
    for patch, base, _ in bases:
        scratch.write_into(base.data, Path(dest) / patch.target)
    (Path(dest) / "version.txt").write_text("derived by torch_npu_testing upstream derive\n", encoding="utf-8")
    for patch, base, recorded in bases:
        spec = manifest.entry(data, patch.name).get("derived_base") or {}
        _say(f"upstream: {patch.name}: wrote {Path(dest) / patch.target}")
        for line in derive.describe(base, spec, recorded):
            _say(f"  {line}")
        _say(f"  tests: {', '.join(base.tests)}")
    wrong = [patch.name for patch, base, recorded in bases if not patches.blob_matches(recorded, base.blob)]
    for name in wrong:
        _say(f"upstream: {name}: the base written is NOT the recorded base")
    return 1 if wrong else 0


def cmd_superset(args):
    """Exit 0 when the selected patch keeps every adaptation of ``--other`` (on the base it applies to)."""
    checkout = source.require_source(args.source)
    selected, data = _load(args)
    if len(selected) != 1:
        raise UsageError(f"superset compares one patch; {len(selected)} selected (use --base or --patch)")
    [patch] = selected
    base = derive.resolve_base(checkout, patch, data)
    if base is None:
        raise UsageError(f"{patch.name}: base file {patch.target} is missing in {checkout}")
    other = Path(args.other)
    if not other.is_file():
        raise UsageError(f"--other {other}: no such file")
    report = superset.compare(base.text, other.read_text(encoding="utf-8"), patch.path.read_text(encoding="utf-8"),
                              device=args.device)
    _say(f"upstream: {patch.name} vs {other} on {base.how} (blob {base.blob[:12]}):")
    for line in report.lines():
        _say(f"  {line}")
    return 0 if report.ok else 1
