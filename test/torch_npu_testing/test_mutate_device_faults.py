# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""The device fault catalogue on CPU tensors: each fault changes a dispatch where it can, and is not
applicable (the right result, untouched) or has no effect elsewhere: no free kills."""
import unittest

import torch

from torch_npu_testing.mutate import device_catalogue as catalogue
from torch_npu_testing.mutate.device_faults import Call, refusal_message
from torch_npu_testing.mutate.device_ops import FEATURES, dispatch_features
from torch_npu_testing.mutate.faults import Tally

aten = torch.ops.aten


def run(code, op, *args, state=None, **kwargs):
    """``(result or raised exception, {verdict: count})`` of one dispatch under the fault ``code``."""
    tally = Tally()
    call = Call(op, args, kwargs, lambda a, k: op(*a, **k), state)
    try:
        result = catalogue.apply(catalogue.BY_CODE[code], call, tally)
    except Exception as exc:  # noqa: BLE001 - the fault's own error is the result under test
        result = exc
    return result, dict(tally.verdicts)


class CatalogueShape(unittest.TestCase):
    def test_every_fault_needs_known_features_and_says_why(self):
        self.assertGreaterEqual(len(catalogue.DEVICE_FAULTS), 20)
        for fault in catalogue.DEVICE_FAULTS:
            self.assertTrue(set(fault.needs) <= set(FEATURES), fault.code)
            self.assertTrue(fault.why and fault.description, fault.code)
        self.assertEqual(len(catalogue.BY_CODE), len(catalogue.DEVICE_FAULTS))

    def test_faults_are_chosen_by_the_features_seen(self):
        x, y = torch.tensor([1.5, 2.5, 3.5]), torch.tensor([[1.0], [2.0]])
        features = dispatch_features(aten.mul.Tensor, (x, y), {}, aten.mul.Tensor(x, y))
        self.assertEqual(features, {"tensor out", "floating out", "float32/64", "promotable out", "broadcast"})
        chosen = [fault.code for fault in catalogue.faults_for(features)]
        self.assertIn("dev-bf16", chosen)
        self.assertIn("dev-broadcast", chosen)
        self.assertNotIn("dev-inplace-lost", chosen)
        self.assertNotIn("dev-nondeterministic", chosen)  # needs "repeated" too
        self.assertIn("dev-nondeterministic", [f.code for f in catalogue.faults_for(features | {"repeated"})])

    def test_a_view_op_gets_no_value_fault(self):
        x = torch.arange(6.0).reshape(2, 3)
        chosen = [f.code for f in catalogue.faults_for(dispatch_features(aten.t.default, (x,), {}, x.t()))]
        self.assertEqual(chosen, ["dev-contiguous", "dev-view-copy", "dev-result-cpu", "dev-other-index"])

    def test_schema_features(self):
        x = torch.ones(2, 3)
        self.assertIn("writes input", dispatch_features(aten.add_.Tensor, (x, x), {}, x))
        self.assertIn("view", dispatch_features(aten.t.default, (x,), {}, x.t()))
        self.assertIn("random", dispatch_features(aten.bernoulli.p, (x, 0.5), {}, x))
        self.assertIn("raises", dispatch_features(aten.mm.default, (x, x), {}, raised=True))
        self.assertIn("strided out", dispatch_features(aten.t.default, (x,), {}, x.t()))


class ValueFaults(unittest.TestCase):
    def test_shift_moves_floats_only(self):
        x = torch.tensor([1.0, -200.0])
        result, verdicts = run("dev-shift", aten.mul.Tensor, x, x)
        self.assertEqual(verdicts, {"changed": 1})
        self.assertFalse(torch.equal(result, x * x))
        self.assertTrue(torch.allclose(result, x * x, rtol=2e-3))
        _, verdicts = run("dev-shift", aten.mul.Tensor, torch.tensor([2, 3]), torch.tensor([4, 5]))
        self.assertEqual(verdicts, {"not applicable": 1})

    def test_reduced_precision_caught_by_values_only_small_integers_hide(self):
        x = torch.tensor([1.0009765625 + 1e-6, 3.14159], dtype=torch.float32)
        for code in ("dev-bf16", "dev-fp16"):
            result, verdicts = run(code, aten.mul.Tensor, x, x)
            self.assertEqual(verdicts, {"changed": 1}, code)
            self.assertEqual(result.dtype, torch.float32)
            self.assertFalse(torch.equal(result, x * x), code)
        _, verdicts = run("dev-bf16", aten.add.Tensor, torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0]))
        self.assertEqual(verdicts, {"no effect": 1})
        _, verdicts = run("dev-bf16", aten.add.Tensor, torch.tensor([1, 2]), torch.tensor([3, 4]))
        self.assertEqual(verdicts, {"not applicable": 1})

    def test_dtype_narrowed_and_promoted(self):
        x = torch.tensor([1.0, 2.0], dtype=torch.float64)
        result, verdicts = run("dev-narrow", aten.neg.default, x)
        self.assertEqual((result.dtype, verdicts), (torch.float32, {"changed": 1}))
        result, verdicts = run("dev-promote", aten.neg.default, torch.tensor([1, 2], dtype=torch.int32))
        self.assertEqual((result.dtype, verdicts), (torch.int64, {"changed": 1}))
        _, verdicts = run("dev-narrow", aten.neg.default, torch.tensor([1.0]))
        self.assertEqual(verdicts, {"not applicable": 1})

    def test_int64_wraps_only_beyond_int32(self):
        big = torch.tensor([2 ** 40, 3])
        result, verdicts = run("dev-int64-as-int32", aten.add.Tensor, big, torch.tensor([1, 1]))
        self.assertEqual(verdicts, {"changed": 1})
        self.assertNotEqual(result[0].item(), 2 ** 40 + 1)
        _, verdicts = run("dev-int64-as-int32", aten.add.Tensor, torch.tensor([5]), torch.tensor([1]))
        self.assertEqual(verdicts, {"no effect": 1})

    def test_nan_flushed_and_subnormals(self):
        result, verdicts = run("dev-nan-flushed", aten.maximum.default, torch.tensor([float("nan"), 1.0]),
                               torch.tensor([0.0, 2.0]))
        self.assertEqual((result.tolist(), verdicts), ([0.0, 2.0], {"changed": 1}))
        tiny = torch.tensor([1e-40, 1.0])
        result, verdicts = run("dev-ftz", aten.mul.Tensor, tiny, torch.tensor([1.0, 1.0]))
        self.assertEqual((result[0].item(), verdicts), (0.0, {"changed": 1}))


class LayoutFaults(unittest.TestCase):
    def test_contiguous_loses_strides_of_a_strided_result(self):
        x = torch.arange(6.0).reshape(2, 3)
        result, verdicts = run("dev-contiguous", aten.t.default, x)
        self.assertEqual(verdicts, {"changed": 1})
        self.assertEqual(result.stride(), (2, 1))
        _, verdicts = run("dev-contiguous", aten.neg.default, x)
        self.assertEqual(verdicts, {"not applicable": 1})

    def test_view_copy_breaks_storage_only_for_views(self):
        x = torch.arange(6.0).reshape(2, 3)
        result, verdicts = run("dev-view-copy", aten.t.default, x)
        self.assertEqual(verdicts, {"changed": 1})
        self.assertTrue(torch.equal(result, x.t()))
        self.assertNotEqual(result.untyped_storage().data_ptr(), x.untyped_storage().data_ptr())
        _, verdicts = run("dev-view-copy", aten.neg.default, x)
        self.assertEqual(verdicts, {"not applicable": 1})

    def test_conj_bit_dropped(self):
        z = torch.tensor([1 + 2j, 3 - 1j]).conj()
        result, verdicts = run("dev-bits-dropped", aten.mul.Tensor, z, torch.tensor([1 + 0j, 1 + 0j]))
        self.assertEqual(verdicts, {"changed": 1})
        self.assertTrue(torch.equal(result, z.conj()))
        _, verdicts = run("dev-bits-dropped", aten.mul.Tensor, torch.tensor([1.0]), torch.tensor([2.0]))
        self.assertEqual(verdicts, {"not applicable": 1})

    def test_strides_ignored_reads_a_transposed_input_as_dense(self):
        x = torch.arange(6.0).reshape(2, 3).t()
        result, verdicts = run("dev-strides-ignored", aten.neg.default, x)
        self.assertEqual(verdicts, {"changed": 1})
        self.assertTrue(torch.equal(result, -torch.arange(6.0).reshape(3, 2)))
        expanded = torch.tensor([1.0]).expand(4)  # dense reading would leave the storage
        _, verdicts = run("dev-strides-ignored", aten.neg.default, expanded)
        self.assertEqual(verdicts, {"not applicable": 1})

    def test_broadcast_by_tiling_is_wrong_along_trailing_dims_only(self):
        row, column = torch.tensor([1.0, 2.0, 3.0]), torch.tensor([[10.0], [20.0]])
        result, verdicts = run("dev-broadcast", aten.add.Tensor, row, column)
        self.assertEqual(verdicts, {"changed": 1})
        self.assertFalse(torch.equal(result, row + column))
        _, verdicts = run("dev-broadcast", aten.add.Tensor, row, torch.ones(2, 3))
        self.assertEqual(verdicts, {"no effect": 1})  # leading-dim broadcast: tiling is right

    def test_zero_dim_result_as_one_dim(self):
        result, verdicts = run("dev-0d-as-1d", aten.mul.Tensor, torch.tensor(2.0), torch.tensor(3.0))
        self.assertEqual((result.shape, verdicts), (torch.Size([1]), {"changed": 1}))
        _, verdicts = run("dev-0d-as-1d", aten.mul.Tensor, torch.ones(2), torch.ones(2))
        self.assertEqual(verdicts, {"not applicable": 1})


class SideEffectsAndErrors(unittest.TestCase):
    def test_inplace_write_lost_or_to_a_copy(self):
        x = torch.ones(3)
        result, verdicts = run("dev-inplace-lost", aten.add_.Tensor, x, torch.ones(3))
        self.assertEqual((x.tolist(), verdicts), ([1.0, 1.0, 1.0], {"changed": 1}))
        self.assertIs(result, x)
        x = torch.ones(3)
        result, verdicts = run("dev-inplace-copy", aten.add_.Tensor, x, torch.ones(3))
        self.assertEqual((x.tolist(), result.tolist(), verdicts), ([1.0] * 3, [2.0] * 3, {"changed": 1}))
        _, verdicts = run("dev-inplace-lost", aten.add.Tensor, x, x)
        self.assertEqual(verdicts, {"not applicable": 1})

    def test_dtype_refused_in_torch_npu_shape(self):
        error, verdicts = run("dev-dtype-refused", aten.mul.Tensor, torch.tensor([1, 2], dtype=torch.int16),
                              torch.tensor([1, 2], dtype=torch.int16))
        self.assertIsInstance(error, RuntimeError)
        self.assertEqual(str(error), "aclnnMul not implemented for DT_INT16")
        self.assertEqual(verdicts, {"changed": 1})
        self.assertEqual(refusal_message(aten.add_.Tensor, torch.float64), "aclnnAdd not implemented for DT_DOUBLE")
        _, verdicts = run("dev-dtype-refused", aten.mul.Tensor, torch.ones(2), torch.ones(2))
        self.assertEqual(verdicts, {"not applicable": 1})

    def test_empty_refused(self):
        error, verdicts = run("dev-empty-refused", aten.neg.default, torch.ones(0, 3))
        self.assertIsInstance(error, RuntimeError)
        self.assertEqual(verdicts, {"changed": 1})

    def test_error_swallowed_only_where_the_right_kernel_raises(self):
        result, verdicts = run("dev-error-swallowed", aten.mm.default, torch.ones(2, 3), torch.ones(2, 3))
        self.assertEqual((result.shape, verdicts), (torch.Size([2, 3]), {"changed": 1}))
        _, verdicts = run("dev-error-swallowed", aten.mm.default, torch.ones(2, 3), torch.ones(3, 2))
        self.assertEqual(verdicts, {"not applicable": 1})

    def test_result_on_cpu_has_no_effect_on_a_cpu_dispatch(self):
        _, verdicts = run("dev-result-cpu", aten.neg.default, torch.ones(2))
        self.assertEqual(verdicts, {"no effect": 1})
        _, verdicts = run("dev-other-index", aten.neg.default, torch.ones(2))
        self.assertEqual(verdicts, {"not applicable": 1})


class RepeatsAndRandom(unittest.TestCase):
    def test_nondeterminism_on_every_other_call(self):
        state, x = {}, torch.tensor([0.1, 0.2])
        first, verdicts = run("dev-nondeterministic", aten.mul.Tensor, x, x, state=state)
        self.assertEqual(verdicts, {"not applicable": 1})
        second, verdicts = run("dev-nondeterministic", aten.mul.Tensor, x, x, state=state)
        self.assertEqual(verdicts, {"changed": 1})
        self.assertFalse(torch.equal(first, second))

    def test_random_op_ignores_manual_seed(self):
        state, x = {}, torch.full((64,), 0.5)
        torch.manual_seed(0)
        right = aten.bernoulli.p(x, 0.5)
        torch.manual_seed(0)
        first, verdicts = run("dev-rng-stream", aten.bernoulli.p, x, 0.5, state=state)
        self.assertEqual(verdicts, {"changed": 1})
        torch.manual_seed(0)
        second, _ = run("dev-rng-stream", aten.bernoulli.p, x, 0.5, state=state)
        self.assertFalse(torch.equal(first, second))  # the seed does not reach the stream
        self.assertFalse(torch.equal(first, right))
        _, verdicts = run("dev-rng-stream", aten.neg.default, x, state=state)
        self.assertEqual(verdicts, {"not applicable": 1})


if __name__ == "__main__":
    unittest.main()
