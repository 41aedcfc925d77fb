# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Unit tests of the command line ``python -m torch_npu_testing`` and of the package's import behaviour.

Contract: no command or an unknown one prints usage and exits 2; --help lists every command; a
UsageError from a command is exactly one stderr line ``torch_npu_testing: error: ...`` and exit 2; a
command's return value is the exit status. Importing the package (and running a command that needs no
torch) does not import torch, and defaults TORCH_DEVICE_BACKEND_AUTOLOAD to 0 without overriding it.
"""
import importlib
import json
import os
import shutil
import subprocess
import sys
import types

import pytest

import torch_npu_testing
from torch_npu_testing import __main__ as cli
from torch_npu_testing.common.errors import UsageError


def run_cli(run_python, *args, **env):
    return run_python(["-m", "torch_npu_testing", *args], **env)


def test_no_command_prints_usage_and_exits_2(run_python):
    """Nothing to do is a usage error."""
    result = run_cli(run_python)
    assert result.returncode == 2
    assert result.stderr.startswith("usage: python -m torch_npu_testing ")
    assert result.stderr.rstrip().endswith("error: the following arguments are required: COMMAND")


def test_unknown_command_prints_usage_and_exits_2(run_python):
    """An unknown command is rejected by name, with the usage."""
    result = run_cli(run_python, "frobnicate", "--json")
    assert result.returncode == 2
    assert result.stderr.startswith("usage: python -m torch_npu_testing ")
    assert "invalid choice: 'frobnicate'" in result.stderr


def test_help_lists_every_command(run_python):
    """--help exits 0 and names each command with its one-line help."""
    result = run_cli(run_python, "--help")
    assert result.returncode == 0 and result.stderr == ""
    for name, (_, help_text) in cli.COMMANDS.items():
        assert name in result.stdout
        assert " ".join(help_text.split()[:3]) in " ".join(result.stdout.split())


def test_usage_error_is_exactly_one_line(run_python, tmp_path):
    """A command's UsageError: one stderr line, prefixed, exit 2, nothing on stdout."""
    missing = tmp_path / "torch_npu-2.12.0-cp311-cp311-linux_aarch64.whl"
    result = run_cli(run_python, "ensure-torch-npu", "--spec", missing)
    assert result.returncode == 2
    assert result.stderr == f"torch_npu_testing: error: torch_npu wheel not found: {missing}\n"
    assert result.stdout == ""


def test_bad_option_of_a_command_names_the_command(run_python):
    """A command's own parser reports unknown options under its full program name, exit 2."""
    result = run_cli(run_python, "probe", "--bogus")
    assert result.returncode == 2
    assert result.stderr.startswith("usage: python -m torch_npu_testing probe ")
    assert "unrecognized arguments: --bogus" in result.stderr


def test_console_script_is_the_same_entry_point(clean_env):
    """The installed console script torch-npu-testing runs the same main."""
    script = shutil.which("torch-npu-testing", path=os.path.dirname(sys.executable))
    if script is None:
        pytest.skip(f"no torch-npu-testing console script next to {sys.executable}")
    result = subprocess.run([script, "--help"], capture_output=True, text=True, env=clean_env(), timeout=60,
                            check=False)
    assert result.returncode == 0 and "ensure-torch-npu" in result.stdout


# --------------------------------------------------------------------------- main() in process
@pytest.fixture
def fake_command(monkeypatch):
    """Registers command 'fake' whose main() does what the test puts in ``behaviour``."""
    module = types.ModuleType("tnt_fake_command")
    behaviour = {}
    module.add_arguments = lambda parser: parser.add_argument("--value", default="x")

    def main(args):
        action = behaviour["action"]
        if isinstance(action, Exception):
            raise action
        return action(args)
    module.main = main
    monkeypatch.setitem(sys.modules, "tnt_fake_command", module)
    monkeypatch.setitem(cli.COMMANDS, "fake", ("tnt_fake_command", "a fake command"))
    return behaviour


@pytest.mark.parametrize("returned, status", [(None, 0), (0, 0), (1, 1), (3, 3), (True, 1)])
def test_command_return_value_is_the_exit_status(fake_command, returned, status):
    """main(args) -> None/0 is success, any other int is the exit status."""
    fake_command["action"] = lambda args: returned
    assert cli.main(["fake"]) == status


def test_command_arguments_reach_its_main(fake_command):
    """The command's own parser parses the rest of argv."""
    seen = []
    fake_command["action"] = lambda args: seen.append(args.value)
    cli.main(["fake", "--value", "given"])
    assert seen == ["given"]


def test_usage_error_in_process_prints_one_line(fake_command, capsys):
    """A UsageError with any message is one prefixed line on stderr and status 2."""
    fake_command["action"] = UsageError("the checkout is dirty: commit or stash first")
    assert cli.main(["fake"]) == 2
    captured = capsys.readouterr()
    assert captured.err == "torch_npu_testing: error: the checkout is dirty: commit or stash first\n"
    assert captured.out == ""


def test_other_exceptions_are_not_swallowed(fake_command):
    """Only UsageError is turned into a one-line error; a bug still shows its traceback."""
    fake_command["action"] = RuntimeError("a bug")
    with pytest.raises(RuntimeError, match="a bug"):
        cli.main(["fake"])


@pytest.mark.parametrize("name", sorted(cli.COMMANDS))
def test_every_listed_command_module_defines_the_interface(name):
    """Each command's module exists and defines add_arguments(parser) and main(args)."""
    module = importlib.import_module(cli.COMMANDS[name][0])
    assert callable(module.add_arguments) and callable(module.main)


# --------------------------------------------------------------------------- the package itself
IMPORT_SCRIPT = """
import json, os, sys
import torch_npu_testing
from torch_npu_testing.__main__ import main
status = main(["ensure-torch-npu", "--spec", ""])
print(json.dumps({"status": status, "torch_imported": "torch" in sys.modules,
                  "autoload": os.environ.get("TORCH_DEVICE_BACKEND_AUTOLOAD")}))
"""


@pytest.mark.parametrize("preset, expected", [(None, "0"), ("1", "1")])
def test_package_import_sets_autoload_default_and_does_not_import_torch(run_python, preset, expected):
    """Importing the package sets TORCH_DEVICE_BACKEND_AUTOLOAD=0 unless already set; a command that
    needs no torch runs without importing it."""
    env = {} if preset is None else {"TORCH_DEVICE_BACKEND_AUTOLOAD": preset}
    result = run_python(["-c", IMPORT_SCRIPT], **env)
    assert result.returncode == 0, result.stderr
    info = json.loads(result.stdout.splitlines()[-1])
    assert info == {"status": 0, "torch_imported": False, "autoload": expected}


def test_public_names_are_lazy_and_complete():
    """The public names resolve to the runtime's objects; other names raise AttributeError."""
    from torch_npu_testing.runtime import carried, carried_limits, testcase
    assert torch_npu_testing.__all__ == ["TestCase", "run_tests", "device_type", "requires_api",
                                         "torch_version_at_least", "find_api", "run_in_thread",
                                         "skip_unless_vehicle", "vehicle_refusal", "api_limit"]
    for name in ("skip_unless_vehicle", "vehicle_refusal", "api_limit"):
        assert getattr(torch_npu_testing, name) is getattr(carried_limits, name)
    assert torch_npu_testing.TestCase is testcase.TestCase
    assert torch_npu_testing.run_tests is testcase.run_tests
    for name in ("device_type", "requires_api", "torch_version_at_least", "find_api", "run_in_thread"):
        assert getattr(torch_npu_testing, name) is getattr(carried, name)
    assert set(torch_npu_testing.__all__) <= set(dir(torch_npu_testing))
    assert not hasattr(torch_npu_testing, "no_such_name")
    with pytest.raises(AttributeError, match="^module 'torch_npu_testing' has no attribute 'no_such_name'$"):
        torch_npu_testing.__getattr__("no_such_name")
