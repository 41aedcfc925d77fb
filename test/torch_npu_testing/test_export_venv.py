# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""SLOW (about half a minute): the kit's real files, exported, run green in a fresh venv without the kit.

Skipped unless ``TORCH_NPU_TESTING_EXPORT_VENV`` is set: ``1`` builds a throw-away venv, a path builds
(or reuses) a venv there. The venv holds only torch, numpy and expecttest (and what they depend on): by
default their installed distributions are linked in from this interpreter (no download, no pip); with
``TORCH_NPU_TESTING_EXPORT_VENV_TORCH`` set (e.g. ``torch==2.14.1``) pip installs that torch instead.
The exported files find a stand-in ``torch_npu`` (no NPU, ``torch_npu.testing.testcase`` = PyTorch's
TestCase) on PYTHONPATH, beside a ``torch_npu_testing`` module that raises on import, so a file that
still needed this kit would fail.

Every branch of the real branch map is exported from this checkout into a synthetic Ascend-like git
checkout (a refusal fails the test with its message); master's test files (a superset of the other
branches') are then run in one interpreter of that venv by a stdlib-only runner that reports each test
case's outcome as JSON, and every file must pass with at least one test.
"""
import json
import os
import re
import subprocess
import sys
import textwrap
from importlib import metadata

import pytest
from test_export import make_ascend, make_standin

from torch_npu_testing import export
from torch_npu_testing.__main__ import main as cli_main

KIT_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VENV_ENV = "TORCH_NPU_TESTING_EXPORT_VENV"
TORCH_SPEC_ENV = "TORCH_NPU_TESTING_EXPORT_VENV_TORCH"
WANTED = ("torch", "numpy", "expecttest")

pytestmark = pytest.mark.skipif(
    not os.environ.get(VENV_ENV),
    reason=f"slow fresh-venv run of the exported files: set {VENV_ENV}=1 (or a venv path) to run it")


def _site_packages(python):
    return subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()


def link_distributions(site, names):
    """Link each distribution in ``names``, and every distribution it requires, from this interpreter
    into ``site``; returns the distribution names linked."""
    todo, linked = list(names), set()
    while todo:
        name = re.sub(r"[-_.]+", "-", todo.pop()).lower()
        if name in linked:
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue  # a requirement for another platform or an extra this interpreter does not have
        linked.add(name)
        for requirement in dist.requires or []:
            if "extra ==" not in requirement:
                todo.append(re.match(r"[A-Za-z0-9_.-]+", requirement).group(0))
        for top in sorted({path.parts[0] for path in dist.files or [] if path.parts[0] != ".."}):
            target, link = str(dist.locate_file(top)), os.path.join(site, top)
            if top.endswith(".pth") or top == "__pycache__" or os.path.lexists(link) or not os.path.exists(target):
                continue
            os.symlink(target, link)
    return linked


def venv_python(tmp_path_factory):
    setting = os.environ[VENV_ENV]
    root = str(tmp_path_factory.mktemp("venv") / "venv") if setting == "1" else os.path.abspath(setting)
    python = os.path.join(root, "bin", "python")
    ready = os.path.exists(python) and subprocess.run(
        [python, "-c", "import torch, expecttest, numpy"], capture_output=True, check=False).returncode == 0
    if not ready:
        base = getattr(sys, "_base_executable", None) or sys.executable
        spec = os.environ.get(TORCH_SPEC_ENV)
        subprocess.run([base, "-m", "venv"] + ([] if spec else ["--without-pip"]) + [root], check=True)
        if spec:
            subprocess.run([python, "-m", "pip", "install", "-q", spec, "numpy", "expecttest"], check=True)
        else:
            link_distributions(_site_packages(python), WANTED)
    return python


# Runs test files by path in one interpreter (no kit there) and prints one JSON line of per-case outcomes.
RUNNER = textwrap.dedent('''
    import importlib.util, json, sys, unittest

    class Recorder(unittest.TestResult):
        def __init__(self):
            super().__init__()
            self.cases = []

        def addSuccess(self, test):
            self.cases.append((test.id(), "passed", ""))

        def addFailure(self, test, err):
            self.cases.append((test.id(), "failed", self._exc_info_to_string(err, test)))

        def addError(self, test, err):
            self.cases.append((test.id(), "error", self._exc_info_to_string(err, test)))

        def addSkip(self, test, reason):
            self.cases.append((test.id(), "skipped", reason))

        def addSubTest(self, test, subtest, err):
            if err is not None:
                kind = "failed" if issubclass(err[0], test.failureException) else "error"
                self.cases.append((subtest.id(), kind, self._exc_info_to_string(err, test)))

    outcomes = {}
    for index, path in enumerate(sys.argv[1:]):
        spec = importlib.util.spec_from_file_location(f"exported_{index}", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        result = Recorder()
        unittest.defaultTestLoader.loadTestsFromModule(module).run(result)
        outcomes[path] = result.cases
    print(json.dumps(outcomes))
''')


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
    paths = []
    for rel in branch_map["branches"]["master"]["test_files"]:
        path = os.path.join(str(exported["master"]), rel)
        with open(path) as handle:
            assert not re.search(r"torch[_-]npu[_-]testing", handle.read(), re.IGNORECASE), rel
        paths.append(path)
    runner = tmp_path / "run_exported.py"
    runner.write_text(RUNNER)
    run = subprocess.run([python, str(runner), *paths], capture_output=True, text=True, env=env,
                         cwd=str(exported["master"]), timeout=900, check=False)
    assert run.returncode == 0 and run.stdout.strip(), run.stderr[-6000:]
    outcomes = json.loads(run.stdout.strip().splitlines()[-1])
    lines = []
    for path in paths:
        cases = outcomes[path]
        bad = [f"{case_id}: {kind}\n{detail}" for case_id, kind, detail in cases if kind in ("failed", "error")]
        passed = sum(1 for _, kind, _ in cases if kind == "passed")
        assert not bad and passed > 0, f"{path}:\n" + "\n".join(bad)[-6000:]
        skipped = sum(1 for _, kind, _ in cases if kind == "skipped")
        lines.append(f"{os.path.relpath(path, str(exported['master']))}: {passed} passed, 0 failed, {skipped} skipped")
    with capsys.disabled():
        print("\nexported files in a fresh venv (" + python + "):\n  " + "\n  ".join(lines))
