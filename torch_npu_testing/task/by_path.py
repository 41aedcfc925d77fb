# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Run one of the task tools' standalone scripts by path in another interpreter and read its JSON answer.

``locate`` (``where_defined.py``) and ``new``'s OpInfo lookup (``opinfo_lookup.py``) ask interpreters that
need torch but not this kit: the script runs by path, from its own folder, without ``PYTHONPATH`` and with
backend autoload off unless the caller set it (torch_npu without CANN breaks ``import torch``), and prints
its answer as JSON on its last stdout line.
"""
import json
import os
import subprocess


def run_json(python, script, args, timeout_s):
    """``(answer, None)``, or ``(None, why)``: stderr's last line, else the exception, when it fails."""
    env = dict(os.environ)
    env.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")
    env.pop("PYTHONPATH", None)
    completed = None
    try:
        completed = subprocess.run([os.path.abspath(python), script] + list(args), capture_output=True, text=True,
                                   env=env, timeout=timeout_s, check=False, cwd=os.path.dirname(script))
        return json.loads(completed.stdout.strip().splitlines()[-1]), None
    except (subprocess.TimeoutExpired, ValueError, IndexError, OSError) as exc:
        last = (completed.stderr or "").strip().splitlines()[-1:] if completed is not None else []
        return None, last[0] if last else str(exc)
