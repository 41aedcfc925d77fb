# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Convert one kit test file into the form Ascend/pytorch accepts, or say why it cannot be.

- the kit's two-line license header becomes the BSD-3-Clause header layout Ascend/pytorch uses;
- the one line ``from torch_npu_testing import ...`` becomes ``import torch`` / ``import torch_npu`` plus,
  after the file's own imports, the carried definitions of the names the file uses (copied by
  :mod:`.inline` from :mod:`torch_npu_testing.portable` and :mod:`torch_npu_testing.carried`);
- the module docstring and every test stay exactly as they are.

A file is refused (with every problem, by line) when it lacks the kit header or a module docstring,
imports the kit other than by that one line, defines a name the carried helpers define, calls an assert
in a way torch_npu's TestCase rejects on an NPU host, or still names this kit after conversion.
"""
import ast
import re
import textwrap
from dataclasses import dataclass

from .inline import InlinedHelpers, inline_helpers, merge_stdlib_imports, source_lines

KIT_PACKAGE = "torch_npu_testing"
KIT_HEADER = ("# Copyright (c) 2026, torch_npu API-consistency kit contributors.\n"
              "# SPDX-License-Identifier: BSD-3-Clause\n")
PUBLIC_NAMES = ("TestCase", "run_tests", "device_type", "requires_api", "torch_version_at_least")
DEFAULT_COPYRIGHT_HOLDER = "Huawei Technologies Co., Ltd"
# Any spelling of this kit's name: package, CLI and its environment variables (TORCH_NPU_TESTING_*).
# torch_npu's own ``torch_npu.testing`` (a dot) does not match.
KIT_REFERENCE_RE = re.compile(r"torch[_-]npu[_-]testing", re.IGNORECASE)
# Keywords accepted by torch_npu.testing.testcase.TestCase (torch_npu 2.7.1.post11 and 2.13.0 alike):
# assertEqual(x, y, prec=None, message='', allow_inf=False, exact_dtype=None) and
# assertNotEqual(x, y, prec=None, message=''). PyTorch's atol=/rtol=/msg=/exact_device= raise TypeError there.
NPU_ASSERT_KEYWORDS = {
    "assertEqual": frozenset({"prec", "message", "allow_inf", "exact_dtype"}),
    "assertNotEqual": frozenset({"prec", "message"}),
}
# torch_npu's TestCase redefines these as assertWarns(call_fn, msg=''): they do not work as context managers.
NPU_CALL_ONLY_ASSERTS = ("assertWarns", "assertWarnsRegex")
BANNER_RULE = "# " + "-" * 99 + "\n"
BANNER_PARTS = {
    "requires_api": "version gating (requires_api)",
    "torch_version_at_least": "release checks (torch_version_at_least)",
    "device_type": ("the device the tests run on (device_type: $API_CONSISTENCY_DEVICE if set, else an NPU, "
                    "else an available accelerator, else the CPU)"),
    "TestCase": ("a TestCase with the portable assertions that fails any test leaving global state changed "
                 "(grad mode, inference mode, default dtype, torch._functorch.config, functorch vmap/grad "
                 "nesting)"),
}


def ascend_header(year, holder=DEFAULT_COPYRIGHT_HOLDER):
    """Ascend/pytorch's BSD-3-Clause header layout, for new code of ``year``."""
    return (f"# Copyright (c) {year} {holder}\n"
            "# All rights reserved.\n"
            "#\n"
            "# Licensed under the BSD 3-Clause License  (the \"License\");\n"
            "# you may not use this file except in compliance with the License.\n"
            "# You may obtain a copy of the License at\n"
            "#\n"
            "# https://opensource.org/licenses/BSD-3-Clause\n"
            "#\n"
            "# Unless required by applicable law or agreed to in writing, software\n"
            "# distributed under the License is distributed on an \"AS IS\" BASIS,\n"
            "# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.\n"
            "# See the License for the specific language governing permissions and\n"
            "# limitations under the License.\n")


def helpers_banner(names):
    """The comment above the carried helpers, naming what is there."""
    parts = [BANNER_PARTS[name] for name in ("requires_api", "torch_version_at_least", "device_type", "TestCase")
             if name in names]
    text = ("Helpers carried inside this file, so that it needs only torch, torch_npu and the standard "
            "library: " + "; ".join(parts) + ".")
    body = "".join(f"# {line}\n" for line in textwrap.wrap(text, 99))
    return BANNER_RULE + body + BANNER_RULE


@dataclass
class FileProblem:
    path: str
    line: int
    text: str

    def __str__(self):
        return f"{self.path}:{self.line}: {self.text}"


def _plain_imports(nodes):
    """Module names bound by plain ``import X`` statements (no alias, no dotted name)."""
    names = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names if alias.asname is None and "." not in alias.name)
    return names


def _top_level_bindings(tree):
    bound = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.setdefault(node.name, node.lineno)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        bound.setdefault(name.id, node.lineno)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            if isinstance(node, ast.ImportFrom) and node.module == KIT_PACKAGE:
                continue
            for alias in node.names:
                bound.setdefault((alias.asname or alias.name).split(".")[0], node.lineno)
    return bound


def npu_testcase_incompatibilities(tree, path):
    """Calls that work with PyTorch's TestCase but raise (or misbehave) with torch_npu's on an NPU host."""
    problems = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "self":
            method = node.func.attr
            allowed = NPU_ASSERT_KEYWORDS.get(method)
            if allowed is None:
                continue
            for keyword in node.keywords:
                if keyword.arg is None:
                    problems.append(FileProblem(path, node.lineno, (
                        f"self.{method}(..., **...) cannot be checked against torch_npu's TestCase.{method}, "
                        f"which accepts only {', '.join(sorted(allowed))}")))
                elif keyword.arg not in allowed:
                    problems.append(FileProblem(path, node.lineno, (
                        f"self.{method}(..., {keyword.arg}=...) raises TypeError with torch_npu's TestCase "
                        f"on an NPU host (its {method} accepts only {', '.join(sorted(allowed))})")))
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                call = item.context_expr
                if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) \
                        and call.func.attr in NPU_CALL_ONLY_ASSERTS and isinstance(call.func.value, ast.Name) \
                        and call.func.value.id == "self":
                    problems.append(FileProblem(path, node.lineno, (
                        f"'with self.{call.func.attr}(...)' does not work with torch_npu's TestCase, whose "
                        f"{call.func.attr} takes a callable")))
    return problems


def _kit_import(tree, path, problems):
    """The one ``from torch_npu_testing import ...`` statement, or None (problems appended)."""
    kit_imports = [node for node in tree.body if isinstance(node, ast.ImportFrom) and node.module == KIT_PACKAGE]
    for node in ast.walk(tree):
        stray = (isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(KIT_PACKAGE + ".")) \
            or (isinstance(node, ast.Import) and any(alias.name.split(".")[0] == KIT_PACKAGE for alias in node.names)) \
            or (isinstance(node, ast.ImportFrom) and node.module == KIT_PACKAGE and node not in kit_imports)
        if stray:
            problems.append(FileProblem(path, node.lineno, (
                f"imports the kit other than by the one line 'from {KIT_PACKAGE} import ...' at top level")))
    if len(kit_imports) != 1:
        problems.append(FileProblem(path, kit_imports[1].lineno if kit_imports else 1, (
            f"needs exactly one 'from {KIT_PACKAGE} import ...' line (found {len(kit_imports)})")))
        return None
    return kit_imports[0]


def convert_test_file(path, text, header, sources=None):
    """The Ascend/pytorch form of a kit test file: ``(new_text, [])``, or ``(None, problems)``.

    ``path`` is only used in messages; ``sources`` are the carried sources (default: the installed ones).
    """
    problems = []
    if not text.startswith(KIT_HEADER):
        return None, [FileProblem(path, 1, "does not start with the kit's two-line license header")]
    try:
        tree = ast.parse(text)
    except SyntaxError as exc:
        return None, [FileProblem(path, exc.lineno or 1, f"is not valid Python ({exc.msg})")]
    if ast.get_docstring(tree) is None:
        problems.append(FileProblem(path, 3, "has no module docstring saying why the file exists"))
    kit_import = _kit_import(tree, path, problems)
    if kit_import is None:
        return None, problems
    imported = []
    for alias in kit_import.names:
        if alias.name not in PUBLIC_NAMES or alias.asname is not None:
            problems.append(FileProblem(path, kit_import.lineno, (
                f"imports {alias.name}{' as ' + alias.asname if alias.asname else ''} from the kit; "
                f"only {', '.join(PUBLIC_NAMES)} (unaliased) can be exported")))
        else:
            imported.append(alias.name)
    used = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    names = [name for name in PUBLIC_NAMES if name in imported and name in used]

    lines = source_lines(text)
    import_line_text = "".join(lines[kit_import.lineno - 1:kit_import.end_lineno]).strip()
    if import_line_text != ast.get_source_segment(text, kit_import).strip():
        problems.append(FileProblem(path, kit_import.lineno, "the kit import line must be a statement of its own"))

    index = tree.body.index(kit_import)
    end = index + 1
    while end < len(tree.body) and isinstance(tree.body[end], (ast.Import, ast.ImportFrom)):
        end += 1
    own_imports = tree.body[index + 1:end]
    last_import_line = own_imports[-1].end_lineno if own_imports else kit_import.end_lineno

    helpers = inline_helpers(names, sources) if names else InlinedHelpers([], [])
    carried = set(helpers.names) | {"torch_npu"}
    for name, line in sorted(_top_level_bindings(tree).items()):
        if name in carried and name not in ("torch", "torch_npu"):
            problems.append(FileProblem(path, line, (
                f"defines {name!r}, a name the exported helpers define too; rename it in the kit file")))
    if "TestCase" in names:
        problems.extend(npu_testcase_incompatibilities(tree, path))

    own_plain = _plain_imports(own_imports)
    torch_imports = [] if "torch" in own_plain else ["import torch\n"]
    npu_imports = [] if "torch_npu" in own_plain else [
        "import torch_npu  # noqa: F401  (registers the npu device with torch)\n"]

    out = [header]
    out.extend(lines[KIT_HEADER.count("\n"):kit_import.lineno - 1])
    own_text = "".join(lines[kit_import.end_lineno:last_import_line]).strip("\n")
    import_lines = merge_stdlib_imports(own_text.split("\n") if own_text else [], helpers.stdlib_imports)
    if import_lines:
        out.append("\n".join(import_lines) + "\n\n")
    out.extend(torch_imports + npu_imports)
    out.extend(text_ + "\n" for text_ in helpers.other_imports)
    if helpers.code:
        out.append("\n\n" + helpers_banner(names) + helpers.code)
    rest = "".join(lines[last_import_line:]).lstrip("\n")
    out.append("\n\n" + rest)
    new_text = "".join(out)

    for number, line in enumerate(new_text.splitlines(), start=1):
        match = KIT_REFERENCE_RE.search(line)
        if match:
            problems.append(FileProblem(path, _original_line(text, line, number), (
                f"still refers to this kit after export ({match.group(0)!r} in: {line.strip()[:100]})")))
    if problems:
        return None, problems
    try:
        compile(new_text, path, "exec")
    except SyntaxError as exc:  # pragma: no cover - would be a bug in this package
        return None, [FileProblem(path, exc.lineno or 1, f"export produced invalid Python: {exc.msg}")]
    return new_text, []


def _original_line(text, line, fallback):
    """Line number of ``line`` in the kit file (for messages), else the exported line number."""
    for number, original in enumerate(text.splitlines(), start=1):
        if original == line:
            return number
    return fallback
