# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""``pr``: the Ascend pull-request description of one branch (and, with ``--api``, one task), from facts.

    python -m torch_npu_testing pr BRANCH --ascend DIR [--api NAME ...] [--results DIR] [--out DIR]

- :mod:`.template` reads Ascend's template from master through git and places the task sections;
- :mod:`.facts` gathers each fact from its source (the one table, export's plan via :mod:`.planfacts`,
  ``locate`` / ``search`` / ``docs`` via :mod:`.taskfacts`, the report via :mod:`.evidence`);
- :mod:`.checklist` ticks the template's boxes and the kit's checks only from facts;
- :mod:`.render` writes the Markdown (bodies in :mod:`.sections` and :mod:`.task_sections`, the log in
  :mod:`.log`), fitted into 60,000 characters by :mod:`.fit`;
- :mod:`.cli` writes ``pr-BRANCH.md`` / ``.json`` and the attachment ``evidence-BRANCH.md`` / ``.json``.

``export BRANCH DEST`` names ``reports/pr-BRANCH.md`` afterwards and exits 1 when its facts list problems.
"""
from .cli import add_arguments, main  # noqa: F401
