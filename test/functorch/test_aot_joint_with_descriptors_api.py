# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""API consistency of ``aot_export_joint_with_descriptors`` and ``aot_compile_joint_with_descriptors``.

Both live in ``torch._functorch.aot_autograd`` (torch >= 2.9; on older torch every class here skips
with the reason). ``aot_export_joint_with_descriptors(stack, mod, args, kwargs=None, **options)`` traces
the joint forward+backward graph of a module and returns an object with ``graph_module``,
``params_spec``, ``buffers_spec``, ``in_spec`` and ``out_spec``; ``aot_compile_joint_with_descriptors(jd,
**options)`` turns it into a callable taking ``(*params, *buffers, *inputs, **kwargs)`` whose outputs,
parameter gradients and in-place updates must be those of the eager module.

Why this file exists: an NPU port of PyTorch must behave exactly like upstream. A port that gets one
detail wrong (a spec entry, a descriptor, a gradient, a buffer update, an output, a keyword that is
accepted but ignored, a layout, a dtype, an exception type) fails a test here with a message saying
what differed.

Input classes covered (one test class each; table-driven cases carry a label):

- the contract: specs, descriptors, the joint graph, outputs/gradients/buffer updates of the callable
  (TestAotExportJointWithDescriptors, TestAotCompileJointWithDescriptors);
- parameters and call forms (...Parameters): every keyword of export and compile on the installed torch,
  each shown to take effect (a decomposition table changes the graph's ops, a compiler's code runs, a
  partition function's graphs are the ones compiled, ...), args as a tuple or a list, kwargs positional or
  by keyword;
- dtypes (...Dtypes): float32, float64, float16, bfloat16 modules and inputs, with a bool and an int64
  input; result dtypes asserted, values exact (integer-valued data);
- layouts (...Layouts): transposed, step-sliced and expanded (stride 0) inputs and parameters,
  channels_last images and weights into a convolution, an export from a non-contiguous example;
- sizes (...Sizes): a batch of 0, an inner dimension of 0, 0-d inputs and outputs, size-1 dimensions;
- side effects (...SideEffects): buffers and inputs mutated in place once per call as in eager, outputs
  that alias an input, no state carried across calls, export never touching the module or the example;
- bad input (...BadInput): export of a non-module, non-sequence args, kwargs that are not a mapping,
  unknown keywords; compile of a non-export or of one export twice; the callable called with too few or
  too many arguments, wrong types, shapes or dtypes.

Not applicable: threads. The APIs keep no thread-local state; their one thread-local input, grad mode at
export time, is covered (grad disabled at export gives an inference graph; a training graph runs with
grad enabled whatever the caller's mode). Integer and bool dtypes apply to inputs only (a parameter that
gets a gradient must be floating point).

Where releases differ the installed release's behaviour is asserted (facts read in each release's
``torch/_functorch/aot_autograd.py`` and ``torch/fx/interpreter.py``, then measured):

- keywords: 2.9.1 export takes decompositions, keep_inference_input_mutations, ignore_shape_env,
  fw_compiler, bw_compiler and compile takes none; from 2.10 fw_compiler/bw_compiler move to compile
  with partition_fn, and export gains disable_functionalization and _record_nn_module_stack; 2.11 adds
  export's _disable_torch_fn_metadata_mode and compile's serializable.
- disable_functionalization: accepted but ignored by 2.10 (its AOTConfig is built with False); from
  2.11 the in-place op stays in the graph.
- argument count of the callable: in 2.9.1 the default compilers' ``Interpreter.boxed_run`` binds
  placeholders from an iterator, so a missing argument raises StopIteration and extra arguments are
  ignored; from 2.10 it raises RuntimeError for both. Leaving out parameters or buffers of a
  module that mutates buffers raises IndexError on every release (the runtime wrapper indexes first).

On a CPU box the whole contract is checked against eager CPU execution (bitwise: same kernels on the
same device) and, for the integer-valued cases, against closed-form values. On an accelerator the modules
and inputs run on the device and every result is compared with the same computation done eagerly on CPU
copies: exactly where the data are integer-valued (exact in every dtype), within float32 round-off else.
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

# Eager and compiled code run the same ATen kernels, so on one device they agree bitwise. Device results
# of random-valued float32 models are compared with the CPU reference within float32 round-off.
TOLERANCE = {"atol": 0.0, "rtol": 0.0} if DEVICE == "cpu" else {"atol": 1e-5, "rtol": 1e-5}
# Integer-valued data (small sums, halves) are exact in every floating dtype on every device.
EXACT = {"atol": 0.0, "rtol": 0.0}

FLOAT_DTYPES = (torch.float32, torch.float64, torch.float16, torch.bfloat16)

# Per-release facts, read in each release's torch/_functorch/aot_autograd.py (and fx/interpreter.py) and measured.
# fw_compiler/bw_compiler: export keywords in 2.9.1; compile keywords, with partition_fn, from 2.10.
COMPILERS_ON_COMPILE = torch_version_at_least("2.10")
COMPILER_KEYWORDS = (("partition_fn", "fw_compiler", "bw_compiler") if COMPILERS_ON_COMPILE
                     else ("fw_compiler", "bw_compiler"))
EXPORT_KEYWORDS = ["decompositions", "keep_inference_input_mutations", "ignore_shape_env"]
if torch_version_at_least("2.10"):
    EXPORT_KEYWORDS += ["disable_functionalization", "_record_nn_module_stack"]
else:
    EXPORT_KEYWORDS += ["fw_compiler", "bw_compiler"]
if torch_version_at_least("2.11"):
    EXPORT_KEYWORDS += ["_disable_torch_fn_metadata_mode"]
COMPILE_KEYWORDS = list(COMPILER_KEYWORDS) if COMPILERS_ON_COMPILE else []
SERIALIZABLE_ON_COMPILE = torch_version_at_least("2.11")
if SERIALIZABLE_ON_COMPILE:
    COMPILE_KEYWORDS += ["serializable"]
# 2.10 accepts disable_functionalization but builds its AOTConfig with disable_functionalization=False.
DISABLE_FUNCTIONALIZATION_TAKES_EFFECT = torch_version_at_least("2.11")
# The default compilers run the graph with torch.fx.Interpreter.boxed_run. In 2.9.1 it binds placeholders from an
# iterator: a missing argument raises StopIteration and extra arguments are ignored. From 2.10 it checks the count
# and raises RuntimeError either way (a runtime wrapper that indexes the arguments may raise IndexError first).
CHECKS_ARGUMENT_COUNT = torch_version_at_least("2.10")
TOO_FEW_ERROR = RuntimeError if CHECKS_ARGUMENT_COUNT else StopIteration


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


class ScaleShiftModel(nn.Module):
    """``where(mask, x * weight + bias, x) * repeat``: elementwise over the last dim (3), so exact on
    integer-valued data in every float dtype; ``mask`` is a bool and ``repeat`` an int64 0-d input."""

    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.tensor([1.0, -2.0, 3.0]))
        self.bias = nn.Parameter(torch.tensor([0.5, 1.0, -1.5]))

    def forward(self, x, mask, repeat):
        return torch.where(mask, x * self.weight + self.bias, x) * repeat


class ConvModel(nn.Module):
    """Conv2d(2 -> 3, kernel 2) with integer-valued weights, so every result is exact."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 3, kernel_size=2)
        generator = torch.Generator().manual_seed(5)
        with torch.no_grad():
            for param in self.conv.parameters():
                param.copy_(torch.randint(-2, 3, param.shape, generator=generator))

    def forward(self, x):
        return self.conv(x)


class SizesModel(nn.Module):
    """One 0-d scale per input: ``[(x * scale_i, (x * scale_i).sum()), ...]`` for inputs of any shape (0-d, empty,
    size-1), plus a Linear applied to a batch of 0 rows."""

    def __init__(self, inputs):
        super().__init__()
        self.scales = nn.ParameterList([nn.Parameter(torch.tensor(1.5)) for _ in range(inputs)])
        self.proj = nn.Linear(3, 2)

    def forward(self, empty_batch, *inputs):
        return self.proj(empty_batch), [(x * scale, (x * scale).sum()) for x, scale in zip(inputs, self.scales)]


class SideEffectModel(nn.Module):
    """Counts its calls in a buffer (``calls.add_(1)``), doubles its input in place (``x.mul_(2)``) and
    returns the input itself, a view of it and a value computed from the mutated input and buffer."""

    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.tensor([1.0, 2.0, 3.0]))
        self.register_buffer("calls", torch.zeros(()))

    def forward(self, x):
        self.calls.add_(1)
        x.mul_(2)
        return x, x[1:], x * self.weight + self.calls


class InputMutationModel(nn.Module):
    """``x.mul_(2)`` then ``x * weight``: an in-place update of a user input, nothing else."""

    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.tensor([1.0, 2.0, 3.0]))

    def forward(self, x):
        x.mul_(2)
        return x * self.weight


class IntArgumentModel(nn.Module):
    """``x * weight * n`` with a Python int ``n``: the input that ``ignore_shape_env`` is about."""

    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(3))

    def forward(self, x, n):
        return x * self.weight * n


# --------------------------------------------------------------------------- inputs and shared exports
def build_models(model_cls, seed=0, dtype=None):
    """A seeded CPU reference module (train mode) and an identical copy on DEVICE, optionally cast.

    The global RNG is forked so building models leaves no trace on the process's random state.
    """
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        reference = model_cls()
    if dtype is not None:
        reference = reference.to(dtype)
    return reference, copy.deepcopy(reference).to(DEVICE)


def sample(*shape, seed):
    """A deterministic CPU tensor drawn from a private generator."""
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def integers(*shape, seed, dtype=torch.float32, low=-3, high=4):
    """Deterministic integer-valued CPU floats in [low, high): exact in every floating dtype."""
    return torch.randint(low, high, shape, generator=torch.Generator().manual_seed(seed)).to(dtype)


def on_device(tensor):
    """A fresh copy on DEVICE (``.to`` alone would alias a CPU tensor on a CPU run)."""
    return tensor.detach().clone().to(DEVICE)


def leaf(tensor):
    """A fresh leaf copy on DEVICE that requires grad."""
    return on_device(tensor).requires_grad_(True)


def leaf_copies(tensors):
    """Fresh leaves (same device) that require grad: what a caller passes as parameters."""
    return [t.detach().clone().requires_grad_(True) for t in tensors]


def export_and_compile(model, args, kwargs=None, *, grad=True, export_options=None, compile_options=None,
                       list_and_keyword=False):
    """Export ``model`` with grad mode ``grad`` and compile it while the export's stack is open.

    ``list_and_keyword`` uses the other call form: ``export(stack, mod, [*args], kwargs=kwargs)``.
    """
    with torch.set_grad_enabled(grad), contextlib.ExitStack() as stack:
        if list_and_keyword:
            joint = aot_autograd.aot_export_joint_with_descriptors(stack, model, list(args), kwargs=kwargs,
                                                                   **(export_options or {}))
        else:
            joint = aot_autograd.aot_export_joint_with_descriptors(stack, model, args, kwargs,
                                                                   **(export_options or {}))
        compiled = aot_autograd.aot_compile_joint_with_descriptors(joint, **(compile_options or {}))
    return joint, compiled


class Exported:
    """One export + compile of a freshly built model; tests read it and never mutate its modules."""

    def __init__(self, model_cls, args_cpu, kwargs_cpu=None, *, seed=0, dtype=None, grad=True,
                 input_requires_grad=False, list_and_keyword=False):
        self.reference, self.model = build_models(model_cls, seed, dtype)
        make = leaf if input_requires_grad else on_device
        self.args = tuple(make(a) if isinstance(a, torch.Tensor) and a.is_floating_point() else
                          (on_device(a) if isinstance(a, torch.Tensor) else a) for a in args_cpu)
        self.kwargs = None if kwargs_cpu is None else {k: on_device(v) for k, v in kwargs_cpu.items()}
        self.joint, self.compiled = export_and_compile(self.model, self.args, self.kwargs, grad=grad,
                                                       list_and_keyword=list_and_keyword)


_SHARED = {}


def shared(name, *args, **kwargs):
    """The process-wide ``Exported(*args, **kwargs)`` called ``name``: each export is paid once per run."""
    if name not in _SHARED:
        _SHARED[name] = Exported(*args, **kwargs)
    return _SHARED[name]


def linear():
    return shared("linear", LinearModel, (sample(2, 3, seed=1),))


def linear_inference():
    """LinearModel exported with grad disabled: an inference graph."""
    return shared("linear/inference", LinearModel, (sample(2, 3, seed=1),), grad=False)


def batchnorm():
    return shared("batchnorm", BatchNormModel, (sample(5, 3, seed=1),))


def multi_output():
    return shared("multi_output", MultiOutputModel, (sample(4, 3, seed=1),), input_requires_grad=True)


def keyword_model():
    """KeywordModel exported in the list/keyword call form: ``export(stack, mod, [x], kwargs={...})``."""
    return shared("keyword", KeywordModel, (sample(4, 3, seed=1),),
                  {"scale": torch.tensor(2.0), "shift": sample(2, seed=2)}, list_and_keyword=True)


def scale_shift(dtype=torch.float32):
    """ScaleShiftModel in ``dtype``, exported from a (4, 3) example whose x requires grad: contiguous, except for
    float64 whose example is transposed (so one export also serves the layouts' export-from-a-strided-example)."""
    x = integers(3, 4, seed=1, dtype=dtype).t() if dtype == torch.float64 else None
    return shared(f"scale_shift/{dtype}", ScaleShiftModel, scale_shift_inputs(seed=1, dtype=dtype, x=x), dtype=dtype,
                  input_requires_grad=True)


def scale_shift_inputs(seed, dtype=torch.float32, x=None):
    """``(x, mask, repeat)`` for ScaleShiftModel: integer-valued x, a bool mask, an int64 0-d repeat."""
    x = integers(4, 3, seed=seed, dtype=dtype) if x is None else x
    return x, torch.tensor([True, False, True]), torch.tensor(2)


def scale_shift_closed_form(x, mask, repeat, weight, bias, grad_out):
    """Output and gradients (weight, bias, x) of ScaleShiftModel for ``sum(out * grad_out)``, in float64."""
    x, weight, bias, grad_out = (t.detach().cpu().double() for t in (x, weight, bias, grad_out))
    mask, repeat = mask.cpu(), repeat.cpu().double()
    out = torch.where(mask, x * weight + bias, x) * repeat
    lead = tuple(range(x.dim() - 1))
    grad_weight = (torch.where(mask, x, 0.0) * grad_out * repeat).sum(lead)
    grad_bias = (torch.where(mask, 1.0, 0.0) * grad_out * repeat).expand_as(x).sum(lead)
    grad_x = torch.where(mask, weight, 1.0) * grad_out * repeat
    return out, grad_weight, grad_bias, grad_x


def placeholders(graph_module):
    """``[(name, descriptor), ...]`` for every placeholder of the joint graph, in order."""
    return [(node.name, node.meta.get("desc")) for node in graph_module.graph.nodes if node.op == "placeholder"]


def output_descriptors(graph_module):
    """The descriptors annotated on the joint graph's output node, one per flat output."""
    (output,) = [node for node in graph_module.graph.nodes if node.op == "output"]
    return list(output.meta["desc"])


def graph_ops(graph_module):
    """The targets of the joint graph's call_function nodes, in order, as strings (``aten.mul.Tensor``)."""
    return [str(node.target) for node in graph_module.graph.nodes if node.op == "call_function"]


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
        events.append((stage, "compile", graph_module, len(example_inputs)))

        def run(args):
            events.append((stage, "run"))
            return torch.fx.Interpreter(graph_module).boxed_run(args)

        run._boxed_call = True
        return run

    return compiler


class SharedExportsTestCase(TestCase):
    """TestCase whose subclasses name, in ``shared_exports``, the exports they read: built in setUpClass (outside
    the test bodies), once per process, and only read by the tests (they pass fresh parameters, buffers, inputs)."""

    shared_exports = ()

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        for build in cls.shared_exports:
            build()


# --------------------------------------------------------------------------- export
@requires_api(EXPORT_API, since="2.9")
class TestAotExportJointWithDescriptors(SharedExportsTestCase):
    """aot_export_joint_with_descriptors: specs, descriptors and the joint graph itself."""

    shared_exports = (linear, linear_inference, batchnorm, multi_output, keyword_model)

    def test_params_and_buffers_spec_list_module_names_in_order(self):
        """params_spec / buffers_spec equal named_parameters() / named_buffers() names, in module order."""
        cases = [
            ("LinearModel", linear(), ["proj.weight", "proj.bias"], []),
            ("BatchNormModel", batchnorm(), ["proj.weight", "proj.bias", "norm.weight", "norm.bias"],
             ["norm.running_mean", "norm.running_var", "norm.num_batches_tracked"]),
            ("MultiOutputModel", multi_output(), ["wide.weight", "wide.bias", "narrow.weight", "narrow.bias"], []),
        ]
        for label, exported, expected_params, expected_buffers in cases:
            with self.subTest(label):
                self.assert_value(type(exported.joint.params_spec), list, f"{label}: params_spec type")
                self.assert_value(type(exported.joint.buffers_spec), list, f"{label}: buffers_spec type")
                self.assert_value(exported.joint.params_spec, expected_params, f"{label}: params_spec")
                self.assert_value(exported.joint.buffers_spec, expected_buffers, f"{label}: buffers_spec")

    def test_graph_module_is_an_fx_graph_with_a_descriptor_on_every_input(self):
        """graph_module is a torch.fx.GraphModule whose placeholders and outputs all carry meta['desc']."""
        joint = linear().joint
        self.assert_true(isinstance(joint.graph_module, torch.fx.GraphModule),
                         f"graph_module is a torch.fx.GraphModule (got {type(joint.graph_module).__name__})")
        missing = [name for name, desc in placeholders(joint.graph_module) if desc is None]
        self.assert_value(missing, [], "placeholders without a descriptor")
        self.assert_value(len(output_descriptors(joint.graph_module)), 4,
                          "output descriptors (forward output, 2 parameter gradients, None for x)")

    def test_joint_graph_inputs_are_primals_then_tangents(self):
        """Placeholders: params, buffers, user inputs as primals_1..N (in spec order), then one tangent per output."""
        d = descriptors()
        exported = batchnorm()
        expected_descs = ([d.ParamAOTInput(target=name) for name in parameter_names(exported.model)]
                          + [d.BufferAOTInput(target=name) for name in buffer_names(exported.model)]
                          + [d.PlainAOTInput(idx=0)]
                          + [d.TangentAOTInput(output=d.PlainAOTOutput(idx=0))])
        expected_names = [f"primals_{i}" for i in range(1, 9)] + ["tangents_1"]
        self.assert_value(placeholders(exported.joint.graph_module), list(zip(expected_names, expected_descs)),
                          "BatchNormModel joint-graph placeholders")

        exported = multi_output()
        expected_descs = ([d.ParamAOTInput(target=name) for name in parameter_names(exported.model)]
                          + [d.PlainAOTInput(idx=0)]
                          + [d.TangentAOTInput(output=d.PlainAOTOutput(idx=i)) for i in range(2)])
        expected_names = [f"primals_{i}" for i in range(1, 6)] + ["tangents_1", "tangents_2"]
        self.assert_value(placeholders(exported.joint.graph_module), list(zip(expected_names, expected_descs)),
                          "MultiOutputModel joint-graph placeholders (one tangent per output leaf)")

    def test_joint_graph_outputs_are_buffer_updates_outputs_then_gradients(self):
        """Outputs: buffer mutations, forward outputs, a gradient per differentiable primal, None elsewhere."""
        d = descriptors()
        exported = batchnorm()
        expected = ([d.InputMutationAOTOutput(mutated_input=d.BufferAOTInput(target=n))
                     for n in buffer_names(exported.model)]
                    + [d.PlainAOTOutput(idx=0)]
                    + [d.GradAOTOutput(grad_of=d.ParamAOTInput(target=n)) for n in parameter_names(exported.model)]
                    + [None] * 4)  # three buffers and x have no gradient
        self.assert_value(output_descriptors(exported.joint.graph_module), expected,
                          "BatchNormModel joint-graph outputs")

        exported = multi_output()
        expected = ([d.PlainAOTOutput(idx=0), d.PlainAOTOutput(idx=1)]
                    + [d.GradAOTOutput(grad_of=d.ParamAOTInput(target=n)) for n in parameter_names(exported.model)]
                    + [d.GradAOTOutput(grad_of=d.PlainAOTInput(idx=0))])  # x requires grad
        self.assert_value(output_descriptors(exported.joint.graph_module), expected,
                          "MultiOutputModel joint-graph outputs")

    def test_joint_graph_computes_outputs_and_vector_jacobian_products(self):
        """graph_module(primals, tangents) returns (forward outputs, gradients) equal to eager autograd.grad."""
        exported = multi_output()
        reference = copy.deepcopy(exported.reference)
        (x,) = exported.args
        tangents_cpu = [sample(4, 2, seed=2), sample(4, 4, seed=3)]
        primals = [p.detach() for p in exported.model.parameters()] + [x.detach()]
        with torch.enable_grad():
            forward_outs, grads = exported.joint.graph_module(primals, [on_device(t) for t in tangents_cpu])
            x_ref = x.detach().cpu().clone().requires_grad_(True)
            ref_outs = pytree.tree_leaves(reference(x_ref))
            ref_grads = torch.autograd.grad(ref_outs, list(reference.parameters()) + [x_ref], tangents_cpu)
        self.assert_value(len(forward_outs), 2, "number of forward outputs of the joint graph")
        for i, (got, want) in enumerate(zip(forward_outs, ref_outs)):
            self.assert_tensor(got, want.detach(), f"joint graph forward output {i}", device=DEVICE, **TOLERANCE)
        self.assert_value(len(grads), 5, "number of gradients (4 parameters + x)")
        for name, got, want in zip(parameter_names(reference) + ["x"], grads, ref_grads):
            self.assert_tensor(got, want, f"joint graph gradient of {name}", device=DEVICE, **TOLERANCE)

    def test_in_spec_describes_params_buffers_inputs_and_kwargs(self):
        """in_spec is the pytree spec of ([*params, *buffers, *args], kwargs); kwargs become plain inputs. Same for
        both call forms: BatchNormModel is exported as (stack, mod, (x,)), KeywordModel as (stack, mod, [x],
        kwargs={...})."""
        exported = batchnorm()
        flat = list(exported.model.parameters()) + list(exported.model.buffers()) + list(exported.args)
        self.assert_value(exported.joint.in_spec, pytree.tree_structure((flat, {})), "BatchNormModel in_spec")
        self.assert_value(exported.joint.in_spec.num_leaves, 8,
                          "BatchNormModel in_spec leaves (4 params + 3 buffers + x)")

        exported = keyword_model()
        flat = list(exported.model.parameters()) + list(exported.args)
        self.assert_value(exported.joint.in_spec, pytree.tree_structure((flat, exported.kwargs)),
                          "KeywordModel in_spec")
        self.assert_value(exported.joint.in_spec.num_leaves, 5, "KeywordModel in_spec leaves (2 params + x + 2 kwargs)")
        d = descriptors()
        user_inputs = [desc for _, desc in placeholders(exported.joint.graph_module)][2:5]
        self.assert_value(user_inputs, [d.PlainAOTInput(idx=i) for i in range(3)],
                          "KeywordModel user-input descriptors (x, then the kwargs in in_spec order)")

    def test_out_spec_is_the_eager_output_structure(self):
        """out_spec equals the pytree structure of the module's eager output (leaf, or tuple with a dict)."""
        x_cpu = sample(2, 3, seed=1)
        exported = linear()
        self.assert_value(exported.joint.out_spec, pytree.tree_structure(exported.reference(x_cpu)),
                          "LinearModel out_spec")
        self.assert_true(exported.joint.out_spec.is_leaf(), f"single tensor output is a leaf spec: "
                                                            f"{exported.joint.out_spec}")
        exported = multi_output()
        self.assert_value(exported.joint.out_spec, pytree.tree_structure(exported.reference(x_cpu)),
                          "MultiOutputModel out_spec")
        self.assert_value(exported.joint.out_spec.num_leaves, 2, "MultiOutputModel out_spec leaves")

    def test_export_with_grad_disabled_traces_an_inference_graph(self):
        """With grad mode off at export the graph has no tangents and no gradients; outputs don't require grad."""
        d = descriptors()
        exported = linear_inference()
        joint = exported.joint
        expected = [d.ParamAOTInput(target="proj.weight"), d.ParamAOTInput(target="proj.bias"), d.PlainAOTInput(idx=0)]
        self.assert_value([desc for _, desc in placeholders(joint.graph_module)], expected,
                          "inference-graph placeholders")
        self.assert_value(output_descriptors(joint.graph_module), [d.PlainAOTOutput(idx=0)], "inference-graph outputs")
        x_cpu = sample(2, 3, seed=4)
        with torch.enable_grad():
            out = exported.compiled(*leaf_copies(exported.model.parameters()), on_device(x_cpu))
        self.assert_tensor_meta(out, "output of an inference graph", requires_grad=False)
        with torch.no_grad():
            expected_out = exported.reference(x_cpu)
        self.assert_tensor(out, expected_out, "inference-graph output", device=DEVICE, **TOLERANCE)


# --------------------------------------------------------------------------- compile
@requires_api(COMPILE_API, since="2.9")
class TestAotCompileJointWithDescriptors(SharedExportsTestCase):
    """aot_compile_joint_with_descriptors: the callable's outputs, gradients and buffer updates equal eager."""

    shared_exports = (linear, batchnorm, multi_output, keyword_model)

    def test_linear_output_matches_eager(self):
        """compiled(*params, x) returns the eager forward output, on DEVICE."""
        exported = linear()
        x_cpu = sample(2, 3, seed=3)
        with torch.enable_grad():
            out = exported.compiled(*exported.model.parameters(), on_device(x_cpu))
            expected = exported.reference(x_cpu)
        self.assert_tensor(out, expected.detach(), "LinearModel output", device=DEVICE, **TOLERANCE)

    def test_gradients_flow_to_the_passed_parameters(self):
        """backward() fills .grad of the tensors passed as parameters (eager values), never the module's own."""
        exported = linear()
        reference = copy.deepcopy(exported.reference)
        x_cpu, weights_cpu = sample(2, 3, seed=1), sample(2, 2, seed=2)
        params = leaf_copies(exported.model.parameters())
        with torch.enable_grad():
            (exported.compiled(*params, on_device(x_cpu)) * on_device(weights_cpu)).sum().backward()
            (reference(x_cpu) * weights_cpu).sum().backward()
        for name, param, ref_param in zip(parameter_names(reference), params, reference.parameters()):
            self.assert_tensor(param.grad, ref_param.grad, f"gradient of {name}", device=DEVICE, **TOLERANCE)
        self.assert_value([name for name, p in exported.model.named_parameters() if p.grad is not None], [],
                          "module parameters that were not passed must not receive gradients")

    def test_a_training_graph_called_under_no_grad_still_records_autograd(self):
        """Under no_grad a training graph runs with grad enabled (a joint graph may hold enable_grad regions):
        the output has eager values, requires grad and backpropagates; the caller's no_grad is kept."""
        exported = linear()
        reference = copy.deepcopy(exported.reference)
        x_cpu = sample(2, 3, seed=1)
        params = leaf_copies(exported.model.parameters())
        with torch.no_grad():
            out = exported.compiled(*params, on_device(x_cpu))
            self.assert_grad_mode(False, "caller's grad mode after the call")
            expected = reference(x_cpu)
        self.assert_tensor_meta(out, "training-graph output under no_grad", requires_grad=True)
        self.assert_tensor(out, expected, "training-graph output under no_grad", device=DEVICE, **TOLERANCE)
        with torch.enable_grad():
            out.sum().backward()
            reference(x_cpu).sum().backward()
        for name, param, ref_param in zip(parameter_names(reference), params, reference.parameters()):
            self.assert_tensor(param.grad, ref_param.grad, f"gradient of {name} through the no_grad call",
                               device=DEVICE, **TOLERANCE)

    def test_multiple_outputs_keep_structure_values_and_gradients(self):
        """A (tensor, {"wide": tensor}) output comes back with that structure, eager values and eager gradients."""
        exported = multi_output()
        reference = copy.deepcopy(exported.reference)
        x_cpu = sample(4, 3, seed=1)
        weights_cpu = [sample(4, 2, seed=2), sample(4, 4, seed=3)]
        x = leaf(x_cpu)
        params = leaf_copies(exported.model.parameters())
        x_ref = x_cpu.clone().requires_grad_(True)
        with torch.enable_grad():
            out = exported.compiled(*params, x)
            ref_out = reference(x_ref)
            sum((o * on_device(w)).sum() for o, w in zip(pytree.tree_leaves(out), weights_cpu)).backward()
            sum((o * w).sum() for o, w in zip(pytree.tree_leaves(ref_out), weights_cpu)).backward()
        self.assert_value(pytree.tree_structure(out), pytree.tree_structure(ref_out), "output structure")
        self.assert_tensor(out[0], ref_out[0].detach(), "output narrow", device=DEVICE, **TOLERANCE)
        self.assert_tensor(out[1]["wide"], ref_out[1]["wide"].detach(), "output wide", device=DEVICE, **TOLERANCE)
        for name, param, ref_param in zip(parameter_names(reference), params, reference.parameters()):
            self.assert_tensor(param.grad, ref_param.grad, f"gradient of {name}", device=DEVICE, **TOLERANCE)
        self.assert_tensor(x.grad, x_ref.grad, "gradient of the input x (requires_grad at export)", device=DEVICE,
                           **TOLERANCE)

    def test_batchnorm_one_step_output_gradients_and_in_place_buffer_update(self):
        """Train-mode BatchNorm: eager output and gradients; the passed buffers are updated in place, once."""
        exported = batchnorm()
        reference = copy.deepcopy(exported.reference)
        x_cpu = sample(5, 3, seed=1)
        params = leaf_copies(exported.model.parameters())
        buffers = [b.clone() for b in exported.model.buffers()]
        module_buffers_before = [b.clone() for b in exported.model.buffers()]
        storage_before = [b.data_ptr() for b in buffers]
        with torch.enable_grad():
            out = exported.compiled(*params, *buffers, on_device(x_cpu))
            out.sum().backward()
            ref_out = reference(x_cpu)
            ref_out.sum().backward()
        self.assert_tensor(out, ref_out.detach(), "BatchNorm output (batch statistics)", device=DEVICE, **TOLERANCE)
        for name, param, ref_param in zip(parameter_names(reference), params, reference.parameters()):
            self.assert_tensor(param.grad, ref_param.grad, f"gradient of {name}", device=DEVICE, **TOLERANCE)
        for name, buffer, ref_buffer, ptr in zip(buffer_names(reference), buffers, reference.buffers(),
                                                 storage_before):
            self.assert_tensor(buffer, ref_buffer, f"buffer {name} after one step", device=DEVICE, **TOLERANCE)
            self.assert_value(buffer.data_ptr(), ptr, f"buffer {name} is updated in place (same storage)")
        self.assert_value(int(buffers[2]), 1, "num_batches_tracked after one step")
        changed = [name for (name, b), before in zip(exported.model.named_buffers(), module_buffers_before)
                   if not torch.equal(b, before)]
        self.assert_value(changed, [], "module buffers that were not passed keep their values")

    def test_batchnorm_training_loop_tracks_eager_over_several_steps(self):
        """Three SGD steps: outputs, gradients, parameters and running statistics stay equal to eager."""
        exported = batchnorm()
        reference = copy.deepcopy(exported.reference)
        inputs_cpu = [sample(5, 3, seed=10 + step) for step in range(3)]
        params = leaf_copies(exported.model.parameters())
        buffers = [b.clone() for b in exported.model.buffers()]
        ref_params = list(reference.parameters())
        for step, x_cpu in enumerate(inputs_cpu, start=1):
            with torch.enable_grad():
                out = exported.compiled(*params, *buffers, on_device(x_cpu))
                (out * out).sum().backward()
                ref_out = reference(x_cpu)
                (ref_out * ref_out).sum().backward()
            self.assert_tensor(out, ref_out.detach(), f"output at step {step}", device=DEVICE, **TOLERANCE)
            for name, buffer, ref_buffer in zip(buffer_names(reference), buffers, reference.buffers()):
                self.assert_tensor(buffer, ref_buffer, f"buffer {name} after step {step}", device=DEVICE, **TOLERANCE)
            with torch.no_grad():
                for name, param, ref_param in zip(parameter_names(reference), params, ref_params):
                    self.assert_tensor(param.grad, ref_param.grad, f"gradient of {name} at step {step}",
                                       device=DEVICE, **TOLERANCE)
                    param -= 0.1 * param.grad
                    ref_param -= 0.1 * ref_param.grad
                    param.grad = None
                    ref_param.grad = None
        self.assert_value(int(buffers[2]), 3, "num_batches_tracked after three steps")

    def test_changed_parameters_give_the_new_result(self):
        """The callable reads the parameters passed at each call: in-place edits and new tensors both show."""
        exported = linear()
        reference = copy.deepcopy(exported.reference)
        x_cpu = sample(2, 3, seed=4)
        x = on_device(x_cpu)
        params = [p.detach().clone() for p in exported.model.parameters()]
        with torch.enable_grad():
            first = exported.compiled(*params, x)
            with torch.no_grad():
                for param, ref_param in zip(params, reference.parameters()):
                    param.mul_(-2.0).add_(0.5)
                    ref_param.mul_(-2.0).add_(0.5)
            second = exported.compiled(*params, x)
            self.assert_false(torch.equal(first, second), "output changed after the parameters changed")
            self.assert_tensor(second, reference(x_cpu).detach(), "output after in-place parameter change",
                               device=DEVICE, **TOLERANCE)
            other_reference, other = build_models(LinearModel, seed=7)
            self.assert_tensor(exported.compiled(*other.parameters(), x), other_reference(x_cpu).detach(),
                               "output with other parameter tensors", device=DEVICE, **TOLERANCE)

    def test_keyword_arguments_are_real_inputs(self):
        """kwargs given at export are inputs of the callable: new values (in any order) give eager results."""
        exported = keyword_model()
        reference = copy.deepcopy(exported.reference)
        x_cpu, shift_cpu = sample(4, 3, seed=1), sample(2, seed=2)
        params = leaf_copies(exported.model.parameters())
        scale_cpu = torch.tensor(-3.0)
        with torch.enable_grad():
            out = exported.compiled(*params, on_device(x_cpu), shift=on_device(-shift_cpu), scale=on_device(scale_cpu))
            out.sum().backward()
            ref_out = reference(x_cpu, scale=scale_cpu, shift=-shift_cpu)
            ref_out.sum().backward()
        self.assert_tensor(out, ref_out.detach(), "output with new keyword values", device=DEVICE, **TOLERANCE)
        for name, param, ref_param in zip(parameter_names(reference), params, reference.parameters()):
            self.assert_tensor(param.grad, ref_param.grad, f"gradient of {name} (scaled by the keyword input)",
                               device=DEVICE, **TOLERANCE)


# --------------------------------------------------------------------------- parameters and call forms
def add_as_subtraction(calls):
    """A decomposition of ``aten.add.Tensor`` into ``sub(a, neg(b))`` (exact in IEEE arithmetic) that logs calls."""

    def decomposition(a, b, *, alpha=1):
        calls.append("aten.add.Tensor")
        return torch.ops.aten.sub.Tensor(a, torch.ops.aten.neg.default(b), alpha=alpha)

    return decomposition


def input_mutation(**export_options):
    """InputMutationModel exported with grad disabled (an inference graph) and the given export options."""
    name = "input_mutation/" + ",".join(f"{k}={v}" for k, v in sorted(export_options.items()))
    if name not in _SHARED:
        _, model = build_models(InputMutationModel)
        joint, compiled = export_and_compile(model, (on_device(torch.ones(3)),), grad=False,
                                             export_options=export_options)
        _SHARED[name] = (model, joint, compiled)
    return _SHARED[name]


@requires_api(EXPORT_API, since="2.9")
class TestAotJointWithDescriptorsParameters(SharedExportsTestCase):
    """Every keyword of export and compile on the installed torch takes effect. (Call forms: args as a tuple with
    kwargs positional, or a list with kwargs by keyword, are both used by the shared exports and checked in
    TestAotExportJointWithDescriptors / TestAotCompileJointWithDescriptors.)"""

    shared_exports = (linear, linear_inference, keyword_model, scale_shift, input_mutation)

    def test_keyword_options_of_the_installed_release(self):
        """export and compile take exactly the installed release's parameters, with their defaults."""
        export_params = inspect.signature(aot_autograd.aot_export_joint_with_descriptors).parameters
        compile_params = inspect.signature(aot_autograd.aot_compile_joint_with_descriptors).parameters
        positional, keyword_only = inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY
        self.assert_value([(n, p.kind) for n, p in export_params.items() if p.kind != keyword_only],
                          [(n, positional) for n in ("stack", "mod", "args", "kwargs")], "export positional parameters")
        self.assert_is(export_params["kwargs"].default, None, "default of export's kwargs")
        self.assert_value([(n, p.kind) for n, p in compile_params.items() if p.kind != keyword_only],
                          [("jd", positional)], "compile positional parameters")
        self.assert_value([n for n, p in export_params.items() if p.kind == keyword_only], EXPORT_KEYWORDS,
                          f"export keyword-only options on torch {torch.__version__}")
        self.assert_value([n for n, p in compile_params.items() if p.kind == keyword_only], COMPILE_KEYWORDS,
                          f"compile keyword-only options on torch {torch.__version__}")
        for name in EXPORT_KEYWORDS:
            if name not in COMPILER_KEYWORDS:
                expected = None if name == "decompositions" else False
                self.assert_is(export_params[name].default, expected, f"default of export's {name}")
        if SERIALIZABLE_ON_COMPILE:
            self.assert_is(compile_params["serializable"].default, False, "default of compile's serializable")

    def test_decompositions_replace_ops_in_the_joint_graph(self):
        """decompositions={aten.add.Tensor: sub(a, neg(b))}: no aten.add in the graph; values stay exact."""
        default_ops = graph_ops(scale_shift().joint.graph_module)
        self.assert_true("aten.add.Tensor" in default_ops, f"default graph computes x * weight + bias with aten.add: "
                                                           f"{default_ops}")
        calls = []
        reference, model = build_models(ScaleShiftModel)
        x_cpu, mask, repeat = scale_shift_inputs(seed=2)
        joint, compiled = export_and_compile(
            model, (on_device(x_cpu), on_device(mask), on_device(repeat)), grad=False,
            export_options={"decompositions": {torch.ops.aten.add.Tensor: add_as_subtraction(calls)}})
        ops = graph_ops(joint.graph_module)
        self.assert_true(len(calls) > 0, "the decomposition function was called while tracing")
        self.assert_false("aten.add.Tensor" in ops, f"aten.add.Tensor left in the decomposed graph: {ops}")
        self.assert_true("aten.sub.Tensor" in ops and "aten.neg.default" in ops,
                         f"the decomposition's sub/neg are in the graph: {ops}")
        with torch.no_grad():
            out = compiled(*model.parameters(), on_device(x_cpu), on_device(mask), on_device(repeat))
        expected = scale_shift_closed_form(x_cpu, mask, repeat, *reference.parameters(), torch.ones(4, 3))[0]
        self.assert_tensor(out, expected.float(), "output of the decomposed graph", device=DEVICE, **EXACT)

    def test_keep_inference_input_mutations_puts_the_copy_into_the_graph(self):
        """keep_inference_input_mutations=True: the graph ends in aten.copy_ and returns no mutated input."""
        d = descriptors()
        mutated_x = d.InputMutationAOTOutput(mutated_input=d.PlainAOTInput(idx=0))
        for label, options, kept in [("default", {}, False),
                                     ("keep_inference_input_mutations=True", {"keep_inference_input_mutations": True},
                                      True)]:
            with self.subTest(label):
                model, joint, compiled = input_mutation(**options)
                ops, outputs = graph_ops(joint.graph_module), output_descriptors(joint.graph_module)
                self.assert_value("aten.copy_.default" in ops, kept, f"{label}: aten.copy_ in the graph {ops}")
                self.assert_value(mutated_x in outputs, not kept,
                                  f"{label}: the graph returns the new value of x for the runtime to copy: {outputs}")
                self.check_input_mutation_applied_once(label, model, compiled)

    def test_disable_functionalization_keeps_the_in_place_op(self):
        """disable_functionalization=True keeps aten.mul_ in the graph (from 2.11; 2.10 accepts and ignores it)."""
        for label, options, in_place in [
                ("default", {}, False),
                ("disable_functionalization=True", {"disable_functionalization": True},
                 DISABLE_FUNCTIONALIZATION_TAKES_EFFECT)]:
            with self.subTest(label):
                if options and "disable_functionalization" not in EXPORT_KEYWORDS:
                    _, model = build_models(InputMutationModel)
                    with torch.no_grad(), contextlib.ExitStack() as stack:
                        self.assert_raises_exactly(TypeError, f"{label} on torch {torch.__version__}",
                                                   aot_autograd.aot_export_joint_with_descriptors, stack, model,
                                                   (on_device(torch.ones(3)),), match="disable_functionalization",
                                                   **options)
                    continue
                model, joint, compiled = input_mutation(**options)
                ops = graph_ops(joint.graph_module)
                self.assert_value("aten.mul_.Tensor" in ops, in_place, f"{label}: aten.mul_ in the graph {ops}")
                self.check_input_mutation_applied_once(label, model, compiled)

    def check_input_mutation_applied_once(self, label, model, compiled):
        """compiled(weight, x) doubles x once per call and returns 2x * weight, as eager does."""
        x = on_device(torch.tensor([1.0, -2.0, 3.0]))
        with torch.no_grad():
            out = compiled(*model.parameters(), x)
        self.assert_tensor(x, torch.tensor([2.0, -4.0, 6.0]), f"{label}: x after one call (doubled once)",
                           device=DEVICE)
        self.assert_tensor(out, torch.tensor([2.0, -8.0, 18.0]), f"{label}: output 2x * weight", device=DEVICE)
        with torch.no_grad():
            compiled(*model.parameters(), x)
        self.assert_tensor(x, torch.tensor([4.0, -8.0, 12.0]), f"{label}: x after two calls", device=DEVICE)

    def test_ignore_shape_env_keeps_int_inputs_out_of_the_shape_env(self):
        """With fake inputs under a ShapeEnv an int input becomes a SymInt placeholder, unless ignore_shape_env."""
        from torch._subclasses.fake_tensor import FakeTensorMode
        from torch.fx.experimental.symbolic_shapes import ShapeEnv
        _, model = build_models(IntArgumentModel)
        for ignore in (False, True):
            with self.subTest(f"ignore_shape_env={ignore}"):
                fake_x = FakeTensorMode(shape_env=ShapeEnv()).from_tensor(torch.ones(2, 3), static_shapes=True)
                with torch.no_grad(), contextlib.ExitStack() as stack:
                    joint = aot_autograd.aot_export_joint_with_descriptors(stack, model, (fake_x, 3),
                                                                           ignore_shape_env=ignore)
                n_value = [node.meta.get("val") for node in joint.graph_module.graph.nodes
                           if node.op == "placeholder"][-1]
                self.assert_value(isinstance(n_value, torch.SymInt), not ignore,
                                  f"ignore_shape_env={ignore}: the int input's placeholder is a SymInt ({n_value!r})")

    def test_private_tracing_flags_record_module_metadata(self):
        """Inference graph: _record_nn_module_stack=True (2.10+) tags every op with the module stack and the torch
        function; _disable_torch_fn_metadata_mode=True (2.11+) drops the torch-function tag. The ops are unchanged."""
        exported = linear_inference()
        module_stack = [("", f"{LinearModel.__module__}.{LinearModel.__qualname__}"),
                        ("proj", "torch.nn.modules.linear.Linear")]
        cases = [  # label, options, expected (nn_module_stack values, torch function) on every op
            ("default", {}, (None, None)),
            ("_record_nn_module_stack=True", {"_record_nn_module_stack": True},
             (module_stack, "builtin_function_or_method.linear")),
            ("_record_nn_module_stack=True, _disable_torch_fn_metadata_mode=True",
             {"_record_nn_module_stack": True, "_disable_torch_fn_metadata_mode": True}, (module_stack, None)),
        ]
        for label, options, expected in cases:
            with self.subTest(label):
                unknown = [name for name in options if name not in EXPORT_KEYWORDS]
                with torch.no_grad(), contextlib.ExitStack() as stack:
                    if unknown:
                        self.assert_raises_exactly(TypeError, f"{label} on torch {torch.__version__}",
                                                   aot_autograd.aot_export_joint_with_descriptors, stack,
                                                   exported.model, exported.args, **options,
                                                   match=f"unexpected keyword argument '({'|'.join(unknown)})'")
                        continue
                    joint = (aot_autograd.aot_export_joint_with_descriptors(stack, exported.model, exported.args,
                                                                            **options)
                             if options else exported.joint)
                self.assert_value(graph_ops(joint.graph_module), graph_ops(exported.joint.graph_module),
                                  f"{label}: ops of the graph")
                for node in (n for n in joint.graph_module.graph.nodes if n.op == "call_function"):
                    stack_meta, torch_fn = node.meta.get("nn_module_stack"), node.meta.get("torch_fn")
                    self.assert_value((None if stack_meta is None else list(stack_meta.values()),
                                       None if torch_fn is None else torch_fn[1]), expected,
                                      f"{label}: (nn_module_stack, torch_fn) of {node.name}")

    def test_compilers_and_partition_fn_are_called_and_their_results_used(self):
        """partition_fn (2.10+) splits the joint graph; fw_compiler/bw_compiler compile its two graphs and the
        callable runs the code they return. They are export keywords in 2.9.1, compile keywords from 2.10."""
        from torch._functorch.partitioners import default_partition
        events, partitions = [], []

        def partition(joint_module, joint_inputs, **kwargs):
            forward, backward = default_partition(joint_module, joint_inputs, **kwargs)
            partitions.append((joint_module, forward, backward))
            return forward, backward

        options = {"partition_fn": partition, "fw_compiler": recording_compiler("fw", events),
                   "bw_compiler": recording_compiler("bw", events)}
        options = {k: v for k, v in options.items() if k in COMPILER_KEYWORDS}
        exported = linear()
        reference = copy.deepcopy(exported.reference)
        _, model = build_models(LinearModel)
        export_options, compile_options = ({}, options) if COMPILERS_ON_COMPILE else (options, {})
        with torch.enable_grad(), contextlib.ExitStack() as stack:
            if COMPILERS_ON_COMPILE:
                self.assert_raises_exactly(TypeError, "compiler keywords given to export",
                                           aot_autograd.aot_export_joint_with_descriptors, stack, model,
                                           exported.args, match="partition_fn|fw_compiler", **options)
            joint = aot_autograd.aot_export_joint_with_descriptors(stack, model, exported.args, **export_options)
            if not COMPILERS_ON_COMPILE:
                self.assert_raises_exactly(TypeError, "compiler keywords given to compile",
                                           aot_autograd.aot_compile_joint_with_descriptors, joint,
                                           match="fw_compiler", **options)
            compiled = aot_autograd.aot_compile_joint_with_descriptors(joint, **compile_options)
        self.assert_value([e[:2] for e in events], [("fw", "compile"), ("bw", "compile")],
                          "compiler calls while compiling")
        forward_graph, backward_graph = events[0][2], events[1][2]
        self.assert_value(events[0][3], 3, "example inputs of the forward compiler (2 params + x)")
        self.assert_value(events[1][3], len(placeholders(backward_graph)), "example inputs of the backward compiler")
        if "partition_fn" in COMPILER_KEYWORDS:
            self.assert_value(len(partitions), 1, "partition_fn calls while compiling")
            self.assert_value(graph_ops(forward_graph), graph_ops(partitions[0][1]),
                              "fw_compiler compiles partition_fn's forward graph")
            self.assert_value(graph_ops(backward_graph), graph_ops(partitions[0][2]),
                              "bw_compiler compiles partition_fn's backward graph")

        del events[:]
        params = leaf_copies(model.parameters())
        x_cpu = exported.args[0].detach().cpu()
        with torch.enable_grad():
            out = compiled(*params, exported.args[0])
            out.sum().backward()
            ref_out = reference(x_cpu)
            ref_out.sum().backward()
        self.assert_value(events, [("fw", "run"), ("bw", "run")],
                          "the callable runs the code returned by fw_compiler, then by bw_compiler")
        self.assert_tensor(out, ref_out.detach(), "output through user compilers", device=DEVICE, **TOLERANCE)
        for name, param, ref_param in zip(parameter_names(reference), params, reference.parameters()):
            self.assert_tensor(param.grad, ref_param.grad, f"gradient of {name} through user compilers",
                               device=DEVICE, **TOLERANCE)

    def test_serializable_requires_compilers_that_return_output_code(self):
        """serializable=True (compile keyword from 2.11) builds a cache entry, which needs compilers returning an
        OutputCode: with the default nop compilers it raises AssertionError."""
        exported = linear_inference()
        with torch.no_grad(), contextlib.ExitStack() as stack:
            joint = aot_autograd.aot_export_joint_with_descriptors(stack, exported.model, exported.args)
            if SERIALIZABLE_ON_COMPILE:
                self.assert_raises_exactly(AssertionError, "serializable=True with the default compilers",
                                           aot_autograd.aot_compile_joint_with_descriptors, joint, serializable=True,
                                           match="OutputCode")
            else:
                self.assert_raises_exactly(TypeError, f"serializable on torch {torch.__version__}",
                                           aot_autograd.aot_compile_joint_with_descriptors, joint, serializable=True,
                                           match="serializable")


# --------------------------------------------------------------------------- dtypes
def npu_unsupported(fn):
    """On an NPU, the reason an eager run of ``fn`` fails there (the API cannot support more than eager); else None.

    Never skips anything on the CPU or a GPU.
    """
    if DEVICE != "npu":
        return None
    try:
        fn()
    except RuntimeError as exc:
        return f"npu: eager run not supported: {exc}"
    return None


def run_scale_shift(exported, x, mask, repeat, grad_out, params=None):
    """Call the compiled ScaleShiftModel with fresh leaves; return (output, grad weight, grad bias, grad x)."""
    params = leaf_copies(exported.model.parameters()) if params is None else params
    with torch.enable_grad():
        out = exported.compiled(*params, x, mask, repeat)
        (out * grad_out).sum().backward()
    return out, params[0].grad, params[1].grad, x.grad


def run_eager_scale_shift(module, x, mask, repeat, grad_out, params=None):
    """The same as :func:`run_scale_shift` on an eager copy of ``module`` (parameters optionally replaced)."""
    module = copy.deepcopy(module)
    if params is not None:
        module.weight, module.bias = (nn.Parameter(p.detach().clone()) for p in params)
    with torch.enable_grad():
        out = module(x, mask, repeat)
        (out * grad_out).sum().backward()
    return out.detach(), module.weight.grad, module.bias.grad, x.grad


SCALE_SHIFT_RESULTS = ("output", "gradient of weight", "gradient of bias", "gradient of x")


@requires_api(EXPORT_API, since="2.9")
class TestAotJointWithDescriptorsDtypes(SharedExportsTestCase):
    """float32/float64/float16/bfloat16 modules and inputs (with a bool and an int64 input) keep their dtype."""

    shared_exports = tuple((lambda dtype=dtype: scale_shift(dtype)) for dtype in FLOAT_DTYPES)

    def test_float_dtypes_give_eager_and_closed_form_results_in_that_dtype(self):
        """Output and gradients have the module's dtype and equal eager and the closed form exactly."""
        for dtype in FLOAT_DTYPES:
            with self.subTest(str(dtype)):
                exported = scale_shift(dtype)
                x_cpu, mask, repeat = scale_shift_inputs(seed=2, dtype=dtype)
                grad_out = integers(4, 3, seed=3, dtype=dtype)
                reason = npu_unsupported(lambda: run_eager_scale_shift(
                    exported.model, leaf(x_cpu), on_device(mask), on_device(repeat), on_device(grad_out)))
                if reason:
                    self.skipTest(f"{dtype}: {reason}")
                got = run_scale_shift(exported, leaf(x_cpu), on_device(mask), on_device(repeat), on_device(grad_out))
                eager = run_eager_scale_shift(exported.reference, x_cpu.clone().requires_grad_(True), mask, repeat,
                                              grad_out)
                closed = scale_shift_closed_form(x_cpu, mask, repeat, *exported.reference.parameters(), grad_out)
                for what, actual, want, exact in zip(SCALE_SHIFT_RESULTS, got, eager, closed):
                    self.assert_tensor(actual, want, f"{dtype} {what} vs eager", device=DEVICE, **EXACT)
                    self.assert_tensor(actual, exact.to(dtype), f"{dtype} {what} vs closed form", device=DEVICE,
                                       **EXACT)


# --------------------------------------------------------------------------- layouts
def conv():
    return shared("conv", ConvModel, (integers(2, 2, 4, 4, seed=1),), input_requires_grad=True)


def strided(view, base_cpu):
    """``view`` applied to a DEVICE copy of ``base_cpu``, as a leaf that requires grad (the view keeps its strides)."""
    return view(on_device(base_cpu)).requires_grad_(True)


@requires_api(EXPORT_API, since="2.9")
class TestAotJointWithDescriptorsLayouts(SharedExportsTestCase):
    """Non-contiguous inputs and parameters give the eager result and the contiguous copy's result."""

    shared_exports = (scale_shift, conv, lambda: scale_shift(torch.float64))

    def test_strided_inputs_and_parameters_match_eager_and_the_contiguous_copy(self):
        """Transposed, step-sliced and expanded (stride 0) x, a step-sliced weight and an expanded mask."""
        exported = scale_shift()
        _, mask_cpu, repeat_cpu = scale_shift_inputs(seed=0)
        grad_out = integers(4, 3, seed=3)
        same = (lambda t: t)
        x_rows = (integers(4, 3, seed=2), same)
        weight = (torch.tensor([1.0, -2.0, 3.0]), same)
        mask = (mask_cpu, same)
        cases = [  # label, then (CPU base, view) for x, weight and mask
            ("x contiguous", x_rows, weight, mask),
            ("x transposed", (integers(3, 4, seed=2), lambda t: t.t()), weight, mask),
            ("x rows sliced with step 2", (integers(8, 3, seed=2), lambda t: t[::2]), weight, mask),
            ("x columns sliced with step 2", (integers(4, 6, seed=2), lambda t: t[:, ::2]), weight, mask),
            ("x expanded (stride 0)", (integers(1, 3, seed=2), lambda t: t.expand(4, 3)), weight, mask),
            ("weight sliced with step 2", x_rows, (torch.tensor([1.0, 9.0, -2.0, 9.0, 3.0, 9.0]), lambda t: t[::2]),
             mask),
            ("mask expanded (stride 0)", x_rows, weight, (torch.tensor([True]), lambda t: t.expand(3))),
        ]
        for label, (x_base, x_view), (w_base, w_view), (m_base, m_view) in cases:
            with self.subTest(label):
                x, w, m = strided(x_view, x_base), strided(w_view, w_base), m_view(on_device(m_base))
                bias = leaf(exported.reference.bias)
                got = run_scale_shift(exported, x, m, on_device(repeat_cpu), on_device(grad_out), [w, bias])
                contiguous = run_scale_shift(exported, leaf(x.detach().contiguous()), m.contiguous(),
                                             on_device(repeat_cpu), on_device(grad_out),
                                             leaf_copies([w.contiguous(), bias]))
                x_cpu = x_view(x_base.clone()).requires_grad_(True)
                eager = run_eager_scale_shift(exported.reference, x_cpu, m_view(m_base), repeat_cpu, grad_out,
                                              [w_view(w_base), exported.reference.bias])
                for what, actual, want, want_contiguous in zip(SCALE_SHIFT_RESULTS, got, eager, contiguous):
                    self.assert_tensor(actual, want, f"{label}: {what} vs eager", device=DEVICE, **EXACT)
                    self.assert_tensor(actual, want_contiguous, f"{label}: {what} vs the contiguous copy", **EXACT)

    def test_export_from_a_transposed_example_accepts_both_layouts(self):
        """Exported from a transposed (float64) example: transposed and contiguous inputs give the closed form."""
        exported = scale_shift(torch.float64)
        self.assert_false(exported.args[0].is_contiguous(), "the export's example x is transposed")
        mask, repeat = scale_shift_inputs(seed=0)[1:]
        grad_out = integers(4, 3, seed=3, dtype=torch.float64)
        base = integers(3, 4, seed=2, dtype=torch.float64)
        for label, x in [("transposed", strided(lambda t: t.t(), base)), ("contiguous", leaf(base.t().contiguous()))]:
            with self.subTest(label):
                got = run_scale_shift(exported, x, on_device(mask), on_device(repeat), on_device(grad_out))
                closed = scale_shift_closed_form(base.t(), mask, repeat, *exported.reference.parameters(), grad_out)
                for what, actual, want in zip(SCALE_SHIFT_RESULTS, got, closed):
                    self.assert_tensor(actual, want, f"{label} x: {what} vs closed form", device=DEVICE, **EXACT)

    def test_channels_last_images_and_weights_into_a_conv(self):
        """Conv2d on channels_last / step-sliced images and a channels_last weight: eager and contiguous results."""
        exported = conv()
        grad_out = on_device(integers(2, 3, 3, 3, seed=3))
        channels_last = torch.channels_last
        image, wide_image = integers(2, 2, 4, 4, seed=2), integers(2, 2, 4, 8, seed=2)

        def run_compiled(x, weight, bias):
            x, weight, bias = (t.requires_grad_(True) for t in (x, weight, bias))
            with torch.enable_grad():
                out = exported.compiled(weight, bias, x)
                (out * grad_out).sum().backward()
            return out, x.grad, weight.grad, bias.grad

        def run_eager(x, weight_channels_last):
            module = copy.deepcopy(exported.reference)
            if weight_channels_last:
                module = module.to(memory_format=channels_last)
            x = x.requires_grad_(True)
            with torch.enable_grad():
                out = module(x)
                (out * grad_out.cpu()).sum().backward()
            return out.detach(), x.grad, module.conv.weight.grad, module.conv.bias.grad

        weight, bias = exported.reference.conv.weight.detach(), exported.reference.conv.bias.detach()
        contiguous = {"image": run_compiled(on_device(image), on_device(weight), on_device(bias)),
                      "wide": run_compiled(on_device(wide_image[..., ::2].contiguous()), on_device(weight),
                                           on_device(bias))}
        cases = [  # label, base image, view, weight channels_last, key of the contiguous-copy result
            ("channels_last image", image, lambda t: t.to(memory_format=channels_last), False, "image"),
            ("channels_last image and weight", image, lambda t: t.to(memory_format=channels_last), True, "image"),
            ("image sliced with step 2 along W", wide_image, lambda t: t[..., ::2], False, "wide"),
        ]
        names = ("output", "gradient of x", "gradient of weight", "gradient of bias")
        for label, base, view, weight_channels_last, key in cases:
            with self.subTest(label):
                layout = channels_last if weight_channels_last else torch.contiguous_format
                got = run_compiled(view(on_device(base)), on_device(weight).to(memory_format=layout), on_device(bias))
                eager = run_eager(view(base.clone()), weight_channels_last)
                for what, actual, want, want_contiguous in zip(names, got, eager, contiguous[key]):
                    self.assert_tensor(actual, want, f"{label}: {what} vs eager", device=DEVICE, **EXACT)
                    self.assert_tensor(actual, want_contiguous, f"{label}: {what} vs the contiguous copy", **EXACT)
                self.assert_value(got[0].is_contiguous(memory_format=channels_last),
                                  eager[0].is_contiguous(memory_format=channels_last),
                                  f"{label}: output is channels_last exactly when eager's is")


# --------------------------------------------------------------------------- sizes
SIZE_CASES = [  # label, input shape
    ("0-d input", ()),
    ("batch of 0", (0, 3)),
    ("inner dimension of 0", (2, 0)),
    ("size-1 dimensions", (1, 3, 1)),
]


def sizes():
    """SizesModel exported from a (0, 3) batch for its Linear and one integer-valued input per SIZE_CASES shape."""
    inputs = [torch.zeros(0, 3)] + [integers(*shape, seed=1) for _, shape in SIZE_CASES]
    return shared("sizes", lambda: SizesModel(len(SIZE_CASES)), inputs)


@requires_api(EXPORT_API, since="2.9")
class TestAotJointWithDescriptorsSizes(SharedExportsTestCase):
    """Zero-size dimensions, 0-d tensors and size-1 dimensions: eager shapes, values and gradients."""

    shared_exports = (sizes,)

    def test_zero_size_zero_dim_and_size_one_inputs(self):
        """For each shape, x * scale keeps the shape, the total is 0-d, the 0-d scale's gradient is the closed form;
        a Linear on a batch of 0 gives a (0, 2) output and zero gradients."""
        exported = sizes()
        inputs = [integers(*shape, seed=2) for _, shape in SIZE_CASES]
        grads_scaled = [integers(*shape, seed=3) for _, shape in SIZE_CASES]
        grad_total = torch.tensor(2.0)
        params = leaf_copies(exported.model.parameters())
        with torch.enable_grad():
            empty_out, outs = exported.compiled(*params, on_device(torch.zeros(0, 3)), *map(on_device, inputs))
            loss = empty_out.sum() + sum((scaled * on_device(g)).sum() + total * on_device(grad_total)
                                         for (scaled, total), g in zip(outs, grads_scaled))
            loss.backward()
        scale_grads, (weight_grad, bias_grad) = params[:len(SIZE_CASES)], [p.grad for p in params[len(SIZE_CASES):]]
        for (label, _), x, g, (scaled, total), scale in zip(SIZE_CASES, inputs, grads_scaled, outs, scale_grads):
            with self.subTest(label):
                self.assert_tensor(scaled, x * 1.5, f"{label}: x * scale", device=DEVICE, **EXACT)
                self.assert_tensor(total, (x * 1.5).sum(), f"{label}: 0-d total", device=DEVICE, **EXACT)
                self.assert_tensor(scale.grad, (x * g).sum() + x.sum() * grad_total,
                                   f"{label}: gradient of the 0-d scale", device=DEVICE, **EXACT)
        with self.subTest("Linear on a batch of 0"):
            self.assert_tensor(empty_out, torch.zeros(0, 2), "Linear output for a batch of 0", device=DEVICE)
            self.assert_tensor(weight_grad, torch.zeros(2, 3), "gradient of proj.weight", device=DEVICE)
            self.assert_tensor(bias_grad, torch.zeros(2), "gradient of proj.bias", device=DEVICE)


# --------------------------------------------------------------------------- side effects
def side_effects(grad):
    """SideEffectModel exported with grad ``grad`` (a training or an inference graph)."""
    return shared(f"side_effect/grad={grad}", SideEffectModel, (torch.tensor([1.0, 2.0, 3.0]),), grad=grad)


GRAPHS = [("training graph", True), ("inference graph", False)]


@requires_api(EXPORT_API, since="2.9")
class TestAotJointWithDescriptorsSideEffects(SharedExportsTestCase):
    """In-place updates of buffers and inputs, outputs aliasing an input, no state kept across calls."""

    shared_exports = (lambda: side_effects(True), lambda: side_effects(False), batchnorm)

    def test_export_never_runs_the_module_on_the_real_example(self):
        """Export traces with fake tensors: the module's buffer and the example input keep their values."""
        for label, grad in GRAPHS:
            with self.subTest(label):
                exported = side_effects(grad)
                self.assert_tensor(exported.model.calls, torch.tensor(0.0), f"{label}: module buffer after export",
                                   device=DEVICE)
                self.assert_tensor(exported.args[0], torch.tensor([1.0, 2.0, 3.0]),
                                   f"{label}: example input after export", device=DEVICE)

    def test_input_and_buffer_mutations_apply_once_per_call_as_in_eager(self):
        """Each call doubles x and adds 1 to the passed buffer once, exactly as eager does on its own copies."""
        for label, grad in GRAPHS:
            with self.subTest(label):
                exported = side_effects(grad)
                eager_module = copy.deepcopy(exported.reference)
                x, calls = on_device(torch.tensor([1.0, -2.0, 3.0])), on_device(torch.zeros(()))
                x_eager = torch.tensor([1.0, -2.0, 3.0])
                params = leaf_copies(exported.model.parameters())
                for call in (1, 2):
                    with torch.set_grad_enabled(grad):
                        out = exported.compiled(*params, calls, x)
                        eager = eager_module(x_eager)
                    self.assert_tensor(calls, eager_module.calls, f"{label}: buffer after call {call}", device=DEVICE)
                    self.assert_tensor(calls, torch.tensor(float(call)), f"{label}: buffer counts {call} call(s)",
                                       device=DEVICE)
                    self.assert_tensor(x, x_eager, f"{label}: input after call {call}", device=DEVICE)
                    self.assert_tensor(x, torch.tensor([1.0, -2.0, 3.0]) * 2 ** call,
                                       f"{label}: input doubled once per call ({call})", device=DEVICE)
                    self.assert_tensor(out[2], eager[2].detach(), f"{label}: x * weight + calls at call {call}",
                                       device=DEVICE)
                    self.assert_tensor_meta(out[2], f"{label}: computed output", requires_grad=grad)
                self.assert_tensor(exported.model.calls, torch.tensor(0.0), f"{label}: the module's own buffer",
                                   device=DEVICE)

    def test_outputs_aliasing_the_input_are_the_input_and_a_view_of_it(self):
        """``return x, x[1:]``: the first output is x itself, the second a view of x, as in eager."""
        for label, grad in GRAPHS:
            with self.subTest(label):
                exported = side_effects(grad)
                x = on_device(torch.tensor([1.0, 2.0, 3.0]))
                x_eager = torch.tensor([1.0, 2.0, 3.0])
                with torch.set_grad_enabled(grad):
                    same, view, _ = exported.compiled(*leaf_copies(exported.model.parameters()),
                                                      on_device(torch.zeros(())), x)
                    eager_same, eager_view, _ = copy.deepcopy(exported.reference)(x_eager)
                self.assert_is(eager_same, x_eager, "eager returns its input itself")
                self.assert_is(same, x, f"{label}: first output is the input tensor itself")
                self.assert_is(view._base, x, f"{label}: second output is a view whose base is the input")
                self.assert_value((view.storage_offset(), view.stride()),
                                  (eager_view.storage_offset(), eager_view.stride()),
                                  f"{label}: view's storage offset and strides")
                with torch.no_grad():
                    view.add_(10)
                self.assert_tensor(x, torch.tensor([2.0, 14.0, 16.0]), f"{label}: writing through the view changes x",
                                   device=DEVICE)

    def test_repeated_calls_with_fresh_state_give_the_same_eager_result(self):
        """No hidden state: each of three calls with fresh buffers gives eager's one-step output and buffer update."""
        exported = batchnorm()
        x_cpu = sample(5, 3, seed=1)
        eager_module = copy.deepcopy(exported.reference)
        with torch.enable_grad():
            eager_out = eager_module(x_cpu).detach()
        for call in (1, 2, 3):
            buffers = [b.clone() for b in exported.model.buffers()]
            with torch.enable_grad():
                out = exported.compiled(*leaf_copies(exported.model.parameters()), *buffers, on_device(x_cpu))
            self.assert_tensor(out, eager_out, f"BatchNorm call {call}: output", device=DEVICE, **TOLERANCE)
            for name, got, want in zip(buffer_names(eager_module), buffers, eager_module.buffers()):
                self.assert_tensor(got, want, f"BatchNorm call {call}: fresh buffer {name} after one update",
                                   device=DEVICE, **TOLERANCE)


# --------------------------------------------------------------------------- bad input
@requires_api(EXPORT_API, since="2.9")
class TestAotJointWithDescriptorsBadInput(SharedExportsTestCase):
    """Bad arguments to export, compile and the compiled callable raise upstream's exception types."""

    shared_exports = (linear, linear_inference, batchnorm)

    def test_export_rejects_bad_arguments(self):
        """A non-module, non-sequence args, kwargs that are not a mapping, a missing stack, unknown keywords."""
        _, model = build_models(LinearModel)
        x = on_device(sample(2, 3, seed=1))
        export = aot_autograd.aot_export_joint_with_descriptors
        cases = [
            ("a function instead of a module", AttributeError, "named_parameters",
             lambda stack: export(stack, lambda t: t, (x,))),
            ("args is a bare tensor", TypeError, None, lambda stack: export(stack, model, x)),
            ("args is None", TypeError, None, lambda stack: export(stack, model, None)),
            ("args too short for forward", TypeError, "missing 1 required positional argument",
             lambda stack: export(stack, model, ())),
            ("args too long for forward", TypeError, "positional arguments but 3 were given",
             lambda stack: export(stack, model, (x, x))),
            ("a string where forward needs a tensor", TypeError, None, lambda stack: export(stack, model, ("x",))),
            ("input of the wrong inner size", RuntimeError, None,
             lambda stack: export(stack, model, (on_device(torch.zeros(2, 4)),))),
            ("kwargs is a list", TypeError, "must be a mapping", lambda stack: export(stack, model, (x,), [x])),
            ("stack is None", AttributeError, "enter_context", lambda stack: export(None, model, (x,))),
            ("unknown keyword", TypeError, "unexpected keyword argument 'bogus'",
             lambda stack: export(stack, model, (x,), bogus=1)),
        ]
        for label, error, match, call in cases:
            with self.subTest(label):
                with torch.enable_grad(), contextlib.ExitStack() as stack:
                    self.assert_raises_exactly(error, f"export with {label}", call, stack, match=match)
                self.assert_value(type(torch.ones(1) + 1), torch.Tensor,
                                  f"after export with {label}: ops run on real tensors again (no fake mode left)")

    def test_compile_rejects_bad_arguments(self):
        """Compile of a module or None, with an unknown keyword, or of one export a second time."""
        exported = linear_inference()
        compile_joint = aot_autograd.aot_compile_joint_with_descriptors
        self.assert_raises_exactly(AttributeError, "compile of a module", compile_joint, exported.model,
                                   match="_aot_state")
        self.assert_raises_exactly(AttributeError, "compile of None", compile_joint, None, match="_aot_state")
        with torch.no_grad(), contextlib.ExitStack() as stack:
            joint = aot_autograd.aot_export_joint_with_descriptors(stack, exported.model, exported.args)
            self.assert_raises_exactly(TypeError, "compile with an unknown keyword", compile_joint, joint, bogus=1,
                                       match="unexpected keyword argument 'bogus'")
            compile_joint(joint)
            self.assert_raises_exactly(AssertionError, "compiling the same export a second time", compile_joint,
                                       joint)

    def test_compiled_callable_rejects_wrong_arguments(self):
        """Too few arguments, wrong types, shapes or dtypes, an unexpected keyword: upstream's exception types."""
        exported = linear()
        params = leaf_copies(exported.model.parameters())
        x = on_device(sample(2, 3, seed=1))
        cases = [
            ("no arguments", TOO_FEW_ERROR, ()),
            ("parameters only", TOO_FEW_ERROR, (*params,)),
            ("one parameter left out", TOO_FEW_ERROR, (params[0], x)),
            ("a string for x", RuntimeError, (*params, "x")),
            ("None for x", RuntimeError, (*params, None)),
            ("an int for x", RuntimeError, (*params, 3)),
            ("a 1-d x", RuntimeError, (*params, on_device(torch.ones(3)))),
            ("x of the wrong inner size", RuntimeError, (*params, on_device(torch.ones(2, 4)))),
            ("a float64 x for float32 parameters", RuntimeError, (*params, x.double())),
            ("parameters in the wrong order", RuntimeError, (params[1], params[0], x)),
        ]
        for label, error, args in cases:
            with self.subTest(label):
                with torch.enable_grad():
                    self.assert_raises_exactly(error, f"compiled callable with {label}", exported.compiled, *args)
        with self.subTest("an unexpected keyword"), torch.enable_grad():
            self.assert_raises_exactly(ValueError, "compiled callable with an unexpected keyword", exported.compiled,
                                       *params, x, y=x, match="keyword")

    def test_extra_arguments_raise_from_2_10_and_are_ignored_in_2_9(self):
        """One or two arguments too many: RuntimeError from 2.10; in 2.9.1 they are dropped (the call runs on
        the leading arguments and updates the buffers once)."""
        exported = batchnorm()
        params = leaf_copies(exported.model.parameters())
        x = on_device(sample(5, 3, seed=1))
        for label, extra in [("one argument too many", (x,)), ("an extra int", (1,)), ("two too many", (x, x))]:
            with self.subTest(label):
                buffers = [b.clone() for b in exported.model.buffers()]
                with torch.enable_grad():
                    if CHECKS_ARGUMENT_COUNT:
                        self.assert_raises_exactly(RuntimeError, label, exported.compiled, *params, *buffers, x,
                                                   *extra, match="extra arguments")
                        self.assert_value(int(buffers[2]), 0, f"{label}: num_batches_tracked after the failed call")
                        continue
                    out = exported.compiled(*params, *buffers, x, *extra)
                    fresh = [b.clone() for b in exported.model.buffers()]
                    expected = exported.compiled(*params, *fresh, x)
                self.assert_tensor(out, expected.detach(), f"{label}: output equals the call without the extra",
                                   **EXACT)
                for name, got, want in zip(buffer_names(exported.model), buffers, fresh):
                    self.assert_tensor(got, want, f"{label}: buffer {name} updated once", **EXACT)

    def test_wrong_calling_convention_raises(self):
        """Params or buffers left out, or in the wrong order: upstream's error types, and no buffer update."""
        exported = batchnorm()
        params = leaf_copies(exported.model.parameters())
        buffers = [b.clone() for b in exported.model.buffers()]
        x = on_device(sample(5, 3, seed=1))
        cases = [  # the runtime wrapper indexes the mutated buffers' positions before the graph runs
            ("parameters left out (buffers and input only)", IndexError, (*buffers, x)),
            ("buffers left out (parameters and input only)", IndexError, (*params, x)),
            ("only the user input", IndexError, (x,)),
            ("buffers passed before parameters", RuntimeError, (*buffers, *params, x)),
        ]
        for label, error, args in cases:
            with self.subTest(label):
                with torch.enable_grad():
                    self.assert_raises_exactly(error, label, exported.compiled, *args)
        self.assert_value(int(buffers[2]), 0, "num_batches_tracked after calls that all failed")


if __name__ == "__main__":
    run_tests()
