# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""``mutate --only GLOB``: only the mutants whose id matches run (generic and device), the output and the JSON
say what was left out, and a GLOB that matches nothing is refused with one line, nothing written.

Real ``mutate`` runs in subprocesses on a toy API with ``--device cpu`` (fast, any box)."""
import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
API = '''
import torch


def scale(x):
    return x * 2.5
'''
TESTS = '''"""Toy file for --only."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402
import onlyapi  # noqa: E402


class Toy(unittest.TestCase):
    def test_scale(self):
        x = torch.tensor([1.1, 2.3, -0.7], dtype=torch.float64)
        y = onlyapi.scale(x)
        self.assertEqual(y.dtype, torch.float64)
        self.assertTrue(torch.equal(y, x * 2.5))
'''


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    found = tmp_path_factory.mktemp("only")
    (found / "onlyapi.py").write_text(API)
    (found / "test_only_api.py").write_text(TESTS)
    return found


def _mutate(folder, *options):
    out = folder / "out.json"
    if out.exists():
        out.unlink()
    command = [sys.executable, "-m", "torch_npu_testing", "mutate", "test_only_api.py", "--api", "onlyapi.scale",
               "--jobs", "2", "--quiet", "--json", str(out), *options]
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + str(folder))
    done = subprocess.run(command, cwd=str(folder), env=env, capture_output=True, text=True, timeout=300)
    return done, (json.loads(out.read_text()) if out.exists() else None)


def test_only_runs_the_matching_generic_and_device_mutants_and_says_what_it_left_out(folder):
    done, document = _mutate(folder, "--device", "cpu", "--only", "*:result-shift",
                             "--only", "*:aten.mul.Tensor:dev-bf1?")
    assert done.returncode == 0, done.stderr
    block = document["apis"][0]
    assert [m["code"] for m in block["mutants"]] == ["result-shift"]
    assert [m["code"] for m in block["device"]["mutants"]] == ["aten.mul.Tensor:dev-bf16"]
    assert document["only"] == ["*:result-shift", "*:aten.mul.Tensor:dev-bf1?"]
    device = document["device"]
    assert device["mutants"] == 1 and device["catalogue"] > 1
    left = document["only_left_out"]
    assert left["device"] == device["catalogue"] - 1 and left["generic"] >= 5
    line = next(text for text in done.stdout.splitlines() if text.startswith("mutate --only"))
    assert line == (f"mutate --only *:result-shift *:aten.mul.Tensor:dev-bf1?: ran 1 generic of {1 + left['generic']}, "
                    f"1 device of {device['catalogue']}; left out {left['generic'] + left['device']} mutants; "
                    "the strengths below are of these mutants only")


def test_a_glob_that_matches_nothing_is_refused_with_one_line_and_nothing_written(folder):
    for options in (["--only", "*:no-such-fault"], ["--device", "cpu", "--only", "*:result-shift",
                                                    "--only", "*:aten.add.Tensor:*"]):
        done, document = _mutate(folder, *options)
        assert done.returncode == 2 and document is None, done.stderr
        errors = [text for text in done.stderr.splitlines() if text.startswith("torch_npu_testing: error:")]
        assert len(errors) == 1 and f"--only {options[-1]}: matches no mutant" in errors[0], done.stderr
    done, document = _mutate(folder)  # without --only: the whole catalogue, and the JSON says so
    assert done.returncode == 0 and document["only"] == [] and document["only_left_out"] == {"generic": 0}
