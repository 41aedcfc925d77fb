# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""SLOW (about a minute, ~1 GB of disk): the kit's real files, exported, run green in a fresh venv.

Skipped unless ``TORCH_NPU_TESTING_EXPORT_VENV`` is set: ``1`` builds a throw-away venv, a path builds
(or reuses) a venv there. The venv gets only torch (``TORCH_NPU_TESTING_EXPORT_VENV_TORCH``, default
``torch==2.13.0``), numpy and expecttest; the exported files find a stand-in ``torch_npu`` (no NPU,
``torch_npu.testing.testcase`` = PyTorch's TestCase) on PYTHONPATH, beside a ``torch_npu_testing``
module that raises on import, so a file that still needed this kit would fail.

Every branch of the real branch map is exported from this checkout into a synthetic Ascend-like git
checkout (a refusal fails the test with its message); master's test files (a superset of the other
branches') are then run and must pass with at least one test each.
"""
import os
import re
import subprocess
import sys

import pytest
from test_export import make_ascend, make_standin

from torch_npu_testing import export
from torch_npu_testing.__main__ import main as cli_main

KIT_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VENV_ENV = "TORCH_NPU_TESTING_EXPORT_VENV"
TORCH_SPEC_ENV = "TORCH_NPU_TESTING_EXPORT_VENV_TORCH"

pytestmark = pytest.mark.skipif(
    not os.environ.get(VENV_ENV),
    reason=f"slow fresh-venv run of the exported files: set {VENV_ENV}=1 (or a venv path) to run it")


def venv_python(tmp_path_factory):
    setting = os.environ[VENV_ENV]
    root = str(tmp_path_factory.mktemp("venv") / "venv") if setting == "1" else os.path.abspath(setting)
    python = os.path.join(root, "bin", "python")
    ready = os.path.exists(python) and subprocess.run(
        [python, "-c", "import torch, expecttest, numpy"], capture_output=True, check=False).returncode == 0
    if not ready:
        base = getattr(sys, "_base_executable", None) or sys.executable
        subprocess.run([base, "-m", "venv", root], check=True)
        spec = os.environ.get(TORCH_SPEC_ENV, "torch==2.13.0")
        subprocess.run([python, "-m", "pip", "install", "-q", spec, "numpy", "expecttest"], check=True)
    return python


def summary(output):
    """``(tests, failures, errors, skipped)`` from unittest's closing lines, or None."""
    ran = re.findall(r"^Ran (\d+) tests? in ", output, re.MULTILINE)
    verdict = re.findall(r"^(OK|FAILED)(?: \(([^)]*)\))?\s*$", output, re.MULTILINE)
    if not ran or not verdict:
        return None
    counts = {key.strip(): int(value) for key, value in re.findall(r"([a-z ]+)=(\d+)", verdict[-1][1] or "")}
    return int(ran[-1]), counts.get("failures", 0), counts.get("errors", 0), counts.get("skipped", 0)


def test_exported_kit_files_run_green_in_a_fresh_venv(tmp_path, tmp_path_factory, capsys, clean_env):
    python = venv_python(tmp_path_factory)
    standin = make_standin(tmp_path / "standin")
    branch_map = export.load_branch_map()
    exported = {}
    for branch in branch_map["branches"]:
        checkout = make_ascend(tmp_path / f"ascend-{branch}")
        code = cli_main(["export", branch, str(checkout), "--kit", KIT_ROOT])
        _, err = capsys.readouterr()
        assert code == 0, f"export {branch} refused: {err.strip()}"
        exported[branch] = checkout
        for rel in branch_map["branches"][branch]["upstream_patches"]:
            with open(os.path.join(KIT_ROOT, rel), "rb") as kit_file, \
                    open(os.path.join(str(checkout), rel), "rb") as exported_file:
                assert exported_file.read() == kit_file.read(), f"{branch}: {rel} is not byte-identical"

    env = clean_env(PYTHONPATH=str(standin), TORCH_DEVICE_BACKEND_AUTOLOAD="0")
    env.pop("PYTHONHOME", None)
    lines = []
    for rel in branch_map["branches"]["master"]["test_files"]:
        path = os.path.join(str(exported["master"]), rel)
        with open(path) as handle:
            assert not re.search(r"torch[_-]npu[_-]testing", handle.read(), re.IGNORECASE), rel
        run = subprocess.run([python, path, "-v"], capture_output=True, text=True, env=env,
                             cwd=str(exported["master"]), timeout=900, check=False)
        output = run.stdout + run.stderr
        counts = summary(output)
        assert run.returncode == 0 and counts and counts[0] > 0, f"{rel}:\n{output[-6000:]}"
        tests, failures, errors, skipped = counts
        lines.append(f"{rel}: {tests - skipped} passed, {failures + errors} failed, {skipped} skipped")
    with capsys.disabled():
        print("\nexported files in a fresh venv (" + python + "):\n  " + "\n  ".join(lines))
