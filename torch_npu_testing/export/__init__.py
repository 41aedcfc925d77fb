# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""``export``: add the kit's tests to the files of one Ascend/pytorch branch, keeping everything merged there.

    python -m torch_npu_testing export BRANCH DEST [--api NAME]... [--kit DIR] [--dry-run]
    python -m torch_npu_testing export --list [--api NAME]...

Each kit test file goes to the same path in DEST. A file the branch has keeps every line of theirs; the
kit's tests, with the small carried helper they use, are one marked block before their main guard, renamed
on any name clash, replaced in place by a re-export. A file the branch lacks is created. Upstream patches
go only where the branch keeps them (``test_upstream/`` on v2.12.0 and v2.11.0). The stages:

- :mod:`.plan`: what a branch / API set gets (from :mod:`..common.table`) and every file's bytes;
- :mod:`.kitfile`: a kit test file, read by AST; :mod:`.carry`: the carried helper a file needs;
- :mod:`.merge`: their file plus the kit's block; :mod:`.rename`: renaming by AST and tokens;
- :mod:`.disabled`: kit tests Ascend's disabled-test lists would skip; :mod:`.checkout`: DEST checks;
- :mod:`.write`: the plan written; :mod:`.describe`: what is printed; :mod:`.cli`: options and order.

A merged file needs only torch, torch_npu and the standard library: Ascend CI runs it as
``python functorch/test_x.py`` from ``test/``, where no shared helper module can be imported.
"""
from .cli import add_arguments, main  # noqa: F401
from .describe import PR_FORMAT, description_name  # noqa: F401
from .plan import ExportTarget, Plan, Selection, plan_at_ref, plan_export, select  # noqa: F401
