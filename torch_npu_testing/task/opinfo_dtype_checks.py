# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""The second half of :data:`.opinfo_checks.CHECKS`, text written into an OpInfo draft: the declared dtypes and
the whole dtype space against the CPU, error inputs (and their types on the device), gradcheck and the device's
gradients against the CPU's. It uses the first half's helpers (``built``, ``case``, ``on_device``, ...), which
come before it in the drafted file."""
CHECKS = '''\
def check_declared_dtypes(test, op, fn, kind="test_dtypes"):
    """Every dtype the entry declares for the CPU succeeds on every sample."""
    for dtype in dtypes_of(test, op, kind, op.supported_dtypes("cpu")):
        for index, sample in enumerate(built(test, op, dtype, reference=False)):
            with case(test, op, kind, dtype, label(dtype, index, sample)):
                call(fn, sample)


def check_dtype_space(test, op, fn, kind="test_dtypes"):
    """For every dtype of the space, the outcome on DEVICE is the CPU's (success and result dtypes, or the
    exception type); undeclared dtypes are reached by casting the samples of a declared one."""
    declared = op.supported_dtypes("cpu")
    base = torch.float32 if torch.float32 in declared else sorted(declared, key=str)[0]
    for dtype in dtypes_of(test, op, kind, DTYPES):
        source = dtype if dtype in declared else base
        for index, sample in enumerate(built(test, op, source, reference=False)):
            with case(test, op, kind, dtype, label(dtype, index, sample)):
                try:
                    cpu = moved(sample, "cpu", dtype, source)
                except Exception as exc:  # noqa: BLE001 - a cast that cannot be made: not applicable
                    test.skipTest(f"not applicable: cannot cast to {dtype}: {type(exc).__name__}")
                want = outcome(fn, cpu)
                try:  # a device limit's refusal: on_device's skip or failure (the CPU's outcome where it raises
                    # too: both refuse the dtype); any other error is an outcome
                    got = on_device(test, dtype, lambda: outcome(fn, moved(cpu, DEVICE), ()),
                                    cpu_refuses=want[0] == "raised") or want
                except (unittest.SkipTest, test.failureException):
                    raise
                except Exception as exc:  # noqa: BLE001 - the outcome is the answer
                    got = "raised", type(exc).__name__
                test.assertEqual(got, want)


def check_error_inputs(test, op, fn, kind="test_errors"):
    inputs = list(op.error_inputs("cpu"))
    if not inputs:
        test.skipTest(f"torch {torch.__version__}'s op_db entry {op.name!r} has no error_inputs")
    for index, error in enumerate(inputs):
        with case(test, op, kind, None, f"#{index}: {error.sample_input.summary()}"):
            with test.assertRaisesRegex(error.error_type, error.error_regex):
                call(fn, error.sample_input)


def check_error_types_on_device(test, op, fn):
    for index, error in enumerate(op.error_inputs("cpu")):
        sample = error.sample_input
        with test.subTest(f"#{index}: {sample.summary()}"):
            test.assertEqual(outcome(fn, moved(sample, DEVICE)), outcome(fn, sample))


def gradcheck_inputs(op, fn, sample):
    """``(function of the tensors that require grad, those tensors)`` rebuilding the sample around them."""
    leaves, spec = pytree.tree_flatten((sample.input, sample.args, sample.kwargs))
    positions = [i for i, leaf in enumerate(leaves) if isinstance(leaf, torch.Tensor) and leaf.requires_grad]

    def rebuilt(*tensors):
        values = list(leaves)
        for position, tensor in zip(positions, tensors):
            values[position] = tensor
        input, args, kwargs = pytree.tree_unflatten(values, spec)
        return sample.output_process_fn_grad(op.gradcheck_wrapper(fn, input, *args, **kwargs))
    return rebuilt, [leaves[i] for i in positions]


def check_gradcheck(test, op, fn, kind="test_fn_grad"):
    """gradcheck in float64 on the CPU with the entry's wrapper, fast mode and nondeterminism tolerance."""
    if torch.float64 not in op.supported_backward_dtypes("cpu"):
        test.skipTest(f"torch {torch.__version__}'s op_db entry {op.name!r} declares no float64 backward")
    fast = True if op.gradcheck_fast_mode is None else op.gradcheck_fast_mode
    for index, sample in enumerate(built(test, op, torch.float64, reference=False, requires_grad=True)):
        with case(test, op, kind, torch.float64, label(torch.float64, index, sample)):
            rebuilt, inputs = gradcheck_inputs(op, fn, sample)
            if not inputs:
                test.skipTest("no input of the sample requires grad")
            test.assertTrue(torch.autograd.gradcheck(rebuilt, inputs, fast_mode=fast, check_grad_dtypes=True,
                                                     nondet_tol=op.gradcheck_nondet_tol))


def gradients(op, fn, sample):
    """Gradients of the sample's grad-requiring tensors for fixed, position-dependent output weights."""
    rebuilt, inputs = gradcheck_inputs(op, fn, sample)
    outputs = [t for t in pytree.tree_leaves(rebuilt(*inputs)) if isinstance(t, torch.Tensor) and t.requires_grad]
    weights = [torch.linspace(-1, 1, t.numel(), dtype=torch.float64).to(t).reshape(t.shape) for t in outputs]
    found = torch.autograd.grad(outputs, inputs, weights, allow_unused=True) if outputs else ()
    return [g.cpu() if g is not None else None for g in found]


def check_device_gradients(test, op, fn):
    for dtype in sorted(op.supported_backward_dtypes(DEVICE), key=str):
        if not (dtype.is_floating_point or dtype.is_complex):
            continue
        for index, sample in enumerate(built(test, op, dtype, reference=False, requires_grad=True)):
            with test.subTest(label(dtype, index, sample)):
                expected = gradients(op, fn, sample)
                actual = on_device(test, dtype, lambda: gradients(op, fn, moved(sample, DEVICE)))
                test.assertEqual([g is None for g in actual], [g is None for g in expected])
                assert_same([g for g in actual if g is not None], [g for g in expected if g is not None])
'''
