# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Checking patches against a checkout, and scratch copies where they are applied.

Nothing here writes into the user's checkout: every ``git apply`` (also ``--check``) runs on copies
of the upstream files in a temporary directory. :func:`assess` says, per patch, whether the base file
exists, whether it is the recorded base, and whether the patch applies, is already applied or
conflicts; a corrupt patch raises at once.
"""
import json
import shutil
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ..common.errors import UsageError
from ..common import gitutil
from . import derive, manifest
from .patches import Patch, blob_matches

APPLIES = "applies"
ALREADY_APPLIED = "already applied"
CONFLICT = "does not apply"
MISSING_BASE = "base file missing"

SCRATCH_RECORD = ".upstream-scratch.json"


@dataclass
class PatchStatus:
    patch: Patch
    recorded_base: str
    actual_base: str
    state: str
    detail: str = ""
    base: object = None  # derive.BaseFile: the base file used (None when missing)

    @property
    def base_matches(self):
        return blob_matches(self.recorded_base, self.actual_base)

    @property
    def applies(self):
        return self.state == APPLIES

    @property
    def base_verified(self):
        """The base used is the recorded base by its full 40-hex blob (not only by a prefix)."""
        return derive.verified(self.base, self.recorded_base)

    def base_text(self):
        """How the base used compares with the recorded one; a derived base says how it was derived."""
        derived = self.base is not None and self.base.kind == derive.DERIVED
        if self.base_matches:
            return (f"base is the recorded base {self.recorded_base[:12]}"
                    + (f" ({self.base.how})" if derived else "")
                    + ("; blob verified" if self.base_verified else ""))
        if derived:
            return f"base: {self.base.how} (blob {self.actual_base[:12]}; recorded real base {self.recorded_base[:12]})"
        return f"base is NOT the recorded base (recorded {self.recorded_base[:12]}, found {self.actual_base[:12]})"

    def describe(self):
        """One line: state, then how the base compares with the recorded one."""
        name = self.patch.name
        if self.state == MISSING_BASE:
            return f"{name}: base file missing: {self.patch.target} is not in the checkout"
        if self.state == ALREADY_APPLIED:
            is_result = blob_matches(self.patch.result_blob, self.actual_base)
            result = " (the file is the patch's result)" if is_result else ""
            return f"{name}: already applied in the checkout{result}"
        base = self.base_text()
        state = self.state if not self.detail else f"{self.state} ({self.detail})"
        return f"{name}: {state}; {base}"


def recorded_base_of(patch, data):
    """The manifest's base for the patch, checked against the patch's own ``index`` line."""
    recorded = manifest.recorded_base(data, patch.name)
    if recorded and not blob_matches(recorded, patch.base_blob):
        raise UsageError(f"manifest base_blob {recorded[:12]} of {patch.name} disagrees with the patch's index "
                         f"line ({patch.base_blob[:12]}); regenerate the patch with `upstream refresh`")
    return recorded or patch.base_blob


@contextmanager
def temporary_dir(prefix="tnt-upstream-"):
    path = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def assess(source, patches, data, derive_bases=True):
    """A :class:`PatchStatus` per patch. Reads the checkout, writes only to a temporary directory.

    With ``derive_bases`` a patch whose manifest entry has a ``derived_base`` is checked against the base
    :func:`derive.resolve_base` picks (the source's file, or one derived from it).
    """
    statuses = []
    with temporary_dir() as work:
        for number, patch in enumerate(patches):
            recorded = recorded_base_of(patch, data)
            base = derive.resolve_base(source, patch, data, derive=derive_bases)
            if base is None:
                statuses.append(PatchStatus(patch, recorded, "", MISSING_BASE))
                continue
            copy_root = work / str(number)
            write_into(base.data, copy_root / patch.target)
            statuses.append(PatchStatus(patch, recorded, base.blob, *_apply_state(patch, copy_root), base=base))
    return statuses


def _apply_state(patch, copy_root):
    forward = gitutil.apply_check(patch.path, copy_root)
    if forward.ok:
        return APPLIES, ""
    if gitutil.is_corrupt(forward):
        raise UsageError(f"corrupt patch {patch.name}: {forward.first_error}")
    if gitutil.apply_check(patch.path, copy_root, reverse=True).ok:
        return ALREADY_APPLIED, ""
    return CONFLICT, _short(forward.first_error)


def _short(message):
    return message.replace("error: ", "", 1)


def require_all_apply(statuses, action):
    """Raise one UsageError line for the first patch that cannot be applied (nothing has been changed)."""
    for status in statuses:
        if status.state == MISSING_BASE:
            raise UsageError(f"cannot {action}: {status.patch.name}: base file {status.patch.target} is missing "
                             "in the checkout (nothing changed)")
        if status.state == ALREADY_APPLIED:
            raise UsageError(f"cannot {action}: {status.patch.name} is already applied in the checkout "
                             "(run `upstream revert` or use a clean checkout; nothing changed)")
        if status.state == CONFLICT:
            mismatch = "" if status.base_matches else (
                f"; the base is not the recorded base {status.recorded_base[:12]}")
            raise UsageError(f"cannot {action}: {status.patch.name} does not apply ({status.detail}){mismatch} "
                             "(nothing changed)")


def write_into(data, destination):
    destination = Path(destination)
    destination.parent.mkdir(parents=True, exist_ok=True)
    destination.write_bytes(data)


def copy_into(source_file, destination):
    destination = Path(destination)
    destination.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(str(source_file), str(destination))


def prepare(source, statuses, data, scratch, apply_patches=True):
    """Copy the base files (and manifest support files) into ``scratch`` and apply the patches there.

    Patches that do not apply are copied unpatched only when ``apply_patches`` is False.
    Returns the scratch root.
    """
    scratch = Path(scratch)
    scratch.mkdir(parents=True, exist_ok=True)
    for status in statuses:
        patch = status.patch
        if status.state == MISSING_BASE:
            continue
        write_into(status.base.data, scratch / patch.target)
        for extra in manifest.support_files(data, patch.name):
            extra_source = Path(source) / extra
            if not extra_source.is_file():
                raise UsageError(f"support file {extra} of {patch.name} is missing in the checkout")
            copy_into(extra_source, scratch / extra)
        if apply_patches and status.applies:
            result = gitutil.apply(patch.path, scratch)
            if not result.ok:  # checked just before: only a race or a git bug gets here
                raise UsageError(f"git apply of {patch.name} failed in {scratch}: {result.first_error}")
    record = {"source": str(source), "patches": {s.patch.name: {
        "target": s.patch.target, "applied": bool(apply_patches and s.applies),
        "base": s.base.how if s.base is not None else None} for s in statuses}}
    (scratch / SCRATCH_RECORD).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    return scratch


def read_record(scratch):
    path = Path(scratch) / SCRATCH_RECORD
    if not path.is_file():
        return {}
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except ValueError:
        return {}


def ensure_empty_dir(path):
    """A scratch destination must be new or empty: we never mix our copies with other files."""
    path = Path(path)
    if path.exists() and (not path.is_dir() or any(path.iterdir())):
        raise UsageError(f"scratch directory {path} exists and is not empty; choose a new directory")
    return path
