# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""The patch files of ``test_upstream/``: where they are, what each one changes, which to use.

Convention: ``test_upstream/<upstream path>.patch`` changes exactly the upstream file ``<upstream path>``
(relative to the root of a PyTorch checkout), as a git-style diff with ``a/`` ``b/`` paths and an
``index <base>..<result>`` line naming the blob of the upstream file it was made against. Text before
the ``diff --git`` line is a free-form description (``git apply`` ignores it; ``refresh`` keeps it).
"""
import os
import re
from dataclasses import dataclass
from pathlib import Path

from ..common.errors import UsageError

PATCH_SUFFIX = ".patch"
PATCHES_DIR_ENV = "TORCH_NPU_TESTING_UPSTREAM_PATCHES"

_DIFF_GIT = re.compile(r"^diff --git a/(\S+) b/(\S+)$")
_INDEX = re.compile(r"^index ([0-9a-f]{7,40})\.\.([0-9a-f]{7,40})(?: [0-7]{6})?$")


@dataclass(frozen=True)
class Patch:
    """One patch file. ``name`` is its path under the patches dir (posix), e.g.
    ``test/functorch/test_aot_joint_with_descriptors.py.patch``; ``target`` the upstream file it changes."""

    name: str
    path: Path
    target: str
    base_blob: str
    result_blob: str
    preamble: str


def default_patches_dir():
    """``$TORCH_NPU_TESTING_UPSTREAM_PATCHES``, else ``test_upstream/`` of this source tree."""
    configured = os.environ.get(PATCHES_DIR_ENV)
    if configured:
        return Path(configured)
    return Path(__file__).resolve().parents[2] / "test_upstream"


def check_patches_dir(patches_dir):
    patches_dir = Path(patches_dir)
    if not patches_dir.is_dir():
        raise UsageError(f"patches directory {patches_dir} does not exist "
                         f"(pass --patches DIR or set {PATCHES_DIR_ENV})")
    return patches_dir


def parse_patch(path, name):
    """Read and validate one patch file; a malformed one raises UsageError naming it."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"corrupt patch {name}: cannot read it ({exc})") from None
    expected_target = name[: -len(PATCH_SUFFIX)]
    lines = text.splitlines()
    headers = [index for index, line in enumerate(lines) if line.startswith("diff --git ")]
    if not headers:
        raise UsageError(f"corrupt patch {name}: no 'diff --git a/... b/...' header")
    if len(headers) > 1:
        raise UsageError(f"corrupt patch {name}: it changes more than one file (one patch per upstream file)")
    start = headers[0]
    match = _DIFF_GIT.match(lines[start])
    if not match or match.group(1) != match.group(2):
        raise UsageError(f"corrupt patch {name}: bad header {lines[start]!r} (expected 'diff --git a/P b/P')")
    target = match.group(1)
    if target != expected_target:
        raise UsageError(f"corrupt patch {name}: it changes {target}, but its name says {expected_target}")
    body = lines[start + 1:]
    index_line = next((line for line in body[:4] if line.startswith("index ")), None)
    if index_line is None:
        raise UsageError(f"corrupt patch {name}: no 'index <base>..<result>' line after the diff header "
                         "(regenerate it with `upstream refresh`)")
    index_match = _INDEX.match(index_line)
    if not index_match:
        raise UsageError(f"corrupt patch {name}: bad index line {index_line!r}")
    if f"--- a/{target}" not in body or f"+++ b/{target}" not in body:
        raise UsageError(f"corrupt patch {name}: missing '--- a/{target}' / '+++ b/{target}' lines "
                         "(new or deleted files are not supported)")
    if not any(line.startswith("@@ ") for line in body):
        raise UsageError(f"corrupt patch {name}: no hunks")
    preamble = "\n".join(lines[:start])
    return Patch(name=name, path=Path(path), target=target, base_blob=index_match.group(1),
                 result_blob=index_match.group(2), preamble=preamble + ("\n" if preamble else ""))


def discover(patches_dir):
    """All patch names under ``patches_dir`` (sorted), without parsing them."""
    patches_dir = check_patches_dir(patches_dir)
    return sorted(path.relative_to(patches_dir).as_posix() for path in patches_dir.rglob("*" + PATCH_SUFFIX)
                  if path.is_file())


def resolve_name(requested, names):
    """Map a user's ``--patch`` value to a patch name: the name itself, the upstream path (without
    ``.patch``), or a unique file name / stem (``test_aot_joint_with_descriptors``)."""
    requested = requested.strip().replace(os.sep, "/")
    if requested in names:
        return requested
    if requested + PATCH_SUFFIX in names:
        return requested + PATCH_SUFFIX
    by_basename = [name for name in names if os.path.basename(name) in
                   (requested, requested + PATCH_SUFFIX, requested + ".py" + PATCH_SUFFIX)]
    if len(by_basename) == 1:
        return by_basename[0]
    known = ", ".join(names) or "none"
    if len(by_basename) > 1:
        raise UsageError(f"patch name {requested!r} is ambiguous: {', '.join(by_basename)}")
    raise UsageError(f"unknown patch {requested!r} (known patches: {known})")


def select(patches_dir, requested=None):
    """Parse the requested patches (all when ``requested`` is empty); unknown names raise UsageError."""
    patches_dir = check_patches_dir(patches_dir)
    names = discover(patches_dir)
    if requested:
        chosen = []
        for item in requested:
            name = resolve_name(item, names)
            if name not in chosen:
                chosen.append(name)
    else:
        chosen = names
    if not chosen:
        raise UsageError(f"no patches ({PATCH_SUFFIX} files) under {patches_dir}")
    return [parse_patch(patches_dir / name, name) for name in chosen]


def blob_matches(recorded, actual):
    """Blob ids compare by prefix: an ``index`` line may carry an abbreviated id."""
    if not recorded or not actual:
        return False
    recorded, actual = recorded.lower(), actual.lower()
    return actual.startswith(recorded) or recorded.startswith(actual)
