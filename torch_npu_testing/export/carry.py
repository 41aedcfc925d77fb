# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""The carried helper: the part of :mod:`torch_npu_testing.runtime.carried` and
:mod:`~torch_npu_testing.runtime.carried_testcase` an exported file needs.

The blocks between ``# --- carried: begin`` and ``# --- carried: end`` in those modules are read as text
(torch is not imported to export). A file gets the definitions it uses and, transitively, what those
use, in the module's order, plus the imports they reference: a file that does not use ``run_in_thread``
does not carry it. A carried class keeps only the public methods the file names as attributes
(``self.assert_tensor``) and what those use, so a file that never calls ``assert_raises_exactly`` carries
neither it nor ``contextlib``; private, dunder and unittest hook methods (:data:`HOOKS`) always stay.
:func:`set_value` gives a carried one-line assignment the value export decides for a file (``RUNNER_MODULE``:
the runner family of a merged file).
"""
import ast
import os
from dataclasses import dataclass

from ..common.errors import UsageError
from .kitfile import import_bindings

BEGIN = "# --- carried: begin\n"
END = "# --- carried: end\n"
RUNTIME_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "runtime")
CARRIED_PATHS = (os.path.join(RUNTIME_DIR, "carried.py"), os.path.join(RUNTIME_DIR, "carried_testcase.py"),
                 os.path.join(RUNTIME_DIR, "carried_limits.py"))


# Methods a class keeps whatever the file names: unittest calls them without the file naming them.
HOOKS = frozenset({"setUp", "tearDown", "setUpClass", "tearDownClass", "run", "debug", "subTest", "skipTest"})


@dataclass
class Method:
    name: str
    first: int              # 0-based line span in the class's text, decorators and the blank line before included
    stop: int
    uses: frozenset         # names it reads (Name nodes)
    attributes: frozenset   # attribute names it reads (``self.fail``, ``self.assert_value``)


@dataclass
class Definition:
    name: str
    text: str
    uses: frozenset
    methods: tuple = ()     # Method, for a class: those a file may leave out

    def keeping(self, attributes):
        """This definition with only the methods named in ``attributes`` (and those they name, transitively)."""
        if not self.methods:
            return self
        by_name = {m.name: m for m in self.methods}
        wanted, todo = set(), [name for name in by_name if name in attributes or name in HOOKS or name[:1] == "_"]
        while todo:
            name = todo.pop()
            if name not in wanted:
                wanted.add(name)
                todo.extend(attr for attr in by_name[name].attributes if attr in by_name)
        dropped = [m for m in self.methods if m.name not in wanted]
        if not dropped:
            return self
        lines = self.text.splitlines(keepends=True)
        gone = {i for m in dropped for i in range(m.first, m.stop)}
        text = "".join(line for i, line in enumerate(lines) if i not in gone)
        node = ast.parse(self.text).body[0]   # the class's own part: bases, decorators, non-method statements
        node.body = [item for item in node.body if not isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))]
        if not node.body and not wanted:
            text = text.rstrip("\n") + "\n    pass\n"        # every statement of the body was an optional method
        uses = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}.union(
            *(m.uses for m in self.methods if m.name in wanted))
        return Definition(self.name, text, frozenset(uses))     # trimmed once: its line spans are spent


@dataclass
class Carried:
    imports: list           # ImportBinding, in source order
    definitions: list       # Definition, in source order

    def select(self, names, attributes=None):
        """``(imports, definitions)`` that ``names`` need, transitively, in source order; with ``attributes``
        (the attribute names the file reads), a carried class keeps only the methods among them."""
        definitions = self.definitions if attributes is None else [d.keeping(attributes) for d in self.definitions]
        by_name = {d.name: d for d in definitions}
        unknown = [name for name in names if name not in by_name]
        if unknown:
            raise UsageError(f"the carried helper defines no {', '.join(unknown)}")
        wanted, todo = set(), list(names)
        while todo:
            name = todo.pop()
            if name not in wanted:
                wanted.add(name)
                todo.extend(use for use in by_name[name].uses if use in by_name)
        chosen = [d for d in definitions if d.name in wanted]
        used = set().union(*(d.uses for d in chosen)) if chosen else set()
        return [b for b in self.imports if b.name in used], chosen


def _defined_name(node):
    if isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)):
        return node.name
    targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
    if len(targets) == 1 and isinstance(targets[0], ast.Name):
        return targets[0].id
    raise UsageError(f"carried helper line {node.lineno}: only imports, defs, classes and simple assignments")


def _methods(node, first, lines):
    """The :class:`Method` entries of a class node whose text starts at source line ``first`` of ``lines``."""
    if not isinstance(node, ast.ClassDef):
        return ()
    methods = []
    for item in node.body:
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
            start = min([item.lineno] + [d.lineno for d in item.decorator_list])
            start -= 1 if not lines[start - 2].strip() else 0            # the blank line above it goes with it
            methods.append(Method(item.name, start - first, item.end_lineno - first + 1,
                                  frozenset(n.id for n in ast.walk(item) if isinstance(n, ast.Name)),
                                  frozenset(n.attr for n in ast.walk(item) if isinstance(n, ast.Attribute))))
    return tuple(methods)


def carried_block(text, path="the carried helper"):
    """The part of a carried module's text between its markers."""
    if text.count(BEGIN) != 1 or text.count(END) != 1 or text.index(BEGIN) > text.index(END):
        raise UsageError(f"{path}: needs one '{BEGIN.strip()}' line and one '{END.strip()}' line after it")
    return text[text.index(BEGIN) + len(BEGIN):text.index(END)]


def parse_carried(text):
    """The :class:`Carried` of the carried blocks (text holding one or more marked blocks, in order); an
    import bound in several blocks is kept once."""
    block = "".join(carried_block(BEGIN + part) for part in text.split(BEGIN)[1:]) if text.count(BEGIN) > 1 \
        else carried_block(text)
    lines = block.splitlines(keepends=True)
    imports, definitions = [], []
    for node in ast.parse(block).body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            known = {binding.name for binding in imports}
            imports.extend(binding for binding in import_bindings(node) if binding.name not in known)
            continue
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        uses = frozenset(n.id for n in ast.walk(node) if isinstance(n, ast.Name))
        definitions.append(Definition(_defined_name(node), "".join(lines[first - 1:node.end_lineno]), uses,
                                      _methods(node, first, lines)))
    return Carried(imports, definitions)


def set_value(definitions, name, value, comment):
    """``definitions`` with the carried assignment ``name = ...`` replaced by ``name = "value"  # comment``
    (``value`` a dotted name); UsageError when ``name`` is not a carried simple assignment among them."""
    found = [d for d in definitions if d.name == name]
    if len(found) != 1 or not found[0].text.startswith(f"{name} = ") or len(found[0].text.splitlines()) != 1:
        raise UsageError(f"internal error: the carried helper has no one-line `{name} = ...` to set")
    text = f'{name} = "{value}"  # {comment}\n'
    return [Definition(name, text, d.uses, d.methods) if d is found[0] else d for d in definitions]


def load_carried(paths=CARRIED_PATHS):
    """The :class:`Carried` of the runtime's carried modules, their blocks in order."""
    blocks = []
    for path in paths:
        try:
            with open(path, encoding="utf-8") as handle:
                blocks.append(BEGIN + carried_block(handle.read(), path) + END)
        except OSError as exc:
            raise UsageError(f"cannot read the carried helper {path}: {exc}") from None
    return parse_carried("".join(blocks))
