# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""The export plan: every file a branch gets, its bytes and what happens to it; computed before writing.

:func:`plan_export` validates everything first (branch, checkout, kit files, conversion, target paths,
uncommitted changes) and raises UsageError with one line when anything is wrong, so a refused export
writes nothing. Test files are converted (:mod:`.convert`); upstream patches are copied byte for byte.
"""
import datetime
import json
import os
from dataclasses import dataclass, field

from ..common.errors import UsageError
from ..common import gitutil
from .branchmap import branch_entry, load_branch_map
from .checkout import check_ascend_checkout, current_branch
from .convert import DEFAULT_COPYRIGHT_HOLDER, KIT_REFERENCE_RE, ascend_header, convert_test_file

TEST_FILE = "test file"
UPSTREAM_PATCH = "upstream patch"


@dataclass
class Target:
    rel_path: str
    content: bytes
    kind: str               # TEST_FILE or UPSTREAM_PATCH
    action: str = ""        # "create", "replace" or "unchanged", set by plan_export


@dataclass
class Plan:
    branch: str
    dest: str
    torch: str
    targets: list
    left_out: dict
    checkout_branch: str = None
    notes: list = field(default_factory=list)


def convert_branch_files(kit_root, branch, entry, year=None, holder=DEFAULT_COPYRIGHT_HOLDER, sources=None):
    """The branch's targets (converted test files, then patches); needs no checkout. Raises UsageError."""
    kit_root = os.path.abspath(kit_root)
    test_files = list(entry.get("test_files", []))
    patches = list(entry.get("upstream_patches", []))
    if not test_files and not patches:
        raise UsageError(f"branch {branch} has no files to export in the branch map")
    missing = [rel for rel in test_files + patches if not os.path.isfile(os.path.join(kit_root, rel))]
    if missing:
        raise UsageError(f"the kit at {kit_root} lacks {', '.join(missing)} (listed for {branch}); "
                         "run from the kit's checkout or pass --kit")
    header = ascend_header(year or datetime.date.today().year, holder)
    targets, problems = [], []
    for rel in test_files:
        with open(os.path.join(kit_root, rel), encoding="utf-8") as handle:
            text = handle.read()
        new_text, found = convert_test_file(rel, text, header, sources)
        problems.extend(found)
        if new_text is not None:
            targets.append(Target(rel, new_text.encode("utf-8"), TEST_FILE))
    if problems:
        shown = "; ".join(str(problem) for problem in problems)
        raise UsageError(f"cannot export {branch}: {len(problems)} problem(s) in kit files: {shown}")
    for rel in patches:
        with open(os.path.join(kit_root, rel), "rb") as handle:
            targets.append(Target(rel, handle.read(), UPSTREAM_PATCH))
    return targets


def plan_export(kit_root, branch, dest, branch_map=None, year=None, holder=DEFAULT_COPYRIGHT_HOLDER, sources=None):
    """Validate everything and compute every file's bytes; writes nothing. Raises UsageError."""
    branch_map = load_branch_map() if branch_map is None else branch_map
    entry = branch_entry(branch_map, branch)
    dest = check_ascend_checkout(dest)
    targets = convert_branch_files(kit_root, branch, entry, year, holder, sources)
    for target in targets:
        path = os.path.join(dest, target.rel_path)
        if os.path.islink(path) or (os.path.exists(path) and not os.path.isfile(path)):
            raise UsageError(f"{target.rel_path} in {dest} exists and is not a regular file")
        parent = os.path.dirname(path)
        while parent != dest and not os.path.exists(parent):
            parent = os.path.dirname(parent)
        if not os.path.isdir(parent) or os.path.commonpath([os.path.realpath(parent), dest]) != dest:
            raise UsageError(f"cannot create {target.rel_path} in {dest}: {parent} is not a directory inside it")
    dirty = gitutil.uncommitted_changes(dest, *[target.rel_path for target in targets])
    if dirty:
        raise UsageError(f"target paths in {dest} have uncommitted changes, commit or stash them first: "
                         + "; ".join(dirty))
    for target in targets:
        path = os.path.join(dest, target.rel_path)
        if not os.path.exists(path):
            target.action = "create"
        else:
            with open(path, "rb") as handle:
                target.action = "unchanged" if handle.read() == target.content else "replace"
    return Plan(branch, dest, entry.get("torch", "?"), targets, dict(entry.get("left_out", {})),
                checkout_branch=current_branch(dest), notes=patch_notes(kit_root, targets))


def patch_notes(kit_root, targets):
    """What a reviewer should know about the copied patches: their upstream base, and kit references in them.

    Patches are copied byte for byte, so a mention of this kit inside one is reported, not rewritten.
    """
    manifest = {}
    manifest_path = os.path.join(os.path.abspath(kit_root), "test_upstream", "manifest.json")
    if os.path.isfile(manifest_path):
        try:
            with open(manifest_path, encoding="utf-8") as handle:
                manifest = json.load(handle).get("patches", {})
        except (OSError, ValueError, AttributeError):
            manifest = {}
    notes = []
    for target in targets:
        if target.kind != UPSTREAM_PATCH:
            continue
        entry = manifest.get(target.rel_path[len("test_upstream/"):], {}) if target.rel_path.startswith(
            "test_upstream/") else {}
        upstream = entry.get("upstream") or {}
        base = upstream.get("tag") or (upstream.get("commit") or "")[:12]
        if base:
            notes.append(f"{target.rel_path}: made against {upstream.get('repo', 'pytorch/pytorch')} {base}"
                         + (f" (file blob {entry['base_blob'][:12]})" if entry.get("base_blob") else ""))
        mentions = KIT_REFERENCE_RE.findall(target.content.decode("utf-8", errors="replace"))
        if mentions:
            notes.append(f"{target.rel_path}: copied byte for byte, and it mentions {', '.join(sorted(set(mentions)))} "
                         f"({len(mentions)} times); reword it in the kit if Ascend should not")
    return notes
