# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""A merged file runs the way Ascend CI runs it: ``cd test && python run_test.py -v -i functorch/test_x``.

The stand-in torch_npu (torch_npu_testing/standin) is built into a wheel and pip-installed into a venv
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
import json
import os
import shutil
import site
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from export_repo import AOT, CONFIG, FIXTURES, FUNCTORCH_SHAPE, GRAD, NPU_SHAPE, VMAP, clone, git, make_kit, make_origin

from torch_npu_testing.__main__ import main as cli_main
from torch_npu_testing import standin
from torch_npu_testing.export import merge, plan

DIST_INFO = "torch_npu-0.0.0+standin.dist-info"
STANDIN = Path(standin.FOLDER)


def build_wheel(folder):
    """A wheel of the stand-in package, with the ``torch.backends`` entry point (no build backend needed)."""
    files = {str(p.relative_to(STANDIN)): p.read_bytes()
             for p in sorted((STANDIN / "torch_npu").rglob("*")) if p.is_file() and "__pycache__" not in p.parts}
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


def run_test(python, checkout, module, *unittest_args, **extra_env):
    env = {key: value for key, value in os.environ.items() if not key.startswith(("TORCH_NPU_TESTING", "PYTHON"))}
    env.pop("TORCH_DEVICE_BACKEND_AUTOLOAD", None)
    env.update(extra_env)
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


# --------------------------------------------------------------------------- on a host that reports an NPU
FAMILIES = {CONFIG: "torch.testing._internal.common_utils", VMAP: "torch.testing._internal.common_utils",
            GRAD: "torch_npu.testing.testcase", AOT: "torch_npu.testing.testcase"}
NPU_REPORTED = {"TORCH_NPU_TESTING_STANDIN_NPU": "available"}
CLASS_CHECK = "This test class should extend from torch.testing._internal.common_utils.TestCase"
# the kit's tests that do not touch the device: the stand-in reports an NPU but has no kernels
OFF_DEVICE = ("-k", "test_config_patch_reaches_the_flag", "-k", "test_grad_mode_is_per_thread")


@pytest.fixture(scope="module")
def families(tmp_path_factory):
    """Master with both runner families in two import forms each (VMAP: ``common_utils.run_tests()``, AOT:
    torch_npu's ``run_tests`` aliased), committed, then the small kit exported into all four files."""
    root = tmp_path_factory.mktemp("families")
    dest = clone(make_origin(root / "src"), root / "dest")
    shutil.copyfile(FIXTURES / "ascend_functorch" / "test_functorch_module_runner_shape.py", dest / VMAP)
    shutil.copyfile(FIXTURES / "ascend_npu" / "test_npu_aliased_runner_shape.py", dest / AOT)
    git(dest, "commit", "-qam", "the other import forms of the two runners")
    assert cli_main(["export", "master", str(dest), "--kit", str(make_kit(root / "k"))]) == 0
    return dest


def _module(rel):
    return rel[len("test/"):-len(".py")]


@pytest.mark.parametrize("rel", list(FAMILIES), ids=lambda rel: rel.split("/")[-1])
def test_with_an_npu_reported_each_merged_file_passes_its_runners_class_check(ci_python, families, rel):
    text = (families / rel).read_text()
    assert f'\nRUNNER_MODULE = "{FAMILIES[rel]}"  # ' in text
    result = run_test(ci_python, families, _module(rel), *OFF_DEVICE, **NPU_REPORTED)
    output = result.stdout + result.stderr
    assert result.returncode == 0 and CLASS_CHECK not in output, output[-3000:]
    assert "Ran 2 tests" in output and "\nOK" in output
    bases = load_bases(ci_python, families, rel, NPU_REPORTED)
    assert bases["device"] == "npu" and f"{FAMILIES[rel]}.TestCase" in bases["kit"]


@pytest.mark.parametrize("rel", [GRAD, AOT], ids=lambda rel: rel.split("/")[-1])
def test_without_an_npu_a_torch_npu_runner_file_still_gets_torch_npus_base(ci_python, families, rel):
    bases = load_bases(ci_python, families, rel, {})
    assert bases["device"] == "cpu" and "torch_npu.testing.testcase.TestCase" in bases["kit"]
    assert "torch.testing._internal.common_utils.TestCase" not in bases["kit"]


@pytest.mark.parametrize("rel", [CONFIG, VMAP], ids=lambda rel: rel.split("/")[-1])
def test_control_todays_device_base_fails_pytorchs_class_check_with_an_npu_reported(ci_python, families, rel):
    """Today's export carried ``RUNNER_MODULE = None`` semantics (the device's pair): with an NPU, torch_npu's
    TestCase, which PyTorch's runner refuses before any test runs."""
    text = (families / rel).read_text()
    control = families / rel.replace("_api.py", "_control_api.py")
    control.write_text(text.replace(f'RUNNER_MODULE = "{FAMILIES[rel]}"', "RUNNER_MODULE = None"))
    try:
        result = run_test(ci_python, families, _module(str(control.relative_to(families))), *OFF_DEVICE,
                          **NPU_REPORTED)
        quiet = run_test(ci_python, families, _module(str(control.relative_to(families))), *OFF_DEVICE)
    finally:
        control.unlink()
    output = result.stdout + result.stderr
    assert result.returncode != 0 and f"TestKitSmallFixtureApi - failed. {CLASS_CHECK}" in output, output[-3000:]
    assert "Ran 2 tests" not in output
    assert quiet.returncode == 0 and "Ran 2 tests" in quiet.stderr     # without an NPU it was never seen


LOAD_BASES = ("import importlib.util, json, sys\n"
              "spec = importlib.util.spec_from_file_location('merged', sys.argv[1])\n"
              "module = importlib.util.module_from_spec(spec)\n"
              "spec.loader.exec_module(module)\n"
              "device = getattr(module, 'kit_device_type', getattr(module, 'device_type', None))()\n"
              "mro = module.TestKitSmallFixtureApi.__mro__\n"
              "print(json.dumps({'device': device, 'kit': [f'{k.__module__}.{k.__name__}' for k in mro]}))\n")


def load_bases(python, checkout, rel, extra_env):
    """The merged file's resolved device and the classes of its kit test class, loaded from ``test/``."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(("TORCH_NPU_TESTING", "PYTHON"))}
    env.update(extra_env, TORCH_DEVICE_BACKEND_AUTOLOAD="1")
    result = subprocess.run([str(python), "-c", LOAD_BASES, rel[len("test/"):]], cwd=checkout / "test", env=env,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.splitlines()[-1])
