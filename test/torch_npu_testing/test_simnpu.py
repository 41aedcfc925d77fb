# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""The simulated NPU (``TORCH_NPU_TESTING_STANDIN_NPU=simulated``), in real subprocesses on the tool torch.

A real ``npu`` device whose memory is on the host and whose kernels are the CPU's: tensors are created
there and copied both ways; views share its memory and in-place ops on views land in it; autograd, vmap
and aot export/compile run on it; two devices; one seeded generator per device; a kernel it lacks is a
RuntimeError naming the op; a kernel replaced for the device changes the device only. Bad input: an
unknown switch value, a real torch_npu already loaded, a compiler that fails (one line each).

Each script prints one JSON line; the first test of a session may pay the build (once per torch build,
cached under ``$TORCH_NPU_TESTING_CACHE``).
"""
import json
import os
import textwrap

from conftest import REPO_ROOT

from torch_npu_testing import standin

CACHE = os.environ.get("TORCH_NPU_TESTING_CACHE") or os.path.join(os.path.expanduser("~"), ".cache",
                                                                  "torch_npu_testing")


def _run(run_python, script, **env):
    variables = dict(PYTHONPATH=str(REPO_ROOT), TORCH_NPU_TESTING_STANDIN_NPU="simulated",
                     TORCH_NPU_TESTING_CACHE=CACHE)
    variables.update(env)
    return run_python(["-c", "import torch_npu_testing, json, torch, torch_npu\n" + textwrap.dedent(script)],
                      **variables)


def _json(run_python, script, **env):
    result = _run(run_python, script, **env)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_tensors_are_created_on_npu_and_copied_both_ways(run_python):
    got = _json(run_python, """
        x = torch.arange(6.).reshape(2, 3)
        y = x.to("npu")
        z = torch.ones(2, 3, device="npu", dtype=torch.int64)
        w = torch.empty_strided((2, 3), (1, 2), device="npu").copy_(x)
        print(json.dumps([str(y.device), y.cpu().tolist(), str(z.device), z.cpu().tolist(), w.stride(),
                          w.cpu().tolist(), torch.equal(y.cpu(), x), (y + 1).cpu().tolist(), y.sum().item(),
                          torch.npu.is_available(), torch.npu.device_count(), torch.accelerator.is_available(),
                          str(torch.accelerator.current_accelerator()), torch.npu.get_device_name()]))
    """)
    assert got == ["npu:0", [[0, 1, 2], [3, 4, 5]], "npu:0", [[1, 1, 1], [1, 1, 1]], [1, 2], [[0, 1, 2], [3, 4, 5]],
                   True, [[1, 2, 3], [4, 5, 6]], 15.0, True, 2, True, "npu",
                   "simulated NPU (host memory, CPU kernels)"]


def test_views_share_the_device_memory_and_in_place_ops_on_views_land_in_it(run_python):
    got = _json(run_python, """
        y = torch.zeros(3, 4, device="npu")
        column, row = y[:, 1], y[2]
        column.add_(5)
        row.mul_(0).add_(7)
        c = torch.tensor([1 + 2j, 3 - 4j], device="npu")
        real = torch.view_as_real(c)
        real[0, 0] = 10
        t = y.t()
        print(json.dumps([y.cpu().tolist(), column._base is y, t.untyped_storage().data_ptr() == y.untyped_storage(
            ).data_ptr(), str(real.device), c.cpu().tolist()[0] == [10.0, 2.0] or str(c[0].item()),
            torch.conj(c).cpu().tolist() == [10 - 2j, 3 + 4j] or str(torch.conj(c).cpu()),
            y.unfold(1, 2, 2).shape == (3, 2, 2)]))
    """)
    assert got[0] == [[0, 5, 0, 0], [0, 5, 0, 0], [7, 7, 7, 7]]
    assert got[1:] == [True, True, "npu:0", "(10+2j)", True, True]


def test_autograd_vmap_and_autocast_run_on_npu(run_python):
    got = _json(run_python, """
        x = torch.tensor([1., 2., 3.], device="npu", requires_grad=True)
        (x * x).sum().backward()
        m = torch.arange(6.).reshape(2, 3).npu()
        vm = torch.vmap(lambda t: t * 2 + t.sum())(m)
        conv = torch.nn.Conv2d(1, 2, 2).npu()
        out = conv(torch.ones(1, 1, 3, 3, device="npu"))
        out.sum().backward()
        with torch.autocast("npu", dtype=torch.bfloat16):
            mm = torch.mm(m, m.t())
        print(json.dumps([x.grad.cpu().tolist(), str(x.grad.device), vm.cpu().tolist(), list(out.shape),
                          str(conv.weight.grad.device), str(mm.dtype)]))
    """)
    assert got == [[2, 4, 6], "npu:0", [[3, 5, 7], [18, 20, 22]], [1, 2, 2, 2], "npu:0", "torch.bfloat16"]


def test_aot_autograd_compiles_and_runs_on_npu(run_python):
    got = _json(run_python, """
        from torch._functorch.aot_autograd import aot_function, make_boxed_func
        seen = []
        def compiler(gm, _):
            seen.append(sorted({str(n.meta["val"].device) for n in gm.graph.nodes if "val" in n.meta
                                and isinstance(n.meta["val"], torch.Tensor)}))
            return make_boxed_func(gm)
        f = aot_function(lambda a, b: (a * b).sin().sum(), fw_compiler=compiler, bw_compiler=compiler)
        a = torch.tensor([0.5, 1.5], device="npu", requires_grad=True)
        out = f(a, torch.tensor([2., 3.], device="npu"))
        out.backward()
        want = torch.tensor([0.5, 1.5], requires_grad=True)
        (want * torch.tensor([2., 3.])).sin().sum().backward()
        print(json.dumps([str(out.device), out.item() == (torch.tensor([1., 4.5]).sin().sum().item()),
                          torch.equal(a.grad.cpu(), want.grad), seen]))
    """)
    assert got == ["npu:0", True, True, [["npu:0"], ["npu:0"]]]


def test_two_devices(run_python):
    got = _json(run_python, """
        x = torch.ones(2, device="npu:1")
        torch.npu.set_device(1)
        here = torch.zeros(1, device="npu")
        with torch.npu.device(0):
            inner = torch.zeros(1, device="npu")
        moved = x.to("npu:0")
        try:
            x + moved
            mixed = "no error"
        except RuntimeError as exc:
            mixed = "RuntimeError"
        try:
            torch.ones(1, device="npu:2")
            third = "no error"
        except RuntimeError as exc:
            third = str(exc)
        print(json.dumps([str(x.device), str((x * 2).device), torch.npu.current_device(), str(here.device),
                          str(inner.device), str(moved.device), mixed, third]))
    """)
    assert got[:7] == ["npu:1", "npu:1", 1, "npu:1", "npu:0", "npu:0", "RuntimeError"]
    assert "invalid device index 2" in got[7]


def test_random_ops_draw_from_the_devices_seeded_generator(run_python):
    got = _json(run_python, """
        torch.manual_seed(7)
        first = torch.randn(4, device="npu").cpu()
        cpu_after = torch.randn(2)
        torch.manual_seed(7)
        again = torch.randn(4, device="npu").cpu()
        torch.manual_seed(7)
        cpu_alone = torch.randn(2)
        state = torch.npu.get_rng_state()
        a = torch.rand(3, device="npu").cpu()
        torch.npu.set_rng_state(state)
        b = torch.rand(3, device="npu").cpu()
        with torch.random.fork_rng(device_type="npu"):
            torch.rand(5, device="npu")
        c = torch.rand(3, device="npu").cpu()
        torch.npu.manual_seed_all(3)
        one = torch.rand(2, device="npu:1").cpu()
        g = torch.Generator(device="npu").manual_seed(3)
        with_gen = torch.rand(2, device="npu", generator=g).cpu()
        d = torch.nn.functional.dropout(torch.ones(8, device="npu"), 0.5)
        print(json.dumps([torch.equal(first, again), torch.equal(cpu_after, cpu_alone), torch.equal(a, b),
                          torch.equal(a, c) is False and torch.equal(b, c) is False, one.tolist() == with_gen.tolist(),
                          str(g.device), str(d.device), torch.npu.initial_seed()]))
    """)
    assert got == [True, True, True, True, True, "npu:0", "npu:0", 3]


def test_sparse_layouts_are_served_as_the_cpu_serves_them(run_python):
    got = _json(run_python, """
        d = torch.tensor([[0., 2, 0], [3, 0, 4]])
        rows = []
        for layout in (torch.sparse_coo, torch.sparse_csr, torch.sparse_csc, torch.sparse_bsr, torch.sparse_bsc):
            s = d.to_sparse(layout=layout, blocksize=(1, 1) if layout in (torch.sparse_bsr, torch.sparse_bsc) else None)
            n = s.to("npu")
            rows.append([str(n.device), str((n * 2).layout), torch.equal((n * 2).to_dense().cpu(), d * 2),
                         torch.equal(n.cpu().to_dense(), d)])
        print(json.dumps(rows))
    """)
    assert got == [["npu:0", str(layout), True, True] for layout in (
        "torch.sparse_coo", "torch.sparse_csr", "torch.sparse_csc", "torch.sparse_bsr", "torch.sparse_bsc")]


def test_a_kernel_it_lacks_is_a_runtime_error_naming_the_op(run_python):
    got = _json(run_python, """
        x = torch.ones(4, device="npu")
        try:
            torch.ops.aten._fused_dropout(x, 0.5)
            outcome = "no error"
        except RuntimeError as exc:
            outcome = [type(exc).__name__, "_fused_dropout" in str(exc)]
        print(json.dumps([outcome, (x + 1).cpu().tolist()]))
    """)
    assert got == [["NotImplementedError", True], [2, 2, 2, 2]]


def test_a_kernel_replaced_for_the_device_changes_the_device_only(run_python):
    got = _json(run_python, """
        from torch_npu_testing.standin import kernels
        a, b = torch.tensor([1., 2.]), torch.tensor([3., 4.])
        handle = kernels.replace("mul.Tensor", lambda x, y: kernels.on_host("mul.Tensor", x, y) + 1)
        replaced, cpu = (a.npu() * b.npu()).cpu().tolist(), (a * b).tolist()
        kernels.restore(handle)
        restored = (a.npu() * b.npu()).cpu().tolist()
        with kernels.replaced("sum", lambda x, dtype=None: kernels.on_host("sum", x) * 0):
            inside = a.npu().sum().item()
        print(json.dumps([replaced, cpu, restored, inside, a.npu().sum().item()]))
    """)
    assert got == [[4, 9], [3, 8], [3, 8], 0, 3]


def test_the_kits_runs_resolve_npu_with_the_standins_testcase(run_python):
    got = _json(run_python, """
        from torch_npu_testing import TestCase, device_type
        import torch_npu.testing.testcase as npu_testcase
        class Loose(npu_testcase.TestCase):
            def runTest(self):
                self.assertEqual(torch.tensor([1.0], device="npu"), torch.tensor([1], dtype=torch.int64))
        result = __import__("unittest").TextTestRunner(stream=open("/dev/null", "w")).run(Loose())
        x = torch.ones(1, device="npu")
        print(json.dumps([device_type(), issubclass(TestCase, npu_testcase.TestCase), result.wasSuccessful(),
                          torch_npu.__file__.startswith(torch_npu_testing.standin.FOLDER),
                          torch_npu.npu_format_cast(x, 29) is x, torch_npu.utils.get_cann_version(),
                          torch_npu.npu.utils._is_gte_cann_version("8.0.0"), torch_npu.npu is torch.npu]))
    """)
    assert got == ["npu", True, True, True, True, "", False, True]


def test_stream_and_event_basics(run_python):
    got = _json(run_python, """
        s = torch.npu.current_stream()
        e = torch.npu.Event(enable_timing=True)
        e.record(s)
        s.synchronize()
        torch.npu.synchronize()
        print(json.dumps([str(s.device), e.query(), s.query(), e.elapsed_time(e) == 0.0]))
    """)
    assert got == ["npu:0", True, True, True]


def test_a_cached_start_costs_under_a_second_over_importing_torch(run_python):
    _json(run_python, "print(1)")   # built (or found) once
    got = _json(run_python, """
        import time, importlib
        start = time.perf_counter()
        torch.ones(1, device="npu")
        print(json.dumps([time.perf_counter() - start]))
    """)
    assert got[0] < 1.0


def test_an_unknown_switch_value_is_one_line(run_python):
    result = run_python(["-c", "import torch, torch_npu"], PYTHONPATH=standin.FOLDER,
                        TORCH_NPU_TESTING_STANDIN_NPU="simulate")
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1] == (
        "ValueError: stand-in torch_npu: TORCH_NPU_TESTING_STANDIN_NPU='simulate': "
        "expected one of none, available, simulated")


def test_a_real_torch_npu_already_loaded_is_refused_in_one_line(run_python):
    script = ("import sys, types, torch\n"
              "real = types.ModuleType('torch_npu.npu')\n"
              "torch.utils.rename_privateuse1_backend('npu')\n"
              "torch._register_device_module('npu', real)\n"
              "import torch_npu\n")
    result = run_python(["-c", script], PYTHONPATH=standin.FOLDER, TORCH_NPU_TESTING_STANDIN_NPU="simulated",
                        TORCH_NPU_TESTING_CACHE=CACHE)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1].startswith(
        "RuntimeError: simulated NPU: a torch_npu is already loaded in this process")


def test_where_it_cannot_build_one_line_names_the_torch_and_the_compilers_error(run_python, tmp_path):
    compiler = tmp_path / "cxx"
    compiler.write_text("#!/bin/sh\necho 'simnpu.cpp:1:1: error: no compiler here' >&2\nexit 1\n")
    compiler.chmod(0o755)
    result = run_python(["-m", "torch_npu._device"], PYTHONPATH=standin.FOLDER, CXX=str(compiler),
                        TORCH_NPU_TESTING_CACHE=str(tmp_path / "cache"))
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("simulated NPU: cannot build for torch 2.")
    assert lines[0].endswith("simnpu.cpp:1:1: error: no compiler here")
    missing = run_python(["-m", "torch_npu._device"], PYTHONPATH=standin.FOLDER, CXX=str(tmp_path / "none"),
                         TORCH_NPU_TESTING_CACHE=str(tmp_path / "cache"))
    assert missing.returncode == 2 and "No such file or directory" in missing.stderr.strip()
    assert not list((tmp_path / "cache").rglob("*.so"))
