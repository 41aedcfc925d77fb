# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""The checks an OpInfo-backed draft carries: text written into the drafted file, not code the kit runs.

A drafted file runs standalone from Ascend's ``test/`` with only torch, ``torch.testing`` and the kit's carried
runtime, so the helpers its classes call are part of the file. They read the entry at run time (samples,
declared dtypes, error inputs, markings) and call the API through the function the draft passes (``api``, by
its dotted name): :data:`IMPORTS` and the text :data:`CHECKS`, whose functions take ``(test, op, fn, ...)``:

- ``markings``/``honour``/``case``: the entry's ``DecorateInfo`` for an upstream test kind on ``DEVICE``;
  a whole-test skip/expected failure decorates the test as upstream does, a dtype-bound one applies to that
  dtype's cases (a skip skips the case; an expected failure that fails skips it saying so, one that passes
  fails as an unexpected success);
- a sample builder that raises makes that dtype not applicable (a skipped case), never a pass;
- a device result is on the device and equals the CPU's, with its strides over dims of size > 1 and the same
  outputs being views of an input, and a second device call (or in-place write) gives the same bits (on the
  CPU these skip with :data:`NO_ACCELERATOR`); the dtype space and the device's error inputs compare
  outcomes, a result left off the input's device included (:mod:`.opinfo_dtype_checks`: declared dtypes,
  the dtype space, error inputs, gradients).
"""
from . import opinfo_dtype_checks

IMPORTS = """\
import contextlib
import unittest

import torch
from torch.testing._internal.common_dtype import all_types_and_complex_and
from torch.testing._internal.common_methods_invocations import op_db
from torch.utils import _pytree as pytree
"""

CHECKS = '''\
ON_ACCELERATOR = DEVICE != "cpu"
NO_ACCELERATOR = ("no accelerator: on the CPU this would compare the CPU with itself; on an accelerator it compares "
                  "the device with the same call on the CPU")
only_on_accelerator = unittest.skipUnless(ON_ACCELERATOR, NO_ACCELERATOR)
REF_DTYPES = (torch.float64, torch.long, torch.complex128)  # what upstream compares with a numpy ref
_MARKS = {}


def entry(name, variant_test_name):
    """This torch's op_db entry, or None (its classes then skip, saying so)."""
    return next((op for op in op_db if op.name == name and op.variant_test_name == variant_test_name), None)


def lacks(name, variant_test_name, what="the entry"):
    return f"torch {torch.__version__}'s op_db lacks {what} ({name!r}, variant {variant_test_name!r})"


def present(op, requires):
    """Whether this release's entry has the variant a case needs (``op``, ``method_variant``, ``alias:N:op``...)."""
    if requires.startswith("alias:"):
        _, name, attribute = requires.split(":")
        return any(alias.name == name and getattr(alias, attribute, None) is not None for alias in op.aliases)
    return getattr(op, requires, None) is not None


def _action(decorator):
    """("skip" / "xfail", reason) for unittest's skip and expectedFailure; None for others (not applied)."""
    if decorator is unittest.expectedFailure:
        return "xfail", "expected failure"
    try:
        probe = decorator(lambda *args, **kwargs: None)
    except Exception:  # noqa: BLE001 - a decorator of torch's device framework
        return None
    if getattr(probe, "__unittest_skip__", False):
        return "skip", getattr(probe, "__unittest_skip_why__", "")
    if getattr(probe, "__unittest_expecting_failure__", False):
        return "xfail", "expected failure"
    return None


def markings(op, kind):
    """``[(dtypes or None, action, reason)]``: the entry's DecorateInfo for upstream's test ``kind`` here."""
    key = (id(op), kind)
    if key not in _MARKS:
        classes = (None, "TestBwdGradients", "TestGradients") if kind == "test_fn_grad" else (None, "TestCommon")
        found = []
        for info in getattr(op, "decorators", ()) or ():
            if not hasattr(info, "decorators") or not getattr(info, "active_if", True):
                continue
            if info.cls_name not in classes or info.test_name not in (None, kind) or \\
                    info.device_type not in (None, DEVICE):
                continue
            for action in filter(None, map(_action, info.decorators)):
                where = f"{info.cls_name or 'every class'}.{kind} on {info.device_type or 'every device'}"
                found.append((info.dtypes, action[0], f"upstream marks {op.name} {where}: {action[1]}".rstrip(": ")))
        _MARKS[key] = found
    return _MARKS[key]


def honour(op, kind, actions=("skip", "xfail")):
    """Decorate a test with the entry's whole-test markings for ``kind`` (those of ``actions``), as upstream
    applies them."""
    def apply(test):
        for dtypes, action, reason in (markings(op, kind) if op is not None else ()):
            if dtypes is None and action in actions:
                test = unittest.skip(reason)(test) if action == "skip" else unittest.expectedFailure(test)
        return test
    return apply


def dtypes_of(test, op, kind, dtypes):
    """``dtypes`` in a stable order; one whose cases the entry marks skipped for ``kind`` is one skipped case."""
    for dtype in sorted(dtypes, key=str):
        reason = next((r for ds, action, r in markings(op, kind)
                       if ds is not None and dtype in ds and action == "skip"), None)
        if reason is None:
            yield dtype
            continue
        with test.subTest(str(dtype)):
            test.skipTest(reason)


@contextlib.contextmanager
def case(test, op, kind, dtype, label):
    """One labelled subtest; a dtype-bound expected failure of ``kind``: a failure skips saying so, a success fails."""
    with test.subTest(label):
        expected = [r for ds, action, r in markings(op, kind) if ds is not None and dtype in ds and action == "xfail"]
        if not expected:
            yield
            return
        try:
            yield
        except Exception as exc:  # noqa: BLE001 - the failure upstream expects
            test.skipTest(f"{expected[0]} for {dtype} (it fails: {type(exc).__name__})")
        test.fail(f"unexpected success: {expected[0]} for {dtype}")


def built(test, op, dtype, reference=True, requires_grad=False):
    """The entry's reference (or plain) samples on the CPU; a builder that raises: one skipped case."""
    builder = op.reference_inputs if reference else op.sample_inputs
    try:
        return list(builder("cpu", dtype, requires_grad=requires_grad))
    except Exception as exc:  # noqa: BLE001 - not applicable, never a pass
        with test.subTest(f"{dtype}: sample builder"):
            test.skipTest(f"not applicable: op_db's sample builder raised {type(exc).__name__}: {exc}")
        return []


def label(dtype, index, sample):
    return f"{str(dtype).replace('torch.', '')} #{index}: {sample.summary()}"


def moved(sample, device, dtype=None, base=None):
    """A copy of ``sample`` on ``device`` (its tensors of dtype ``base`` cast to ``dtype``), grads kept."""
    def move(value):
        if not isinstance(value, torch.Tensor):
            return value
        copy = value.detach().to(device, copy=True)
        if dtype is not None and value.dtype == base:
            copy = copy.to(dtype)
        return copy.requires_grad_(value.requires_grad)
    return sample.transform(move)


def call(fn, sample):
    """``fn`` on the sample, through the sample's ``output_process_fn_grad``; a call that leaves the grad mode
    changed fails (a side effect upstream's op does not have)."""
    mode = torch.is_grad_enabled()
    result = fn(sample.input, *sample.args, **sample.kwargs)
    if torch.is_grad_enabled() != mode:
        torch.set_grad_enabled(mode)
        raise AssertionError(f"the call left grad mode {not mode} (it was {mode})")
    return sample.output_process_fn_grad(result)


def assert_same(actual, expected, exact_dtype=True, strides=False):
    torch.testing.assert_close(actual, expected, equal_nan=True, check_dtype=exact_dtype, check_device=False,
                               check_stride=strides)


def layouts(result):
    """Each strided tensor output's strides over its dims of size > 1 (a dim of size 1, or a tensor of at most
    one element, has no stride an op must keep)."""
    return [tuple(s for n, s in zip(t.shape, t.stride()) if n > 1) if t.numel() > 1 else ()
            for t in pytree.tree_leaves(result) if isinstance(t, torch.Tensor) and t.layout == torch.strided]


def outcome(fn, sample, catch=Exception):
    """("ok", result dtypes, each with the device it is on where that is not the sample's input's) or ("raised",
    exception type name): what the dtype space and the device's error inputs compare."""
    try:
        result = call(fn, sample)
    except catch as exc:  # noqa: BLE001 - the outcome is the answer
        return "raised", type(exc).__name__
    given = next((t.device for t in pytree.tree_leaves(sample.input) if isinstance(t, torch.Tensor)), None)
    return "ok", [str(t.dtype) + ("" if given in (None, t.device) else f" on {t.device}")
                  for t in pytree.tree_leaves(result) if isinstance(t, torch.Tensor)]


def on_device(test, dtype, run, api=None, cpu_refuses=False):
    """``run()`` on DEVICE for ``dtype``: a dtype the device cannot hold (the copy there is the vehicle) is a
    labelled skip; ``api`` refusing is expected where DOCUMENTED (from ``limits``) says so, else a failure;
    with ``cpu_refuses`` (the CPU raised for the same call) the device's refusal returns None: no gap."""
    skip_unless_vehicle(test, f"{dtype} on {DEVICE}", lambda: torch.zeros(1, dtype=dtype).to(DEVICE))
    name, (allow, exclude) = str(dtype).replace("torch.", ""), DOCUMENTED.get(api or API, (None, ""))
    with api_limit(test, f"{api or API} {name}", (allow is not None and name not in allow.split())
                   or name in exclude.split(), cpu_refuses):
        return run()


def as_torch(value):
    if isinstance(value, (list, tuple)):
        return type(value)(as_torch(item) for item in value)
    return value if isinstance(value, torch.Tensor) else torch.as_tensor(value)


def check_device_matches_cpu(test, op, fn, kind="test_compare_cpu"):
    here = torch.empty(0, device=DEVICE).device  # where the moved inputs live (its index too)
    for dtype in dtypes_of(test, op, kind, op.supported_dtypes(DEVICE)):
        for index, sample in enumerate(built(test, op, dtype)):
            with case(test, op, kind, dtype, label(dtype, index, sample)):
                expected = call(fn, sample)
                view = isinstance(expected, torch.Tensor) and expected._is_view()
                actual, inputs = on_device(test, dtype, lambda: device_call(fn, sample))
                off = {str(t.device) for t in pytree.tree_leaves(actual) if torch.is_tensor(t) and t.device != here}
                test.assertFalse(off, f"the device call's result is on {', '.join(sorted(off))}, not on {here}")
                assert_same(actual, expected, strides=view)
                got, want = layouts(actual), layouts(expected)
                test.assertTrue(got == want, f"the device result's strides (dims of size 1 aside) are not the CPU's: "
                                f"{got} against {want} (a layout kept on the CPU, permuted or channels_last, is lost)")
                got, want = views_of_inputs(actual, inputs), views_of_inputs(expected, sample)
                said = f"outputs that are views of an input: {got} on {DEVICE}, {want} on the CPU"
                test.assertTrue(got == want, said)


def device_call(fn, sample):
    """``fn`` on a copy of the sample on DEVICE: (its result, that copy)."""
    copy = moved(sample, DEVICE)
    return call(fn, copy), copy


def check_repeated_device_calls(test, op, fn, kind="test_compare_cpu"):
    """Two device calls on copies of the same reference input give the same bits (NaN where NaN) and strides:
    a kernel whose result depends on scheduling (atomic adds) is not the CPU's. Upstream's dtype skips of
    ``kind`` apply (a random or nondeterministic op's entry skips its CPU comparison). The bits are compared
    on the CPU: the comparison's own ops are not the device's to run (an NPU has no float64 ``ne``)."""
    for dtype in dtypes_of(test, op, kind, op.supported_dtypes(DEVICE)):
        for index, sample in enumerate(built(test, op, dtype)):
            with test.subTest(label(dtype, index, sample)):
                first, second = (on_device(test, dtype, lambda: call(fn, moved(sample, DEVICE))) for _ in range(2))
                got, want = strides_of(second), strides_of(first)
                test.assertTrue(got == want, f"a second call on {DEVICE} gave other strides: {got} against {want}")
                torch.testing.assert_close(on_cpu(second), on_cpu(first), rtol=0, atol=0, equal_nan=True,
                                           msg=lambda m: f"a second call on {DEVICE} gave other results: {m}")


def strides_of(result):
    return [t.stride() for t in pytree.tree_leaves(result) if torch.is_tensor(t) and t.layout == torch.strided]


def on_cpu(result):
    """``result``'s tensors copied to the CPU, strides kept: what compares device results with each other."""
    return pytree.tree_map(lambda t: t.detach().cpu() if torch.is_tensor(t) else t, result)


def check_numpy_ref(test, op, fn, kind="test_numpy_ref"):
    if op.ref is None:
        test.skipTest(f"torch {torch.__version__}'s op_db entry {op.name!r} has no numpy ref")
    for dtype in dtypes_of(test, op, kind, [d for d in REF_DTYPES if d in op.supported_dtypes("cpu")]):
        for index, sample in enumerate(built(test, op, dtype)):
            with case(test, op, kind, dtype, label(dtype, index, sample)):
                ref = sample.numpy()
                expected = as_torch(op.ref(ref.input, *ref.args, **ref.kwargs))
                assert_same(fn(sample.input, *sample.args, **sample.kwargs), expected, exact_dtype=False)


def check_variants(test, op, fn, variants, kind="test_variant_consistency_eager"):
    """Each variant (function, method, aliases) gives the API's result on the CPU for every reference input,
    with the same strides and the same outputs being views of an input; an in-place variant, on a copy of
    each of the entry's samples (as upstream's eager variant consistency), refuses one marked
    ``broadcasts_input`` (it cannot resize its input) and otherwise writes the API's result into it."""
    if not variants:
        test.skipTest("op_db knows no other variant of the API to compare with")
    for dtype in dtypes_of(test, op, kind, op.supported_dtypes("cpu")):
        for reference in (True, False):
            chosen = [v for v in variants if v[1].endswith("inplace_variant") != reference]
            for index, sample in enumerate(built(test, op, dtype, reference=reference) if chosen else ()):
                for name, requires, variant in chosen:
                    with case(test, op, kind, dtype, f"{name}, {label(dtype, index, sample)}"):
                        if not present(op, requires):
                            test.skipTest(lacks(op.name, op.variant_test_name, requires))
                        check_variant(test, sample, fn, variant, inplace=not reference)


def check_variant(test, sample, fn, variant, inplace):
    if inplace and sample.broadcasts_input:
        with test.assertRaises(RuntimeError):
            call(variant, moved(sample, "cpu"))
    elif inplace:
        assert_inplace(test, variant, sample, fn(sample.input, *sample.args, **sample.kwargs))
    else:
        copy = moved(sample, "cpu")
        actual, expected = call(variant, copy), call(fn, sample)
        assert_same(actual, expected, strides=True)
        views, expected_views = views_of_inputs(actual, copy), views_of_inputs(expected, sample)
        test.assertTrue(views == expected_views,
                        f"outputs that are views of an input: {views}, the API's: {expected_views}")


def views_of_inputs(result, sample):
    """For each tensor output, whether it shares storage with a tensor of the sample (a view of an input)."""
    def storage(t):
        return t.untyped_storage().data_ptr() if t.numel() else None
    inputs = {storage(t) for t in pytree.tree_leaves((sample.input, sample.args, sample.kwargs))
              if isinstance(t, torch.Tensor)}
    return [storage(t) in inputs for t in pytree.tree_leaves(result) if isinstance(t, torch.Tensor) and t.numel()]


def assert_inplace(test, inplace, sample, expected, device="cpu", api=None):
    """In-place on a copy of ``sample`` on ``device``: a result the input cannot hold (another shape, a dtype
    it cannot be cast to) is refused with RuntimeError; otherwise it is written into the input, which is
    returned. On a device, through :func:`on_device` (``api``: the in-place variant's documented name)."""
    write = lambda: write_inplace(test, inplace, sample, expected, device)  # noqa: E731
    return write() if device == "cpu" else on_device(test, getattr(sample.input, "dtype", None), write, api)


def write_inplace(test, inplace, sample, expected, device):
    copy = moved(sample, device)
    if isinstance(expected, torch.Tensor) and (expected.shape != copy.input.shape
                                               or not torch.can_cast(expected.dtype, copy.input.dtype)):
        with test.assertRaises(RuntimeError):
            inplace(copy.input, *copy.args, **copy.kwargs)
        return
    result = inplace(copy.input, *copy.args, **copy.kwargs)
    test.assertIs(result, copy.input, "an in-place variant returns its input")
    assert_same(result, expected.to(result.dtype) if isinstance(expected, torch.Tensor) else expected)
    return result


def check_out(test, op, fn, out_variant, kind="test_out"):
    if not op.supports_out:
        test.skipTest(f"torch {torch.__version__}'s op_db entry {op.name!r} has no out= variant")
    for dtype in dtypes_of(test, op, kind, op.supported_dtypes("cpu")):
        for index, sample in enumerate(built(test, op, dtype, reference=False)):
            with case(test, op, kind, dtype, label(dtype, index, sample)):
                expected = fn(sample.input, *sample.args, **sample.kwargs)
                out = tuple(map(torch.empty_like, expected)) if isinstance(expected, tuple) else \\
                    torch.empty_like(expected)
                returned = out_variant(sample.input, *sample.args, out=out, **sample.kwargs)
                assert_same(out, expected)
                test.assertTrue(all(a is b for a, b in zip(pytree.tree_leaves(returned), pytree.tree_leaves(out))),
                                "out= returns the tensors it wrote")


def check_inplace(test, op, inplace, fn, device="cpu"):
    """In-place on a copy (on ``device``) against the API's CPU result (:func:`assert_inplace`); samples marked
    ``broadcasts_input`` are skipped. On a device, a second write on another copy gives the same bits."""
    for dtype in dtypes_of(test, op, "test_inplace", op.supported_dtypes(device)):
        for index, sample in enumerate(built(test, op, dtype)):
            with case(test, op, "test_inplace", dtype, label(dtype, index, sample)):
                if sample.broadcasts_input:
                    test.skipTest("the sample broadcasts its input: an in-place variant cannot resize it")
                expected = fn(sample.input, *sample.args, **sample.kwargs)
                name = f"torch.Tensor.{getattr(op.inplace_variant, '__name__', op.name + '_')}"
                first = assert_inplace(test, inplace, sample, expected, device, name)
                if device != "cpu" and first is not None:
                    again = assert_inplace(test, inplace, sample, expected, device, name)
                    torch.testing.assert_close(on_cpu(again), on_cpu(first), rtol=0, atol=0, equal_nan=True,
                                               msg=lambda m: f"a second in-place write on {device} differs: {m}")


'''
CHECKS += opinfo_dtype_checks.CHECKS
