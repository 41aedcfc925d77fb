# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Fake Ascend/pytorch repositories and kits for the export tests, built from fixtures/ with real git.

``make_origin(root)`` commits the fixtures in Ascend's two shapes at the four API paths on branches
``master`` (all four, a disabled-tests list naming a kit test), ``v2.12.0`` (all four and a merged
upstream patch) and ``v2.7.1`` (grad-mode and config files only); ``clone(origin, dest)`` makes a normal
clone (only master local). ``make_kit(root)`` is a kit holding the small fixture kit files at the table's
paths.
"""
import shutil
import subprocess
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent / "fixtures"
GRAD = "test/npu/test_locally_disabling_gradient_omputation.py"
CONFIG = "test/functorch/test_functorch_config_api.py"
VMAP = "test/functorch/test_vmap_add_batch_dim_api.py"
AOT = "test/functorch/test_aot_joint_with_descriptors_api.py"
PATCH = "test_upstream/test/functorch/test_aot_joint_with_descriptors.py.patch"
KIT_PATCH = "test_upstream/v2.12/test/functorch/test_aot_joint_with_descriptors.py.patch"
NPU_SHAPE = FIXTURES / "ascend_npu" / "test_grad_mode_shape.py"
FUNCTORCH_SHAPE = FIXTURES / "ascend_functorch" / "test_functorch_shape.py"
DISABLED = ('{"test_doubled_on_the_device (__main__.TestKitSmall)": ["", [""]],\n'
            ' "test_other (__main__.TestSomethingElse)": ["", [""]]}\n')


def git(cwd, *args):
    result = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False,
                            env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t",
                                 "GIT_COMMITTER_EMAIL": "t@e", "PATH": "/usr/bin:/bin", "HOME": str(cwd)})
    assert result.returncode == 0, (args, result.stderr)
    return result.stdout


def _put(root, rel, source):
    path = Path(root) / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(source, Path):
        shutil.copyfile(source, path)
    else:
        path.write_text(source)


def make_origin(root):
    origin = Path(root) / "origin"
    origin.mkdir(parents=True)
    git(origin, "init", "-q", "-b", "master")
    _put(origin, "setup.py", "from setuptools import setup\nsetup(name='torch_npu')\n")
    _put(origin, "torch_npu/__init__.py", "")
    _put(origin, "test/run_test.py", FIXTURES / "ascend_ci" / "run_test.py")
    _put(origin, GRAD, NPU_SHAPE)
    _put(origin, CONFIG, FUNCTORCH_SHAPE)
    git(origin, "add", "-A")
    git(origin, "commit", "-q", "-m", "v2.7.1 files")
    git(origin, "checkout", "-q", "-b", "v2.7.1")
    _put(origin, "version.txt", "2.7.1\n")
    git(origin, "add", "-A")
    git(origin, "commit", "-q", "-m", "v2.7.1 only")
    git(origin, "checkout", "-q", "master")
    _put(origin, VMAP, FUNCTORCH_SHAPE)
    _put(origin, AOT, FUNCTORCH_SHAPE)
    _put(origin, "test/unsupported_test_cases/.pytorch-disabled-tests.json", DISABLED)
    git(origin, "add", "-A")
    git(origin, "commit", "-q", "-m", "master files")
    git(origin, "checkout", "-q", "-b", "v2.12.0")
    _put(origin, PATCH, "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-merged\n+merged patch\n")
    git(origin, "add", "-A")
    git(origin, "commit", "-q", "-m", "v2.12.0 patch")
    git(origin, "checkout", "-q", "master")
    return origin


def clone(origin, dest, branch=None):
    git(Path(dest).parent, "clone", "-q", str(origin), str(dest))
    if branch:
        git(dest, "checkout", "-q", branch)
    return Path(dest)


def make_kit(root, kit_file="kit_small_api.py"):
    kit = Path(root) / "kit"
    for rel in (GRAD, CONFIG, VMAP, AOT):
        _put(kit, rel, FIXTURES / "kit" / kit_file)
    _put(kit, KIT_PATCH, "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-merged\n+the kit's patch\n")
    return kit
