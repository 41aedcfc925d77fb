# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""The branch map: which kit files each Ascend/pytorch branch's pull request contains.

``torch_npu_testing/export_branches.json`` (format ``torch_npu_testing.export_branches/1``) lists, per
branch, its torch release, its ``test_files``, its ``upstream_patches`` and the files ``left_out`` with the
reason; ``files`` gives each file's API and short title (used in the commit title). Paths are the same in
the kit and in the Ascend checkout, and must be plain relative paths.
"""
import json
import os

from ..common.errors import UsageError

BRANCHES_FILE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "export_branches.json")
BRANCHES_FORMAT = "torch_npu_testing.export_branches/1"


def load_branch_map(path=None):
    """The branch -> files map (``BRANCHES_FILE`` unless ``path`` is given). Raises UsageError."""
    path = path or BRANCHES_FILE
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot read the branch map {path}: {exc}") from None
    if not isinstance(data, dict) or data.get("format") != BRANCHES_FORMAT \
            or not isinstance(data.get("branches"), dict):
        raise UsageError(f"{path} is not a {BRANCHES_FORMAT} branch map")
    for name, branch in data["branches"].items():
        for rel in list(branch.get("test_files", [])) + list(branch.get("upstream_patches", [])):
            check_relative_path(rel, f"branch {name} in {path}")
    return data


def check_relative_path(rel, where):
    parts = rel.replace("\\", "/").split("/")
    if not rel or os.path.isabs(rel) or ".." in parts or "" in parts:
        raise UsageError(f"{where}: {rel!r} is not a plain relative path")


def branch_entry(branch_map, branch):
    """The map's entry for ``branch``, or UsageError naming the known branches."""
    branches = branch_map["branches"]
    if branch not in branches:
        raise UsageError(f"unknown branch {branch!r}: use one of {', '.join(branches)}")
    return branches[branch]


def list_branches(branch_map):
    """``export --list``: each branch with its torch, its files and what is left out."""
    out = []
    for name, entry in branch_map["branches"].items():
        out.append(f"{name} (torch {entry.get('torch', '?')}):")
        out.extend(f"  {rel}" for rel in entry.get("test_files", []) + entry.get("upstream_patches", []))
        out.extend(f"  left out: {rel}: {why}" for rel, why in entry.get("left_out", {}).items())
    return "\n".join(out)
