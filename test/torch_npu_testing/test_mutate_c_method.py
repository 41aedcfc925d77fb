# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""``mutate`` of a C type's method (``torch.Tensor.addcdiv``, a method descriptor of ``torch._C.TensorBase``).

Ops are most of the API-consistency tasks, and many are reached as ``x.op(...)``: the method is resolved as
kind ``C method`` (parameters from its docstring, ``self`` first, keyword-only after ``*``), its replacement is
set on ``torch.Tensor`` and removed again, and a file that checks the method's values and its keyword kills
the faults a weak file lets through.
"""
import json
import subprocess
import sys

import torch

from torch_npu_testing.mutate import targets

STRONG = '''
from torch_npu_testing import TestCase, run_tests
import torch


class TestAddcdivMethod(TestCase):
    def test_values_and_value_keyword_against_float64_arithmetic(self):
        x, a, b = (torch.linspace(0.5, 2.5, 6, dtype=torch.float64).reshape(2, 3) + i for i in range(3))
        for value in (1, 0.25, -3):
            got = x.addcdiv(a, b, value=value)
            self.assert_tensor(got, x + value * a / b, f"value={value}", atol=1e-12, rtol=0)
        self.assertIs(x.float().addcdiv(a.float(), b.float()).dtype, torch.float32, "dtype kept")


if __name__ == "__main__":
    run_tests()
'''

WEAK = '''
from torch_npu_testing import TestCase, run_tests
import torch


class TestAddcdivMethod(TestCase):
    def test_shape_only(self):
        x = torch.ones(2, 3)
        self.assertEqual(tuple(x.addcdiv(x, x, value=2).shape), (2, 3))


if __name__ == "__main__":
    run_tests()
'''


def test_a_tensor_method_is_a_c_method_with_its_docstring_parameters():
    target = targets.resolve_target("torch.Tensor.addcdiv")
    assert target.kind == "C method" and target.owner is torch.Tensor
    assert [(p.name, p.kind, p.default) for p in target.params] == [
        ("self", "self", targets.EMPTY), ("tensor1", "positional", targets.EMPTY),
        ("tensor2", "positional", targets.EMPTY), ("value", "keyword", 1)]


def test_its_replacement_shadows_the_inherited_method_and_is_removed_again():
    target = targets.resolve_target("torch.Tensor.addcdiv")
    calls = []
    restore = targets.install(target, lambda real, args, kwargs, frame: calls.append(args) or real(*args, **kwargs))
    try:
        x = torch.ones(2)
        assert torch.equal(x.addcdiv(x, x, value=2), torch.full((2,), 3.0)) and len(calls) == 1
    finally:
        restore()
    assert "addcdiv" not in vars(torch.Tensor) and torch.Tensor.addcdiv is target.function


def _mutate(tmp_path, text):
    (tmp_path / "test_addcdiv_api.py").write_text(text, encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "torch_npu_testing", "mutate", "test_addcdiv_api.py", "--api",
                           "torch.Tensor.addcdiv", "--jobs", "2", "--quiet", "--json", "out.json"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    block = json.loads((tmp_path / "out.json").read_text())["apis"][0]
    return block, {record["code"]: record["outcome"] for record in block["mutants"]}


def test_a_strong_file_kills_what_a_weak_file_lets_through(tmp_path):
    (tmp_path / "strong").mkdir()
    (tmp_path / "weak").mkdir()
    strong, strong_outcomes = _mutate(tmp_path / "strong", STRONG)
    weak, weak_outcomes = _mutate(tmp_path / "weak", WEAK)
    assert strong["kind"] == weak["kind"] == "C method"
    assert strong_outcomes["param-default:value"] == "killed"
    assert weak_outcomes["param-default:value"] == "survived"
    survived_by_weak = {code for code, outcome in weak_outcomes.items() if outcome == "survived"}
    assert survived_by_weak and all(strong_outcomes[code] == "killed" for code in survived_by_weak
                                    if code.startswith(("param", "result-shifted"))), (strong_outcomes, weak_outcomes)
