# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""The carried helper: the part of :mod:`torch_npu_testing.runtime.carried` an exported file needs.

The block between ``# --- carried: begin`` and ``# --- carried: end`` in that module is read as text
(torch is not imported to export). A file gets the definitions it uses and, transitively, what those
use, in the module's order, plus the imports they reference: a file that does not use ``run_in_thread``
does not carry it.
"""
import ast
import os
from dataclasses import dataclass

from ..common.errors import UsageError
from .kitfile import import_bindings

BEGIN = "# --- carried: begin\n"
END = "# --- carried: end\n"
CARRIED_PATH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "runtime", "carried.py")


@dataclass
class Definition:
    name: str
    text: str
    uses: frozenset


@dataclass
class Carried:
    imports: list           # ImportBinding, in source order
    definitions: list       # Definition, in source order

    def select(self, names):
        """``(imports, definitions)`` that ``names`` need, transitively, in source order."""
        by_name = {d.name: d for d in self.definitions}
        unknown = [name for name in names if name not in by_name]
        if unknown:
            raise UsageError(f"the carried helper defines no {', '.join(unknown)}")
        wanted, todo = set(), list(names)
        while todo:
            name = todo.pop()
            if name not in wanted:
                wanted.add(name)
                todo.extend(use for use in by_name[name].uses if use in by_name)
        chosen = [d for d in self.definitions if d.name in wanted]
        used = set().union(*(d.uses for d in chosen)) if chosen else set()
        return [b for b in self.imports if b.name in used], chosen


def _defined_name(node):
    if isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)):
        return node.name
    targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
    if len(targets) == 1 and isinstance(targets[0], ast.Name):
        return targets[0].id
    raise UsageError(f"carried helper line {node.lineno}: only imports, defs, classes and simple assignments")


def parse_carried(text):
    """The :class:`Carried` of the carried module's text (the part between the markers)."""
    if text.count(BEGIN) != 1 or text.count(END) != 1 or text.index(BEGIN) > text.index(END):
        raise UsageError(f"{CARRIED_PATH}: needs one '{BEGIN.strip()}' line and one '{END.strip()}' line after it")
    block = text[text.index(BEGIN) + len(BEGIN):text.index(END)]
    lines = block.splitlines(keepends=True)
    imports, definitions = [], []
    for node in ast.parse(block).body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            imports.extend(import_bindings(node))
            continue
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        uses = frozenset(n.id for n in ast.walk(node) if isinstance(n, ast.Name))
        definitions.append(Definition(_defined_name(node), "".join(lines[first - 1:node.end_lineno]), uses))
    return Carried(imports, definitions)


def load_carried(path=CARRIED_PATH):
    try:
        with open(path, encoding="utf-8") as handle:
            return parse_carried(handle.read())
    except OSError as exc:
        raise UsageError(f"cannot read the carried helper {path}: {exc}") from None
