# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""The four commands that start a new API task: ``locate``, ``search``, ``docs`` and ``new``.

Each prints Markdown for one section of the Ascend PR template and, with ``--json PATH``, writes the
document the ``pr`` command reads. None of them imports torch unless it needs it (``locate`` for the
current interpreter, ``search`` / ``docs`` to resolve re-exports and kinds when torch is importable).
"""
