# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""API consistency of ``aot_export_joint_with_descriptors`` and ``aot_compile_joint_with_descriptors``.

Both live in ``torch._functorch.aot_autograd`` (torch >= 2.9; on older torch every class here skips
with the reason). ``aot_export_joint_with_descriptors(stack, mod, args, kwargs=None)`` traces the joint
forward+backward graph of a module and returns an object with ``graph_module``, ``params_spec``,
``buffers_spec``, ``in_spec`` and ``out_spec``; ``aot_compile_joint_with_descriptors(jd)`` turns it
into a callable taking ``(*params, *buffers, *inputs, **kwargs)`` whose outputs, parameter gradients
and in-place buffer updates must be those of the eager module.

Why this file exists: an NPU port of PyTorch must behave exactly like upstream. A port that gets one
detail wrong (a spec entry, a descriptor, a gradient, a buffer update, an output) fails a test here
with a message saying what differed.

On a CPU box the whole contract is checked against eager CPU execution, bitwise (same kernels on the
same device). On an accelerator the modules and inputs run on the device and every result is compared
with the same computation done eagerly on CPU copies, within float32 round-off.
"""
from torch_npu_testing import TestCase, run_tests, device_type, requires_api, torch_version_at_least

import contextlib
import copy
import inspect

import torch
import torch.utils._pytree as pytree
from torch import nn
from torch._functorch import aot_autograd

DEVICE = device_type()

EXPORT_API = "torch._functorch.aot_autograd.aot_export_joint_with_descriptors"
COMPILE_API = "torch._functorch.aot_autograd.aot_compile_joint_with_descriptors"

# Eager and compiled code run the same ATen kernels, so on one device they agree bitwise (measured on
# CPU for torch 2.11-2.13). Device results are compared with the CPU reference within float32 round-off.
TOLERANCE = {"atol": 0.0, "rtol": 0.0} if DEVICE == "cpu" else {"atol": 1e-5, "rtol": 1e-5}

COMPILER_KEYWORDS = ("fw_compiler", "bw_compiler")


# --------------------------------------------------------------------------- models
class LinearModel(nn.Module):
    """One linear layer: parameters ``proj.weight`` then ``proj.bias`` (not alphabetical), no buffers."""

    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(3, 2)

    def forward(self, x):
        return self.proj(x)


class BatchNormModel(nn.Module):
    """Linear -> BatchNorm1d -> tanh; in train mode the forward mutates three buffers."""

    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(3, 4)
        self.norm = nn.BatchNorm1d(4)

    def forward(self, x):
        return torch.tanh(self.norm(self.proj(x)))


class MultiOutputModel(nn.Module):
    """Two heads returned as ``(narrow, {"wide": wide})``: the output is a pytree, not one tensor."""

    def __init__(self):
        super().__init__()
        self.wide = nn.Linear(3, 4)
        self.narrow = nn.Linear(3, 2)

    def forward(self, x):
        return self.narrow(x), {"wide": torch.tanh(self.wide(x))}


class KeywordModel(nn.Module):
    """A forward with keyword-only tensor arguments."""

    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(3, 2)

    def forward(self, x, *, scale, shift):
        return self.proj(x) * scale + shift


# --------------------------------------------------------------------------- helpers
def reference_and_device_copy(model_cls, seed):
    """A seeded CPU reference module (train mode) and an identical copy on DEVICE.

    The global RNG is forked so building models leaves no trace on the process's random state.
    """
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        reference = model_cls()
    return reference, copy.deepcopy(reference).to(DEVICE)


def sample(*shape, seed):
    """A deterministic CPU tensor drawn from a private generator."""
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def requires_grad_copy(tensor):
    """A fresh leaf copy that requires grad (``.to`` alone would alias a CPU tensor on a CPU run)."""
    return tensor.detach().clone().to(DEVICE).requires_grad_(True)


def leaf_copies(tensors):
    """Fresh leaves (same device) that require grad: what a caller passes as parameters."""
    return [t.detach().clone().requires_grad_(True) for t in tensors]


def assert_close(actual, expected, what, tolerance=None):
    """Tensor check usable with either TestCase flavour (torch_npu's assertEqual takes no atol/rtol)."""
    tolerance = TOLERANCE if tolerance is None else tolerance
    if actual is None or expected is None:
        if actual is not expected:
            raise AssertionError(f"{what}: expected {expected!r}, got {actual!r}")
        return
    torch.testing.assert_close(actual.detach().cpu(), expected.detach().cpu(), **tolerance,
                               msg=lambda detail: f"{what}: {detail}")


def assert_same(actual, expected, what):
    """Plain ``==`` with a message naming both values."""
    if not actual == expected:
        raise AssertionError(f"{what}:\n  expected {expected!r}\n  got      {actual!r}")


def placeholders(graph_module):
    """``[(name, descriptor), ...]`` for every placeholder of the joint graph, in order."""
    return [(node.name, node.meta.get("desc")) for node in graph_module.graph.nodes if node.op == "placeholder"]


def output_descriptors(graph_module):
    """The descriptors annotated on the joint graph's output node, one per flat output."""
    (output,) = [node for node in graph_module.graph.nodes if node.op == "output"]
    return list(output.meta["desc"])


def descriptors():
    """The descriptor classes (module exists only where the API does, hence imported lazily)."""
    from torch._functorch._aot_autograd import descriptors as module
    return module


def parameter_names(model):
    return [name for name, _ in model.named_parameters()]


def buffer_names(model):
    return [name for name, _ in model.named_buffers()]


def recording_compiler(stage, events):
    """An AOT compiler that logs when it compiles and when its compiled code runs, then runs the graph."""

    def compiler(graph_module, example_inputs):
        events.append((stage, "compile", isinstance(graph_module, torch.fx.GraphModule), len(example_inputs)))

        def run(args):
            events.append((stage, "run"))
            return torch.fx.Interpreter(graph_module).boxed_run(args)

        run._boxed_call = True
        return run

    return compiler


# --------------------------------------------------------------------------- export
@requires_api(EXPORT_API, since="2.9")
class TestAotExportJointWithDescriptors(TestCase):
    """aot_export_joint_with_descriptors: specs, descriptors and the joint graph itself."""

    def test_params_and_buffers_spec_list_module_names_in_order(self):
        """params_spec / buffers_spec equal named_parameters() / named_buffers() names, in module order."""
        cases = [
            (LinearModel, (2, 3), ["proj.weight", "proj.bias"], []),
            (BatchNormModel, (5, 3), ["proj.weight", "proj.bias", "norm.weight", "norm.bias"],
             ["norm.running_mean", "norm.running_var", "norm.num_batches_tracked"]),
            (MultiOutputModel, (4, 3), ["wide.weight", "wide.bias", "narrow.weight", "narrow.bias"], []),
        ]
        for model_cls, shape, expected_params, expected_buffers in cases:
            _, model = reference_and_device_copy(model_cls, seed=0)
            x = sample(*shape, seed=1).to(DEVICE)
            with torch.enable_grad(), contextlib.ExitStack() as stack:
                joint = aot_autograd.aot_export_joint_with_descriptors(stack, model, (x,))
            what = model_cls.__name__
            self.assertIsInstance(joint.params_spec, list, f"{what}: params_spec type")
            self.assertIsInstance(joint.buffers_spec, list, f"{what}: buffers_spec type")
            assert_same(parameter_names(model), expected_params, f"{what}: named_parameters (fixture)")
            assert_same(buffer_names(model), expected_buffers, f"{what}: named_buffers (fixture)")
            assert_same(joint.params_spec, expected_params, f"{what}: params_spec")
            assert_same(joint.buffers_spec, expected_buffers, f"{what}: buffers_spec")

    def test_graph_module_is_an_fx_graph_with_a_descriptor_on_every_input(self):
        """graph_module is a torch.fx.GraphModule whose placeholders and outputs all carry meta['desc']."""
        _, model = reference_and_device_copy(LinearModel, seed=0)
        x = sample(2, 3, seed=1).to(DEVICE)
        with torch.enable_grad(), contextlib.ExitStack() as stack:
            joint = aot_autograd.aot_export_joint_with_descriptors(stack, model, (x,))
        self.assertIsInstance(joint.graph_module, torch.fx.GraphModule)
        missing = [name for name, desc in placeholders(joint.graph_module) if desc is None]
        self.assertListEqual(missing, [], "placeholders without a descriptor")
        assert_same(len(output_descriptors(joint.graph_module)), 4,
                    "output descriptors (forward output, 2 parameter gradients, None for x)")

    def test_joint_graph_inputs_are_primals_then_tangents(self):
        """Placeholders: params, buffers, user inputs as primals_1..N (in spec order), then one tangent per output."""
        d = descriptors()
        _, model = reference_and_device_copy(BatchNormModel, seed=0)
        x = sample(5, 3, seed=1).to(DEVICE)
        with torch.enable_grad(), contextlib.ExitStack() as stack:
            joint = aot_autograd.aot_export_joint_with_descriptors(stack, model, (x,))
        expected_descs = ([d.ParamAOTInput(target=name) for name in parameter_names(model)]
                          + [d.BufferAOTInput(target=name) for name in buffer_names(model)]
                          + [d.PlainAOTInput(idx=0)]
                          + [d.TangentAOTInput(output=d.PlainAOTOutput(idx=0))])
        expected_names = [f"primals_{i}" for i in range(1, 9)] + ["tangents_1"]
        assert_same(placeholders(joint.graph_module), list(zip(expected_names, expected_descs)),
                    "BatchNormModel joint-graph placeholders")

        _, model = reference_and_device_copy(MultiOutputModel, seed=0)
        x = sample(4, 3, seed=1).to(DEVICE)
        with torch.enable_grad(), contextlib.ExitStack() as stack:
            joint = aot_autograd.aot_export_joint_with_descriptors(stack, model, (x,))
        expected_descs = ([d.ParamAOTInput(target=name) for name in parameter_names(model)]
                          + [d.PlainAOTInput(idx=0)]
                          + [d.TangentAOTInput(output=d.PlainAOTOutput(idx=i)) for i in range(2)])
        expected_names = [f"primals_{i}" for i in range(1, 6)] + ["tangents_1", "tangents_2"]
        assert_same(placeholders(joint.graph_module), list(zip(expected_names, expected_descs)),
                    "MultiOutputModel joint-graph placeholders (one tangent per output leaf)")

    def test_joint_graph_outputs_are_buffer_updates_outputs_then_gradients(self):
        """Outputs: buffer mutations, forward outputs, a gradient per differentiable primal, None elsewhere."""
        d = descriptors()
        _, model = reference_and_device_copy(BatchNormModel, seed=0)
        x = sample(5, 3, seed=1).to(DEVICE)
        with torch.enable_grad(), contextlib.ExitStack() as stack:
            joint = aot_autograd.aot_export_joint_with_descriptors(stack, model, (x,))
        expected = ([d.InputMutationAOTOutput(mutated_input=d.BufferAOTInput(target=n)) for n in buffer_names(model)]
                    + [d.PlainAOTOutput(idx=0)]
                    + [d.GradAOTOutput(grad_of=d.ParamAOTInput(target=n)) for n in parameter_names(model)]
                    + [None] * 4)  # three buffers and x have no gradient
        assert_same(output_descriptors(joint.graph_module), expected, "BatchNormModel joint-graph outputs")

        _, model = reference_and_device_copy(MultiOutputModel, seed=0)
        x = requires_grad_copy(sample(4, 3, seed=1))
        with torch.enable_grad(), contextlib.ExitStack() as stack:
            joint = aot_autograd.aot_export_joint_with_descriptors(stack, model, (x,))
        expected = ([d.PlainAOTOutput(idx=0), d.PlainAOTOutput(idx=1)]
                    + [d.GradAOTOutput(grad_of=d.ParamAOTInput(target=n)) for n in parameter_names(model)]
                    + [d.GradAOTOutput(grad_of=d.PlainAOTInput(idx=0))])  # x requires grad
        assert_same(output_descriptors(joint.graph_module), expected, "MultiOutputModel joint-graph outputs")

    def test_joint_graph_computes_outputs_and_vector_jacobian_products(self):
        """graph_module(primals, tangents) returns (forward outputs, gradients) equal to eager autograd.grad."""
        reference, model = reference_and_device_copy(MultiOutputModel, seed=0)
        x_cpu = sample(4, 3, seed=1)
        tangents_cpu = [sample(4, 2, seed=2), sample(4, 4, seed=3)]
        x = requires_grad_copy(x_cpu)
        with torch.enable_grad(), contextlib.ExitStack() as stack:
            joint = aot_autograd.aot_export_joint_with_descriptors(stack, model, (x,))
        primals = [p.detach() for p in model.parameters()] + [x.detach()]
        with torch.enable_grad():
            forward_outs, grads = joint.graph_module(primals, [t.to(DEVICE) for t in tangents_cpu])

            x_ref = x_cpu.clone().requires_grad_(True)  # x_cpu itself never requires grad
            ref_outs = pytree.tree_leaves(reference(x_ref))
            ref_grads = torch.autograd.grad(ref_outs, list(reference.parameters()) + [x_ref], tangents_cpu)
        assert_same(len(forward_outs), 2, "number of forward outputs of the joint graph")
        for i, (got, want) in enumerate(zip(forward_outs, ref_outs)):
            assert_close(got, want, f"joint graph forward output {i}")
        assert_same(len(grads), 5, "number of gradients (4 parameters + x)")
        for name, got, want in zip(parameter_names(reference) + ["x"], grads, ref_grads):
            assert_close(got, want, f"joint graph gradient of {name}")

    def test_in_spec_describes_params_buffers_inputs_and_kwargs(self):
        """in_spec is the pytree spec of ([*params, *buffers, *args], kwargs); kwargs become plain inputs."""
        _, model = reference_and_device_copy(BatchNormModel, seed=0)
        x = sample(5, 3, seed=1).to(DEVICE)
        with torch.enable_grad(), contextlib.ExitStack() as stack:
            joint = aot_autograd.aot_export_joint_with_descriptors(stack, model, (x,))
        flat = list(model.parameters()) + list(model.buffers()) + [x]
        assert_same(joint.in_spec, pytree.tree_structure((flat, {})), "BatchNormModel in_spec")
        assert_same(joint.in_spec.num_leaves, 8, "BatchNormModel in_spec leaves (4 params + 3 buffers + x)")

        _, model = reference_and_device_copy(KeywordModel, seed=0)
        kwargs = {"scale": torch.tensor(2.0, device=DEVICE), "shift": sample(2, seed=2).to(DEVICE)}
        with torch.enable_grad(), contextlib.ExitStack() as stack:
            joint = aot_autograd.aot_export_joint_with_descriptors(stack, model, (x,), kwargs)
        flat = list(model.parameters()) + [x]
        assert_same(joint.in_spec, pytree.tree_structure((flat, kwargs)), "KeywordModel in_spec")
        assert_same(joint.in_spec.num_leaves, 5, "KeywordModel in_spec leaves (2 params + x + 2 kwargs)")
        d = descriptors()
        user_inputs = [desc for _, desc in placeholders(joint.graph_module)][2:5]
        assert_same(user_inputs, [d.PlainAOTInput(idx=i) for i in range(3)],
                    "KeywordModel user-input descriptors (x, then the kwargs in in_spec order)")

    def test_out_spec_is_the_eager_output_structure(self):
        """out_spec equals the pytree structure of the module's eager output (leaf, or tuple with a dict)."""
        reference, model = reference_and_device_copy(LinearModel, seed=0)
        x_cpu = sample(2, 3, seed=1)
        with torch.enable_grad(), contextlib.ExitStack() as stack:
            joint = aot_autograd.aot_export_joint_with_descriptors(stack, model, (x_cpu.to(DEVICE),))
        assert_same(joint.out_spec, pytree.tree_structure(reference(x_cpu)), "LinearModel out_spec")
        self.assertTrue(joint.out_spec.is_leaf(), f"single tensor output must be a leaf spec, got {joint.out_spec}")

        reference, model = reference_and_device_copy(MultiOutputModel, seed=0)
        with torch.enable_grad(), contextlib.ExitStack() as stack:
            joint = aot_autograd.aot_export_joint_with_descriptors(stack, model, (x_cpu.to(DEVICE),))
        assert_same(joint.out_spec, pytree.tree_structure(reference(x_cpu)), "MultiOutputModel out_spec")
        assert_same(joint.out_spec.num_leaves, 2, "MultiOutputModel out_spec leaves")

    def test_export_with_grad_disabled_traces_an_inference_graph(self):
        """With grad mode off at export the graph has no tangents and no gradients; outputs don't require grad."""
        d = descriptors()
        reference, model = reference_and_device_copy(LinearModel, seed=0)
        x_cpu = sample(2, 3, seed=1)
        with torch.no_grad(), contextlib.ExitStack() as stack:
            joint = aot_autograd.aot_export_joint_with_descriptors(stack, model, (x_cpu.to(DEVICE),))
            compiled = aot_autograd.aot_compile_joint_with_descriptors(joint)
        expected = [d.ParamAOTInput(target="proj.weight"), d.ParamAOTInput(target="proj.bias"), d.PlainAOTInput(idx=0)]
        assert_same([desc for _, desc in placeholders(joint.graph_module)], expected, "inference-graph placeholders")
        assert_same(output_descriptors(joint.graph_module), [d.PlainAOTOutput(idx=0)], "inference-graph outputs")
        with torch.enable_grad():
            out = compiled(*leaf_copies(model.parameters()), x_cpu.to(DEVICE))
        self.assertFalse(out.requires_grad, "output of an inference graph must not require grad")
        assert_close(out, reference(x_cpu), "inference-graph output")

    def test_compiler_keywords_belong_to_the_installed_stage(self):
        """fw_compiler/bw_compiler are compile keywords from 2.11 (export keywords in 2.9.1); both get used."""
        export_params = inspect.signature(aot_autograd.aot_export_joint_with_descriptors).parameters
        compile_params = inspect.signature(aot_autograd.aot_compile_joint_with_descriptors).parameters
        compile_takes_compilers = torch_version_at_least("2.11")
        owner, other = ("compile", "export") if compile_takes_compilers else ("export", "compile")
        owner_params, other_params = ((compile_params, export_params) if compile_takes_compilers
                                      else (export_params, compile_params))
        for keyword in COMPILER_KEYWORDS:
            self.assertIn(keyword, owner_params, f"torch {torch.__version__}: {keyword} must be a {owner} keyword")
            self.assertNotIn(keyword, other_params, f"torch {torch.__version__}: {keyword} must not be a {other} "
                                                    "keyword")

        events = []
        compilers = {"fw_compiler": recording_compiler("fw", events), "bw_compiler": recording_compiler("bw", events)}
        reference, model = reference_and_device_copy(LinearModel, seed=0)
        x_cpu = sample(2, 3, seed=1)
        x = x_cpu.to(DEVICE)
        with torch.enable_grad(), contextlib.ExitStack() as stack:
            if compile_takes_compilers:
                with self.assertRaisesRegex(TypeError, "fw_compiler"):
                    aot_autograd.aot_export_joint_with_descriptors(stack, model, (x,), **compilers)
                joint = aot_autograd.aot_export_joint_with_descriptors(stack, model, (x,))
                compiled = aot_autograd.aot_compile_joint_with_descriptors(joint, **compilers)
            else:
                joint = aot_autograd.aot_export_joint_with_descriptors(stack, model, (x,), **compilers)
                with self.assertRaisesRegex(TypeError, "fw_compiler"):
                    aot_autograd.aot_compile_joint_with_descriptors(joint, **compilers)
                compiled = aot_autograd.aot_compile_joint_with_descriptors(joint)
        compile_events = [event for event in events if event[1] == "compile"]
        assert_same([event[:3] for event in compile_events], [("fw", "compile", True), ("bw", "compile", True)],
                    "compiler calls while compiling (stage, 'compile', got a GraphModule)")
        assert_same(compile_events[0][3], 3, "example inputs of the forward compiler (2 params + x)")

        del events[:]
        params = leaf_copies(model.parameters())
        with torch.enable_grad():
            out = compiled(*params, x)
            out.sum().backward()
            ref_out = reference(x_cpu)
            ref_out.sum().backward()
        self.assertListEqual(events, [("fw", "run"), ("bw", "run")],
                             "the compiled callable must run the code returned by fw_compiler, then bw_compiler")
        assert_close(out, ref_out, "output through user compilers")
        for name, param, ref_param in zip(parameter_names(reference), params, reference.parameters()):
            assert_close(param.grad, ref_param.grad, f"gradient of {name} through user compilers")


# --------------------------------------------------------------------------- compile
@requires_api(COMPILE_API, since="2.9")
class TestAotCompileJointWithDescriptors(TestCase):
    """aot_compile_joint_with_descriptors: the callable's outputs, gradients and buffer updates equal eager."""

    def test_linear_output_matches_eager(self):
        """compiled(*params, x) returns the eager forward output."""
        reference, model = reference_and_device_copy(LinearModel, seed=0)
        x_cpu = sample(6, 3, seed=1)
        with torch.enable_grad(), contextlib.ExitStack() as stack:
            joint = aot_autograd.aot_export_joint_with_descriptors(stack, model, (x_cpu.to(DEVICE),))
            compiled = aot_autograd.aot_compile_joint_with_descriptors(joint)
        out = compiled(*model.parameters(), x_cpu.to(DEVICE))
        self.assertIsInstance(out, torch.Tensor)
        assert_same(out.device.type, DEVICE, "output device")
        assert_close(out, reference(x_cpu), "LinearModel output")

    def test_gradients_flow_to_the_passed_parameters(self):
        """backward() fills .grad of the tensors passed as parameters (eager values), never the module's own."""
        reference, model = reference_and_device_copy(LinearModel, seed=0)
        x_cpu, weights_cpu = sample(6, 3, seed=1), sample(6, 2, seed=2)
        with torch.enable_grad(), contextlib.ExitStack() as stack:
            joint = aot_autograd.aot_export_joint_with_descriptors(stack, model, (x_cpu.to(DEVICE),))
            compiled = aot_autograd.aot_compile_joint_with_descriptors(joint)
        params = leaf_copies(model.parameters())
        x = x_cpu.to(DEVICE)
        with torch.enable_grad():
            (compiled(*params, x) * weights_cpu.to(DEVICE)).sum().backward()
            (reference(x_cpu) * weights_cpu).sum().backward()
        for name, param, ref_param in zip(parameter_names(reference), params, reference.parameters()):
            assert_close(param.grad, ref_param.grad, f"gradient of {name}")
        self.assertListEqual([name for name, p in model.named_parameters() if p.grad is not None], [],
                             "module parameters that were not passed must not receive gradients")

    def test_multiple_outputs_keep_structure_values_and_gradients(self):
        """A (tensor, {"wide": tensor}) output comes back with that structure, eager values and eager gradients."""
        reference, model = reference_and_device_copy(MultiOutputModel, seed=0)
        x_cpu = sample(4, 3, seed=1)
        weights_cpu = [sample(4, 2, seed=2), sample(4, 4, seed=3)]
        x = requires_grad_copy(x_cpu)
        with torch.enable_grad(), contextlib.ExitStack() as stack:
            joint = aot_autograd.aot_export_joint_with_descriptors(stack, model, (x,))
            compiled = aot_autograd.aot_compile_joint_with_descriptors(joint)
        params = leaf_copies(model.parameters())
        x_ref = x_cpu.clone().requires_grad_(True)
        with torch.enable_grad():
            out = compiled(*params, x)
            ref_out = reference(x_ref)
            sum((o * w.to(DEVICE)).sum() for o, w in zip(pytree.tree_leaves(out), weights_cpu)).backward()
            sum((o * w).sum() for o, w in zip(pytree.tree_leaves(ref_out), weights_cpu)).backward()
        assert_same(pytree.tree_structure(out), pytree.tree_structure(ref_out), "output structure")
        assert_close(out[0], ref_out[0], "output narrow")
        assert_close(out[1]["wide"], ref_out[1]["wide"], "output wide")
        for name, param, ref_param in zip(parameter_names(reference), params, reference.parameters()):
            assert_close(param.grad, ref_param.grad, f"gradient of {name}")
        assert_close(x.grad, x_ref.grad, "gradient of the input x (requires_grad at export)")

    def test_batchnorm_one_step_output_gradients_and_in_place_buffer_update(self):
        """Train-mode BatchNorm: eager output and gradients; the passed buffers are updated in place, once."""
        reference, model = reference_and_device_copy(BatchNormModel, seed=0)
        x_cpu = sample(5, 3, seed=1)
        with torch.enable_grad(), contextlib.ExitStack() as stack:
            joint = aot_autograd.aot_export_joint_with_descriptors(stack, model, (x_cpu.to(DEVICE),))
            compiled = aot_autograd.aot_compile_joint_with_descriptors(joint)
        params = leaf_copies(model.parameters())
        buffers = [b.clone() for b in model.buffers()]
        module_buffers_before = [b.clone() for b in model.buffers()]
        storage_before = [b.data_ptr() for b in buffers]
        with torch.enable_grad():
            out = compiled(*params, *buffers, x_cpu.to(DEVICE))
            out.sum().backward()
            ref_out = reference(x_cpu)
            ref_out.sum().backward()
        assert_close(out, ref_out, "BatchNorm output (batch statistics)")
        for name, param, ref_param in zip(parameter_names(reference), params, reference.parameters()):
            assert_close(param.grad, ref_param.grad, f"gradient of {name}")
        for name, buffer, ref_buffer, ptr in zip(buffer_names(reference), buffers, reference.buffers(),
                                                 storage_before):
            assert_close(buffer, ref_buffer, f"buffer {name} after one step")
            assert_same(buffer.data_ptr(), ptr, f"buffer {name} must be updated in place (same storage)")
        assert_same(int(buffers[2]), 1, "num_batches_tracked after one step")
        changed = [name for (name, b), before in zip(model.named_buffers(), module_buffers_before)
                   if not torch.equal(b, before)]
        self.assertListEqual(changed, [], "module buffers that were not passed must keep their values")

    def test_batchnorm_training_loop_tracks_eager_over_several_steps(self):
        """Three SGD steps: outputs, gradients, parameters and running statistics stay equal to eager."""
        reference, model = reference_and_device_copy(BatchNormModel, seed=0)
        inputs_cpu = [sample(5, 3, seed=10 + step) for step in range(3)]
        with torch.enable_grad(), contextlib.ExitStack() as stack:
            joint = aot_autograd.aot_export_joint_with_descriptors(stack, model, (inputs_cpu[0].to(DEVICE),))
            compiled = aot_autograd.aot_compile_joint_with_descriptors(joint)
        params = leaf_copies(model.parameters())
        buffers = [b.clone() for b in model.buffers()]
        ref_params = list(reference.parameters())
        for step, x_cpu in enumerate(inputs_cpu, start=1):
            with torch.enable_grad():
                out = compiled(*params, *buffers, x_cpu.to(DEVICE))
                (out * out).sum().backward()
                ref_out = reference(x_cpu)
                (ref_out * ref_out).sum().backward()
            assert_close(out, ref_out, f"output at step {step}")
            for name, buffer, ref_buffer in zip(buffer_names(reference), buffers, reference.buffers()):
                assert_close(buffer, ref_buffer, f"buffer {name} after step {step}")
            with torch.no_grad():
                for name, param, ref_param in zip(parameter_names(reference), params, ref_params):
                    assert_close(param.grad, ref_param.grad, f"gradient of {name} at step {step}")
                    param -= 0.1 * param.grad
                    ref_param -= 0.1 * ref_param.grad
                    param.grad = None
                    ref_param.grad = None
        assert_same(int(buffers[2]), 3, "num_batches_tracked after three steps")

    def test_changed_parameters_give_the_new_result(self):
        """The callable reads the parameters passed at each call: in-place edits and new tensors both show."""
        reference, model = reference_and_device_copy(LinearModel, seed=0)
        x_cpu = sample(6, 3, seed=1)
        x = x_cpu.to(DEVICE)
        with torch.enable_grad(), contextlib.ExitStack() as stack:
            joint = aot_autograd.aot_export_joint_with_descriptors(stack, model, (x,))
            compiled = aot_autograd.aot_compile_joint_with_descriptors(joint)
        params = [p.detach().clone() for p in model.parameters()]
        first = compiled(*params, x)
        with torch.no_grad():
            for param, ref_param in zip(params, reference.parameters()):
                param.mul_(-2.0).add_(0.5)
                ref_param.mul_(-2.0).add_(0.5)
        second = compiled(*params, x)
        self.assertFalse(torch.equal(first, second), "output did not change after the parameters changed")
        assert_close(second, reference(x_cpu), "output after in-place parameter change")

        other_reference, other = reference_and_device_copy(LinearModel, seed=7)
        assert_close(compiled(*other.parameters(), x), other_reference(x_cpu), "output with other parameter tensors")

    def test_keyword_arguments_are_real_inputs(self):
        """kwargs given at export are inputs of the callable: new values (in any order) give eager results."""
        reference, model = reference_and_device_copy(KeywordModel, seed=0)
        x_cpu, shift_cpu = sample(4, 3, seed=1), sample(2, seed=2)
        example = {"scale": torch.tensor(2.0, device=DEVICE), "shift": shift_cpu.to(DEVICE)}
        with torch.enable_grad(), contextlib.ExitStack() as stack:
            joint = aot_autograd.aot_export_joint_with_descriptors(stack, model, (x_cpu.to(DEVICE),), example)
            compiled = aot_autograd.aot_compile_joint_with_descriptors(joint)
        params = leaf_copies(model.parameters())
        scale_cpu = torch.tensor(-3.0)
        with torch.enable_grad():
            out = compiled(*params, x_cpu.to(DEVICE), shift=-shift_cpu.to(DEVICE), scale=scale_cpu.to(DEVICE))
            out.sum().backward()
            ref_out = reference(x_cpu, scale=scale_cpu, shift=-shift_cpu)
            ref_out.sum().backward()
        assert_close(out, ref_out, "output with new keyword values")
        for name, param, ref_param in zip(parameter_names(reference), params, reference.parameters()):
            assert_close(param.grad, ref_param.grad, f"gradient of {name} (scaled by the keyword input)")

    def test_wrong_calling_convention_raises(self):
        """Missing, extra or misordered params/buffers raise instead of returning a wrong answer."""
        _, model = reference_and_device_copy(BatchNormModel, seed=0)
        x = sample(5, 3, seed=1).to(DEVICE)
        with torch.enable_grad(), contextlib.ExitStack() as stack:
            joint = aot_autograd.aot_export_joint_with_descriptors(stack, model, (x,))
            compiled = aot_autograd.aot_compile_joint_with_descriptors(joint)
        params = leaf_copies(model.parameters())
        buffers = [b.clone() for b in model.buffers()]
        # Error types measured on torch 2.11-2.13 with the default (boxed nop) compilers.
        with torch.enable_grad():
            with self.assertRaises(IndexError, msg="parameters left out (buffers and input only)"):
                compiled(*buffers, x)
            with self.assertRaises(IndexError, msg="buffers left out (parameters and input only)"):
                compiled(*params, x)
            with self.assertRaises(IndexError, msg="only the user input"):
                compiled(x)
            with self.assertRaisesRegex(RuntimeError, "expected 8 arguments", msg="one argument too many"):
                compiled(*params, *buffers, x, x)
            with self.assertRaises(RuntimeError, msg="buffers passed before parameters (shape mismatch)"):
                compiled(*buffers, *params, x)
        assert_same(int(buffers[2]), 0, "num_batches_tracked after calls that all failed")


if __name__ == "__main__":
    run_tests()
