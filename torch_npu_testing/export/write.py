# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Write a checked plan into the checkout: each changed file through :func:`..common.atomic.write_text_atomic`.

An existing file keeps its permission bits; an unchanged file is not touched. The planned bytes go
through the text writer decoded with ``surrogateescape``, which encodes them back the same way with no
newline translation, so any bytes (a patch that is not UTF-8, CRLF line ends) land exactly as planned.
"""
import os

from ..common.atomic import write_text_atomic


def write_plan(plan):
    for target in plan.targets:
        if target.action != "unchanged":
            write_text_atomic(os.path.join(plan.dest, target.rel_path),
                              target.content.decode("utf-8", "surrogateescape"))
