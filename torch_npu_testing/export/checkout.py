# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Is DEST the top of an Ascend/pytorch git checkout? (checked before anything is written)

An Ascend/pytorch checkout has ``setup.py`` naming torch_npu, ``torch_npu/__init__.py`` and ``test/npu/``.
DEST must be the top of its git work tree, so that the kit's paths land where Ascend keeps them.
"""
import os

from ..common.errors import UsageError
from ..common import gitutil


def check_ascend_checkout(dest):
    """The absolute path of DEST when it is the top of an Ascend/pytorch git work tree, else UsageError."""
    if not os.path.isdir(dest):
        raise UsageError(f"{dest} is not a directory (give the top of an Ascend/pytorch checkout)")
    dest = os.path.realpath(dest)
    top = gitutil.run_git(["rev-parse", "--show-toplevel"], dest, confine=False)
    if top.returncode != 0:
        raise UsageError(f"{dest} is not a git work tree (give the top of an Ascend/pytorch checkout)")
    toplevel = os.path.realpath(top.stdout.strip())
    if toplevel != dest:
        raise UsageError(f"{dest} is inside the git work tree {toplevel}; give the top of the checkout")
    missing = []
    setup_py = os.path.join(dest, "setup.py")
    if not os.path.isfile(setup_py):
        missing.append("setup.py")
    else:
        with open(setup_py, encoding="utf-8", errors="replace") as handle:
            if "torch_npu" not in handle.read():
                missing.append("setup.py naming torch_npu")
    if not os.path.isfile(os.path.join(dest, "torch_npu", "__init__.py")):
        missing.append("torch_npu/__init__.py")
    if not os.path.isdir(os.path.join(dest, "test", "npu")):
        missing.append("test/npu/")
    if missing:
        raise UsageError(f"{dest} does not look like an Ascend/pytorch checkout (missing: {', '.join(missing)})")
    return dest
