# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""``ensure-torch-npu``: install a branch's torch_npu wheel next to its torch, without dependencies.

Why not a plain tox ``deps`` line: torch_npu wheels pin torch builds that PyPI does not carry (the
2.7.1 and 2.11.0 wheels require ``torch==2.7.1+cpu`` / ``torch==2.11.0+cpu``), so pip's resolver refuses
them next to PyPI's torch. The env installs its torch first, then this command adds torch_npu with
``--no-deps``; when the wanted version is already there it does nothing (a warm env costs no pip call).

The spec comes from ``--spec`` or ``$TORCH_NPU_TESTING_TORCH_NPU_SPEC``: a requirement such as
``torch_npu==2.12.0.post3`` or a path to a wheel. An empty spec means "no torch_npu in this env".
"""
import os
import re
import subprocess
import sys
from importlib import metadata

from ..common.errors import UsageError

SPEC_ENV = "TORCH_NPU_TESTING_TORCH_NPU_SPEC"
_PINNED = re.compile(r"^\s*torch[_-]npu\s*==\s*([\w.+!-]+)\s*$", re.IGNORECASE)
_WHEEL = re.compile(r"^torch_npu-([^-]+)-", re.IGNORECASE)


def wanted_version(spec):
    """The exact version a spec asks for, or None when it cannot be known without pip."""
    if spec.endswith(".whl"):
        match = _WHEEL.match(os.path.basename(spec))
        return match.group(1) if match else None
    match = _PINNED.match(spec)
    return match.group(1) if match else None


def installed_version():
    try:
        return metadata.version("torch_npu")
    except metadata.PackageNotFoundError:
        return None


def pip_command(spec, python=sys.executable):
    return [python, "-m", "pip", "install", "--no-deps", spec]


def ensure(spec, run=subprocess.call, out=None):
    out = sys.stdout if out is None else out  # looked up per call, so a redirected stdout is honoured
    spec = (spec or "").strip()
    if not spec:
        print("ensure-torch-npu: no torch_npu requested for this env (empty spec)", file=out)
        return 0
    if spec.endswith(".whl") and not os.path.isfile(spec):
        raise UsageError(f"torch_npu wheel not found: {spec}")
    want, have = wanted_version(spec), installed_version()
    if want is not None and have == want:
        print(f"ensure-torch-npu: torch_npu {have} already installed", file=out)
        return 0
    print(f"ensure-torch-npu: installing {spec} with --no-deps (installed: {have or 'none'})", file=out)
    out.flush()
    return run(pip_command(spec))


def add_arguments(parser):
    parser.add_argument("--spec", default=None,
                        help=f"requirement or wheel path (default: ${SPEC_ENV}; empty: install nothing)")


def main(args):
    spec = args.spec if args.spec is not None else os.environ.get(SPEC_ENV, "")
    return ensure(spec)
