# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Copy the kit's carried helpers into an exported file: definitions by AST, never code from strings.

The carried sources are :mod:`torch_npu_testing.portable` and the modules of
:mod:`torch_npu_testing.carried`, read as text (not imported: torch is not needed to export). Each kit
name a test file imports maps to one top-level definition there (:data:`EXPORTED_DEFINITIONS`); that
definition is copied with everything it references, in source order, plus the imports those use:

- a name defined in the same source is taken from there;
- ``from ..portable import X`` (any relative import) takes ``X`` from that carried source when it is one,
  and otherwise from the one carried source that defines ``X`` (the kit's ``device.device_type`` is
  carried as ``carried.device.device_type``, its twin without the kit's own override variable);
- ``import X`` and ``from X import Y`` of the standard library go into the file's standard-library
  group; other absolute imports (torch's) are kept verbatim after the file's torch imports.
"""
import ast
import functools
import importlib.util
import os
import re
import sys
from dataclasses import dataclass, field

from ..common.errors import UsageError

PORTABLE_MODULE = "torch_npu_testing.portable"
CARRIED_MODULES = (PORTABLE_MODULE, "torch_npu_testing.carried.device", "torch_npu_testing.carried.testcase")
# Kit name a test file imports -> (carried module, the definition that provides it).
EXPORTED_DEFINITIONS = {
    "requires_api": (PORTABLE_MODULE, "requires_api"),
    "torch_version_at_least": (PORTABLE_MODULE, "torch_version_at_least"),
    "device_type": ("torch_npu_testing.carried.device", "device_type"),
    "TestCase": ("torch_npu_testing.carried.testcase", "TestCase"),
    "run_tests": ("torch_npu_testing.carried.testcase", "run_tests"),
}


def module_source(module_name):
    """The source text of an installed kit module (read, not imported)."""
    spec = importlib.util.find_spec(module_name)
    if spec is None or not spec.origin or not os.path.isfile(spec.origin):
        raise UsageError(f"cannot find the source of {module_name}")
    with open(spec.origin, encoding="utf-8") as handle:
        return handle.read()


def carried_sources():
    """``{module name: source text}`` of every carried module, in :data:`CARRIED_MODULES` order."""
    return {name: module_source(name) for name in CARRIED_MODULES}


@dataclass
class InlinedHelpers:
    names: list                                  # definitions copied, in source order
    stdlib_imports: list                         # import lines of the standard library ("import re", ...)
    other_imports: list = field(default_factory=list)   # other import statements, verbatim (torch's)
    code: str = ""                               # the definitions, separated by two blank lines


def source_lines(text):
    """Lines as Python's parser counts them (``str.splitlines`` also splits at \\f, \\x1c, \\u2028...)."""
    return re.findall(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z", text)


def _referenced_names(node):
    return {child.id for child in ast.walk(node) if isinstance(child, ast.Name)}


def _segment(lines, node):
    start = min([node.lineno] + [decorator.lineno for decorator in getattr(node, "decorator_list", [])])
    return "".join(lines[start - 1:node.end_lineno]).rstrip() + "\n"


def _resolve_relative(module, node):
    """The absolute module a relative ``from .X import ...`` in ``module`` names."""
    package = module.rsplit(".", node.level)[0] if node.level else ""
    return f"{package}.{node.module}" if node.module else package


class _Source:
    """One carried module: its top-level definitions and imports."""

    def __init__(self, name, text, order):
        self.name, self.text, self.order = name, text, order
        self.lines = source_lines(text)
        tree = ast.parse(text)
        self.definitions, self.imports, self.relative = {}, {}, {}
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.definitions[node.name] = node
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    if isinstance(target, ast.Name):
                        self.definitions[target.id] = node
            elif isinstance(node, ast.ImportFrom) and node.level:
                for alias in node.names:
                    self.relative[alias.asname or alias.name] = (_resolve_relative(name, node), alias.name)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                for alias in node.names:
                    self.imports[(alias.asname or alias.name).split(".")[0]] = node


@functools.lru_cache(maxsize=4)
def _parse_sources(items):
    """``{module: _Source}`` of ``((module, text), ...)``; cached, as every file of an export asks for the
    same carried sources (the parsed sources are only read)."""
    return {name: _Source(name, text, order) for order, (name, text) in enumerate(items)}


def _is_stdlib(node):
    top = (node.names[0].name if isinstance(node, ast.Import) else node.module or "").split(".")[0]
    return top in sys.stdlib_module_names


def inline_helpers(wanted, sources=None):
    """The definitions behind the kit names ``wanted`` and everything they reference, plus their imports.

    ``sources`` is ``{module: text}`` (default: :func:`carried_sources`). Raises UsageError when a name
    cannot be found or two different carried definitions would share a name in the exported file.
    """
    parsed = _parse_sources(tuple((carried_sources() if sources is None else sources).items()))

    def locate(module, name, why):
        if module in parsed and name in parsed[module].definitions:
            return module, name
        owners = [source.name for source in parsed.values() if name in source.definitions]
        if len(owners) != 1:
            found = f"defined in {', '.join(owners)}" if owners else "defined by no carried source"
            raise UsageError(f"cannot carry {name} ({why}): {found}")
        return owners[0], name

    todo = []
    for kit_name in wanted:
        module, name = EXPORTED_DEFINITIONS.get(kit_name, (PORTABLE_MODULE, kit_name))
        if module not in parsed or name not in parsed[module].definitions:
            raise UsageError(f"the installed {module} does not define {name}")
        todo.append((module, name))
    needed, needed_imports = set(), set()
    while todo:
        key = todo.pop()
        if key in needed:
            continue
        needed.add(key)
        source = parsed[key[0]]
        for ref in _referenced_names(source.definitions[key[1]]):
            if ref in source.definitions:
                todo.append((source.name, ref))
            elif ref in source.relative:
                target, original = source.relative[ref]
                todo.append(locate(target, original, f"imported by {source.name} from {target}"))
            elif ref in source.imports:
                needed_imports.add((source.name, ref))

    by_name = {}
    for module, name in needed:
        node = parsed[module].definitions[name]
        if name in by_name and by_name[name][1] is not node:
            raise UsageError(f"cannot carry two definitions named {name} ({by_name[name][0]} and {module})")
        by_name[name] = (module, node)
    ordered = sorted({(parsed[module].order, node.lineno, module, id(node)): (module, node)
                      for module, node in by_name.values()}.items())
    names, segments = [], []
    for _, (module, node) in ordered:
        names.append(node.name if hasattr(node, "name") else
                     (node.targets[0] if isinstance(node, ast.Assign) else node.target).id)
        segments.append(_segment(parsed[module].lines, node))

    stdlib, other = [], []
    import_nodes = {id(parsed[module].imports[name]): (parsed[module], parsed[module].imports[name])
                    for module, name in needed_imports}.values()
    import_nodes = sorted(import_nodes, key=lambda item: (item[0].order, item[1].lineno))
    for source, node in import_nodes:
        text = ast.get_source_segment(source.text, node)
        if isinstance(node, ast.Import) and [alias.name for alias in node.names] == ["torch"]:
            continue  # the exported file imports torch itself
        target = stdlib if _is_stdlib(node) else other
        if text not in target:
            target.append(text)
    return InlinedHelpers(names, sorted(stdlib), other, "\n\n".join(segments))


def merge_stdlib_imports(own_lines, stdlib):
    """The file's import lines with the import lines ``stdlib`` added to its first standard-library group.

    Lines the file already has are not repeated. The file's leading group of standard-library imports
    takes the new lines (kept sorted when it was sorted, else appended); without such a group they form
    one of their own, first.
    """
    stdlib = [line for line in stdlib if line not in own_lines]
    if not stdlib:
        return list(own_lines)
    stdlib_modules = getattr(sys, "stdlib_module_names", ())
    lead = 0
    while lead < len(own_lines):
        match = re.fullmatch(r"(?:import|from) ([A-Za-z_]\w*)[\w.]*(?: import .*)?", own_lines[lead])
        if not match or match.group(1) not in stdlib_modules:
            break
        lead += 1
    if not lead:
        return list(stdlib) + ([""] if own_lines else []) + list(own_lines)
    group = own_lines[:lead]
    merged = sorted(group + stdlib) if group == sorted(group) else group + stdlib
    return merged + list(own_lines[lead:])
