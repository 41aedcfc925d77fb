# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""The patch files of ``test_upstream/``: where they are, what each one changes, which to use.

Convention: ``test_upstream/<base>/<upstream path>.patch`` changes exactly the upstream file
``<upstream path>`` (relative to the root of a PyTorch checkout) as it is at upstream base ``<base>``
(``0099ec9``, ``v2.12``: one patch per upstream base, the manifest says what each base is), as a
git-style diff with ``a/`` ``b/`` paths and an ``index <base>..<result>`` line naming the blob of the
upstream file it was made against. Text before the ``diff --git`` line is a free-form description
(``git apply`` and ``patch`` ignore it; ``refresh`` keeps it). A patch's *name* is its path under
``test_upstream/`` (``v2.12/test/functorch/test_x.py.patch``): the manifest's key.
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
    ``v2.12/test/functorch/test_aot_joint_with_descriptors.py.patch``; ``base_key`` its first part
    (``v2.12``); ``target`` the upstream file it changes."""

    name: str
    base_key: str
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
    base_key, expected_target = split_name(name)
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
        if name[: -len(PATCH_SUFFIX)] == target:
            raise UsageError(f"misplaced patch {name}: patches live at test_upstream/<base>/{name} "
                             "(one directory per upstream base, e.g. v2.12/)")
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
    return Patch(name=name, base_key=base_key, path=Path(path), target=target, base_blob=index_match.group(1),
                 result_blob=index_match.group(2), preamble=preamble + ("\n" if preamble else ""))


def split_name(name):
    """``"v2.12/test/x.py.patch"`` -> ``("v2.12", "test/x.py")``; a name without a base dir gives
    ``("", "test/x.py")`` (:func:`parse_patch` then says where it belongs)."""
    stem = name[: -len(PATCH_SUFFIX)] if name.endswith(PATCH_SUFFIX) else name
    base_key, _, target = stem.partition("/")
    return (base_key, target) if target else ("", stem)


def discover(patches_dir):
    """All patch names under ``patches_dir`` (sorted), without parsing them."""
    patches_dir = check_patches_dir(patches_dir)
    return sorted(path.relative_to(patches_dir).as_posix() for path in patches_dir.rglob("*" + PATCH_SUFFIX)
                  if path.is_file())


def resolve_name(requested, names):
    """Map a user's ``--patch`` value to a patch name: the name itself (``v2.12/test/x.py.patch``), the
    upstream path (``test/x.py``, with or without ``.patch``) or a file name / stem (``test_x``) when
    only one patch matches (several bases patch the same file: add ``--base``)."""
    requested = requested.strip().replace(os.sep, "/")
    if requested in names:
        return requested
    if requested + PATCH_SUFFIX in names:
        return requested + PATCH_SUFFIX
    wanted = requested[: -len(PATCH_SUFFIX)] if requested.endswith(PATCH_SUFFIX) else requested
    matches = [name for name in names if split_name(name)[1] == wanted]
    if not matches:
        matches = [name for name in names if os.path.basename(name) in
                   (requested, requested + PATCH_SUFFIX, requested + ".py" + PATCH_SUFFIX)]
    if len(matches) == 1:
        return matches[0]
    known = ", ".join(names) or "none"
    if len(matches) > 1:
        raise UsageError(f"patch name {requested!r} is ambiguous: {', '.join(matches)} (pass --base KEY "
                         "or the full name)")
    raise UsageError(f"unknown patch {requested!r} (known patches: {known})")


def select(patches_dir, requested=None, base_keys=None):
    """Parse the requested patches (all when ``requested`` is empty), only those of ``base_keys`` when
    given; unknown names or base keys raise UsageError."""
    patches_dir = check_patches_dir(patches_dir)
    names = discover(patches_dir)
    if base_keys:
        known = sorted({split_name(name)[0] for name in names})
        for key in base_keys:
            if key not in known:
                raise UsageError(f"unknown upstream base {key!r} "
                                 f"(bases in {patches_dir}: {', '.join(known) or 'none'})")
        names = [name for name in names if split_name(name)[0] in base_keys]
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
