# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""``export``: write one Ascend branch's contribution into an Ascend/pytorch checkout.

    python -m torch_npu_testing export BRANCH DEST [--kit DIR] [--report PATH] [--dry-run]
    python -m torch_npu_testing export --list

Each Ascend/pytorch branch (``master``, ``v2.12.0``, ``v2.11.0``, ``v2.7.1``) gets one pull request. The
stages, one module each:

- :mod:`.branchmap`: which kit files a branch gets (``export_branches.json``), and what is left out, why;
- :mod:`.checkout`: DEST is the top of an Ascend/pytorch git checkout;
- :mod:`.inline`: the carried helpers (:mod:`torch_npu_testing.portable`, :mod:`torch_npu_testing.carried`)
  copied into a file by AST;
- :mod:`.convert`: one kit test file in Ascend's form (header, imports, carried helpers; docstring and
  tests unchanged), or the problems that prevent it;
- :mod:`.plan`: every target's bytes and action, all checks done before anything is written;
- :mod:`.write`: the plan written through temporary files;
- :mod:`.describe`: what is printed, including the branch's PR description (``pr`` command) and whether
  results back it;
- :mod:`.cli`: the options and the order of the stages.

The exported file depends on nothing outside torch, torch_npu and the standard library: inlining (not a
shared helper module in the Ascend tree) keeps each pull request one self-contained file per API that
runs however Ascend's CI launches it (``python FILE``, pytest, a runner importing it), with no module to
place on ``sys.path`` and nothing shared between files whose branches and reviews are separate.
"""
from .branchmap import BRANCHES_FILE, BRANCHES_FORMAT, branch_entry, list_branches, load_branch_map  # noqa: F401
from .cli import add_arguments, main  # noqa: F401
from .convert import KIT_HEADER, KIT_REFERENCE_RE, ascend_header, convert_test_file  # noqa: F401
from .describe import commit_title, description_name, find_description  # noqa: F401
from .inline import inline_helpers, merge_stdlib_imports  # noqa: F401
from .plan import Plan, Target, convert_branch_files, plan_export  # noqa: F401
