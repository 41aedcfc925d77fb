# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""The simulated NPU with limits on, in real subprocesses: a table written by ``limits`` from a docs tree in
Ascend's shape, named by ``$TORCH_NPU_TESTING_LIMITS``; the device refuses what the notes leave out (torch_npu's
message), an API marked ✘, and a dtype no copy note documents, while allowed calls stay exact (in place, on
views, ``out=``, autograd) and the CPU is untouched; the gaps met are printed and written; a test file's
vehicle refused by the device is a labelled skip."""
import json
import textwrap

import pytest

from conftest import REPO_ROOT
from torch_npu_testing.__main__ import main

from limits_fixture import make_docs_repo

SCRIPT = textwrap.dedent("""
    import torch, torch_npu
    def outcome(fn):
        try:
            fn()
            return "ok"
        except RuntimeError as exc:
            return str(exc).splitlines()[0]
    x = torch.tensor([0.5, -1.25, 2.0])
    print("f32=" + outcome(lambda: torch.testing.assert_close((x.to("npu") * 2).cpu(), x * 2, rtol=0, atol=0)))
    print("f64=" + outcome(lambda: x.double().to("npu") * 2))
    print("f64 moved=" + outcome(lambda: x.double().to("npu").cpu()))
    print("cpu f64=" + outcome(lambda: x.double() * 2))
    print("u16=" + outcome(lambda: x.to(torch.uint16).to("npu")))
    base = torch.zeros(2, 4, device="npu")
    view = base[:, ::2]
    view.add_(1.5)
    print("in place on a view=" + str(base.cpu().tolist()))
    out = torch.empty(0, device="npu")
    torch.mul(x.to("npu"), 3, out=out)
    print("out=" + str(out.cpu().tolist()) + " " + out.device.type)
    leaf = x.to("npu").requires_grad_()
    (leaf * leaf).sum().backward()
    print("grad=" + str(leaf.grad.cpu().tolist()))
    print("csr=" + outcome(lambda: x.to("npu").reshape(1, 3).to_sparse_csr()))
""")


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    """The 2.13 table of the fixture docs with one API marked ✘ added (to_sparse_csr)."""
    folder = tmp_path_factory.mktemp("limits-device")
    out = folder / "limits.json"
    assert main(["limits", "--ascend", str(make_docs_repo(folder / "ascend")), "--torch", "2.13",
                 "--out", str(out)]) == 0
    document = json.loads(out.read_text(encoding="utf-8"))
    document["entries"]["torch.Tensor.to_sparse_csr"] = {"supported": False, "limits": {}}
    out.write_text(json.dumps(document), encoding="utf-8")
    return out


def run_simulated(run_python, args, table, gaps, **env):
    return run_python(args, PYTHONPATH=str(REPO_ROOT), TORCH_NPU_TESTING_STANDIN_NPU="simulated",
                      TORCH_NPU_TESTING_LIMITS=str(table), TORCH_NPU_TESTING_GAPS=str(gaps), **env)


def test_the_device_refuses_per_the_table_and_stays_exact_otherwise(run_python, table, tmp_path):
    gaps = tmp_path / "gaps.jsonl"
    result = run_simulated(run_python, ["-c", "import torch_npu_testing\n" + SCRIPT], table, gaps)
    assert result.returncode == 0, result.stderr[-3000:]
    lines = dict(line.split("=", 1) for line in result.stdout.splitlines())
    assert lines["f32"] == "ok"
    assert lines["f64"].startswith("aclnnMul not implemented for DT_DOUBLE (simulated NPU limits: torch.mul take ")
    assert lines["f64 moved"] == "ok"  # data movement: copy_'s note allows float64 where Tensor.to's does not
    assert lines["cpu f64"] == "ok"
    assert lines["u16"].startswith("aclnnToCopy not implemented for DT_UINT16")
    assert lines["in place on a view"] == "[[1.5, 0.0, 1.5, 0.0], [1.5, 0.0, 1.5, 0.0]]"
    assert lines["out"] == "[1.5, -3.75, 6.0] npu"
    assert lines["grad"] == "[1.0, -2.5, 4.0]"
    assert lines["csr"].startswith("aclnnToSparseCsr: torch.Tensor.to_sparse_csr is not supported on Atlas A2")
    assert "simulated NPU limit met: mul DT_DOUBLE: aclnnMul not implemented for DT_DOUBLE" in result.stderr
    met = [json.loads(line) for line in gaps.read_text(encoding="utf-8").splitlines()]
    assert {(gap["op"], gap["dtype"]) for gap in met} >= {("mul", "DT_DOUBLE"), ("_to_copy", "DT_UINT16"),
                                                          ("to_sparse_csr", "-")}


FILE = textwrap.dedent("""
    import torch
    from torch_npu_testing import TestCase, run_tests, skip_unless_vehicle, api_limit

    class TestVehicle(TestCase):
        def test_per_dtype(self):
            for dtype in (torch.float32, torch.float64):
                with self.subTest(str(dtype)):
                    skip_unless_vehicle(self, f"x * k, {dtype}", lambda: torch.ones(2, dtype=dtype, device="npu") * 2)
                    self.assertTrue(torch.is_grad_enabled())  # the API under test

        def test_documented_api_refusal(self):
            with api_limit(self, "torch.mul float64", documented=True):
                torch.ones(2, dtype=torch.float64, device="npu") * 2

    if __name__ == "__main__":
        run_tests()
""")


def test_a_refused_vehicle_is_a_labelled_skip_and_the_gaps_are_listed(run_python, table, tmp_path):
    path = tmp_path / "test_vehicle.py"
    path.write_text(FILE, encoding="utf-8")
    result = run_simulated(run_python, [path, "-v"], table, tmp_path / "gaps.jsonl")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "OK (skipped=2)" in result.stderr
    said = "skipped 'device limit, vehicle x * k, torch.float64: aclnnMul not implemented for DT_DOUBLE"
    assert said in result.stderr
    assert ("skipped 'device limit, documented for the API, torch.mul float64: aclnnMul not implemented for "
            "DT_DOUBLE") in result.stderr
    assert "simulated NPU limit met: mul DT_DOUBLE: aclnnMul not implemented for DT_DOUBLE" in result.stderr
