# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Unit tests of torch_npu_testing.suite.prune_env (``prune-env``), on real venvs in temp dirs.

Contract: without ``$TORCH_NPU_TESTING_PRUNE_ENVS`` (or with 0 / false / empty) nothing is touched and
nothing printed; with 1 / true the venv the command runs in is removed and one line says how much was
freed; a value that is neither is a one-line error; a directory that is not the running interpreter's
own tox venv (missing, not a venv, no .tox-info.json, another env) is a one-line error, exit 2, and
stays whole. The removal runs in a real subprocess started from the venv's own interpreter, as tox runs
it, because the point is that an interpreter can remove the env it runs from and still exit 0.
"""
import io
import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from torch_npu_testing.common.errors import UsageError
from torch_npu_testing.suite.prune_env import PRUNE_ENV, check_prunable, prune, prune_asked, tree_bytes

REPO_ROOT = Path(__file__).resolve().parents[2]


def make_tox_venv(path, info=True):
    """A real venv without pip (fast), plus the file tox writes into each env it built."""
    venv.EnvBuilder(with_pip=False, symlinks=True).create(path)
    if info:
        (path / ".tox-info.json").write_text("{}", encoding="utf-8")
    (path / "lib" / "payload.bin").write_bytes(b"x" * 300_000)
    return path


def python_of(env_dir):
    return env_dir / "bin" / "python"


def run_prune(env_dir, target, clean_env, **env):
    return subprocess.run([str(python_of(env_dir)), "-m", "torch_npu_testing", "prune-env", str(target)],
                          env=clean_env(PYTHONPATH=REPO_ROOT, **env), capture_output=True, text=True,
                          timeout=120, check=False)


@pytest.mark.parametrize("value, expected", [
    ("1", True), ("true", True), ("YES", True), (" on ", True),
    ("", False), ("0", False), ("false", False), ("No", False), ("off", False)])
def test_prune_asked_reads_yes_and_no(value, expected):
    assert prune_asked({PRUNE_ENV: value}) is expected


def test_prune_asked_unset_is_no_and_anything_else_an_error():
    assert prune_asked({}) is False
    with pytest.raises(UsageError, match=f"{PRUNE_ENV}='maybe': expected 1 or 0"):
        prune_asked({PRUNE_ENV: "maybe"})


def test_tree_bytes_counts_files_not_link_targets(tmp_path):
    (tmp_path / "a").write_bytes(b"1" * 10)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b").write_bytes(b"2" * 5)
    big = tmp_path.parent / f"{tmp_path.name}-outside"
    big.write_bytes(b"3" * 1000)
    (tmp_path / "link").symlink_to(big)
    assert tree_bytes(tmp_path) == 15 + os.lstat(tmp_path / "link").st_size


def test_not_asked_touches_nothing_and_prints_nothing(tmp_path):
    env_dir = make_tox_venv(tmp_path / "env")
    out = io.StringIO()
    assert prune(str(env_dir), {}, prefix=str(env_dir), out=out) == 0
    assert out.getvalue() == "" and (env_dir / "pyvenv.cfg").is_file()


def test_in_process_prune_removes_the_env_and_says_how_much(tmp_path):
    env_dir = make_tox_venv(tmp_path / "env")
    out = io.StringIO()
    assert prune(str(env_dir), {PRUNE_ENV: "1"}, prefix=str(env_dir), out=out) == 0
    assert not env_dir.exists()
    assert out.getvalue().startswith(f"prune-env: removed {env_dir} (0.0 GB) after its run")


@pytest.mark.parametrize("case", ["missing", "plain-dir", "no-tox-info", "other-env"])
def test_check_prunable_refuses_what_is_not_this_tox_venv(tmp_path, case):
    this = make_tox_venv(tmp_path / "this")
    target = {"missing": tmp_path / "nope", "plain-dir": tmp_path / "plain",
              "no-tox-info": tmp_path / "bare", "other-env": tmp_path / "other"}[case]
    if case == "plain-dir":
        target.mkdir()
        (target / "keep.txt").write_text("keep", encoding="utf-8")
    elif case == "no-tox-info":
        make_tox_venv(target, info=False)
    elif case == "other-env":
        make_tox_venv(target)
    before = sorted(p.name for p in target.iterdir()) if target.exists() else None
    with pytest.raises(UsageError, match="^prune-env: ") as caught:
        check_prunable(str(target), str(this if case != "no-tox-info" else target))
    assert "\n" not in str(caught.value)
    assert (sorted(p.name for p in target.iterdir()) if target.exists() else None) == before


def test_subprocess_removes_its_own_venv_and_exits_zero(tmp_path, clean_env):
    """As tox runs it: the env's own interpreter removes the env it is running from."""
    env_dir = make_tox_venv(tmp_path / "env")
    result = run_prune(env_dir, env_dir, clean_env, **{PRUNE_ENV: "1"})
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"prune-env: removed {env_dir} ("), result.stdout
    assert not env_dir.exists()


def test_subprocess_without_the_variable_keeps_the_venv(tmp_path, clean_env):
    env_dir = make_tox_venv(tmp_path / "env")
    result = run_prune(env_dir, env_dir, clean_env)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    assert python_of(env_dir).exists() and (env_dir / "lib" / "payload.bin").is_file()


def test_subprocess_refuses_another_env_in_one_line(tmp_path, clean_env):
    this, other = make_tox_venv(tmp_path / "this"), make_tox_venv(tmp_path / "other")
    result = run_prune(this, other, clean_env, **{PRUNE_ENV: "1"})
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0
    assert "is not this interpreter's env" in result.stderr and "nothing removed" in result.stderr
    assert (other / "lib" / "payload.bin").is_file() and (this / "lib" / "payload.bin").is_file()


def test_subprocess_bad_value_is_one_line_and_keeps_the_venv(tmp_path, clean_env):
    env_dir = make_tox_venv(tmp_path / "env")
    result = run_prune(env_dir, env_dir, clean_env, **{PRUNE_ENV: "sometimes"})
    assert result.returncode == 2 and result.stderr.strip().count("\n") == 0, result.stderr
    assert "expected 1 or 0" in result.stderr and (env_dir / "pyvenv.cfg").is_file()


def test_host_interpreter_is_not_a_prunable_env():
    """Whatever runs the unit tests is never removed: it is not a tox venv named by the caller."""
    with pytest.raises(UsageError):
        check_prunable(os.path.join(sys.prefix, "does-not-exist"), sys.prefix)
