# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Regenerate patches from an edited scratch copy (``upstream refresh``, alias ``diff``).

For each patch: diff ``<checkout>/<path>`` (the upstream base) against ``<scratch>/<path>`` (the
edited copy) with ``git diff --no-index`` so the patch has ``a/`` ``b/`` paths and an ``index`` line
with the full blob ids; keep the description above the diff; check the new patch applies to the
base; then write the patches and record the new base (and the upstream commit/tag) in the manifest.
All patches are computed before any file is written.
"""
import os
from pathlib import Path

from ..common.atomic import write_text_atomic
from ..common.errors import UsageError
from ..common import gitutil
from . import manifest
from .patches import PATCH_SUFFIX, check_patches_dir, discover, parse_patch, resolve_name
from .scratch import copy_into, temporary_dir


def _targets(patches_dir, scratch, requested, added, base_key=None):
    names = discover(patches_dir)
    plan = []  # (name, target, preamble)
    for item in requested or []:
        name = resolve_name(item, names)
        patch = parse_patch(Path(patches_dir) / name, name)
        plan.append((name, patch.target, patch.preamble))
    if added and not base_key:
        raise UsageError("--add needs --base KEY: the upstream base the new patch is made against "
                         "(its directory under test_upstream/, e.g. v2.12)")
    for path in added or []:
        target = path.strip().replace(os.sep, "/").lstrip("/")
        if target.startswith(("a/", "b/")) or ".." in target.split("/"):
            raise UsageError(f"--add takes an upstream path relative to the checkout root, got {path!r}")
        name = f"{base_key}/{target}{PATCH_SUFFIX}"
        if name in names:
            raise UsageError(f"{name} already exists; refresh it with --patch {name}")
        plan.append((name, target, f"{target}: adapted to the resolved test device (torch_npu_testing).\n\n"))
    if not requested and not added:
        for name in names:
            patch = parse_patch(Path(patches_dir) / name, name)
            if (Path(scratch) / patch.target).is_file():
                plan.append((name, patch.target, patch.preamble))
        if not plan:
            raise UsageError(f"scratch {scratch} holds none of the patched files; pass --patch or --add")
    return plan


def build_patch(source, scratch, target, preamble):
    """The patch text for ``target`` and the base blob id; identical files -> UsageError."""
    base_file = Path(source) / target
    edited_file = Path(scratch) / target
    if not base_file.is_file():
        raise UsageError(f"base file missing: {target} is not in the checkout {source}")
    if not edited_file.is_file():
        raise UsageError(f"{target} is not in the scratch copy {scratch}")
    with temporary_dir("tnt-refresh-") as work:
        copy_into(base_file, work / "a" / target)
        copy_into(edited_file, work / "b" / target)
        diff = gitutil.diff_files(work, target)
    if not diff:
        raise UsageError(f"scratch copy of {target} is identical to the upstream file: nothing to patch")
    return preamble + diff, gitutil.hash_object(base_file)


def refresh(patches_dir, manifest_path, scratch, source, requested=None, added=None, commit=None, tag=None,
            base_key=None):
    """Regenerate (or add) patches; returns ``[(name, base_blob, upstream_ref_or_None)]``.

    A patch made against a derived base (manifest ``derived_base``) is not regenerated here: this diffs
    against the source's file, not the base derived from it; edit it by hand and check it with ``check``.
    """
    patches_dir = check_patches_dir(patches_dir)
    scratch = Path(scratch)
    if not scratch.is_dir():
        raise UsageError(f"scratch directory {scratch} does not exist (make one with `upstream scratch`)")
    data = manifest.load(manifest_path)
    plan = _targets(patches_dir, scratch, requested, added, base_key)
    for name, _, _ in plan:
        if manifest.entry(data, name).get("derived_base"):
            raise UsageError(f"{name} is made against a derived base (refresh diffs against the source's file, "
                             "not the base derived from it): edit it by hand, then run `upstream check`")
    if not (commit or tag):
        detected_commit, detected_tag = gitutil.head_commit_and_tag(source)
        if detected_commit and not any(gitutil.uncommitted_changes(source, target) for _, target, _ in plan):
            commit, tag = detected_commit, detected_tag
    results = []
    with temporary_dir("tnt-refresh-check-") as check_dir:
        for number, (name, target, preamble) in enumerate(plan):
            text, base_blob = build_patch(source, scratch, target, preamble)
            candidate = check_dir / f"{number}{PATCH_SUFFIX}"
            candidate.write_text(text, encoding="utf-8")
            root = check_dir / f"base{number}"
            copy_into(Path(source) / target, root / target)
            verdict = gitutil.apply_check(candidate, root)
            if not verdict.ok:  # would mean git produced a diff that git cannot apply
                raise UsageError(f"regenerated {name} does not apply to its base: {verdict.first_error}")
            results.append((name, text, base_blob))
    for name, text, base_blob in results:
        write_text_atomic(patches_dir / name, text)
        manifest.update_base(data, name, base_blob, commit=commit, tag=tag)
    manifest.save(data, manifest_path)
    return [(name, base_blob, tag or commit) for name, _, base_blob in results]
