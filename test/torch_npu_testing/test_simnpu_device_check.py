# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""The simulated NPU checks its kernels' tensor arguments' devices as a real device does.

CUDA's generated kernel wrappers and TensorIterator (torch_npu's kernels do the same) refuse a tensor of
another device beside the device's own: "Expected all tensors to be on the same device, but found at least
two devices, npu:0 and cpu!". Two exceptions are kept, as torch has them: a 0-d CPU tensor (TensorIterator
takes it as a scalar) and the index tensors of indexing (a ``Tensor?[]`` list, moved to self's device).
The host kernels behind the simulated NPU would accept any CPU tensor, so without the check a device fault
that returns a result on the CPU, or on ``npu:1``, could pass unnoticed through the next op.
"""
from test_simnpu import _json

SAME_DEVICE = "Expected all tensors to be on the same device, but found at least two devices"


def test_a_cpu_tensor_or_the_other_index_beside_the_device_is_refused(run_python):
    got = _json(run_python, """
        x = torch.arange(6.).reshape(2, 3).to("npu")
        outcomes = []
        for call in (lambda: torch.mm(x, torch.ones(3, 1)), lambda: torch.cat([x, torch.ones(2, 3)]),
                     lambda: torch.mm(x, torch.ones(3, 1, device="npu:1")), lambda: x * torch.ones(3),
                     lambda: torch.ones(3, 1).to("npu:1").t().mm(torch.ones(3, 1).to("npu:0").t().t())):
            try:
                outcomes.append(str(call().device))
            except RuntimeError as exc:
                outcomes.append(str(exc))
        print(json.dumps(outcomes))
    """)
    assert all(outcome.startswith(SAME_DEVICE) for outcome in got), got
    assert "npu:0 and cpu" in got[0] and "argument mat2" in got[0] and "aten::mm" in got[0]
    assert "npu:0 and cpu" in got[1] and "argument tensors" in got[1]
    assert "npu:0 and npu:1" in got[2]
    assert "npu:1 and npu:0" in got[4]


def test_zero_dim_cpu_scalars_and_cpu_index_tensors_are_accepted_as_torch_accepts_them(run_python):
    got = _json(run_python, """
        x = torch.arange(6.).reshape(2, 3).to("npu")
        scaled = x * torch.tensor(2.)
        chosen = torch.where(x > 2, x, torch.tensor(0.))
        picked = x[torch.tensor([1, 0])]
        masked = x[torch.tensor([True, False])]
        written = x.clone()
        written[torch.tensor([0])] = torch.tensor(9.)
        same = torch.mm(x, torch.ones(3, 1, device="npu"))
        print(json.dumps([[str(t.device), t.cpu().tolist()] for t in (scaled, chosen, picked, masked, written, same)]))
    """)
    assert got == [["npu:0", [[0, 2, 4], [6, 8, 10]]], ["npu:0", [[0, 0, 0], [3, 4, 5]]],
                   ["npu:0", [[3, 4, 5], [0, 1, 2]]], ["npu:0", [[0, 1, 2]]],
                   ["npu:0", [[9, 9, 9], [3, 4, 5]]], ["npu:0", [[3], [12]]]]
