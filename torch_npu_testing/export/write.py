# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Write a checked plan into the checkout: each changed file through a temporary file and ``os.replace``.

An existing file keeps its permission bits; an unchanged file is not touched.
"""
import os
import tempfile


def write_plan(plan):
    for target in plan.targets:
        if target.action == "unchanged":
            continue
        path = os.path.join(plan.dest, target.rel_path)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        handle, tmp = tempfile.mkstemp(prefix=".export-", dir=os.path.dirname(path))
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(target.content)
            mode = os.stat(path).st_mode & 0o777 if os.path.exists(path) else 0o644
            os.chmod(tmp, mode)
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
