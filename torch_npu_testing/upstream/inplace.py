# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""``apply`` / ``revert`` in the user's checkout, all patches or none.

Every selected patch is checked first (base present, applies / reverses cleanly, target not dirty in
a git checkout). The new contents are then produced by ``git apply`` in a scratch copy and written
into the checkout by rename, one file at a time; if a write fails, the files already written are put
back. ``git apply`` never runs in the checkout, so no ``.rej`` or ``.orig`` file can appear there.
"""
from pathlib import Path

from ..common.atomic import write_text_atomic
from ..common.errors import UsageError
from ..common import gitutil
from .scratch import (
    ALREADY_APPLIED,
    APPLIES,
    CONFLICT,
    MISSING_BASE,
    assess,
    copy_into,
    require_all_apply,
    temporary_dir,
)


def apply_in_place(source, patches, data):
    """Apply every patch to ``source``; returns the statuses (all of them applicable)."""
    statuses = assess(source, patches, data, derive_bases=False)
    require_all_apply(statuses, "apply")
    _refuse_dirty(source, statuses)
    _write_patched(source, statuses, reverse=False)
    return statuses


def revert_in_place(source, patches, data):
    """Undo every patch in ``source``; each must currently be applied."""
    statuses = assess(source, patches, data, derive_bases=False)
    for status in statuses:
        if status.state == MISSING_BASE:
            raise UsageError(f"cannot revert: {status.patch.name}: {status.patch.target} is missing in the "
                             "checkout (nothing changed)")
        if status.state == APPLIES:
            raise UsageError(f"cannot revert: {status.patch.name} is not applied in the checkout (nothing changed)")
        if status.state == CONFLICT:
            raise UsageError(f"cannot revert: {status.patch.name} is neither applied nor cleanly applicable; "
                             f"{status.patch.target} was changed by hand ({status.detail}) (nothing changed)")
        assert status.state == ALREADY_APPLIED, status.state
    _write_patched(source, statuses, reverse=True)
    return statuses


def _refuse_dirty(source, statuses):
    if not gitutil.is_repository_root(source):
        return
    for status in statuses:
        changes = gitutil.uncommitted_changes(source, status.patch.target)
        if changes:
            raise UsageError(f"cannot apply: {status.patch.target} has uncommitted changes in {source} "
                             f"({changes[0].strip()}); commit or discard them first (nothing changed)")


def _write_patched(source, statuses, reverse):
    source = Path(source)
    with temporary_dir() as work:
        new_contents = {}
        for number, status in enumerate(statuses):
            root = work / str(number)
            copy_into(source / status.patch.target, root / status.patch.target)
            result = gitutil.apply(status.patch.path, root, reverse=reverse)
            if not result.ok:
                raise UsageError(f"git apply of {status.patch.name} failed in scratch: {result.first_error} "
                                 "(nothing changed)")
            new_contents[status.patch.target] = (root / status.patch.target).read_bytes()
        _replace_all(source, new_contents)


def _replace_all(source, new_contents):
    """Write each file atomically (:func:`~torch_npu_testing.common.atomic.write_text_atomic`, mode kept);
    on any failure put back the files already written."""
    originals, done = {}, []
    try:
        for target, data in new_contents.items():
            path = source / target
            originals[target] = path.read_bytes()
            write_text_atomic(path, data.decode("utf-8", errors="surrogateescape"))
            done.append(target)
    except BaseException:
        for target in done:
            write_text_atomic(source / target, originals[target].decode("utf-8", errors="surrogateescape"))
        raise
