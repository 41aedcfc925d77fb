# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""What a draft by kind tests: from ``kind_probe info``, the areas (one class each) and their observations.

An area is ``(name, about, tests)``; a test is ``(name, docstring, [(key, expression)])``: each expression
calls the API by its dotted name through an ``observe_*`` helper (:mod:`kind_observe`); ``new`` evaluates it
in every torch it probes, and the drafted test asserts that the same expression equals the probed value of
``key`` for the running release. :func:`spec` returns None (with the reason) for what it cannot draft, and
the draft's own setup text (a config module's ``extra_state``: its patched key watched as global state).
"""
from .scaffold_text import test_name

DECORATED = ("function", "raising", "method", "generator", "class", "partial")
MODULES = (("linear", "linear()"), ("batch norm (buffers)", "batch_norm()"),
           ("sequential (a submodule)", "sequential()"), ("linear with a forward hook", "hooked_linear()"))
MODULE_SETUP = '''

def linear():
    return torch.nn.Linear(3, 2)


def batch_norm():
    """A module with buffers (running statistics, written by a call in training mode)."""
    return torch.nn.BatchNorm1d(3)


def sequential():
    """A module with submodules."""
    return torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.ReLU())


def hooked_linear():
    """A module with a forward hook that doubles its output."""
    module = torch.nn.Linear(3, 2)
    module.register_forward_hook(lambda mod, args, out: out * 2)
    return module
'''
DTYPES = ("torch.float32", "torch.float64", "torch.float16", "torch.bfloat16", "torch.complex64", "torch.int64",
          "torch.uint8", "torch.bool")
PLACEHOLDERS = ("what the API computes, beyond the generic contract of its kind",
                "documented warnings and error messages", "behaviour that differs between torch releases")


def _sample(param):
    """A literal for a required parameter, from its annotation and name; None when there is no guess."""
    name, note = param["name"].lower(), (param["annotation"] or "").lower()
    if "module" in note and any(word in note for word in ("list", "sequence", "iterable")) or name == "models":
        return "[MODULE, MODULE]"
    if "module" in note or name in ("module", "model", "mod"):
        return "MODULE"
    if name == "args" or note.startswith("tuple"):
        return "(torch.randn(4, 3),)"
    if "dict" in note or "dict" in name:
        return "{}"
    if "dtype" in note or name.startswith("type") or name.endswith("dtype"):
        return "torch.float32" if name.endswith("1") or "from" in name else "torch.int64"
    if "tensor" in note or name in ("input", "x", "tensor", "self", "other"):
        return "torch.randn(4, 3)"
    return {"bool": "False", "int": "1", "float": "1.5"}.get(note)


def _required(params):
    """The parameters a call passes: those without a default, and those defaulting to None that take the
    inputs (``functional_call``'s ``args``)."""
    return [p for p in params if p["kind"] in ("positional", "keyword") and (
        p["default"] is None or p["default"] == "None" and _sample(p) == "(torch.randn(4, 3),)")]


def _arguments(params):
    """``(positional texts, keyword names)`` of the required parameters, or None when one has no sample."""
    samples = [_sample(p) for p in _required(params)]
    if any(sample is None for sample in samples):
        return None
    return samples, [p["name"] for p in _required(params)]


def _cm_areas(api, info, make, copy_owner):
    areas = [("EnterExit", "entering changes the global state as probed per release; exit restores; an "
              "exception in the block restores and propagates", [
                  ("test_enter_and_exit", "Entering changes what the probe saw; exit restores it.",
                   [("enter", f"observe_enter({make})")]),
                  ("test_an_exception_in_the_block", "An exception in the block propagates; the state is restored.",
                   [("exception", f"observe_exception({make})")])]),
             ("Decorator", "as a decorator on a function (and one that raises), a method, a generator, a class, a "
              "functools.partial: the state inside and after, the metadata kept", [
                  (f"test_decorating_a_{form}", f"Used as a decorator on a {form}.",
                   [(f"decorated {form}", f"observe_decorated({make}, {form!r})")]) for form in DECORATED]),
             ("Nesting", "re-entry of one object, nesting of two, and what another thread sees", [
                  ("test_reentry_of_one_object", "The same object entered twice, nested.",
                   [("reentry", f"observe_nested({make}, True)")]),
                  ("test_nesting_two_objects", "Two objects made by the API, nested.",
                   [("nesting", f"observe_nested({make}, False)")]),
                  ("test_another_thread", "The state another thread sees inside the block (per thread or not).",
                   [("thread", f"observe_thread({make})")])])]
    if copy_owner:
        areas.append(("Copy", "a new object of the same type (a subclass too), equal state, independent", [
            ("test_copy_is_new_equal_and_independent", "The copy: new, same type, same state, independent.",
             [("copy", f"observe_copy(lambda original: {api}(original), lambda: {copy_owner})")])]))
    return areas


def _bad_input(api, samples, names):
    tests = [("test_unknown_keyword", "An unknown keyword raises as upstream does.",
              [("bad keyword", f"observe_bad_call(lambda: {api}({', '.join(samples + ['no_such_parameter=1'])}))")]),
             ("test_an_extra_argument", "One argument too many raises as upstream does.",
              [("bad extra", f"observe_bad_call(lambda: {api}({', '.join(samples + ['object()'])}))")])]
    for index, name in enumerate(names):
        wrong = samples[:index] + ["object()"] + samples[index + 1:]
        tests.append((f"test_wrong_type_of_{name}", f"A wrong type for {name} raises as upstream does.",
                      [(f"bad {name}", f"observe_bad_call(lambda: {api}({', '.join(wrong)}))")]))
    return ("BadInput", "wrong types and unknown arguments raise the same exception type as upstream", tests)


def _context_manager(api, info):
    if info["copy"]:
        owner = api.rsplit(".", 1)[0]
        found = _arguments(info["owner_params"])
        if found is None:
            return None, f"{owner} needs arguments new cannot guess"
        original = f"{owner}({', '.join(found[0])})"
        make = f"lambda: {api}({original})"
        areas = _cm_areas(api, info, make, original) + [_bad_input(api, [original], [])]
        return areas, None
    found = _arguments(info["params"])
    if found is None:
        return None, "a required parameter new cannot guess a value for"
    samples, names = found
    make = f"lambda: {api}({', '.join(samples)})"
    areas = _cm_areas(api, info, make, None)
    defaults = [p for p in info["params"] if p["kind"] == "positional" and p["default"] is not None]
    if defaults:
        every = samples + [p["default"] for p in defaults]
        keywords = [f"{p['name']}={p['default']}" for p in defaults]
        areas.insert(0, ("CallForms", "every parameter positionally, by keyword, in another order, and left out", [
            ("test_defaults_positionally", "Every default passed positionally.",
             [("positional", f"observe_enter(lambda: {api}({', '.join(every)}))")]),
            ("test_defaults_by_keyword", "Every default passed by keyword, then in reverse order.",
             [("keywords", f"observe_enter(lambda: {api}({', '.join(samples + keywords)}))"),
              ("reversed", f"observe_enter(lambda: {api}({', '.join(samples + keywords[::-1])}))")])]))
    areas.append(_bad_input(api, samples, names))
    return areas, None


def _config_module(api, info, keys):
    module = api if not api.endswith(".patch") else api.rsplit(".", 1)[0]
    patch = api if api.endswith(".patch") else f"{api}.patch"
    if not keys:
        return None, "no boolean key that every torch probed has"
    key = keys[0]
    value = not info["config_defaults"][key]
    observe = f"observe_patch({module}, {patch}, {key!r}, {value!r})"
    setup = (f"\n\ndef extra_state():  # noqa: F811 - the helper's, for this API\n"
             f"    \"\"\"The patched key of the config module, watched as global state.\"\"\"\n"
             f"    return {{\"patched key\": {module}.{key}}}\n")
    forms = ("key, value", "dict", "keywords", "empty", "decorator")
    areas = [("PatchForms", f"every patch form sets {key} inside and restores it; copy, save and hash reflect it",
              [(f"test_patch_{form.replace(', ', '_')}", f"patch by {form}: the value inside, copy/save/hash, restore.",
                [(f"patch {form}", f"{observe}[{form!r}]")]) for form in forms]),
             ("BadInput", "a lone key, a dict with keywords, an unknown key: the exception type upstream raises",
              [(f"test_{form.replace(' ', '_')}", f"patch with {form}.", [(f"patch {form}", f"{observe}[{form!r}]")])
               for form in ("lone key", "dict and keywords", "unknown key")])]
    return areas + _cm_areas(patch, info, f"lambda: {patch}({key!r}, {value!r})", None), setup


def _function(api, info):
    found = _arguments(info["params"])
    if found is None:
        return None, "a required parameter new cannot guess a value for"
    samples, names = found
    kinds = MODULES if any("MODULE" in sample for sample in samples) else (("", ""),)
    tests, device = [], []
    for label, module in kinds:
        inputs = ", ".join(sample.replace("MODULE", module) for sample in samples) + ","
        suffix = f" ({label})" if label else ""
        keywords = ", ".join(f"{n}=inputs[{i}]" for i, n in enumerate(names))
        named = "_" + test_name(label)[5:] if label else ""
        tests.append((f"test_call{named}",
                      f"The result, inputs written, aliasing, state and gradients{suffix}, positionally and by "
                      "keyword.", [(f"call{suffix}", f"observe_call(lambda: ({inputs}), {api})"),
                                   (f"keywords{suffix}", f"observe_call(lambda: ({inputs}), lambda *inputs: "
                                    f"{api}({keywords}))")]))
        device.append((f"test_device_matches_cpu{named}",
                       f"On the test device, as on the CPU{suffix}.", [
                           (None, f"observe_call(lambda: to_device(({inputs}), DEVICE), {api})"),
                           (None, f"observe_call(lambda: ({inputs}), {api})")]))
    areas = [("Values", "the result (dtype, shape, strides, values, containers), inputs written, aliasing, global "
              "state and reverse-mode gradients, as probed per release", tests),
             ("Device", "the device against the CPU at run time", device)]
    flags = [p for p in info["params"] if p["kind"] in ("positional", "keyword") and p["default"] in ("True", "False")]
    if flags:
        first = ", ".join(sample.replace("MODULE", kinds[0][1]) for sample in samples) + ","
        areas.insert(1, ("CallForms", "each flag with a default passed by keyword, set the other way: it takes "
                         "effect, or not, as probed", [
                             (f"test_{p['name']}_set_the_other_way", f"{p['name']}={p['default'] != 'True'}.", [(
                                 f"flag {p['name']}", f"observe_call(lambda: ({first}), lambda *inputs: {api}("
                                 f"*inputs, {p['name']}={p['default'] != 'True'}))")]) for p in flags]))
    dtype_at = next((i for i, sample in enumerate(samples) if sample.startswith("torch.") and "randn" not in sample
                     and "nn." not in sample), None)
    if dtype_at is not None:
        areas.append(("Dtypes", "a space of dtypes for the first dtype parameter", [
            (f"test_dtype_{dtype.split('.')[-1]}", f"{names[dtype_at]} = {dtype}.", [(
                f"dtype {dtype}", f"observe_bad_call(lambda: {api}("
                f"{', '.join(samples[:dtype_at] + [dtype] + samples[dtype_at + 1:])}))")]) for dtype in DTYPES]))
    areas.append(_bad_input(api, [s.replace("MODULE", MODULES[0][1]) for s in samples], names))
    return areas, MODULE_SETUP if kinds is MODULES else None


def spec(api, infos):
    """``(areas, setup)`` for ``api`` from its ``info`` per torch (newest last), or ``(None, why)``."""
    info = infos[-1]
    drafted_form = info["is_class"] or info["copy"] or info["form"] == "python function"
    if info["contract"] == "context manager" and drafted_form:
        return _context_manager(api, info)
    if info["contract"] == "config module":
        defaults = info["config_defaults"]
        keys = [k for k in sorted(info["config_keys"], key=lambda k: (len(k), k)) if all(
            k in other["config_keys"] and other["config_defaults"][k] == defaults[k] for other in infos)]
        return _config_module(api, info, keys)
    if info["contract"] in ("function", "C builtin"):
        return _function(api, info)
    return None, f"no generic contract drafted for a {info['contract']} ({info['form']})"
