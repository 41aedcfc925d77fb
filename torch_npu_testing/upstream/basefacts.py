# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""What upstream results say about the base each patch ran on: one line per patch, for a PR description.

A reviewer of an upstream patch needs to know which upstream file it was run on and whether that was
checked: the PyTorch tag (or commit) and path, the full git blob, and whether every run's file had that
blob. The facts come from ``upstream run``'s results as the evidence report reads them (one entry per
results file, i.e. per torch; each with its ``patches``: ``patch``, ``target``, ``upstream``,
``recorded_base``, ``base_blob``, ``base_matches``, ``torch_version``). "Verified" is claimed only when
the recorded base is a full 40-hex blob id and every run's file hashed to exactly it; a base recorded by
an abbreviated id, or a run on another file, is said as such.
"""
import re

_FULL_BLOB = re.compile(r"^[0-9a-f]{40}$")


def base_lines(upstreams):
    """Markdown lines (ending with a blank line) naming each patch's base and whether its blob was verified."""
    runs = {}
    for upstream in upstreams:
        if upstream.get("state") != "ran":
            continue
        for patch in upstream.get("patches") or []:
            runs.setdefault(patch.get("patch") or "patch", []).append(patch)
    lines = [_line(name, patches) for name, patches in runs.items()]
    return lines + [""] if lines else []


def _where(patch):
    ref = patch.get("upstream") if isinstance(patch.get("upstream"), dict) else {}
    at = ref.get("tag") or (f"commit {ref['commit'][:12]}" if ref.get("commit") else "(ref not recorded)")
    return f"{ref.get('repo') or 'upstream'} `{at}` `{patch.get('target') or '?'}`"


def _line(name, patches):
    first = patches[0]
    recorded = str(first.get("recorded_base") or "")
    torches = ", ".join(str(patch.get("torch_version") or "?") for patch in patches)
    head = f"- 基线 / base of `{name}`: {_where(first)}, blob `{recorded or 'not recorded'}`"
    matched = all(patch.get("base_matches") for patch in patches)
    blobs = sorted({str(patch.get("base_blob") or "?") for patch in patches})
    if matched and _FULL_BLOB.match(recorded) and blobs == [recorded]:
        return (f"{head}: blob verified (git hash-object of the file each run patched gives exactly it; "
                f"torch {torches})")
    if matched:
        return f"{head}: matched by an abbreviated id only, not verified (torch {torches})"
    other = sorted({str(patch.get("base_blob") or "?") for patch in patches if not patch.get("base_matches")})
    return (f"{head}: **⚠ not verified**: runs patched other files, blob(s) "
            f"{', '.join(f'`{blob}`' for blob in other)} (torch {torches})")
