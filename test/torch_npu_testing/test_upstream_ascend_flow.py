# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Ascend's own flow with the exported patches: copy ``test_upstream/`` into a PyTorch root and run the
branch's apply command (``patch -p1 --no-backup-if-mismatch -f`` per ``*.patch``, sorted, stopping at the
first failure, as Ascend's ``test_upstream/apply_patch.sh`` does). The script here is written to that
command; the exported tree is laid out by :func:`manifest.exported_patches`, as export does.

With a synthetic kit it always runs; with a local copy of the 0099ec9 upstream file (``$PYTORCH_SRC`` or
``.upstream/pytorch-0099ec9``) the kit's real v2.12 patch is applied to the base derived from it (the real
v2.12.0 file). With an Ascend/pytorch repository too (``$TORCH_NPU_TESTING_ASCEND_REPO``: a clone or a bare
git dir; its files are read there at test time, never copied into this repo), Ascend's merged patch of that
file on v2.12.0 and v2.11.0 is applied to the derived base the same way and must give its own post-image.
"""
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from test_upstream_repo_patches import PATCHES_DIR, TARGET, _local_source
from test_upstream_support import BASE_KEY, TINY, TINY_BASE, TINY_PATCHED, make_kit
from torch_npu_testing.upstream import derive, manifest, patches

APPLY_SCRIPT = '''\
#!/bin/bash
# Written to the command of Ascend's test_upstream/apply_patch.sh: from the PyTorch root (the folder above
# this script), patch -p1 --no-backup-if-mismatch -f < each *.patch / *.diff, sorted; stop at the first failure.
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" &>/dev/null && pwd)
ROOT_DIR=$(cd "$SCRIPT_DIR/.." &>/dev/null && pwd)
cd "$ROOT_DIR" || exit 1
PATCH_FILES=$(find "$SCRIPT_DIR" -type f \\( -name "*.patch" -o -name "*.diff" \\) | sort)
[ -z "$PATCH_FILES" ] && exit 0
for patch in $PATCH_FILES; do
    patch -p1 --no-backup-if-mismatch -f < "$patch" || { echo "failed: $patch"; exit 1; }
done
'''

pytestmark = pytest.mark.skipif(shutil.which("patch") is None, reason="GNU patch is not installed")


def export_into(root, base_key, patches_dir):
    """Lay the exported patches out under ``root/test_upstream/`` as export writes them, plus the script."""
    for kit_path, ascend_path in manifest.exported_patches(base_key, patches_dir):
        destination = Path(root) / ascend_path
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(kit_path, destination)
    script = Path(root) / "test_upstream" / "apply_patch.sh"
    script.write_text(APPLY_SCRIPT)
    script.chmod(0o755)
    return script


def apply_like_ascend(script):
    return subprocess.run(["bash", str(script)], cwd=str(script.parent), capture_output=True, text=True,
                          timeout=120, check=False)


def leftovers(root):
    return sorted(str(path) for path in Path(root).rglob("*") if path.suffix in (".rej", ".orig"))


def exported_kit(tmp_path):
    kit = make_kit(tmp_path)
    data = kit.manifest_data()
    data["patches"][f"{BASE_KEY}/{TINY}.patch"]["export"] = True
    kit.write_manifest(data)
    return kit


def test_exported_patch_applies_in_a_fake_root_with_the_apply_command(tmp_path):
    kit = exported_kit(tmp_path)
    root = tmp_path / "ascend-root"
    shutil.copytree(kit.source, root)
    script = export_into(root, BASE_KEY, kit.patches)
    assert (root / "test_upstream" / (TINY + ".patch")).is_file()
    result = apply_like_ascend(script)
    assert result.returncode == 0, result.stdout + result.stderr
    assert (root / TINY).read_text() == TINY_PATCHED and leftovers(root) == []


def test_a_base_that_does_not_fit_stops_the_apply_command(tmp_path):
    """What Ascend's flow does with a wrong base (a reject, a stop): the kit's ``check`` says it first."""
    kit = exported_kit(tmp_path)
    root = tmp_path / "ascend-root"
    shutil.copytree(kit.source, root)
    (root / TINY).write_text(TINY_BASE.replace("VALUE = 1\n", "VALUE = 3\n"))
    result = apply_like_ascend(export_into(root, BASE_KEY, kit.patches))
    assert result.returncode == 1 and "failed:" in result.stdout


def test_real_v212_patch_applies_to_the_real_base_with_the_apply_command(tmp_path):
    source = _local_source()
    if source is None:
        pytest.skip("no local upstream copy: set PYTORCH_SRC or put the 0099ec9 file under .upstream/pytorch-0099ec9")
    data = manifest.load(PATCHES_DIR / manifest.MANIFEST_NAME)
    [patch] = patches.select(PATCHES_DIR, base_keys=["v2.12"])
    base = derive.resolve_base(source, patch, data)
    root = tmp_path / "pytorch"
    (root / TARGET).parent.mkdir(parents=True)
    (root / TARGET).write_bytes(base.data)
    result = apply_like_ascend(export_into(root, "v2.12", PATCHES_DIR))
    assert result.returncode == 0, result.stdout + result.stderr
    assert leftovers(root) == [] and sorted(os.listdir(root / "test" / "functorch")) == [Path(TARGET).name]
    patched = (root / TARGET).read_text()
    assert "device_type = _resolve_device_type()" in patched and "@requires_cuda" not in patched
    if base.blob == data["patches"][patch.name]["base_blob"]:  # derived from the 0099ec9 file: the real base
        assert derive.git_blob(patched.encode()) == patch.result_blob


ASCEND_REPO_ENV = "TORCH_NPU_TESTING_ASCEND_REPO"
MERGED = "test_upstream/test/functorch/test_aot_joint_with_descriptors.py.patch"


def ascend_file(repo, branch, path):
    """``path`` at ``branch`` of an Ascend/pytorch clone or bare git dir (local branch or origin/...), or None."""
    for ref in (branch, f"origin/{branch}"):
        shown = subprocess.run(["git", "-C", str(repo), "show", f"{ref}:{path}"], capture_output=True, check=False)
        if shown.returncode == 0:
            return shown.stdout
    return None


@pytest.mark.parametrize("branch", ["v2.12.0", "v2.11.0"])
def test_ascend_merged_patch_gives_its_post_image_on_the_derived_base(tmp_path, branch):
    source, repo = _local_source(), os.environ.get(ASCEND_REPO_ENV)
    if source is None or not repo:
        pytest.skip(f"needs a local 0099ec9 upstream copy (PYTORCH_SRC or .upstream/pytorch-0099ec9) and "
                    f"${ASCEND_REPO_ENV} (an Ascend/pytorch clone)")
    merged = ascend_file(repo, branch, MERGED)
    if merged is None:
        pytest.skip(f"{repo} has no {MERGED} at {branch}")
    data = manifest.load(PATCHES_DIR / manifest.MANIFEST_NAME)
    [patch] = patches.select(PATCHES_DIR, base_keys=["v2.12"])
    base = derive.resolve_base(source, patch, data)
    if base.blob != data["patches"][patch.name]["base_blob"]:
        pytest.skip(f"{source} is not the 0099ec9 file: its derived base is {base.blob[:12]}, not the real one")
    root = tmp_path / "pytorch"
    (root / TARGET).parent.mkdir(parents=True)
    (root / TARGET).write_bytes(base.data)
    (root / MERGED).parent.mkdir(parents=True)
    (root / MERGED).write_bytes(merged)
    script = root / "test_upstream" / "apply_patch.sh"
    script.write_text(APPLY_SCRIPT)
    result = apply_like_ascend(script)
    assert result.returncode == 0 and "offset" not in result.stdout and "fuzz" not in result.stdout, result.stdout
    index = next(line for line in merged.decode().splitlines() if line.startswith("index "))
    before, after = index.split()[1].split("..")
    assert base.blob.startswith(before) and derive.git_blob((root / TARGET).read_bytes()).startswith(after)
    assert leftovers(root) == []
