# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""The command that runs one file of DEST, the way Ascend CI runs it where this host allows.

- ``cd DEST/test && PY run_test.py -v -i <dir>/<name>``: DEST's own runner, when it can start here (it
  imports torch_npu and ``torch_npu.utils._path_manager`` and calls ``torch.distributed.is_hccl_available()``
  at import, and sets ``TORCH_DEVICE_BACKEND_AUTOLOAD=1`` for the child). :func:`runner_starts` asks it
  for ``--help`` once per interpreter: that runs exactly its import-time code.
- Otherwise ``cd DEST/test && PY <dir>/<name>.py -v``, as the seed PRs ran their files.

Either way the file's own runner writes JUnit XML into a folder of verify's: ``IN_CI=1`` and
``TEST_REPORT_PATH`` for torch_npu's ``run_tests``, ``--save-xml DIR`` for torch's (passed through
run_test.py after ``--``, as its ``additional_unittest_args``); a file export created ends in the kit's carried
``run_tests``, which is the runner of the device the kit resolves there. The record says which command ran
and why.
"""
import os
import subprocess

from .targets import CARRIED_RUNNER, COMMON_UTILS_RUNNER, TORCH_NPU_RUNNER

RUN_TEST = "run_test.py"
START_TIMEOUT_S = 300
# variables that change how a file runs: recorded with every run
RECORDED_VARIABLES = ("TORCH_DEVICE_BACKEND_AUTOLOAD", "IN_CI", "TEST_REPORT_PATH", "PYTHONPATH",
                      "TORCH_NPU_TESTING_STANDIN_NPU", "TORCH_NPU_TESTING_LIMITS", "TORCH_NPU_TESTING_DEVICE",
                      "CUDA_VISIBLE_DEVICES",
                      "DISABLED_TESTS_FILE", "ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME", "LD_LIBRARY_PATH")


def runner_starts(python, test_dir, extra_env):
    """``(True, why)`` when DEST's run_test.py starts under ``python`` (its ``--help`` exits 0), else
    ``(False, why)`` with its last line of error output."""
    if not os.path.isfile(os.path.join(test_dir, RUN_TEST)):
        return False, f"DEST has no test/{RUN_TEST}"
    env = dict(os.environ, **extra_env, TORCH_DEVICE_BACKEND_AUTOLOAD="1")
    try:
        done = subprocess.run([python, RUN_TEST, "--help"], cwd=test_dir, env=env, capture_output=True, text=True,
                              stdin=subprocess.DEVNULL, check=False, timeout=START_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, f"test/{RUN_TEST} --help did not finish: {exc}"
    if done.returncode == 0:
        return True, f"test/{RUN_TEST} starts under this interpreter (its imports and HCCL query succeed)"
    last = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
    return False, f"test/{RUN_TEST} cannot start here ({last})"


def runner_family(target, device):
    """The runner that writes the file's XML: its own, or for the carried run_tests the one of the device
    the kit resolves in that env (``device``, measured by the env probe): torch_npu's on ``npu``."""
    if target.runner == CARRIED_RUNNER:
        return TORCH_NPU_RUNNER if device == "npu" else COMMON_UTILS_RUNNER
    return target.runner


def file_command(python, target, xml_dir, use_runner, device="cpu"):
    """``(argv, variables)`` that run ``target`` from DEST/test, its runner writing XML into ``xml_dir``."""
    xml_args = ["--save-xml", xml_dir] if runner_family(target, device) == COMMON_UTILS_RUNNER else []
    variables = {"IN_CI": "1", "TEST_REPORT_PATH": xml_dir}
    if use_runner:
        argv = [python, RUN_TEST, "-v", "-i", target.test_dir_name] + (["--"] + xml_args if xml_args else [])
        variables["TORCH_DEVICE_BACKEND_AUTOLOAD"] = "1"
    else:
        argv = [python, target.test_dir_name + ".py", "-v"] + xml_args
    return argv, variables


def recorded_environment(env):
    """The variables of :data:`RECORDED_VARIABLES` as the child saw them (None: unset)."""
    return {name: env.get(name) for name in RECORDED_VARIABLES}
