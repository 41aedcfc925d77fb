# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""The patches shipped in ``test_upstream/<base>/`` and their manifest (the upstream files are not in the repo).

Contract: every shipped patch parses, names its base blob in its ``index`` line, agrees with the
manifest; only the v2.12 patch is exported, and every base key of the branch table has it; the
adaptation patches stay self-contained (import nothing from torch_npu_testing), hard-code no cuda
device, and change no upstream assertion; the v2.12 patch resolves the device by the runtime's rules.
With a local copy of the 0099ec9 upstream file (``$PYTORCH_SRC`` or ``.upstream/pytorch-0099ec9``) both
patches are also checked against it, the v2.12 one on the base derived from it: the real v2.12.0 file, by
its full blob.
"""
import os
from pathlib import Path

import pytest

from torch_npu_testing.common import table
from torch_npu_testing.common.errors import UsageError
from torch_npu_testing.runtime import carried
from torch_npu_testing.upstream import derive, manifest, patches, scratch

REPO_ROOT = Path(__file__).resolve().parents[2]
PATCHES_DIR = REPO_ROOT / "test_upstream"
TARGET = "test/functorch/test_aot_joint_with_descriptors.py"
PATCH_0099 = f"0099ec9/{TARGET}.patch"
PATCH_V212 = f"v2.12/{TARGET}.patch"
V212_BLOB = "13f2318a0f59c88406b0ced8393dd7be67a6aa4c"  # PyTorch v2.12.0's file; Ascend's merged patch: 13f2318


def changed_lines(patch, sign):
    lines = patch.path.read_text().split("diff --git", 1)[1].splitlines()
    return [line[1:] for line in lines if line.startswith(sign) and not line.startswith(sign * 3)]


def shipped(name):
    [patch] = patches.select(PATCHES_DIR, [name])
    return patch


def test_shipped_patches_parse_and_agree_with_manifest():
    data = manifest.load(PATCHES_DIR / manifest.MANIFEST_NAME)
    names = [patch.name for patch in patches.select(PATCHES_DIR)]
    assert sorted(names) == sorted(data["patches"]) == [PATCH_0099, PATCH_V212]
    for patch in patches.select(PATCHES_DIR):
        entry = data["patches"][patch.name]
        assert patches.blob_matches(entry["base_blob"], patch.base_blob)
        assert entry["upstream"].get("tag") or entry["upstream"].get("commit")
        assert entry["upstream"]["real"] is True and entry["upstream"]["obtained"]
        assert entry["run_under"] and isinstance(entry["export"], bool)
        for failure in manifest.expected_failures(data, patch.name):
            assert failure.reason and failure.test.startswith("Test")
    assert data["patches"][PATCH_0099]["base_blob"].startswith("e595e334") and not data["patches"][PATCH_0099]["export"]
    v212 = data["patches"][PATCH_V212]
    assert v212["base_blob"] == V212_BLOB and v212["upstream"]["blob_verified"] is True
    assert v212["export"] is True and v212["run_under"] == ["2.12.0", "2.11.0"]
    derived = v212["derived_base"]
    assert derived["blob"] == V212_BLOB and (derived["lines"], derived["chars"], derived["tests"]) == (1262, 60655, 18)
    assert len(derived["drop_tests"]) == 5 and [edit["kind"] for edit in derived["edits"]] == [
        "drop_decorator", "replace", "replace", "comment_expected", "comment_expected", "comment_expected"]
    assert sum(len(edit.get("strings", ())) for edit in derived["edits"]) == 4
    assert isinstance(v212["hunks"]["unconfirmed"], list)


def test_exported_patches_follow_the_table():
    for name in table.branches():
        key = table.branch(name)["upstream_patches"]
        exported = manifest.exported_patches(key)
        if key is None:
            assert exported == []
            continue
        assert exported == [((PATCHES_DIR / PATCH_V212).resolve(), f"test_upstream/{TARGET}.patch")]
    assert table.branch("v2.12.0")["upstream_patches"] == table.branch("v2.11.0")["upstream_patches"] == "v2.12"
    with pytest.raises(UsageError, match="no exported patch for upstream base '0099ec9'"):
        manifest.exported_patches("0099ec9")


@pytest.mark.parametrize("name", [PATCH_0099, PATCH_V212])
def test_patches_are_self_contained_and_device_neutral(name):
    patch = shipped(name)
    added, removed = changed_lines(patch, "+"), changed_lines(patch, "-")
    assert not [line for line in added if "torch_npu_testing" in line and "import" in line]
    assert not [line for line in added if '"cuda"' in line and not line.lstrip().startswith(("#", "torch "))]
    assert any("requires_cuda" in line for line in removed)
    assert any('device = "cuda"' in line for line in removed)
    assert not [line for line in removed if "assert" in line or "torch.ops." in line or "AOTInput" in line]


def test_v212_patch_resolves_the_device_by_the_runtime_rules():
    patch = shipped(PATCH_V212)
    added = "\n".join(changed_lines(patch, "+"))
    assert patch.base_blob == V212_BLOB
    assert "        device = device_type" in added.splitlines()
    assert f'names = ("{carried.DEVICE_VARIABLES[0]}", "{carried.DEVICE_VARIABLES[1]}")' in added
    assert "torch.accelerator.is_available()" in added and "current_accelerator()" in added
    assert "raise RuntimeError" in added
    assert "acc := torch.accelerator.current_accelerator()" not in added


def test_v212_patch_resolver_behaves_like_the_runtime(monkeypatch):
    """Run the resolver the patch adds (torch faked: no NPU, no accelerator) against the runtime's."""
    source = "\n".join(changed_lines(shipped(PATCH_V212), "+"))
    start = source.index("def _resolve_device_type")
    resolver = source[start:source.index("\ndevice_type = ", start)]

    class FakeAccelerator:
        @staticmethod
        def is_available():
            return False

    namespace = {"os": os, "torch": type("torch", (), {"accelerator": FakeAccelerator})}
    exec(resolver, namespace)  # noqa: S102 - the patch's own function
    for variables in ({}, {"API_CONSISTENCY_DEVICE": "cpu"}, {"TORCH_NPU_TESTING_DEVICE": "npu"},
                      {"API_CONSISTENCY_DEVICE": "cuda", "TORCH_NPU_TESTING_DEVICE": "cpu"}):
        for variable in carried.DEVICE_VARIABLES:
            monkeypatch.delenv(variable, raising=False)
        for variable, value in variables.items():
            monkeypatch.setenv(variable, value)
        if variables.get("TORCH_NPU_TESTING_DEVICE", variables.get("API_CONSISTENCY_DEVICE")) in ("npu", "cuda"):
            with pytest.raises(RuntimeError, match="no .* device is usable here"):
                namespace["_resolve_device_type"]()
        else:
            assert namespace["_resolve_device_type"]() == "cpu"


def _local_source():
    for candidate in (os.environ.get("PYTORCH_SRC"), REPO_ROOT / ".upstream" / "pytorch-0099ec9"):
        if candidate and (Path(candidate) / TARGET).is_file():
            return Path(candidate)
    return None


def test_shipped_patches_apply_to_local_upstream_copy():
    source = _local_source()
    if source is None:
        pytest.skip("no local upstream copy: set PYTORCH_SRC or put the 0099ec9 file under .upstream/pytorch-0099ec9")
    data = manifest.load(PATCHES_DIR / manifest.MANIFEST_NAME)
    statuses = scratch.assess(source, patches.select(PATCHES_DIR), data)
    assert [status.applies for status in statuses] == [True, True], [status.describe() for status in statuses]
    zero, v212 = statuses
    if zero.base_matches:  # the 0099ec9 file itself: the v2.12 base derived from it is the real one
        assert zero.base_verified and v212.base.kind == derive.DERIVED and v212.base_verified
        assert v212.actual_base == V212_BLOB and v212.base.lines == 1262 and len(v212.base.text) == 60655
        assert len(v212.base.tests) == 18 and len(v212.base.edits) == 6
