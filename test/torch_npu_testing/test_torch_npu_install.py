# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Unit tests of torch_npu_testing.suite.torch_npu_install (``ensure-torch-npu``).

Contract: the spec (--spec, else $TORCH_NPU_TESTING_TORCH_NPU_SPEC) is a pinned requirement or a wheel
path; empty means no torch_npu; when the pinned / wheel version is already installed nothing runs;
otherwise exactly ``<python> -m pip install --no-deps <spec>`` runs and its status is returned; a wheel
path that does not exist is a UsageError before anything runs. pip itself is never run here (``run``
is injected).
"""
import argparse
import io
import sys
from importlib import metadata

import pytest

from torch_npu_testing.suite import torch_npu_install
from torch_npu_testing.common.errors import UsageError
from torch_npu_testing.suite.torch_npu_install import SPEC_ENV, ensure, installed_version, pip_command, wanted_version


@pytest.mark.parametrize("spec, expected", [
    ("torch_npu==2.12.0.post3", "2.12.0.post3"),
    ("torch-npu == 2.7.1.post11", "2.7.1.post11"),
    ("TORCH_NPU==2.13.0", "2.13.0"),
    ("  torch_npu==2.11.0rc1  ", "2.11.0rc1"),
    ("torch_npu>=2.12", None),
    ("torch_npu", None),
    ("torch_npu==2.12.0; python_version > '3.8'", None),
    ("torch==2.12.0", None),
    ("/data/torch_npu-2.12.0-cp311-cp311-linux_aarch64.whl", "2.12.0"),
    ("wheels/torch_npu-2.7.1.post11-cp311-cp311-manylinux_2_28_aarch64.whl", "2.7.1.post11"),
    ("/data/torch-2.12.0-cp311-cp311-linux_aarch64.whl", None),
])
def test_wanted_version(spec, expected):
    """Exact pins and torch_npu wheel names give a version; anything pip must resolve gives None."""
    assert wanted_version(spec) == expected


def test_pip_command_installs_without_dependencies():
    """The one pip call: this interpreter's pip, --no-deps, the spec as given."""
    assert pip_command("torch_npu==2.12.0.post3") == [
        sys.executable, "-m", "pip", "install", "--no-deps", "torch_npu==2.12.0.post3"]
    assert pip_command("/w/torch_npu-1-x.whl", python="/env/bin/python")[0] == "/env/bin/python"


def must_not_run(command):
    raise AssertionError(f"must not run {command}")


class Recorder:
    def __init__(self, status=0):
        self.commands, self.status = [], status

    def __call__(self, command):
        self.commands.append(command)
        return self.status


@pytest.mark.parametrize("spec", ["", "   ", None])
def test_empty_spec_installs_nothing(spec):
    """No spec: nothing runs, exit 0, one line saying so."""
    out = io.StringIO()
    assert ensure(spec, run=must_not_run, out=out) == 0
    assert out.getvalue() == "ensure-torch-npu: no torch_npu requested for this env (empty spec)\n"


def test_already_installed_pin_runs_nothing(monkeypatch):
    """The pinned version is installed: no pip call (a warm env costs nothing)."""
    monkeypatch.setattr(torch_npu_install, "installed_version", lambda: "2.12.0.post3")
    out = io.StringIO()
    assert ensure("torch_npu==2.12.0.post3", run=must_not_run, out=out) == 0
    assert out.getvalue() == "ensure-torch-npu: torch_npu 2.12.0.post3 already installed\n"


def test_already_installed_wheel_runs_nothing(monkeypatch, tmp_path):
    """A wheel whose version is installed: no pip call."""
    wheel = tmp_path / "torch_npu-2.13.0-cp311-cp311-linux_x86_64.whl"
    wheel.write_bytes(b"")
    monkeypatch.setattr(torch_npu_install, "installed_version", lambda: "2.13.0")
    assert ensure(str(wheel), run=must_not_run, out=io.StringIO()) == 0


@pytest.mark.parametrize("installed", [None, "2.12.0.post2"])
def test_other_or_no_version_installed_runs_pip_once(monkeypatch, installed):
    """A different or no torch_npu installed: exactly the pip command runs; its status is returned."""
    monkeypatch.setattr(torch_npu_install, "installed_version", lambda: installed)
    run, out = Recorder(status=7), io.StringIO()
    assert ensure("torch_npu==2.12.0.post3", run=run, out=out) == 7
    assert run.commands == [[sys.executable, "-m", "pip", "install", "--no-deps", "torch_npu==2.12.0.post3"]]
    assert out.getvalue() == (f"ensure-torch-npu: installing torch_npu==2.12.0.post3 with --no-deps "
                              f"(installed: {installed or 'none'})\n")


def test_unpinned_spec_always_asks_pip(monkeypatch):
    """A range cannot be checked without pip, so pip decides even when some torch_npu is installed."""
    monkeypatch.setattr(torch_npu_install, "installed_version", lambda: "2.12.0")
    run = Recorder()
    assert ensure("torch_npu>=2.12", run=run, out=io.StringIO()) == 0
    assert run.commands == [pip_command("torch_npu>=2.12")]


def test_existing_wheel_with_other_version_installs_that_path(monkeypatch, tmp_path):
    """A wheel path is passed to pip as is."""
    wheel = tmp_path / "torch_npu-2.12.0-cp311-cp311-linux_aarch64.whl"
    wheel.write_bytes(b"")
    monkeypatch.setattr(torch_npu_install, "installed_version", lambda: "2.11.0")
    run = Recorder()
    ensure(str(wheel), run=run, out=io.StringIO())
    assert run.commands == [pip_command(str(wheel))]


def test_missing_wheel_is_a_usage_error_before_anything_runs(tmp_path):
    """A wheel path that does not exist: UsageError naming it, no pip call."""
    missing = str(tmp_path / "torch_npu-2.12.0-cp311-cp311-linux_aarch64.whl")
    with pytest.raises(UsageError) as info:
        ensure(missing, run=must_not_run, out=io.StringIO())
    assert str(info.value) == f"torch_npu wheel not found: {missing}"


def test_installed_version_reads_the_distribution(monkeypatch):
    """installed_version() is the torch_npu distribution's version, None when it is not installed."""
    def missing(name):
        raise metadata.PackageNotFoundError(name)
    asked = []
    monkeypatch.setattr(torch_npu_install.metadata, "version", lambda name: asked.append(name) or "9.9.9")
    assert installed_version() == "9.9.9" and asked == ["torch_npu"]
    monkeypatch.setattr(torch_npu_install.metadata, "version", missing)
    assert installed_version() is None


def _args(*argv):
    parser = argparse.ArgumentParser()
    torch_npu_install.add_arguments(parser)
    return parser.parse_args(list(argv))


def test_main_reads_the_env_spec_and_spec_option_wins(monkeypatch, tmp_path, capsys):
    """Without --spec the env variable is used; --spec (even empty) overrides it."""
    missing = str(tmp_path / "torch_npu-1.0-none.whl")
    monkeypatch.setenv(SPEC_ENV, missing)
    with pytest.raises(UsageError, match="torch_npu wheel not found"):
        torch_npu_install.main(_args())
    assert torch_npu_install.main(_args("--spec", "")) == 0
    assert "empty spec" in capsys.readouterr().out
    monkeypatch.setenv(SPEC_ENV, "")
    with pytest.raises(UsageError, match="torch_npu wheel not found"):
        torch_npu_install.main(_args("--spec", missing))
    monkeypatch.delenv(SPEC_ENV)
    assert torch_npu_install.main(_args()) == 0
