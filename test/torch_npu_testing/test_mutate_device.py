# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""``mutate --device``: the device baseline records the API's own device dispatches, each device mutant
faults one op's within the API's calls only, and the counting is honest. The runs use ``--device cpu``
(fast, any box): the API's own CPU dispatches are faulted, the test's reference is not. The last test
runs on the simulated NPU: a device fault changes the device's results only."""
import argparse
import json
import os
import subprocess
import sys
import textwrap

import pytest

from torch_npu_testing.mutate import cli, device_output, score
from torch_npu_testing.mutate.output import FORMAT
from torch_npu_testing.report import strength as report_strength

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
API = '''
import torch


def scale(x):
    """One device op of its own: aten.mul.Tensor."""
    return x * 2.5


def flag(value):
    """No device op of its own (a switch)."""
    return bool(value)


def never(x):
    return x
'''
HEADER = '''"""Toy file: the mutant `toyapi.scale:aten.mul.Tensor:dev-result-cpu` survives: a CPU run has one device."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402
import toyapi  # noqa: E402


class Toy(unittest.TestCase):
    def test_flag(self):
        self.assertTrue(toyapi.flag(1))
'''
STRONG = '''
    def test_scale_against_a_float64_reference(self):
        x = torch.tensor([1.1, 2.3, -0.7, 3.3e-3])
        want = (x.double() * 2.5).float()
        torch.testing.assert_close(toyapi.scale(x), want, rtol=1e-6, atol=0)
'''
WEAK = '''
    def test_scale_loosely(self):
        x = torch.tensor([1.1, 2.3, -0.7, 3.3e-3])
        torch.testing.assert_close(toyapi.scale(x), x * 2.5, rtol=1e-2, atol=1e-2)
'''


def _run(folder, name, body, apis=("toyapi.scale", "toyapi.flag", "toyapi.never"), options=()):
    path = folder / f"test_{name}.py"
    path.write_text(HEADER + textwrap.dedent(body).replace("\n", "\n    ").rstrip() + "\n")
    out = folder / f"{name}.json"
    command = [sys.executable, "-m", "torch_npu_testing", "mutate", str(path), "--device", "cpu", "--jobs", "2",
               "--quiet", "--json", str(out)] + [item for api in apis for item in ("--api", api)] + list(options)
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + str(folder))
    return subprocess.run(command, cwd=str(folder), env=env, capture_output=True, text=True, timeout=300), out


def _mutate(folder, name, body):
    done, out = _run(folder, name, body)
    assert done.returncode == 0, done.stderr
    return done, json.loads(out.read_text())


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    found = tmp_path_factory.mktemp("device")
    (found / "toyapi.py").write_text(API)
    return found


@pytest.fixture(scope="module")
def runs(folder):
    return {name: _mutate(folder, name, body) for name, body in (("strong", STRONG), ("weak", WEAK))}


def _device(document, api):
    return next(block for block in document["apis"] if block["name"] == api)["device"]


def _outcomes(document, api):
    return {record["code"]: record for record in _device(document, api)["mutants"]}


def test_the_baseline_records_the_apis_own_device_ops_and_the_vehicles_apart(runs):
    _, document = runs["strong"]
    scale = _device(document, "toyapi.scale")
    assert scale["status"] == "scored" and list(scale["ops"]) == ["aten.mul.Tensor"]
    assert scale["ops"]["aten.mul.Tensor"]["calls"] == 1
    # a device mutant runs only the tests that dispatched its op in scope
    assert scale["ops"]["aten.mul.Tensor"]["tests"] == ["Toy.test_scale_against_a_float64_reference"]
    assert "float32/64" in scale["ops"]["aten.mul.Tensor"]["features"]
    # the reference's own mul (on float64) and its cast ran outside the API's call: vehicles, never faulted
    assert document["device"]["vehicles"].get("aten.mul.Tensor", 0) >= 1
    assert document["device"]["vehicles"].get("aten._to_copy.default", 0) >= 1


def test_a_strong_file_kills_reduced_precision_and_a_weak_one_lets_it_through(runs):
    strong, weak = _outcomes(runs["strong"][1], "toyapi.scale"), _outcomes(runs["weak"][1], "toyapi.scale")
    for code in ("aten.mul.Tensor:dev-bf16", "aten.mul.Tensor:dev-fp16", "aten.mul.Tensor:dev-shift"):
        assert strong[code]["outcome"] == "killed", strong[code]
        assert strong[code]["killed_by"].startswith("Toy.test_scale_against_a_float64_reference")
        assert weak[code]["outcome"] == "survived", weak[code]
    assert strong["aten.mul.Tensor:dev-promote"]["outcome"] == "killed"
    lines = runs["weak"][0].stdout
    assert "device strength toyapi.scale: killed" in lines and "survived: aten.mul.Tensor:dev-bf16" in lines


def test_not_applicable_and_not_reached_are_counted_apart(runs):
    done, document = runs["strong"]
    assert _device(document, "toyapi.flag") == {
        "status": "not applicable", "device": "cpu",
        "reason": "no device op of its own within its 1 in-scope call(s)"}
    assert _device(document, "toyapi.never")["status"] == "not reached"
    assert "device strength toyapi.flag: not applicable on cpu (no device op of its own" in done.stdout
    assert "device strength toyapi.never: not reached on cpu (the tests never call it in scope)" in done.stdout
    records = _outcomes(document, "toyapi.scale")
    # on a CPU run the result is already on the CPU: no effect, never survived; one device: not applicable
    assert records["aten.mul.Tensor:dev-result-cpu"]["outcome"] == "no effect"
    assert records["aten.mul.Tensor:dev-other-index"]["outcome"] == "not applicable"
    counts = _device(document, "toyapi.scale")["strength"]["counts"]
    assert counts["no effect"] >= 1 and counts["not applicable"] >= 1


def test_a_device_mutant_that_never_acts_is_not_reached():
    report = {"tallies": {"a": {"calls": 0, "changed": 0, "no effect": 0, "not applicable": 0}}}
    assert score.outcome_of(report, "a") == ("not reached", None)
    report["tallies"]["a"].update(calls=2, **{"not applicable": 2})
    assert score.outcome_of(report, "a") == ("not applicable", None)


def test_the_json_format_3_and_reports_device_line(runs, tmp_path):
    _, document = runs["weak"]
    assert document["format"] == FORMAT == "torch_npu_testing.mutate/3"
    assert document["device"]["device"] == "cpu" and document["device"]["mutants"] >= 5
    assert document["device"]["percent"] < 100
    record = _outcomes(document, "toyapi.scale")["aten.mul.Tensor:dev-bf16"]
    assert set(record) == {"id", "op", "code", "fault", "description", "outcome", "killed_by", "calls", "changed",
                           "no_effect", "not_applicable", "explained", "wall_s"}
    assert record["id"] == "toyapi.scale:aten.mul.Tensor:dev-bf16"
    folder = tmp_path / "strength"
    folder.mkdir()
    (folder / "toy.json").write_text(json.dumps(document))
    old = dict(document, format="torch_npu_testing.mutate/1", device=None,
               apis=[dict(b, device=None) for b in document["apis"]])
    (folder / "old.json").write_text(json.dumps(old))
    rows = report_strength.rows(str(tmp_path), ["toyapi.scale"])
    assert len(rows) == 2 and sum(1 for row in rows if row.get("device")) == 1
    text = "\n".join(report_strength.markdown_lines(rows))
    assert "`device strength toyapi.scale: killed" in text and "`aten.mul.Tensor:dev-bf16`" in text
    # the device gate's documents (strength-device/) give their device lines alone
    (tmp_path / "strength-device").mkdir()
    (tmp_path / "strength-device" / "toy.json").write_text(json.dumps(document))
    rows = report_strength.rows(str(tmp_path), ["toyapi.scale"])
    assert [row["line"].split(":")[0] for row in rows] == [
        "strength toyapi.scale", "strength toyapi.scale", "device strength toyapi.scale"]


def test_a_survivor_named_in_the_docstring_is_explained(runs):
    record = _outcomes(runs["strong"][1], "toyapi.scale")["aten.mul.Tensor:dev-result-cpu"]
    assert record["outcome"] == "no effect" and record["explained"] is None  # only survivors are explained
    sentence = score.explanation(HEADER, "toyapi.scale:aten.mul.Tensor:dev-result-cpu",
                                 "aten.mul.Tensor:dev-result-cpu", False)
    assert sentence and "a CPU run has one device" in sentence
    assert device_output.line("x", {"status": "not applicable", "device": "npu", "reason": "r"}) == (
        "device strength x: not applicable on npu (r)")


def test_fail_under_counts_device_strength_only_where_it_is_scored(folder):
    done, _ = _run(folder, "weak_gate", WEAK, ("toyapi.scale",), ("--fail-under", "99"))
    assert done.returncode == 1 and "mutate: device strength " in done.stderr and "under --fail-under 99" in done.stderr
    # nothing scored on the device (only switches): stated per API, and the gate does not count it
    args = argparse.Namespace(fail_under=90.0)
    assert cli._under(args, {"percent": 100.0, "device": {"percent": None}}) == 0
    assert cli._under(args, {"percent": 100.0, "device": None}) == 0
    assert cli._under(args, {"percent": 100.0, "device": {"percent": 80.0}}) == 1
    assert cli._under(args, {"percent": 80.0, "device": {"percent": 100.0}}) == 1


def test_a_device_fault_changes_the_device_results_only(run_python):
    """On the simulated NPU: a device mutant of ``mul.Tensor`` moves the device's product within the API's
    call; the CPU's product in the same call, and the device's outside it, stay exact."""
    script = textwrap.dedent('''
        import json
        import torch_npu_testing  # the stand-in torch_npu: the simulated NPU
        import torch
        import torch_npu
        from torch_npu_testing.mutate.device_catalogue import BY_CODE
        from torch_npu_testing.mutate.device_scope import ApiScopes, DeviceOps

        scopes = ApiScopes()
        x = torch.tensor([1.1, 2.3, -0.7])
        xd = x.to("npu")

        def api(a, b):
            return a * 2.5, b * 2.5

        with DeviceOps("npu", scopes, ("api", "aten.mul.Tensor", BY_CODE["dev-shift"])) as mode:
            on_device, on_cpu = scopes.enter("api", api, (xd, x), {})
            outside = xd * 2.5
        print(json.dumps({"device": on_device.device.type, "device_exact": torch.equal(on_device.cpu(), x * 2.5),
                          "cpu_exact": torch.equal(on_cpu, x * 2.5), "outside_exact": torch.equal(outside.cpu(),
                          x * 2.5), "tally": mode.tally.to_dict()}))
    ''')
    done = run_python(["-c", script], PYTHONPATH=ROOT, TORCH_NPU_TESTING_STANDIN_NPU="simulated",
                      TORCH_NPU_TESTING_CACHE=os.environ.get("TORCH_NPU_TESTING_CACHE") or os.path.join(
                          os.path.expanduser("~"), ".cache", "torch_npu_testing"))
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["device"] == "npu" and found["device_exact"] is False
    assert found["cpu_exact"] is True and found["outside_exact"] is True
    assert found["tally"] == {"calls": 1, "changed": 1, "no effect": 0, "not applicable": 0}


def test_a_device_that_cannot_be_forked_is_refused(folder):
    done, out = _run(folder, "meta", WEAK, ("toyapi.scale",), ("--device", "meta"))
    assert done.returncode == 2 and not out.exists()
    assert done.stderr.strip().splitlines()[-1].startswith(
        "torch_npu_testing: error: --device: the device meta is an accelerator runtime")
