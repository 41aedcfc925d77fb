# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Unit tests of ``upstream run --each-torch``: which releases run, where their venvs live, when a venv is
reused or (re)filled, and the bad inputs (one line, exit 2, nothing installed or written).

Creating a real venv with a real torch costs minutes, so :func:`interpreter_for` is driven with a
recording ``run`` that answers like pip and python would; the command line is run for real.
"""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from torch_npu_testing.common.errors import UsageError
from torch_npu_testing.upstream import torches

PATCH = "test/functorch/test_x.py.patch"


def test_releases_come_from_run_under_in_order_without_repeats():
    """The union of the selected patches' run_under lists, first appearance first."""
    data = {"patches": {PATCH: {"run_under": ["2.13.0", "2.14.1"]}, "b.patch": {"run_under": ["2.14.1", "2.15.0"]}}}
    assert torches.releases_to_run(data, [PATCH, "b.patch"]) == ["2.13.0", "2.14.1", "2.15.0"]
    assert torches.releases_to_run(data, ["b.patch"]) == ["2.14.1", "2.15.0"]


def test_requested_releases_win_over_the_manifest():
    data = {"patches": {PATCH: {"run_under": ["2.13.0"]}}}
    assert torches.releases_to_run(data, [PATCH], ["2.12.0"]) == ["2.12.0"]


@pytest.mark.parametrize("data, requested, message", [
    ({"patches": {PATCH: {}}}, None, "lists no run_under releases"),
    ({"patches": {PATCH: {"run_under": ["2.13"]}}}, None, "'2.13' is not of the form X.Y.Z"),
    ({"patches": {}}, ["latest"], "'latest' is not of the form X.Y.Z"),
])
def test_bad_release_lists_are_usage_errors(data, requested, message):
    with pytest.raises(UsageError, match=message):
        torches.releases_to_run(data, [PATCH], requested)


def test_spec_is_the_pinned_release_unless_overridden():
    """TORCH_NPU_TESTING_UPSTREAM_TORCH_<X_Y_Z> replaces the requirement (a wheel path, say)."""
    assert torches.spec_for("2.14.1", environ={}) == "torch==2.14.1"
    environ = {"TORCH_NPU_TESTING_UPSTREAM_TORCH_2_14_1": "/data/torch-2.14.1.whl"}
    assert torches.spec_for("2.14.1", environ=environ) == "/data/torch-2.14.1.whl"


class FakeTools:
    """Answers the commands interpreter_for runs: venv creation, pip install, `import torch`."""

    def __init__(self, torch_version=None, pip_ok=True, installs="2.14.1+cu128"):
        self.torch_version, self.pip_ok, self.installs, self.commands = torch_version, pip_ok, installs, []

    def __call__(self, command, **kwargs):
        self.commands.append(command)
        if command[1:3] == ["-m", "venv"]:
            python = Path(command[3]) / "bin" / "python"
            python.parent.mkdir(parents=True)
            python.write_text("")
            return subprocess.CompletedProcess(command, 0, "", "")
        if command[1:4] == ["-m", "pip", "install"]:
            if self.pip_ok:
                self.torch_version = self.installs
            return subprocess.CompletedProcess(command, 0 if self.pip_ok else 1, "", "")
        if command[1] == "-c":
            ok = self.torch_version is not None
            return subprocess.CompletedProcess(command, 0 if ok else 1, f"{self.torch_version}\n" if ok else "", "")
        raise AssertionError(f"unexpected command {command}")


def test_missing_venv_is_created_and_filled(tmp_path):
    tools, said = FakeTools(), []
    python = torches.interpreter_for("2.14.1", tmp_path, run=tools, say=said.append, environ={})
    assert python == tmp_path / "torch-2.14.1" / "bin" / "python"
    pip = [command for command in tools.commands if command[1:3] == ["-m", "pip"]]
    assert len(pip) == 1 and "torch==2.14.1" in pip[0] and "expecttest" in pip[0]
    assert any("creating" in line for line in said)


def test_venv_with_the_right_torch_is_reused_without_pip(tmp_path):
    torches.interpreter_for("2.14.1", tmp_path, run=FakeTools(), say=lambda _: None, environ={})
    tools, said = FakeTools(torch_version="2.14.1+cu128"), []
    torches.interpreter_for("2.14.1", tmp_path, run=tools, say=said.append, environ={})
    assert not any(command[1:3] == ["-m", "pip"] for command in tools.commands)
    assert said == [f"upstream: torch 2.14.1: reusing {tmp_path / 'torch-2.14.1' / 'bin' / 'python'}"]


def test_venv_with_another_torch_is_refilled(tmp_path):
    torches.interpreter_for("2.14.1", tmp_path, run=FakeTools(), say=lambda _: None, environ={})
    tools = FakeTools(torch_version="2.13.0", installs="2.14.1")
    torches.interpreter_for("2.14.1", tmp_path, run=tools, say=lambda _: None, environ={})
    assert any(command[1:3] == ["-m", "pip"] for command in tools.commands)


def test_pip_failure_and_wrong_torch_after_install_are_usage_errors(tmp_path):
    with pytest.raises(UsageError, match=r"torch 2.14.1: `.* -m pip install .*` failed"):
        torches.interpreter_for("2.14.1", tmp_path, run=FakeTools(pip_ok=False), say=lambda _: None, environ={})
    with pytest.raises(UsageError, match="imports torch 2.13.0 after installing torch==2.14.1"):
        torches.interpreter_for("2.14.1", tmp_path / "b", run=FakeTools(installs="2.13.0"), say=lambda _: None,
                                environ={})


def _cli(args, cwd, clean_env, **env):
    return subprocess.run([sys.executable, "-m", "torch_npu_testing", "upstream", "run", *map(str, args)],
                          cwd=cwd, env=clean_env(**env), capture_output=True, text=True, timeout=120, check=False)


def test_without_source_each_torch_installs_nothing_and_records_the_skip(tmp_path, clean_env):
    """The tox upstream env's command without PYTORCH_SRC: one line, exit 0, no venv, a skipped
    upstream.json replacing earlier upstream results."""
    results = tmp_path / "results"
    results.mkdir()
    (results / "upstream-2.13.0.json").write_text("{}")
    (results / "v2_12.json").write_text("{}")
    result = _cli(["--if-source", "--each-torch", "--venvs", tmp_path / "venvs", "--results-dir", results],
                  tmp_path, clean_env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("upstream: skipped: no PyTorch source")
    assert not (tmp_path / "venvs").exists()
    assert sorted(path.name for path in results.iterdir()) == ["upstream.json", "v2_12.json"]
    assert json.loads((results / "upstream.json").read_text())["skipped"] is True


@pytest.mark.parametrize("args, message", [
    (["--each-torch", "--python", sys.executable], "--each-torch and --python exclude each other"),
    (["--torch", "2.13.0"], "--torch, --venvs and --reuse-envs go with --each-torch"),
    (["--each-torch", "--results", "x.json"], "use --results-dir DIR, not --results"),
    (["--results", "x.json", "--results-dir", "d"], "--results and --results-dir exclude each other"),
])
def test_conflicting_options_are_one_line_errors_that_write_nothing(tmp_path, clean_env, args, message):
    result = _cli(args, tmp_path, clean_env)
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0 and message in result.stderr
    assert list(tmp_path.iterdir()) == []


class FakePatch:
    def __init__(self, name):
        self.name = name
        self.target = name.split("/", 1)[1][: -len(".patch")]


V212 = FakePatch("v2.12/test/functorch/test_x.py.patch")
V0099 = FakePatch("0099ec9/test/functorch/test_x.py.patch")
BASES = {"patches": {V212.name: {"run_under": ["2.12.0", "2.11.0"]}, V0099.name: {"run_under": ["2.13.0", "2.14.1"]}}}


def test_each_release_runs_only_the_patch_whose_base_fits_it():
    assert torches.patches_for_release([V212, V0099], BASES, "2.11.0") == [V212]
    assert torches.patches_for_release([V212, V0099], BASES, "2.14.1") == [V0099]
    assert torches.patches_for_release([V212, V0099], BASES, "2.14.0") == [V0099]  # same X.Y
    assert torches.shared_targets([V212, V0099]) == ["test/functorch/test_x.py"]
    with pytest.raises(UsageError, match="no selected patch is made for torch 2.7.1"):
        torches.patches_for_release([V212, V0099], BASES, "2.7.1")
    both = {"patches": {V212.name: {"run_under": ["2.12.0"]}, V0099.name: {"run_under": ["2.12.0"]}}}
    with pytest.raises(UsageError, match="pick one base with --base KEY"):
        torches.patches_for_release([V212, V0099], both, "2.12.0")


def fake_env(toxworkdir, env, version, requirements=True):
    """A branch env whose `python` is a shell script answering like an interpreter with that torch."""
    python = Path(toxworkdir) / env / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text("#!/bin/sh\ncase \"$2\" in\n  *expecttest*) exit %d ;;\n  *) echo %s ;;\nesac\n"
                      % (0 if requirements else 1, version))
    python.chmod(0o755)
    return python


def test_a_branch_env_with_the_same_torch_lends_its_interpreter(tmp_path):
    """v2_12 (torch 2.12.0 in the branch table) is reused, not installed into; nothing else is run."""
    python = fake_env(tmp_path / "tox", "v2_12", "2.12.0+cu130")
    said = []
    found = torches.interpreter_for("2.12.0", tmp_path / "venvs", say=said.append, reuse_dir=tmp_path / "tox")
    assert found == python and said == [f"upstream: torch 2.12.0: reusing branch env {python}"]
    assert not (tmp_path / "venvs").exists()


@pytest.mark.parametrize("version, requirements", [("2.11.0", True), ("2.12.0", False)])
def test_a_branch_env_with_another_torch_or_without_test_requirements_is_not_borrowed(tmp_path, version, requirements):
    fake_env(tmp_path / "tox", "v2_12", version, requirements)
    assert torches.branch_env_python("2.12.0", tmp_path / "tox") is None
    tools = FakeTools()
    tools.installs = "2.12.0"
    python = torches.interpreter_for("2.12.0", tmp_path / "venvs", run=tools, say=lambda line: None, environ={},
                                     reuse_dir=tmp_path / "tox")
    assert python == tmp_path / "venvs" / "torch-2.12.0" / "bin" / "python"
