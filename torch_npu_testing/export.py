# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""``export``: write one Ascend branch's contribution into an Ascend/pytorch checkout.

    python -m torch_npu_testing export BRANCH DEST [--kit DIR] [--report PATH] [--dry-run]
    python -m torch_npu_testing export --list

Each Ascend/pytorch branch (``master``, ``v2.12.0``, ``v2.11.0``, ``v2.7.1``) gets one pull request.
``export_branches.json`` (beside this module) says which kit files it contains; a file whose API does not
exist in that branch's torch is left out, with the reason printed.

Test files are written at the same path in the checkout, converted to Ascend/pytorch's form:

- the kit's two-line license header is replaced by the BSD-3-Clause header layout Ascend/pytorch uses;
- the one line ``from torch_npu_testing import ...`` becomes plain imports (``import torch_npu``,
  ``from torch_npu.testing.testcase import TestCase as _NPUTestCase, run_tests``) plus, after the file's
  own imports, the helpers the file uses, copied at export time from the installed
  :mod:`torch_npu_testing.portable` source (only the definitions those names need), a
  ``device_type()`` that answers ``"npu"`` when torch_npu sees an NPU and ``"cpu"`` otherwise, and
  ``class TestCase(StateGuardMixin, <torch_npu's TestCase, or PyTorch's without an NPU>)``;
- the module docstring and every test stay exactly as they are.

The exported file depends on nothing outside torch, torch_npu and the standard library: inlining (not a
shared helper module in the Ascend tree) keeps each pull request one self-contained file per API that
runs however Ascend's CI launches it (``python FILE``, pytest, a runner importing it), with no module to
place on ``sys.path`` and nothing shared between files whose branches and reviews are separate.

Upstream patches (``test_upstream/...patch``) are copied byte for byte to the same path; Ascend/pytorch
keeps its patches under ``test_upstream/`` with the same layout.

Nothing is written unless every check passes first: DEST is the top of a git work tree that looks like
Ascend/pytorch (``setup.py`` naming torch_npu, ``torch_npu/__init__.py``, ``test/npu/``); no target path
has uncommitted changes (``git status --porcelain``); every kit file of the branch exists and converts
cleanly (the kit header is there, no reference to this kit is left, and no ``assertEqual`` call uses a
keyword that torch_npu's ``TestCase.assertEqual`` does not accept). Files are then written one by one
through a temporary file and ``os.replace``.
"""
import ast
import datetime
import glob
import importlib.util
import json
import os
import re
import sys
import tempfile
import textwrap
from dataclasses import dataclass, field

from .errors import UsageError
from .upstream import gitutil

BRANCHES_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "export_branches.json")
BRANCHES_FORMAT = "torch_npu_testing.export_branches/1"
KIT_PACKAGE = "torch_npu_testing"
PORTABLE_MODULE = "torch_npu_testing.portable"
KIT_HEADER = ("# Copyright (c) 2026, torch_npu API-consistency kit contributors.\n"
              "# SPDX-License-Identifier: BSD-3-Clause\n")
PUBLIC_NAMES = ("TestCase", "run_tests", "device_type", "requires_api", "torch_version_at_least")
# Kit name -> the portable definition it needs (TestCase needs the state-guard mixin).
PORTABLE_FOR_NAME = {
    "requires_api": "requires_api",
    "torch_version_at_least": "torch_version_at_least",
    "TestCase": "StateGuardMixin",
}
# Names the generated block defines besides the portable definitions.
GENERATED_NAMES = ("device_type", "TestCase", "_base_test_case", "_NPUTestCase", "run_tests", "torch_npu")
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
REPORT_GLOB = os.path.join("reports", "*.md")


# --------------------------------------------------------------------------- branch map
def load_branch_map(path=None):
    """The branch -> files map (``export_branches.json`` beside this module unless ``path`` is given)."""
    path = path or BRANCHES_FILE
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot read the branch map {path}: {exc}") from None
    if data.get("format") != BRANCHES_FORMAT or not isinstance(data.get("branches"), dict):
        raise UsageError(f"{path} is not a {BRANCHES_FORMAT} branch map")
    for name, branch in data["branches"].items():
        for rel in list(branch.get("test_files", [])) + list(branch.get("upstream_patches", [])):
            check_relative_path(rel, f"branch {name} in {path}")
    return data


def check_relative_path(rel, where):
    parts = rel.replace("\\", "/").split("/")
    if not rel or os.path.isabs(rel) or ".." in parts or "" in parts:
        raise UsageError(f"{where}: {rel!r} is not a plain relative path")


def branch_entry(branch_map, branch):
    branches = branch_map["branches"]
    if branch not in branches:
        raise UsageError(f"unknown branch {branch!r}: use one of {', '.join(branches)}")
    return branches[branch]


# --------------------------------------------------------------------------- the Ascend checkout
def check_ascend_checkout(dest):
    """The absolute path of DEST when it is the top of an Ascend/pytorch git work tree, else UsageError."""
    if not os.path.isdir(dest):
        raise UsageError(f"{dest} is not a directory (give the top of an Ascend/pytorch checkout)")
    dest = os.path.realpath(dest)
    top = gitutil.run_git(["rev-parse", "--show-toplevel"], dest, confine=False)
    if top.returncode != 0:
        raise UsageError(f"{dest} is not a git work tree (give the top of an Ascend/pytorch checkout)")
    toplevel = os.path.realpath(top.stdout.strip())
    if toplevel != dest:
        raise UsageError(f"{dest} is inside the git work tree {toplevel}; give the top of the checkout")
    missing = []
    setup_py = os.path.join(dest, "setup.py")
    if not os.path.isfile(setup_py):
        missing.append("setup.py")
    else:
        with open(setup_py, encoding="utf-8", errors="replace") as handle:
            if "torch_npu" not in handle.read():
                missing.append("setup.py naming torch_npu")
    if not os.path.isfile(os.path.join(dest, "torch_npu", "__init__.py")):
        missing.append("torch_npu/__init__.py")
    if not os.path.isdir(os.path.join(dest, "test", "npu")):
        missing.append("test/npu/")
    if missing:
        raise UsageError(f"{dest} does not look like an Ascend/pytorch checkout (missing: {', '.join(missing)})")
    return dest


def current_branch(dest):
    head = gitutil.run_git(["rev-parse", "--abbrev-ref", "HEAD"], dest)
    return head.stdout.strip() if head.returncode == 0 else None


# --------------------------------------------------------------------------- inlining portable.py
def portable_source():
    """The source text of the installed portable module (read, not imported: torch is not needed here)."""
    spec = importlib.util.find_spec(PORTABLE_MODULE)
    if spec is None or not spec.origin or not os.path.isfile(spec.origin):
        raise UsageError(f"cannot find the source of {PORTABLE_MODULE}")
    with open(spec.origin, encoding="utf-8") as handle:
        return handle.read()


@dataclass
class InlinedHelpers:
    names: list                                  # portable definitions copied, in source order
    stdlib_imports: list                         # e.g. ["importlib", "re", "unittest"] (``import X`` forms)
    other_imports: list = field(default_factory=list)   # other import statements, verbatim (not torch)
    code: str = ""                               # the definitions, separated by two blank lines


def source_lines(text):
    """Lines as Python's parser counts them (``str.splitlines`` also splits at \\f, \\x1c, \\u2028...)."""
    return re.findall(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z", text)


def _referenced_names(node):
    return {child.id for child in ast.walk(node) if isinstance(child, ast.Name)}


def _segment(lines, node):
    start = min([node.lineno] + [decorator.lineno for decorator in getattr(node, "decorator_list", [])])
    return "".join(lines[start - 1:node.end_lineno]).rstrip() + "\n"


def inline_portable(wanted, source):
    """The definitions of ``wanted`` in ``source`` and everything they reference, plus the imports they use."""
    tree = ast.parse(source)
    lines = source_lines(source)
    definitions, imports = {}, {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            definitions[node.name] = node
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    definitions[target.id] = node
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                imports[(alias.asname or alias.name).split(".")[0]] = node
    absent = [name for name in wanted if name not in definitions]
    if absent:
        raise UsageError(f"the installed {PORTABLE_MODULE} does not define {', '.join(absent)}")
    needed, needed_imports, todo = set(), set(), list(wanted)
    while todo:
        name = todo.pop()
        if name in needed:
            continue
        needed.add(name)
        for ref in _referenced_names(definitions[name]):
            if ref in definitions and ref not in needed:
                todo.append(ref)
            elif ref in imports:
                needed_imports.add(ref)
    nodes = sorted({id(definitions[name]): definitions[name] for name in needed}.values(), key=lambda n: n.lineno)
    stdlib, other = [], []
    for node in sorted({id(imports[name]): imports[name] for name in needed_imports}.values(),
                       key=lambda n: n.lineno):
        text = ast.get_source_segment(source, node)
        if isinstance(node, ast.Import) and all(alias.asname is None and "." not in alias.name
                                                for alias in node.names):
            stdlib.extend(alias.name for alias in node.names if alias.name != "torch")
        elif not text.startswith(("import torch", "from torch")):
            other.append(text)
    ordered_names = [n.name if hasattr(n, "name") else n.targets[0].id for n in nodes]
    code = "\n\n".join(_segment(lines, node) for node in nodes)
    return InlinedHelpers(ordered_names, sorted(set(stdlib)), other, code)


# --------------------------------------------------------------------------- converting a test file
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


BANNER_RULE = "# " + "-" * 99 + "\n"
BANNER_PARTS = {
    "requires_api": "version gating (requires_api)",
    "torch_version_at_least": "release checks (torch_version_at_least)",
    "device_type": "the device the tests run on (device_type)",
    "TestCase": ("a TestCase that fails any test leaving global state changed (grad mode, inference mode, "
                 "default dtype, torch._functorch.config, functorch vmap/grad nesting)"),
}


def helpers_banner(names):
    """The comment above the carried helpers, naming what is there."""
    parts = [BANNER_PARTS[name] for name in ("requires_api", "torch_version_at_least", "device_type", "TestCase")
             if name in names]
    text = ("Helpers carried inside this file, so that it needs only torch, torch_npu and the standard "
            "library: " + "; ".join(parts) + ".")
    body = "".join(f"# {line}\n" for line in textwrap.wrap(text, 99))
    return BANNER_RULE + body + BANNER_RULE


DEVICE_TYPE_SOURCE = '''\
def device_type():
    """Where the tests run: ``"npu"`` when torch_npu sees an NPU, otherwise ``"cpu"``.

    On a host with torch_npu installed but no NPU available (no device, no driver) the file still runs:
    every test then checks the whole API contract on the CPU, and the device-versus-CPU comparisons
    compare the CPU with itself.
    """
    npu = getattr(torch, "npu", None)
    return "npu" if npu is not None and npu.is_available() else "cpu"
'''

TESTCASE_SOURCE = '''\
def _base_test_case():
    """torch_npu's TestCase on an NPU; PyTorch's elsewhere (torch_npu's setUpClass selects an NPU)."""
    if device_type() == "npu":
        return _NPUTestCase
    from torch.testing._internal.common_utils import TestCase as cpu_test_case
    return cpu_test_case


class TestCase(StateGuardMixin, _base_test_case()):
    """The device's TestCase, failing (by name) any test that leaves global state changed."""
'''


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


def merge_stdlib_imports(own_lines, stdlib):
    """The file's import lines with ``import X`` for each of ``stdlib`` added to its first stdlib group.

    The file's leading group of plain standard-library imports takes the new lines (kept sorted when it
    was sorted, else appended); without such a group they form one of their own, first.
    """
    if not stdlib:
        return list(own_lines)
    stdlib_modules = getattr(sys, "stdlib_module_names", ())
    lead = 0
    while lead < len(own_lines):
        match = re.fullmatch(r"import ([A-Za-z_]\w*)", own_lines[lead])
        if not match or match.group(1) not in stdlib_modules:
            break
        lead += 1
    added = [f"import {name}" for name in stdlib]
    if not lead:
        return added + ([""] if own_lines else []) + list(own_lines)
    group = own_lines[:lead]
    merged = sorted(group + added) if group == sorted(group) else group + added
    return merged + list(own_lines[lead:])


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


def convert_test_file(path, text, helpers_source, header):
    """The Ascend/pytorch form of a kit test file, or ``(None, problems)``.

    Returns ``(new_text, [])`` on success. ``path`` is only used in messages.
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
        return None, problems
    kit_import = kit_imports[0]
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

    wanted = [PORTABLE_FOR_NAME[name] for name in names if name in PORTABLE_FOR_NAME]
    helpers = inline_portable(wanted, helpers_source) if wanted else InlinedHelpers([], [])
    needs_device_type = "device_type" in names or "TestCase" in names

    carried = set(helpers.names) | set(GENERATED_NAMES)
    for name, line in sorted(_top_level_bindings(tree).items()):
        if name in carried and name not in ("torch", "torch_npu"):
            problems.append(FileProblem(path, line, (
                f"defines {name!r}, a name the exported helpers define too; rename it in the kit file")))
    if "TestCase" in names:
        problems.extend(npu_testcase_incompatibilities(tree, path))

    own_plain = _plain_imports(own_imports)
    stdlib = [name for name in helpers.stdlib_imports if name not in own_plain]
    npu_imports = [] if "torch_npu" in own_plain else [
        "import torch_npu  # noqa: F401  (registers the npu device with torch)\n"]
    from_testcase = []
    if "TestCase" in names:
        from_testcase.append("TestCase as _NPUTestCase")
    if "run_tests" in names:
        from_testcase.append("run_tests")
    if from_testcase:
        npu_imports.append(f"from torch_npu.testing.testcase import {', '.join(from_testcase)}\n")
    torch_imports = [] if "torch" in own_plain else ["import torch\n"]

    out = [header]
    out.extend(lines[KIT_HEADER.count("\n"):kit_import.lineno - 1])
    own_text = "".join(lines[kit_import.end_lineno:last_import_line]).strip("\n")
    import_lines = merge_stdlib_imports(own_text.split("\n") if own_text else [], stdlib)
    if import_lines:
        out.append("\n".join(import_lines) + "\n\n")
    out.extend(torch_imports + npu_imports)
    out.extend(text_ + "\n" for text_ in helpers.other_imports)
    blocks = []
    if helpers.code:
        blocks.append(helpers.code)
    if needs_device_type:
        blocks.append(DEVICE_TYPE_SOURCE)
    if "TestCase" in names:
        blocks.append(TESTCASE_SOURCE)
    if blocks:
        out.append("\n\n" + helpers_banner(set(names) | ({"device_type"} if needs_device_type else set()))
                   + "\n\n".join(blocks))
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
    except SyntaxError as exc:  # pragma: no cover - would be a bug in this module
        return None, [FileProblem(path, exc.lineno or 1, f"export produced invalid Python: {exc.msg}")]
    return new_text, []


def _original_line(text, line, fallback):
    """Line number of ``line`` in the kit file (for messages), else the exported line number."""
    for number, original in enumerate(text.splitlines(), start=1):
        if original == line:
            return number
    return fallback


# --------------------------------------------------------------------------- plan and write
@dataclass
class Target:
    rel_path: str
    content: bytes
    kind: str               # "test file" or "upstream patch"
    action: str = ""        # "create", "replace" or "unchanged", set by plan_export


@dataclass
class Plan:
    branch: str
    dest: str
    torch: str
    targets: list
    left_out: dict
    report: str = None
    checkout_branch: str = None
    notes: list = field(default_factory=list)


def plan_export(kit_root, branch, dest, branch_map=None, year=None, holder=DEFAULT_COPYRIGHT_HOLDER,
                helpers_source=None):
    """Validate everything and compute every file's bytes; writes nothing. Raises UsageError."""
    branch_map = load_branch_map() if branch_map is None else branch_map
    entry = branch_entry(branch_map, branch)
    dest = check_ascend_checkout(dest)
    kit_root = os.path.abspath(kit_root)
    test_files = list(entry.get("test_files", []))
    patches = list(entry.get("upstream_patches", []))
    if not test_files and not patches:
        raise UsageError(f"branch {branch} has no files to export in the branch map")
    missing = [rel for rel in test_files + patches if not os.path.isfile(os.path.join(kit_root, rel))]
    if missing:
        raise UsageError(f"the kit at {kit_root} lacks {', '.join(missing)} (listed for {branch}); "
                         "run from the kit's checkout or pass --kit")
    year = year or datetime.date.today().year
    header = ascend_header(year, holder)
    helpers_source = portable_source() if helpers_source is None else helpers_source

    targets, problems = [], []
    for rel in test_files:
        with open(os.path.join(kit_root, rel), encoding="utf-8") as handle:
            text = handle.read()
        new_text, found = convert_test_file(rel, text, helpers_source, header)
        problems.extend(found)
        if new_text is not None:
            targets.append(Target(rel, new_text.encode("utf-8"), "test file"))
    if problems:
        shown = "; ".join(str(problem) for problem in problems)
        raise UsageError(f"cannot export {branch}: {len(problems)} problem(s) in kit files: {shown}")
    for rel in patches:
        with open(os.path.join(kit_root, rel), "rb") as handle:
            targets.append(Target(rel, handle.read(), "upstream patch"))

    for target in targets:
        path = os.path.join(dest, target.rel_path)
        if os.path.islink(path) or (os.path.exists(path) and not os.path.isfile(path)):
            raise UsageError(f"{target.rel_path} in {dest} exists and is not a regular file")
        parent = os.path.dirname(path)
        while parent != dest and not os.path.exists(parent):
            parent = os.path.dirname(parent)
        if not os.path.isdir(parent) or os.path.commonpath([os.path.realpath(parent), dest]) != dest:
            raise UsageError(f"cannot create {target.rel_path} in {dest}: {parent} is not a directory inside it")
    dirty = gitutil.uncommitted_changes(dest, *[target.rel_path for target in targets])
    if dirty:
        raise UsageError(f"target paths in {dest} have uncommitted changes, commit or stash them first: "
                         + "; ".join(dirty))
    for target in targets:
        path = os.path.join(dest, target.rel_path)
        if not os.path.exists(path):
            target.action = "create"
        else:
            with open(path, "rb") as handle:
                target.action = "unchanged" if handle.read() == target.content else "replace"
    return Plan(branch, dest, entry.get("torch", "?"), targets, dict(entry.get("left_out", {})),
                checkout_branch=current_branch(dest), notes=patch_notes(kit_root, targets))


def patch_notes(kit_root, targets):
    """What a reviewer should know about the copied patches: their upstream base, and kit references in them.

    Patches are copied byte for byte, so a mention of this kit inside one is reported, not rewritten.
    """
    manifest = {}
    manifest_path = os.path.join(kit_root, "test_upstream", "manifest.json")
    if os.path.isfile(manifest_path):
        try:
            with open(manifest_path, encoding="utf-8") as handle:
                manifest = json.load(handle).get("patches", {})
        except (OSError, ValueError, AttributeError):
            manifest = {}
    notes = []
    for target in targets:
        if target.kind != "upstream patch":
            continue
        entry = manifest.get(target.rel_path[len("test_upstream/"):], {}) if target.rel_path.startswith(
            "test_upstream/") else {}
        upstream = entry.get("upstream") or {}
        base = upstream.get("tag") or (upstream.get("commit") or "")[:12]
        if base:
            notes.append(f"{target.rel_path}: made against {upstream.get('repo', 'pytorch/pytorch')} {base}"
                         + (f" (file blob {entry['base_blob'][:12]})" if entry.get("base_blob") else ""))
        text = target.content.decode("utf-8", errors="replace")
        mentions = sorted({match.group(0) for match in KIT_REFERENCE_RE.finditer(text)})
        if mentions:
            notes.append(f"{target.rel_path}: copied byte for byte, and it mentions {', '.join(mentions)} "
                         f"({len(KIT_REFERENCE_RE.findall(text))} times); reword it in the kit if Ascend should not")
    return notes


def write_plan(plan):
    for target in plan.targets:
        if target.action == "unchanged":
            continue
        path = os.path.join(plan.dest, target.rel_path)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        handle, tmp = tempfile.mkstemp(prefix=".export-", dir=os.path.dirname(path))
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(target.content)
            mode = os.stat(path).st_mode & 0o777 if os.path.exists(path) else 0o644
            os.chmod(tmp, mode)
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise


# --------------------------------------------------------------------------- report and title
def find_report(kit_root, branch, explicit=None):
    """The evidence report to paste into the PR: ``explicit`` (must exist) or the best of reports/*.md."""
    if explicit:
        if not os.path.isfile(explicit):
            raise UsageError(f"--report {explicit}: no such file")
        return explicit
    candidates = sorted(glob.glob(os.path.join(kit_root, REPORT_GLOB)))
    if not candidates:
        return None
    tags = {branch.lower(), branch.lower().replace(".", "_"), _env_name(branch)}
    by_branch = [path for path in candidates
                 if any(tag in os.path.basename(path).lower() for tag in tags)]
    if by_branch:
        candidates = by_branch
    return max(candidates, key=lambda path: (os.path.basename(path) == "report.md", os.path.getmtime(path)))


def _env_name(branch):
    """``v2.12.0`` -> ``v2_12`` (the tox env of that branch); ``master`` stays."""
    match = re.match(r"v(\d+)\.(\d+)", branch)
    return f"v{match.group(1)}_{match.group(2)}" if match else branch.lower()


def commit_title(branch, rel_paths, branch_map):
    """A suggested one-line commit / PR title, e.g.

    ``[API一致性] add tests for config.patch, _add_batch_dim + upstream test_x patch (v2.12.0)``.
    """
    files = branch_map.get("files", {})

    def title(rel):
        return files.get(rel, {}).get("title") or os.path.basename(rel)

    tests = [title(rel) for rel in rel_paths if not rel.endswith(".patch")]
    patches = [title(rel) for rel in rel_paths if rel.endswith(".patch")]
    text = "[API一致性] add tests for " + ", ".join(tests) if tests else "[API一致性] add"
    if patches:
        text += f" + upstream {', '.join(patches)} patch{'es' if len(patches) > 1 else ''}"
    return f"{text} ({branch})"


def describe(plan, branch_map, dry_run=False):
    verb = "would write" if dry_run else "wrote"
    out = [f"{verb} branch {plan.branch} (torch {plan.torch}) into {plan.dest}"
           + (f" (checked out: {plan.checkout_branch})" if plan.checkout_branch else "") + ":"]
    width = max(len(target.action) for target in plan.targets)
    for target in plan.targets:
        out.append(f"  {target.action:<{width}}  {target.rel_path}  ({target.kind})")
    if plan.left_out:
        out.append(f"left out on {plan.branch}:")
        out.extend(f"  {rel}: {why}" for rel, why in plan.left_out.items())
    if plan.notes:
        out.append("notes:")
        out.extend(f"  {note}" for note in plan.notes)
    title = commit_title(plan.branch, [t.rel_path for t in plan.targets], branch_map)
    out.append("suggested commit title:")
    out.append(f"  {title}")
    if plan.report:
        out.append(f"evidence report to paste into the pull request: {plan.report}")
    else:
        out.append("evidence report: none found under reports/*.md "
                   "(write one with `python -m torch_npu_testing report`, or pass --report PATH)")
    changed = [target.rel_path for target in plan.targets if target.action != "unchanged"]
    if changed and not dry_run:
        out.append("next, in the checkout:")
        out.append(f"  git add {' '.join(changed)}")
        out.append(f"  git commit -m '{title}'")
    return "\n".join(out)


def list_branches(branch_map):
    out = []
    for name, entry in branch_map["branches"].items():
        out.append(f"{name} (torch {entry.get('torch', '?')}):")
        out.extend(f"  {rel}" for rel in entry.get("test_files", []) + entry.get("upstream_patches", []))
        out.extend(f"  left out: {rel}: {why}" for rel, why in entry.get("left_out", {}).items())
    return "\n".join(out)


# --------------------------------------------------------------------------- command line
def add_arguments(parser):
    parser.add_argument("branch", nargs="?", help="Ascend/pytorch branch: master, v2.12.0, v2.11.0 or v2.7.1")
    parser.add_argument("dest", nargs="?", help="top of an Ascend/pytorch git checkout (on that branch)")
    parser.add_argument("--kit", default=".", help="the kit checkout holding test/ and test_upstream/ (default: .)")
    parser.add_argument("--report", help="evidence report to name in the output (default: newest reports/*.md)")
    parser.add_argument("--dry-run", action="store_true", help="check everything and show the plan; write nothing")
    parser.add_argument("--list", action="store_true", help="show which files each branch gets, then exit")
    parser.add_argument("--year", type=int, help="copyright year of the exported files (default: this year)")
    parser.add_argument("--copyright-holder", default=DEFAULT_COPYRIGHT_HOLDER,
                        help=f"copyright holder in the exported header (default: {DEFAULT_COPYRIGHT_HOLDER})")


def main(args):
    branch_map = load_branch_map()
    if args.list:
        print(list_branches(branch_map))
        return 0
    if not args.branch or not args.dest:
        raise UsageError("give BRANCH and DEST (or --list)")
    branch_entry(branch_map, args.branch)
    report = find_report(args.kit, args.branch, args.report)
    plan = plan_export(args.kit, args.branch, args.dest, branch_map, year=args.year, holder=args.copyright_holder)
    plan.report = report
    if not args.dry_run:
        write_plan(plan)
    print(describe(plan, branch_map, dry_run=args.dry_run))
    sys.stdout.flush()
    return 0
