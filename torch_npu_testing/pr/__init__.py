# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""``pr``: the whole Ascend pull-request description of one branch, generated from facts.

    python -m torch_npu_testing pr BRANCH --ascend DIR [--results DIR] [--out DIR]

- :mod:`.facts` gathers each fact from its source (target_apis.json, branches, the export plan, the test
  files, ``locate`` / ``search`` / ``docs`` through :mod:`.taskfacts`, the report through :mod:`.evidence`);
- :mod:`.checklist` ticks an item only from a checked fact;
- :mod:`.render` writes the Markdown in the template's section order;
- :mod:`.cli` writes ``pr-BRANCH.md`` and ``pr-BRANCH.json`` and sets the exit status.

``export BRANCH DEST`` names ``reports/pr-BRANCH.md`` afterwards and exits 1 when its facts list problems.
"""
from .cli import add_arguments, main  # noqa: F401
