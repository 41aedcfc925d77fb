# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""The OpInfo-backed draft ``new`` writes for an op: one class per entry and contract area, real tests.

Input: the API, its ``since``, and the entries :mod:`opinfo_lookup` found in the interpreters probed, merged
by :func:`merge` (keyed by ``(name, variant_test_name)``, with the torch releases that have each). Output:
the file text. The file reads ``op_db`` when it runs (each release tests its own samples, dtypes and
markings; a release without an entry skips that entry's classes with the reason) and calls the API by its
dotted name in one function, ``api``; the entry gives samples and metadata only. The areas per entry:
Values (device vs CPU, strides included; a repeated device call, bit for bit; numpy ref; the other variants;
``out=``), Dtypes (declared dtypes on the CPU; the dtype space on the device vs the CPU), BadInput
(``error_inputs``, else a placeholder), Gradients (gradcheck; device vs CPU gradients), InPlace (where a named
in-place variant exists). Placeholder classes (:data:`PLACEHOLDERS`) stay for what OpInfo cannot know; each of
their cases fails with its label.
"""
import re
import textwrap

from ..common.layout import KIT_HEADER
from . import jsonfile, opinfo_checks, scaffold_text

IMPORT_NAMES = ("TestCase", "run_tests", "device_type", "requires_api", "skip_unless_vehicle", "api_limit")
PLACEHOLDERS = ("CallForms", "Layouts", "SideEffects", "Threads")
FORMS = {
    "function": "return {target}(input, *args, **kwargs)",
    "method": "return input.{target}(*args, **kwargs)",
    "inplace_method": "return input.{target}(*args, **kwargs)",
    "inplace_kwarg": "return {target}(input, *args, inplace=True, **kwargs)",
}


def merge(lookups):
    """``[entry]`` over the interpreters' lookups, each with ``torch`` (the releases that have it), newest
    description kept; in first-seen order."""
    merged = {}
    for result in sorted(lookups, key=lambda r: jsonfile.version_key(r.get("torch"))):
        for found in result.get("entries", []):
            key = (found["name"], found["variant_test_name"])
            torches = merged.get(key, {}).get("torch", [])
            merged[key] = dict(found, torch=torches + [result["torch"]])
    return list(merged.values())


def camel(text):
    return "".join(piece[:1].upper() + piece[1:] for piece in re.split(r"[^A-Za-z0-9]+", text) if piece)


def identifier(text):
    """A Python name for a label (``Tensor.addcdiv_`` -> ``tensor_addcdiv_inplace``)."""
    text = text[:-1] + " inplace" if text.endswith("_") else text
    return re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_").lower() or "variant"


def function_text(name, form, target, doc=None):
    body = FORMS[form].format(target=target)
    doc = f'    """{doc}"""\n' if doc else ""
    return f"\n\ndef {name}(input, *args, **kwargs):\n{doc}    {body}\n"


def out_text(target):
    return (f"\n\ndef out_{identifier(target)}(input, *args, out, **kwargs):\n"
            f"    return {target}(input, *args, out=out, **kwargs)\n")


def suffixes(entries):
    """A class-name part per entry: empty for one entry, else its variant (or name) in CamelCase."""
    if len(entries) == 1:
        return [""]
    names = {entry["name"] for entry in entries}
    return [camel(entry["variant_test_name"] or entry["name"]) if len(names) == 1 else
            camel(entry["name"]) + camel(entry["variant_test_name"]) for entry in entries]


def class_doc(about):
    lines = textwrap.wrap(about[:1].upper() + about[1:] + ".", 110)
    return '    """' + "\n    ".join(lines) + '"""\n'


# Why each drafted test exists and what it checks: its docstring (pr counts a test without one as undocumented).
TEST_DOCS = {
    "test_reference_inputs_match_the_cpu":
        "Each reference input in each dtype the entry declares for the device gives the CPU's result there: on the "
        "device, same dtype, shape, strides (of views), values, and the same outputs viewing an input.",
    "test_repeated_device_calls_agree_bit_for_bit":
        "Two device calls on copies of one reference input give the same bits and strides (no stale or racy "
        "state in the port).",
    "test_reference_inputs_match_the_numpy_ref":
        "The API's CPU result on each reference input matches the entry's NumPy reference.",
    "test_variants_agree_on_the_cpu":
        "Every variant (function, method, aliases, in-place) agrees with the API on the CPU, views included.",
    "test_out_variant_writes_the_result":
        "out= writes the API's result into the given tensors and returns those very tensors.",
    "test_declared_dtypes_succeed_on_the_cpu":
        "Every dtype the entry declares for the CPU succeeds on every sample.",
    "test_dtype_space_outcomes_match_the_cpu":
        "Every dtype of the space has the CPU's outcome on the device: success and result dtypes, or the error.",
    "test_error_inputs_raise_their_type_and_message_on_the_cpu":
        "Each of the entry's error inputs raises its declared type and message on the CPU.",
    "test_error_inputs_raise_the_cpus_type_on_the_device":
        "Each error input moved to the device has the CPU's outcome there (no silent result, no other error).",
    "test_gradcheck_in_float64_on_the_cpu":
        "The API's gradients pass gradcheck in float64 on the CPU (the entry's wrapper and tolerance).",
    "test_device_gradients_match_the_cpu":
        "On the device, which inputs get a gradient and the gradients' values match the CPU's, per dtype.",
    "test_inplace_writes_the_result_into_its_input":
        "The in-place variant writes the API's result into its input and returns that input.",
    "test_inplace_on_the_device_matches_the_cpu":
        "The in-place variant on the device writes the CPU's result into its device input.",
}


def tests_text(methods):
    """Test methods from ``(decorators, name, body)``, each with its :data:`TEST_DOCS` docstring."""
    out = []
    for decorators, name, body in methods:
        out.append("\n" + "".join(f"    {d}\n" for d in decorators) + f"    def {name}(self):\n"
                   + scaffold_text.doc_lines(TEST_DOCS[name]) + f"        {body}\n")
    return "".join(out)


def value_tests(entry, op, key):
    """The Values area's tests: device vs CPU, and the independent CPU checks the entry allows."""
    tests = [(["@only_on_accelerator", f'@honour({op}, "test_compare_cpu")'], "test_reference_inputs_match_the_cpu",
              f"check_device_matches_cpu(self, {op}, api)"),
             (["@only_on_accelerator", f'@honour({op}, "test_compare_cpu", ("skip",))'],
              "test_repeated_device_calls_agree_bit_for_bit", f"check_repeated_device_calls(self, {op}, api)")]
    if entry["has_ref"]:
        tests.append(([f'@honour({op}, "test_numpy_ref")'], "test_reference_inputs_match_the_numpy_ref",
                      f"check_numpy_ref(self, {op}, api)"))
    if entry["variants"]:
        tests.append(([f'@honour({op}, "test_variant_consistency_eager")'], "test_variants_agree_on_the_cpu",
                      f"check_variants(self, {op}, api, VARIANTS_{key})"))
    if entry["out"]:
        tests.append(([f'@honour({op}, "test_out")'], "test_out_variant_writes_the_result",
                      f"check_out(self, {op}, api, out_{identifier(entry['out'])})"))
    return tests


def entry_areas(entry, op, key, title):
    """``[(area, about, tests)]`` of one entry."""
    device = "@only_on_accelerator"
    areas = [("Values", f"values of {title}: reference inputs x declared dtypes, each labelled by its summary()",
              value_tests(entry, op, key)),
             ("Dtypes", f"dtypes of {title}: declared ones succeed on the CPU; on a device every dtype of the "
                        "space has the CPU's outcome",
              [([f'@honour({op}, "test_dtypes")'], "test_declared_dtypes_succeed_on_the_cpu",
                f"check_declared_dtypes(self, {op}, api)"),
               ([device, f'@honour({op}, "test_dtypes")'], "test_dtype_space_outcomes_match_the_cpu",
                f"check_dtype_space(self, {op}, api)")])]
    if entry["has_error_inputs"]:
        areas.append(("BadInput", f"bad input from {title}'s error_inputs",
                      [([f'@honour({op}, "test_errors")'], "test_error_inputs_raise_their_type_and_message_on_the_cpu",
                        f"check_error_inputs(self, {op}, api)"),
                       ([device], "test_error_inputs_raise_the_cpus_type_on_the_device",
                        f"check_error_types_on_device(self, {op}, api)")]))
    if entry["supports_autograd"]:
        areas.append(("Gradients", f"gradients of {title}",
                      [([f'@honour({op}, "test_fn_grad")'], "test_gradcheck_in_float64_on_the_cpu",
                        f"check_gradcheck(self, {op}, api)"),
                       ([device], "test_device_gradients_match_the_cpu",
                        f"check_device_gradients(self, {op}, api)")]))
    inplace = next((v for v in entry["variants"] if v["requires"] == "inplace_variant"), None)
    if inplace and entry["api_form"]["form"] != "inplace_method":
        fn = identifier(inplace["label"])
        areas.append(("InPlace", f"the in-place variant {inplace['label']} of {title} (samples that broadcast "
                                 "their input skipped)",
                      [([], "test_inplace_writes_the_result_into_its_input", f"check_inplace(self, {op}, {fn}, api)"),
                       ([device], "test_inplace_on_the_device_matches_the_cpu",
                        f"check_inplace(self, {op}, {fn}, api, DEVICE)")]))
    return areas


def entry_classes(api, entry, suffix, since):
    """The text of one entry's classes (Values, Dtypes, BadInput, Gradients, InPlace)."""
    key = identifier(f"{entry['name']} {entry['variant_test_name']}").upper()
    op, prefix = f"OP_{key}", scaffold_text.class_prefix(api) + suffix
    title = f"``{entry['name']}``" + (f" ({entry['variant_test_name']})" if entry["variant_test_name"] else "")
    gate = (f"@requires_api(API, since={since!r})\n@unittest.skipIf({op} is None, "
            f"lacks({entry['name']!r}, {entry['variant_test_name']!r}))\n")
    variants = "".join(f"    ({v['label']!r}, {v['requires']!r}, {identifier(v['label'])}),\n"
                       for v in entry["variants"])
    text = [f"\n\n{op} = entry({entry['name']!r}, {entry['variant_test_name']!r})\n"
            f"VARIANTS_{key} = (\n{variants})\n"]
    for area, about, methods in entry_areas(entry, op, key, title):
        text.append(f"\n\n{gate}class Test{prefix}{area}(TestCase):\n{class_doc(about)}" + tests_text(methods))
    return "".join(text)


def functions(api, entries):
    """``api`` and every variant / out= function the entries name, each once."""
    form = entries[0]["api_form"]
    text = [function_text("api", form["form"], form["target"],
                          f"``{api}``, called by its name: the call mutate and the API-call recorder see.")]
    seen = set()
    for entry in entries:
        for variant in entry["variants"]:
            name = identifier(variant["label"])
            if name not in seen:
                seen.add(name)
                text.append(function_text(name, variant["form"], variant["target"]))
        if entry["out"] and "out " + entry["out"] not in seen:
            seen.add("out " + entry["out"])
            text.append(out_text(entry["out"]))
    return "".join(text)


def docstring(api, entries, versions):
    listed = ", ".join(f"``{e['name']}``" + (f" ({e['variant_test_name']})" if e["variant_test_name"] else "")
                       + f" as its {e['matched_as']}" for e in entries)
    no_check = [e["name"] for e in entries if not e["has_ref"] and not e["variants"] and not e["out"]]
    lacking = [f"{e['name']} {e['variant_test_name']}".strip() + f" only in torch {', '.join(e['torch'])}"
               for e in entries if set(e["torch"]) != set(versions)]
    paragraphs = [
        "Why it exists: the NPU port must behave exactly as upstream PyTorch for this API. Drafted by ``python -m "
        f"torch_npu_testing new`` from torch's OpInfo database (op_db) in torch {', '.join(versions)}: {listed}. "
        "The file reads op_db when it runs, so each torch tests its own samples, dtypes and markings; a torch whose "
        "op_db lacks an entry or a variant skips it with the reason. ``api`` calls the API by its name."
        + (f" Entries not in every torch probed: {'; '.join(lacking)}." if lacking else ""),
        "What a run proves. On an accelerator: values of every reference input x declared dtype equal the same call "
        "on the CPU (dtype, shape, strides: all of them for views, those of dims of size > 1 otherwise; the same "
        "outputs being views of an input) and a second device call bit for bit, every dtype of the space has the "
        "CPU's outcome (a result off the input's device included), error inputs "
        "raise the CPU's exception type, gradients equal the CPU's. On the CPU: values equal the entry's numpy ref "
        "and the other variants (function, method, in-place, out=, aliases), declared dtypes succeed, error inputs "
        "raise their type and message, gradcheck passes in float64. A CPU run cannot compare the CPU with itself: "
        "those cases skip, saying so"
        + (f"; {', '.join(sorted(set(no_check)))} has no ref and no other variant, so on the CPU only gradcheck and "
           "error inputs check it independently" if no_check else "") + ". Upstream's DecorateInfo markings "
        "(expected failures, skips) are applied the same way; other decorators (tolerances, device-framework "
        "skips) are not.",
        "Not known to OpInfo, placeholders below that fail until written (delete one that does not apply and say "
        "why here): every parameter shown to take effect, layouts (memory formats, views, sparse), side effects, "
        "threads" + ("" if all(e["has_error_inputs"] for e in entries) else ", bad input") + ".",
    ]
    body = "\n\n".join("\n".join(textwrap.wrap(p, 110, break_on_hyphens=False)) for p in paragraphs)
    return f'"""API consistency on the test device of\n\n    ``{api}``\n\n{body}\n"""\n'


def documented_text(documented):
    """The draft's DOCUMENTED line from ``({api: (allowed or None, excluded)}, source)``."""
    found, source = documented or ({}, "no limits table given to new (--limits)")
    said = (f"Dtypes on Ascend's NPU as documented ({source}): per API (allowed or None, excluded); a device "
            "refusal outside them is expected.")
    lines = [f"# {line}" for line in textwrap.wrap(said, 110)] + ["DOCUMENTED = {"]
    for api, (allow, exclude) in found.items():
        words = [repr(chunk + " ") for chunk in textwrap.wrap(" ".join(allow), 96)] if allow is not None else ["None"]
        lines += [f"    {api!r}: ("] + [f"        {chunk}" for chunk in words]
        lines[-1] += f",\n        {' '.join(exclude)!r}),"
    return "\n".join(lines + ["}"]) + "\n"


def render(api, since, entries, versions, signature, documented=None):
    """The drafted file's text for ``entries`` (from :func:`merge`) found in torch ``versions``; ``documented``:
    the API's documented dtypes, :func:`.limits.documented_dtypes`."""
    head = (KIT_HEADER + docstring(api, entries, versions)
            + f"from torch_npu_testing import {', '.join(IMPORT_NAMES)}\n\n" + opinfo_checks.IMPORTS
            + f"\nAPI = {api!r}\nDEVICE = device_type()\n" + documented_text(documented)
            + scaffold_text.spaces_text(("DTYPES", "MEMORY_FORMATS", "VIEWS", "SPARSE_LAYOUTS"))
            + opinfo_checks.CHECKS.rstrip("\n") + "\n" + functions(api, entries))
    classes = [entry_classes(api, entry, suffix, since) for entry, suffix in zip(entries, suffixes(entries))]
    areas = [a for a in scaffold_text.AREAS if a[0] in PLACEHOLDERS]
    if not all(entry["has_error_inputs"] for entry in entries):
        areas += [a for a in scaffold_text.AREAS if a[0] == "BadInput"]
    holders = scaffold_text.area_classes(api, since, signature, areas)
    return head + "".join(classes) + holders + '\n\nif __name__ == "__main__":\n    run_tests()\n'
