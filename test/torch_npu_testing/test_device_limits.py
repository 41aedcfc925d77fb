# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""What the simulated NPU refuses per a limits table (the stand-in's ``_limits``): the stated mappings, the
most permissive note for data movement and for an operator several APIs reach (conflicts listed), ✘ APIs,
torch_npu's message shape; and the carried helper telling a refused vehicle (skip, with the device's
message, probed once) from the API under test refusing (documented: skip; undocumented: failure)."""
import json
import unittest

import pytest

from torch_npu_testing.runtime import carried_limits
from torch_npu_testing.standin.torch_npu import _limits

ALL12 = ["bfloat16", "bool", "complex128", "complex64", "float16", "float32", "float64", "int16", "int32", "int64",
         "int8", "uint8"]


def entry(supported=True, **limits):
    return {"supported": supported, "limits": limits}


TABLE = {"format": _limits.FORMAT, "product": "Atlas A2 训练系列产品", "entries": {
    "torch.mul": entry(dtypes={"input": ["float16", "float32"]}),
    "torch.Tensor.mul": entry(dtypes={"self": ["float16", "float32", "int32"]}),
    "torch.multiply": entry(),
    "torch.special.erfcx": entry(dtypes={"input": ["float32"]}),
    "torch.Tensor.to_sparse_csr": entry(supported=False),
    "torch.Tensor.to": entry(dtypes={"self": ["float32"]}, formats={"memory_format": ["contiguous_format"]}),
    "torch.Tensor.copy_": entry(dtypes={"self": ["float32", "float64"]}),
    "torch.Tensor.clone": entry(dtypes={"self": ["int8"]}),
    "torch.logaddexp": entry(excluded={"*": ["float64"]}),
}}


class Fake:
    def __init__(self, dtype, device="npu"):
        self.dtype, self.device = f"torch.{dtype}", device


def on_device(tensor):
    return tensor.device == "npu"


def test_api_to_aten_names_by_rule_and_by_table():
    assert _limits.aten_names("torch.mul") == ["mul"] and _limits.aten_names("torch.Tensor.mul_") == ["mul_"]
    assert _limits.aten_names("torch.special.erfcx") == ["special_erfcx"]
    assert _limits.aten_names("torch.linalg.norm") == ["linalg_norm"]
    assert _limits.aten_names("torch.nn.functional.relu") == ["relu"]
    assert _limits.aten_names("torch.Tensor.to") == ["_to_copy"]
    assert _limits.aten_names("torch.cuda.memory.empty_cache") == []


def test_an_operator_reached_by_several_apis_takes_their_union_and_the_conflict_is_listed():
    ops, conflicts = _limits.plan(TABLE)
    assert ops["mul"]["dtypes"] == {"self": {"float16", "float32", "int32"}}  # input -> self, union
    assert ops["mul"]["apis"] == ["torch.Tensor.mul", "torch.mul"]
    assert ops["multiply"]["dtypes"] == {} and ops["multiply"]["formats"] is None  # no note: nothing limited
    assert any(line.startswith("mul: torch.mul (self: float16,float32); torch.Tensor.mul (self: float16,float32,"
                               "int32)") for line in conflicts), conflicts
    assert ops["special_erfcx"]["dtypes"] == {"self": {"float32"}}
    assert ops["to_sparse_csr"]["refused"] is True and ops["mul"]["refused"] is False


def test_data_movement_takes_the_most_permissive_note_and_lists_the_conflict():
    ops, conflicts = _limits.plan(TABLE)
    for name in ("_to_copy", "copy_", "clone", "empty_like", "view"):
        assert ops[name]["dtypes"] == {"*": {"float32", "float64", "int8"}} and ops[name]["formats"] is None
    assert ops["_to_copy"]["label"].startswith("copies, factories and views (the most permissive of 3")
    line = next(line for line in conflicts if line.startswith("data movement: "))
    assert "torch.Tensor.to (self: float32; formats: contiguous_format)" in line and "torch.Tensor.copy_" in line


def test_refusal_messages_in_torch_npus_shape():
    ops, _ = _limits.plan(TABLE)
    product = TABLE["product"]
    message = _limits.refusal("mul", ops["mul"], {"self": Fake("float64"), "other": 2}, product, on_device)
    assert message.startswith("aclnnMul not implemented for DT_DOUBLE (simulated NPU limits: torch.Tensor.mul, ")
    assert _limits.refusal("mul", ops["mul"], {"self": Fake("int32"), "other": Fake("float64")}, product,
                           on_device) is None  # the notes limit self only
    assert _limits.refusal("mul", ops["mul"], {"self": Fake("float64", "cpu")}, product, on_device) is None
    message = _limits.refusal("logaddexp", ops["logaddexp"], {"self": Fake("float32"), "other": Fake("float64")},
                              product, on_device)
    assert message.startswith("aclnnLogaddexp not implemented for DT_DOUBLE")
    message = _limits.refusal("to_sparse_csr", ops["to_sparse_csr"], {"self": Fake("float32")}, product, on_device)
    assert message == ("aclnnToSparseCsr: torch.Tensor.to_sparse_csr is not supported on Atlas A2 训练系列产品 "
                       "(✘ in Ascend's docs)")
    message = _limits.refusal("copy_", ops["copy_"], {"self": Fake("uint16")}, product, on_device)
    assert message.startswith("aclnnCopy not implemented for DT_UINT16 (simulated NPU limits: copies, factories")
    assert _limits.dt_name("float32") == "DT_FLOAT" and _limits.dt_name("bfloat16") == "DT_BF16"


def test_the_switch_names_a_table_and_a_bad_one_is_one_error(tmp_path):
    assert _limits.table_from_environment({}) is None
    good = tmp_path / "t.json"
    good.write_text(json.dumps(TABLE), encoding="utf-8")
    assert _limits.table_from_environment({_limits.SWITCH: str(good)})["product"] == TABLE["product"]
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "other/1"}', encoding="utf-8")
    for path, said in ((bad, "not a torch_npu_testing.limits/1 table"), (tmp_path / "none.json", "cannot read")):
        with pytest.raises(_limits.LimitsError, match=said):
            _limits.table_from_environment({_limits.SWITCH: str(path)})


# --------------------------------------------------------------------------- the carried helper
def run_case(method, reset=True):
    if reset:
        carried_limits.DEVICE_VEHICLES.clear()
    case = type("Case", (unittest.TestCase,), {"test_it": method})("test_it")
    result = unittest.TestResult()
    case.run(result)
    return result


REFUSED = RuntimeError("aclnnMul not implemented for DT_DOUBLE (simulated NPU limits: torch.mul take float32)\nmore")


def test_a_refused_vehicle_skips_with_the_devices_message_probed_once():
    calls = []

    def probe():
        calls.append(1)
        raise REFUSED

    def method(self):
        for _ in range(3):
            with self.subTest():
                carried_limits.skip_unless_vehicle(self, "x * k, float64", probe)
                self.fail("not reached")
    result = run_case(method)
    assert calls == [1] and not result.failures and not result.errors and len(result.skipped) == 3
    assert result.skipped[0][1] == ("device limit, vehicle x * k, float64: aclnnMul not implemented for DT_DOUBLE "
                                    "(simulated NPU limits: torch.mul take float32)")
    assert carried_limits.vehicle_refusal("x * k, float64", probe).startswith("aclnnMul") and calls == [1]


def test_a_vehicle_the_device_runs_does_not_skip_and_another_error_is_raised():
    result = run_case(lambda self: carried_limits.skip_unless_vehicle(self, "ok", lambda: None))
    assert result.wasSuccessful() and not result.skipped

    def broken():
        raise RuntimeError("shape mismatch")
    result = run_case(lambda self: carried_limits.skip_unless_vehicle(self, "bad", broken))
    assert len(result.errors) == 1 and "shape mismatch" in result.errors[0][1]


def test_torch_refusing_a_layout_on_the_device_is_a_vehicle_refusal_too():
    """torch 2.7.1 checks compressed sparse members against CPU, CUDA, XPU and Meta: on an NPU that is a refusal of
    the device (one pattern, REFUSALS), skipped with torch's message; a look-alike without the device shape raises."""
    def moved():
        raise RuntimeError("device type of values (npu) must be CPU or CUDA or XPU or Meta")
    result = run_case(lambda self: carried_limits.skip_unless_vehicle(self, "CSR on npu", moved))
    assert result.skipped[0][1] == ("device limit, vehicle CSR on npu: device type of values (npu) must be CPU or "
                                    "CUDA or XPU or Meta") and not result.errors

    def other():
        raise RuntimeError("values must be CPU or CUDA")
    result = run_case(lambda self: carried_limits.skip_unless_vehicle(self, "other", other))
    assert len(result.errors) == 1 and not result.skipped


def test_the_api_refusing_is_expected_when_documented_and_a_failure_when_not():
    def documented(self):
        with carried_limits.api_limit(self, "torch.mul float64", documented=True):
            raise REFUSED

    def undocumented(self):
        with carried_limits.api_limit(self, "torch.mul int16", documented=False):
            raise REFUSED
    result = run_case(documented)
    assert not result.failures and result.skipped[0][1].startswith("device limit, documented for the API, torch.mul")
    result = run_case(undocumented, reset=False)
    assert len(result.failures) == 1 and "Ascend's docs do not say so: aclnnMul" in result.failures[0][1]
    result = run_case(lambda self: carried_limits.api_limit(self, "x", True).__enter__() or None)
    assert result.wasSuccessful()


# --------------------------------------------------------------------------- the gaps table verify and pr carry
def test_the_gaps_a_run_met_as_one_short_table(tmp_path):
    from torch_npu_testing.common import gaps
    path = tmp_path / "gaps.jsonl"
    double = "aclnnMul not implemented for DT_DOUBLE"
    path.write_text(json.dumps({"op": "mul", "dtype": "DT_DOUBLE", "message": double}) + "\n"
                    + json.dumps({"op": "_to_copy", "dtype": "DT_UINT16", "message": "m | u16"}) + "\n",
                    encoding="utf-8")
    reasons = [f"device limit, vehicle x * k, torch.float64: {double}", "not applicable: something else",
               "device limit, documented for the API, torch.mul float64: " + double,
               "torch.mul int16: the device refuses the API under test and Ascend's docs do not say so: aclnnMul "
               "not implemented for DT_INT16", f"device limit, vehicle x * k, torch.float64: {double}"]
    rows = gaps.merged(gaps.from_reasons(reasons), gaps.read(path))
    assert [(row["kind"], row["what"], row["documented"]) for row in rows] == [
        ("vehicle", "x * k, torch.float64", None), ("API", "torch.mul float64", True),
        ("API", "torch.mul int16", False),
        ("device", "_to_copy DT_UINT16", None)]
    table = gaps.render(rows)
    assert table.splitlines()[:2] == gaps.HEADER and "| API | torch.mul int16 | no | aclnnMul" in table
    assert "| device | _to_copy DT_UINT16 | - | m \\| u16 |" in table
    assert gaps.render(rows, limit=1).endswith("3 more gaps in the record.")
    assert gaps.read(tmp_path / "none.jsonl") == [] and gaps.render([]) == "No device gap met."


def test_a_refusal_of_what_the_cpu_refuses_too_is_the_cpus_outcome():
    """``cpu_refuses``: the CPU raises for the same call (relu6 of bool), so the device refusing it is no gap: the
    block ends, no skip and no failure; any other error still propagates."""
    def refused_alike(self):
        got = "kept"
        with carried_limits.api_limit(self, "torch.nn.functional.relu6 bool", False, cpu_refuses=True):
            raise REFUSED
        self.assertEqual(got, "kept")

    def other_error(self):
        with carried_limits.api_limit(self, "x", False, cpu_refuses=True):
            raise RuntimeError("shape mismatch")
    result = run_case(refused_alike)
    assert result.wasSuccessful() and not result.skipped
    result = run_case(other_error, reset=False)
    assert len(result.errors) == 1 and "shape mismatch" in result.errors[0][1]
