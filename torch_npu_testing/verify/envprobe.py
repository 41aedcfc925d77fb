# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""The environment of one interpreter as DEST's files see it: the kit's ``probe`` (:mod:`torch_npu_testing.suite.probe`)
run by that interpreter with the same variables (the stand-in first, when asked), so Python, torch, torch_npu,
CANN and the device type and count are measured, not assumed."""
import json
import os

from .gradprobe import KIT_PARENT
from .runfile import execute


def probe_env(python, cwd, extra_env):
    """The probe's JSON document, or ``{"error": why}`` when it could not run."""
    env = dict(os.environ, **extra_env)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [env.get("PYTHONPATH"), KIT_PARENT]))
    rc, output, _ = execute([python, "-m", "torch_npu_testing", "probe", "--json"], cwd, env)
    lines = output.splitlines()
    start = next((index for index, line in enumerate(lines) if line == "{"), None)
    if rc != 0 or start is None:
        return {"error": f"probe exited {rc}: {output.strip()[-300:]}"}
    try:
        return json.loads("\n".join(lines[start:]))
    except ValueError as exc:
        return {"error": f"probe printed no JSON ({exc})"}
