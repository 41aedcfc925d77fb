# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""A merged file runs the way Ascend CI runs it: ``cd test && python run_test.py -v -i functorch/test_x``.

The stand-in torch_npu (fixtures/standin_torch_npu) is built into a wheel and pip-installed into a venv
that sees this interpreter's torch (through a ``.pth`` line, not as a site dir, so the kit itself is not
importable there); its ``torch.backends`` entry point makes ``import torch`` autoload it, as
``TORCH_DEVICE_BACKEND_AUTOLOAD=1`` does for the real torch_npu. ``run_test.py`` (fixtures/ascend_ci,
written to Ascend's invocation) imports ``torch_npu.utils._path_manager`` and calls
``torch.distributed.is_hccl_available()``. Selecting the kit's classes with ``-- -k KitClass`` the run
exits 0; a control with one failing kit test exits non-zero; the ids unittest's loader loads from the merged
files (the stand-in's runner is unittest.main, as torch_npu's is: it cannot list) still include every id of
the fixtures' own tests.
"""
import ast
import base64
import hashlib
import os
import site
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from export_repo import CONFIG, FIXTURES, FUNCTORCH_SHAPE, GRAD, NPU_SHAPE, clone, make_kit, make_origin

from torch_npu_testing.__main__ import main as cli_main
from torch_npu_testing.export import merge, plan

DIST_INFO = "torch_npu-0.0.0+standin.dist-info"


def build_wheel(folder):
    """A wheel of the stand-in package, with the ``torch.backends`` entry point (no build backend needed)."""
    files = {str(p.relative_to(FIXTURES / "standin_torch_npu")): p.read_bytes()
             for p in sorted((FIXTURES / "standin_torch_npu").rglob("*.py"))}
    files[f"{DIST_INFO}/METADATA"] = b"Metadata-Version: 2.1\nName: torch-npu\nVersion: 0.0.0+standin\n"
    files[f"{DIST_INFO}/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: kit-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    files[f"{DIST_INFO}/entry_points.txt"] = b"[torch.backends]\ntorch_npu = torch_npu:_autoload\n"
    record = []
    for name, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(data)}")
    record.append(f"{DIST_INFO}/RECORD,,")
    files[f"{DIST_INFO}/RECORD"] = ("\n".join(record) + "\n").encode()
    wheel = Path(folder) / "torch_npu-0.0.0+standin-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return wheel


@pytest.fixture(scope="module")
def ci_python(tmp_path_factory, ):
    """The python of a venv with torch (this interpreter's) and the pip-installed stand-in torch_npu."""
    root = tmp_path_factory.mktemp("ci_venv")
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    Path(purelib, "outer_torch.pth").write_text("".join(p + "\n" for p in site.getsitepackages()))
    pip = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-index",
                          "--no-deps", str(build_wheel(root))], capture_output=True, text=True, check=False)
    assert pip.returncode == 0, pip.stderr
    return python


@pytest.fixture(scope="module")
def merged(tmp_path_factory):
    """A clone of the fake Ascend repo with the small kit file (and a failing control) merged in."""
    root = tmp_path_factory.mktemp("ci_repo")
    origin = make_origin(root / "src")
    dest = clone(origin, root / "dest")
    kit = make_kit(root / "k")
    control = make_kit(root / "control", "kit_failing_api.py")
    assert cli_main(["export", "master", str(dest), "--kit", str(kit), "--api", "torch._functorch.config.patch",
                     "--api", "torch.autograd.grad_mode.set_grad_enabled.clone"]) == 0
    failing = clone(origin, root / "failing")
    assert cli_main(["export", "master", str(failing), "--kit", str(control), "--api",
                     "torch.autograd.grad_mode.set_grad_enabled.clone"]) == 0
    return dest, failing


def run_test(python, checkout, module, *unittest_args):
    env = {key: value for key, value in os.environ.items() if not key.startswith(("TORCH_NPU_TESTING", "PYTHON"))}
    env.pop("TORCH_DEVICE_BACKEND_AUTOLOAD", None)
    command = [str(python), "run_test.py", "-v", "-i", module, "--init_method=1"]
    if unittest_args:
        command += ["--", *unittest_args]
    return subprocess.run(command, cwd=checkout / "test", env=env, capture_output=True, text=True, timeout=600)


LOAD_IDS = ("import importlib.util, sys, unittest\n"
            "spec = importlib.util.spec_from_file_location('merged', sys.argv[1])\n"
            "module = importlib.util.module_from_spec(spec)\n"
            "spec.loader.exec_module(module)\n"
            "todo = [unittest.defaultTestLoader.loadTestsFromModule(module)]\n"
            "while todo:\n"
            "    item = todo.pop()\n"
            "    if isinstance(item, unittest.TestSuite):\n"
            "        todo.extend(item)\n"
            "    else:\n"
            "        print('.'.join(item.id().split('.')[-2:]))\n")


def load_ids(python, checkout, rel):
    """``Class.test_x`` of every test unittest's loader finds in the merged file, loaded from ``test/``."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(("TORCH_NPU_TESTING", "PYTHON"))}
    env["TORCH_DEVICE_BACKEND_AUTOLOAD"] = "1"
    return subprocess.run([str(python), "-c", LOAD_IDS, rel[len("test/"):]], cwd=checkout / "test", env=env,
                          capture_output=True, text=True, timeout=600)


def test_the_venv_autoloads_the_standin_and_lacks_the_kit(ci_python):
    probe = ("import torch, importlib.util; print(torch.npu.is_available(), torch.distributed.is_hccl_available(), "
             "importlib.util.find_spec('torch_npu_testing') is None)")
    env = dict(os.environ, TORCH_DEVICE_BACKEND_AUTOLOAD="1")
    result = subprocess.run([str(ci_python), "-c", probe], capture_output=True, text=True, env=env, cwd="/")
    assert result.stdout.split() == ["False", "False", "True"], result.stderr


@pytest.mark.parametrize("rel", [GRAD, CONFIG])
def test_kit_classes_pass_under_run_test_and_the_fixture_ids_still_load(ci_python, merged, rel):
    dest, _ = merged
    module = rel[len("test/"):-len(".py")]
    result = run_test(ci_python, dest, module, "-k", "TestKitSmallFixtureApi")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Ran 3 tests" in result.stderr and "OK" in result.stderr
    listed = load_ids(ci_python, dest, rel)
    assert listed.returncode == 0, listed.stderr[-3000:]
    shape = NPU_SHAPE if rel == GRAD else FUNCTORCH_SHAPE
    fixture_ids = set(merge.test_ids(ast.parse(shape.read_text())))
    loaded = set(listed.stdout.split())
    assert fixture_ids <= loaded, listed.stdout
    assert {"TestKitSmallFixtureApi.test_doubled_on_the_device"} <= loaded


def test_a_failing_kit_test_makes_the_run_fail(ci_python, merged):
    _, failing = merged
    result = run_test(ci_python, failing, GRAD[len("test/"):-len(".py")], "-k", "TestKitFailingFixtureApi")
    assert result.returncode != 0 and "deliberately wrong expectation" in result.stderr


def test_merged_files_import_nothing_of_the_kit(merged):
    dest, _ = merged
    for rel in (GRAD, CONFIG):
        tree = ast.parse((dest / rel).read_text())
        modules = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
        modules |= {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
        assert not any(name and name.startswith("torch_npu_testing") for name in modules)
        assert plan.CARRIED_LIMIT >= 100
