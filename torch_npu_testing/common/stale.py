# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""The one staleness check: is a record (a PR description, verify's results) of the bytes that are there now?

``export`` asks it of ``pr-BRANCH.json`` against the bytes it writes; ``pr`` asks it of
``verify-BRANCH.json`` against the PR's files in DEST. Both compare SHA-256 digests, path by path.
"""
import os

from .results import sha256_of


def file_digests(root, paths):
    """``{path: SHA-256 of ROOT/path, or None when it is not a file}``."""
    return {rel: sha256_of(os.path.join(root, rel)) if os.path.isfile(os.path.join(root, rel)) else None
            for rel in paths}


def stale_files(recorded, actual):
    """``[(path, why)]`` for each path of ``actual`` (``{path: digest or None}``) whose digest is not the
    one ``recorded`` (``{path: digest}``) holds: recorded for other bytes, not recorded, or gone."""
    stale = []
    for path, now in actual.items():
        then = recorded.get(path)
        if now is None:
            stale.append((path, "is not there any more"))
        elif then is None:
            stale.append((path, "is not in the record"))
        elif then != now:
            stale.append((path, f"has other bytes now (SHA-256 {now[:12]}, recorded {then[:12]})"))
    return stale
