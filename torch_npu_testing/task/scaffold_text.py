# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""The plain scaffold ``new`` writes (``--no-opinfo``, or no OpInfo entry): one class per contract area.

Areas whose inputs torch can enumerate are real loops over those spaces, taken from torch when the file
runs, each case a labelled subtest that fails until written: the dtype space
(``all_types_and_complex_and(half, bfloat16, bool)`` plus the unsigned and float8 types the installed torch
has), the memory formats of every rank (contiguous; channels_last at 4-d, channels_last_3d at 5-d), views,
the sparse layouts, and the sizes (0-size, 0-d, size-1, distinct). The other areas are one placeholder test
per case. The OpInfo draft (:mod:`opinfo_draft`) reuses :func:`area_classes` and :func:`spaces_text` for
what OpInfo cannot know.
"""
import json
import re
import textwrap
from collections import namedtuple

from ..common.layout import KIT_HEADER

# The header and import line that ``export`` recognises and rewrites (export/convert.py).
SCAFFOLD_NAMES = ("TestCase", "run_tests", "device_type", "requires_api", "torch_version_at_least")
IMPORTS = f"from torch_npu_testing import {', '.join(SCAFFOLD_NAMES)}\n"
Loop = namedtuple("Loop", "what space")
SPACES = {
    "DTYPES": ("DTYPES = tuple(all_types_and_complex_and(torch.half, torch.bfloat16, torch.bool)) + tuple(\n"
               "    getattr(torch, name) for name in (\"uint16\", \"uint32\", \"uint64\", \"float8_e4m3fn\", "
               "\"float8_e5m2\",\n"
               "                                      \"float8_e4m3fnuz\", "
               "\"float8_e5m2fnuz\", \"float8_e8m0fnu\") if hasattr(torch, name))\n"),
    "MEMORY_FORMATS": ("MEMORY_FORMATS = tuple((rank, memory_format) for rank in range(1, 6)\n"
                       "                       for memory_format in (torch.contiguous_format, torch.channels_last, "
                       "torch.channels_last_3d)\n"
                       "                       if memory_format is torch.contiguous_format\n"
                       "                       or rank == {torch.channels_last: 4, torch.channels_last_3d: 5}"
                       "[memory_format])\n"),
    "VIEWS": ('VIEWS = ("transposed", "permuted", "sliced with a step", "expanded (stride 0)", "conj view of a '
              'complex tensor",\n         "neg view (conj().imag)")\n'),
    "SPARSE_LAYOUTS": "SPARSE_LAYOUTS = (torch.sparse_coo, torch.sparse_csr, torch.sparse_csc, torch.sparse_bsr, "
                      "torch.sparse_bsc)\n",
    "SIZES": 'SIZES = (("0-size dim", (0, 3)), ("0-d", ()), ("size-1 dims", (1, 3, 1)), ("distinct sizes per dim", '
             '(2, 3, 4)))\n',
}
AREAS = (
    ("CallForms", "every call form and every parameter on the installed torch, each shown to take effect",
     ["positional and keyword call forms"]),
    ("Dtypes", "every dtype of the space from torch: the result and its dtype as upstream, or upstream's "
               "exception type", [Loop("every dtype of the space", "DTYPES")]),
    ("Layouts", "every memory format of the rank, views, sparse layouts: upstream's result (vs the contiguous "
                "copy) or upstream's refusal",
     [Loop("memory formats of every rank", "MEMORY_FORMATS"), Loop("views", "VIEWS"),
      Loop("sparse layouts", "SPARSE_LAYOUTS")]),
    ("Sizes", "0-size dims, 0-d tensors, size-1 dims, distinct sizes per dim", [Loop("sizes", "SIZES")]),
    ("SideEffects", "in-place mutation, aliasing of outputs, state across repeated calls",
     ["inputs are not mutated (or are, as upstream)", "output aliasing", "repeated calls"]),
    ("BadInput", "wrong types and out-of-range values raise the same exception type as upstream",
     ["wrong argument types", "out-of-range values"]),
    ("Threads", "thread-local state, if any (else delete this class and say why in the module docstring)",
     ["state seen by another thread"]),
    ("Errors", "error messages and exception types match upstream on every supported torch version",
     ["exception type and message"]),
)


def class_prefix(api):
    last = api.rsplit(".", 1)[-1].strip("_") or "Api"
    return "".join(piece[:1].upper() + piece[1:] for piece in last.split("_") if piece)


def test_name(text):
    return "test_" + re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def parameters(signature):
    """Parameter names of a signature string such as ``(self, mode: bool) -> None``."""
    if not signature:
        return []
    inner = signature[signature.index("(") + 1:]
    depth, current, names = 0, "", []
    for char in inner:
        if char in "([{":
            depth += 1
        elif char in ")]}":
            if depth == 0:
                break
            depth -= 1
        if char == "," and depth == 0:
            names.append(current)
            current = ""
        else:
            current += char
    names.append(current)
    result = []
    for name in names:
        name = name.split(":")[0].split("=")[0].strip().lstrip("*")
        if name and name not in ("self", "cls", "/") and re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", name):
            result.append(name)
    return result


def spaces_text(names):
    return "\n" + "".join(SPACES[name] for name in names)


def doc_lines(text, indent="        ", width=116):
    """``text`` as a docstring at ``indent`` (a test body's), wrapped at words to ``width`` columns."""
    lines = textwrap.wrap(text, width - len(indent), initial_indent='"""', break_on_hyphens=False)
    return "".join(f"{indent}{line}\n" for line in lines[:-1]) + f'{indent}{lines[-1]}"""\n'


def placeholder_doc(what):
    """A placeholder's docstring: what to write, and that its docstring then says why."""
    return doc_lines(f"Placeholder: {what}. Write the test, then say here what contract it checks.")


def case_text(case):
    """One placeholder test: a loop of labelled failing subtests over a space, or one failing test."""
    if isinstance(case, Loop):
        return (f"\n    def {test_name(case.what)}(self):\n" + placeholder_doc(case.what) +
                f"        for item in {case.space}:\n"
                "            with self.subTest(str(item)):\n"
                f'                self.fail(f"not written yet: {{API}}: {case.what}: {{item}}")\n')
    return (f"\n    def {test_name(case)}(self):\n" + placeholder_doc(case)
            + f'        self.fail(f"not written yet: {{API}}: {case}")\n')


def area_classes(api, since, signature, areas=AREAS):
    """The placeholder classes of ``areas`` (``(name, about, cases)``) for ``api``."""
    prefix = class_prefix(api)
    gate = f"@requires_api(API, since={since!r})\n"
    out = []
    for area, about, cases in areas:
        if area == "CallForms":
            cases = cases + [f"parameter {name}" for name in parameters(signature)]
        doc = "\n    ".join(textwrap.wrap(f"Contract area: {about}.", 110))
        body = [f"\n\n{gate}class Test{prefix}{area}(TestCase):\n", f'    """{doc}"""\n']
        body += [case_text(case) for case in cases]
        if area == "Errors":
            body.append("\n    def test_version_differences(self):\n" + placeholder_doc("version differences") +
                        "        # Assert the installed version's behaviour where versions differ.\n"
                        '        self.fail(f"not written yet: {API}: behaviour on torch {torch.__version__} "\n'
                        '                  f"(at least 2.11: {torch_version_at_least(\'2.11\')})")\n')
        out.append("".join(body))
    return "".join(out)


def render_file(api, since, signature):
    doc = ('"""API consistency on the test device of\n\n'
           f"    ``{api}``\n\n"
           "Why it exists: the NPU port must behave exactly as upstream PyTorch for this API; the file checks\n"
           "its contract on every supported torch (a torch without it skips, saying so).\n\n"
           "Scaffold written by ``python -m torch_npu_testing new``: every test below is a placeholder that\n"
           "fails until it is written (loops over the spaces from torch fail per labelled case). Say here which\n"
           "contract areas do not apply to this API and why.\n"
           '"""\n')
    head = (KIT_HEADER + doc + IMPORTS + "\nimport torch\nfrom torch.testing._internal.common_dtype import "
            f"all_types_and_complex_and\n\nAPI = {json.dumps(api)}\nDEVICE = device_type()\n"
            + spaces_text(("DTYPES", "MEMORY_FORMATS", "VIEWS", "SPARSE_LAYOUTS", "SIZES")))
    return head + area_classes(api, since, signature) + '\n\nif __name__ == "__main__":\n    run_tests()\n'
