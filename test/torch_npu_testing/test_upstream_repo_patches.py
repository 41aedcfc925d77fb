# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""The patches shipped in ``test_upstream/`` and their manifest (the upstream files are not in the repo).

Contract: every shipped patch parses, names its base blob in its ``index`` line, agrees with the
manifest; the adaptation patch stays self-contained (imports nothing from torch_npu_testing), hard-codes
no cuda device, and changes no upstream assertion. With a local copy of the upstream files
(``$PYTORCH_SRC`` or ``.upstream/pytorch``) the patches are also checked against it.
"""
import os
from pathlib import Path

import pytest

from torch_npu_testing.upstream import manifest, patches, scratch

REPO_ROOT = Path(__file__).resolve().parents[2]
PATCHES_DIR = REPO_ROOT / "test_upstream"
AOT_PATCH = "test/functorch/test_aot_joint_with_descriptors.py.patch"


def changed_lines(patch, sign):
    lines = patch.path.read_text().split("diff --git", 1)[1].splitlines()
    return [line[1:] for line in lines if line.startswith(sign) and not line.startswith(sign * 3)]


def test_shipped_patches_parse_and_agree_with_manifest():
    data = manifest.load(PATCHES_DIR / manifest.MANIFEST_NAME)
    shipped = patches.select(PATCHES_DIR)
    assert AOT_PATCH in [patch.name for patch in shipped]
    assert sorted(data["patches"]) == sorted(patch.name for patch in shipped)
    for patch in shipped:
        entry = data["patches"][patch.name]
        assert len(entry["base_blob"]) == 40 and patches.blob_matches(entry["base_blob"], patch.base_blob)
        assert entry["upstream"].get("tag") or entry["upstream"].get("commit")
        for failure in manifest.expected_failures(data, patch.name):
            assert failure.reason and failure.test.startswith("Test")


def test_aot_patch_is_self_contained_and_device_neutral():
    [patch] = patches.select(PATCHES_DIR, [AOT_PATCH])
    added = changed_lines(patch, "+")
    removed = changed_lines(patch, "-")
    assert not [line for line in added if "import torch_npu_testing" in line or "from torch_npu_testing" in line]
    assert not [line for line in added if '"cuda"' in line and not line.lstrip().startswith(("#", "torch "))]
    assert any("requires_cuda" in line for line in removed)
    assert any('device = "cuda"' in line for line in removed)
    assert "        device = DEVICE" in added
    assert any("check_available=True" in line for line in added)


def test_aot_patch_changes_no_upstream_assertion():
    """Only devices move: no removed line holds an assertion or an expected graph text."""
    [patch] = patches.select(PATCHES_DIR, [AOT_PATCH])
    removed = changed_lines(patch, "-")
    assert removed, "the patch removes nothing?"
    assert not [line for line in removed if "assert" in line or "torch.ops." in line or "AOTInput" in line]


def _local_source():
    for candidate in (os.environ.get("PYTORCH_SRC"), REPO_ROOT / ".upstream" / "pytorch"):
        if candidate and (Path(candidate) / "test" / "functorch" / "test_aot_joint_with_descriptors.py").is_file():
            return Path(candidate)
    return None


def test_shipped_patches_apply_to_local_upstream_copy():
    source = _local_source()
    if source is None:
        pytest.skip("no local upstream copy: set PYTORCH_SRC or put the files under .upstream/pytorch")
    data = manifest.load(PATCHES_DIR / manifest.MANIFEST_NAME)
    [status] = scratch.assess(source, patches.select(PATCHES_DIR, [AOT_PATCH]), data)
    assert status.applies, status.describe()
    assert status.base_matches, status.describe()
