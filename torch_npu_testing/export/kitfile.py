# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""A kit test file, read by AST into the parts export places in an Ascend file.

A kit test file is: the kit's two-line license header, a module docstring, exactly one line
``from torch_npu_testing import ...`` (public names only), its other imports, its code, and
``if __name__ == "__main__": run_tests()``. Export keeps the code as it is; the header and the main guard
are the Ascend file's; the docstring becomes a comment; the kit import line becomes the carried helpers.
"""
import ast
from dataclasses import dataclass

from ..common.errors import UsageError
from ..common.layout import KIT_HEADER, KIT_IMPORT_MODULE, PUBLIC_NAMES
from .rename import binding_name


@dataclass
class ImportBinding:
    """One name bound by an import, as its own statement: ``from m import n as a`` / ``import m as a``."""
    name: str
    statement: str


@dataclass
class KitFile:
    rel_path: str
    docstring: str
    kit_names: tuple        # names imported from the kit's runtime
    imports: list           # ImportBinding of the leading imports, kit line excluded
    body: str               # the code after the leading imports, without the main guard
    lines: int              # lines of the kit file


def import_bindings(node):
    """One :class:`ImportBinding` per alias of an ``import`` / ``from ... import`` statement."""
    out = []
    for alias in node.names:
        suffix = f" as {alias.asname}" if alias.asname else ""
        if isinstance(node, ast.Import):
            out.append(ImportBinding(binding_name(alias, node), f"import {alias.name}{suffix}"))
        else:
            out.append(ImportBinding(binding_name(alias, node), f"from {node.module} import {alias.name}{suffix}"))
    return out


def is_main_guard(node):
    """``if __name__ == "__main__":`` at module level."""
    test = getattr(node, "test", None)
    return (isinstance(node, ast.If) and isinstance(test, ast.Compare) and isinstance(test.left, ast.Name)
            and test.left.id == "__name__" and len(test.comparators) == 1
            and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value == "__main__")


def _is_kit_import(node):
    module = node.module if isinstance(node, ast.ImportFrom) else None
    names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else [module or ""]
    return any(name == KIT_IMPORT_MODULE or name.startswith(KIT_IMPORT_MODULE + ".") for name in names)


def _check_imports(rel_path, tree):
    kit_lines = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            if isinstance(node, ast.ImportFrom) and (node.level or node.module == "__future__"):
                raise UsageError(f"{rel_path}:{node.lineno}: relative and __future__ imports cannot be exported")
            if any(alias.name == "*" for alias in node.names):
                raise UsageError(f"{rel_path}:{node.lineno}: `import *` cannot be exported")
            if _is_kit_import(node):
                kit_lines.append(node)
    top = [node for node in tree.body if node in kit_lines]
    if len(kit_lines) != 1 or len(top) != 1 or not isinstance(top[0], ast.ImportFrom) \
            or top[0].module != KIT_IMPORT_MODULE:
        raise UsageError(f"{rel_path}: needs exactly one top-level `from {KIT_IMPORT_MODULE} import ...` line "
                         f"(found {len(kit_lines)} import(s) of the kit)")
    wrong = [alias.name for alias in top[0].names if alias.name not in PUBLIC_NAMES or alias.asname]
    if wrong:
        raise UsageError(f"{rel_path}:{top[0].lineno}: imports {', '.join(wrong)} from the kit "
                         f"(export carries only {', '.join(PUBLIC_NAMES)}, unaliased)")
    return top[0]


def parse_kit_file(rel_path, text):
    """The :class:`KitFile` of a kit test file's ``text``; UsageError (one line) when it has not that shape."""
    if not text.startswith(KIT_HEADER):
        raise UsageError(f"{rel_path}: does not start with the kit's license header")
    try:
        tree = ast.parse(text)
    except SyntaxError as exc:
        raise UsageError(f"{rel_path}:{exc.lineno}: syntax error: {exc.msg}") from None
    docstring = ast.get_docstring(tree, clean=True)
    if not docstring:
        raise UsageError(f"{rel_path}: has no module docstring")
    kit_import = _check_imports(rel_path, tree)
    body = tree.body[1:]
    imports = []
    while body and isinstance(body[0], (ast.Import, ast.ImportFrom)):
        if body[0] is not kit_import:
            imports.extend(import_bindings(body[0]))
        body = body[1:]
    if kit_import in body:
        raise UsageError(f"{rel_path}:{kit_import.lineno}: the kit import line must come with the leading imports")
    if body and is_main_guard(body[-1]):
        guard = body.pop()
        end = guard.lineno - 1
    else:
        end = len(text.splitlines())
    lines = text.splitlines(keepends=True)
    start = _first_line(body[0]) - 1 if body else end
    code = "".join(lines[start:end]).strip("\n") + "\n" if body else ""
    return KitFile(rel_path, docstring, tuple(alias.name for alias in kit_import.names), imports, code,
                   len(lines))


def _first_line(node):
    return min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
