# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Merge a kit test file into the Ascend file at the same path: theirs kept byte for byte, ours in one block.

The kit's part is one marked block (:data:`BEGIN_MARK` ... :data:`END_MARK`) holding, in order, the kit
file's docstring as a comment, the imports, the carried helpers the file uses and the kit file's code. It
goes where an earlier export put it, else just before their ``if __name__ == "__main__":``, so their
``run_tests()`` stays the file's last statement and runs the kit's classes too. A re-export replaces the
block in place; with nothing changed in the kit it rewrites the same bytes.

Names: on any clash with a name their file binds or reads (``TestCase``, ``run_tests``, ``device_type``,
``config``, a class name, a module-level name) the kit's side is renamed (:mod:`.rename`): ``kit_x``,
``KitX``, ``KIT_X``. An import statement identical to one of theirs above the block is not repeated.
A file without a main guard gets one after the block, calling theirs or the carried ``run_tests``.

The kit's ``TestCase`` base follows the runner their main guard calls (:func:`guard_runner`): PyTorch's
``common_utils.run_tests`` exits 1 on a TestCase class that is not its own, so where the guard calls it the
carried ``RUNNER_MODULE`` is set to ``common_utils`` (on an NPU too); where it calls torch_npu's, to
``torch_npu.testing.testcase``. Any other runner (or the carried ``run_tests``) leaves it ``None``: the
device's pair, as in a file export creates.
"""
import ast
import builtins
import symtable
import textwrap
from dataclasses import dataclass, field

from ..common.errors import UsageError
from .carry import set_value
from .kitfile import import_bindings, is_main_guard
from .rename import binding_name, bound_names, rename_module_names

BEGIN_MARK = "# --- API-consistency kit: begin (written by export; change the kit's file, not this block) ---"
END_MARK = "# --- API-consistency kit: end ---"
CARRIED_COMMENT = "# The kit's carried helper: only what the tests below use (the kit's runtime/carried.py).\n"
MAIN_GUARD = 'if __name__ == "__main__":\n    run_tests()\n'
LINE_LIMIT = 120                     # Ascend's flake8 line length for test/
RUNNER_MODULES = ("torch.testing._internal.common_utils", "torch_npu.testing.testcase")  # families of run_tests
RUNNER_SETTING = "RUNNER_MODULE"     # the carried assignment that fixes the kit TestCase's base module
RUNNER_COMMENT = "set by export: its run_tests is this file's runner"


@dataclass
class Merged:
    text: str
    renamed: dict = field(default_factory=dict)
    carried_lines: int = 0
    kit_ids: list = field(default_factory=list)
    their_ids: list = field(default_factory=list)
    guard_added: bool = False
    ids: list = field(default_factory=list)     # every test id of the written file
    theirs: str = ""                            # their text: the file without the kit's block
    runner: str = None                          # RUNNER_MODULES entry the kit's base follows; None: the device


def test_methods(tree):
    """``(class node, method node)`` of every top-level class method whose name starts with ``test``."""
    return [(node, item) for node in tree.body if isinstance(node, ast.ClassDef) for item in node.body
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name.startswith("test")]


def test_ids(tree):
    """``Class.test_x`` of every :func:`test_methods` entry."""
    return [f"{cls.name}.{method.name}" for cls, method in test_methods(tree)]


def remove_block(text, where="file"):
    """``(their text, line index of the removed block or None)``: the text without the kit's block."""
    lines = text.splitlines(keepends=True)
    begins = [i for i, line in enumerate(lines) if line.rstrip("\r\n") == BEGIN_MARK]
    ends = [i for i, line in enumerate(lines) if line.rstrip("\r\n") == END_MARK]
    if not begins and not ends:
        return text, None
    if len(begins) != 1 or len(ends) != 1 or ends[0] < begins[0]:
        raise UsageError(f"{where}: {len(begins)} begin and {len(ends)} end marks of the kit's block "
                         "(expected one of each, in order): repair it by hand first")
    stop = ends[0] + 1
    while stop < len(lines) and stop <= ends[0] + 2 and not lines[stop].strip():
        stop += 1
    return "".join(lines[:begins[0]] + lines[stop:]), begins[0]


def global_names(source):
    """Names a module binds or reads at module level, or reads as globals from any scope (by symtable)."""
    top = symtable.symtable(source, "<file>", "exec")
    names, todo = set(top.get_identifiers()), list(top.get_children())
    while todo:
        scope = todo.pop()
        todo.extend(scope.get_children())
        names.update(s.get_name() for s in scope.get_symbols() if s.is_global() or s.is_declared_global())
    return names


def _dotted(node):
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return [node.id] + parts[::-1] if isinstance(node, ast.Name) else None


def guard_runner(tree, guard, where="file"):
    """The :data:`RUNNER_MODULES` entry whose ``run_tests`` ``guard`` calls through a module-level import
    (``from m import run_tests [as x]``, ``import m as x`` / ``from pkg import m`` then ``x.run_tests()``),
    else None. UsageError when it calls both families' runners."""
    bound = {}
    for node in tree.body:
        for alias in getattr(node, "names", ()) if isinstance(node, (ast.Import, ast.ImportFrom)) else ():
            full = alias.name if isinstance(node, ast.Import) else f"{node.module}.{alias.name}"
            bound[binding_name(alias, node)] = full if alias.asname or isinstance(node, ast.ImportFrom) \
                else full.split(".")[0]
    called = set()
    for call in (n for n in ast.walk(guard) if isinstance(n, ast.Call)):
        parts = _dotted(call.func)
        if parts and parts[0] in bound:
            called.add(".".join([bound[parts[0]]] + parts[1:]))
    found = [module for module in RUNNER_MODULES if f"{module}.run_tests" in called]
    if len(found) > 1:
        raise UsageError(f"{where}: its main guard calls both {' and '.join(found)} run_tests; keep one")
    return found[0] if found else None


def _their_facts(tree, source, insert_line):
    """Names their file binds or reads, and their top-level import statements above ``insert_line``."""
    names = global_names(source)
    bound, declared = bound_names(tree.body)
    imports = {b.statement for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))
               and node.lineno <= insert_line for b in import_bindings(node)}
    return names | bound | declared, bound, imports


def fresh_name(name, taken):
    """``kit_x`` / ``KitX`` / ``KIT_X`` (``_kit_x`` for a private name), made unique against ``taken``."""
    private = name.startswith("_")
    core = name.lstrip("_")
    if core.isupper():
        new = f"KIT_{core}"
    elif core[:1].isupper():
        new = f"Kit{core}"
    else:
        new = f"kit_{core}"
    new = ("_" if private else "") + new
    candidate, number = new, 2
    while candidate in taken:
        candidate, number = f"{new}{number}", number + 1
    return candidate


def _comment(docstring, width=LINE_LIMIT):
    """The docstring as ``# `` lines; a line the prefix would push past ``width`` is wrapped at words, a
    list item's continuation indented under its text (Ascend lints ``test/`` at 120 columns)."""
    out = []
    for line in docstring.splitlines():
        if len(f"# {line}".rstrip()) <= width:
            out.append(f"# {line}".rstrip())
            continue
        indent = line[:len(line) - len(line.lstrip())]
        hanging = indent + ("  " if line.lstrip().startswith(("- ", "* ")) else "")
        parts = textwrap.wrap(line.strip(), width - 2, initial_indent=indent, subsequent_indent=hanging,
                              break_long_words=False, break_on_hyphens=False)
        out += ["# " + part for part in parts]
    return "".join(line + "\n" for line in out)


def long_lines(text, width=LINE_LIMIT):
    """``[(line number, length)]`` of the kit block's lines in ``text`` longer than ``width``."""
    lines = text.splitlines()
    begins = [i for i, line in enumerate(lines) if line == BEGIN_MARK]
    ends = [i for i, line in enumerate(lines) if line == END_MARK]
    if not begins or not ends:
        return []
    return [(i + 1, len(lines[i])) for i in range(begins[0], ends[0]) if len(lines[i]) > width]


def _one_line_assignment(definition):
    text = definition.text.rstrip("\n")
    return "\n" not in text and not text.startswith(("def ", "class ", "async ", "@"))


def helpers_text(definitions):
    """The carried definitions two blank lines apart, save one-line assignments in a row: those stay together
    (as PEP 8 and the carried modules write them), so a constant costs its own line only. The constants that
    read no carried function or class go first, as one run (they come from several carried modules)."""
    others = {d.name for d in definitions if not _one_line_assignment(d)}
    first = [d for d in definitions if _one_line_assignment(d) and not d.uses & others]
    definitions = first + [d for d in definitions if d not in first]
    return "".join(("\n\n" if index and not (_one_line_assignment(d) and _one_line_assignment(definitions[index - 1]))
                    else "") + d.text.rstrip("\n") + "\n" for index, d in enumerate(definitions))


def _render(kit, kept, definitions, renamed):
    """``(block text, carried helper text)``: imports, carried definitions, the kit's code, renamed."""
    helpers = helpers_text(definitions)
    if helpers:
        helpers = CARRIED_COMMENT + helpers
    head = "".join(line + "\n" for line in kept) + ("\n\n" if kept else "") + helpers
    source = head + ("\n\n# The kit's tests.\n" if helpers else "") + kit.body
    try:
        source = rename_module_names(source, renamed)
    except SyntaxError as exc:
        raise UsageError(f"{kit.rel_path}: cannot be merged: {exc}") from None
    return f"{BEGIN_MARK}\n{_comment(kit.docstring)}\n{source.rstrip(chr(10))}\n{END_MARK}\n", helpers


def build_block(kit, carried, their_text, insert_line, where="file", runner=None):
    """``(block text, renamed, carried lines)`` of ``kit`` for their file ``their_text``; ``runner``: the
    :data:`RUNNER_MODULES` entry the carried TestCase's base is fixed to (None: the device's)."""
    their_names, their_bound, their_imports = _their_facts(ast.parse(their_text), their_text, insert_line)
    body_tree = ast.parse(kit.body)
    used = {n.id for n in ast.walk(body_tree) if isinstance(n, ast.Name)}
    provide = {"run_tests"} if "run_tests" in their_names and "run_tests" not in their_bound \
        and not hasattr(builtins, "run_tests") else set()
    wanted = [name for name in kit.kit_names if name in used] + sorted(provide - used)
    attributes = {n.attr for n in ast.walk(body_tree) if isinstance(n, ast.Attribute)}
    carried_imports, definitions = carried.select(wanted, attributes)
    if runner and any(d.name == RUNNER_SETTING for d in definitions):
        definitions = set_value(definitions, RUNNER_SETTING, runner, RUNNER_COMMENT)
    statements = list(dict.fromkeys(b.statement for b in carried_imports + kit.imports))
    bindings = {b.statement: b.name for b in carried_imports + kit.imports}
    kept = [s for s in statements if s not in their_imports]
    ours = {bindings[s] for s in kept} | {d.name for d in definitions} | bound_names(body_tree.body)[0]
    clashes = sorted((ours & their_names) - provide)
    shared = {bindings[s] for s in statements if s in their_imports}
    code = "\n\n".join(d.text for d in definitions) + "\n\n" + kit.body
    borrowed = sorted((global_names(code) - ours - shared) & their_bound)
    if borrowed:
        raise UsageError(f"{where}: the kit's code reads {', '.join(borrowed)}, which this file defines; "
                         "bind it in the kit file (an import or a definition) so it can be renamed")
    taken = their_names | ours | used
    renamed = {}
    for name in clashes:
        renamed[name] = taken_name = fresh_name(name, taken)
        taken.add(taken_name)
    block, helpers = _render(kit, kept, definitions, renamed)
    remove_block(block, f"{kit.rel_path} (the block itself has a mark line)")
    from_carried = {b.statement for b in carried_imports}
    return block, renamed, sum(1 for line in kept if line in from_carried) + len(helpers.splitlines())


def merge_into(kit, their_text, carried, where="file"):
    """:class:`Merged`: ``their_text`` with ``kit``'s block (re)placed; their lines unchanged."""
    their_text, old_at = remove_block(their_text, where)
    theirs = their_text
    try:
        tree = ast.parse(their_text)
    except SyntaxError as exc:
        raise UsageError(f"{where}:{exc.lineno}: cannot parse the existing file: {exc.msg}") from None
    guards = [node for node in tree.body if is_main_guard(node)]
    guard_added = not guards
    if guard_added:
        their_text += ("" if their_text.endswith("\n") or not their_text else "\n") + "\n\n" + MAIN_GUARD
        tree = ast.parse(their_text)
        guards = [node for node in tree.body if is_main_guard(node)]
    lines = their_text.splitlines(keepends=True)
    at = old_at if old_at is not None else guards[-1].lineno - 1
    runner = guard_runner(tree, guards[-1], where)
    block, renamed, carried_lines = build_block(kit, carried, their_text, at, where, runner)
    text = "".join(lines[:at]) + block + "\n\n" + "".join(lines[at:])
    try:
        ids = test_ids(ast.parse(text))
    except SyntaxError as exc:
        raise UsageError(f"internal error: the merged {where} does not parse: {exc}") from None
    return Merged(text, renamed, carried_lines, test_ids(ast.parse(block)), test_ids(tree), guard_added, ids, theirs,
                  runner)


def new_file(kit, carried, header, title):
    """A file the branch lacks: ``header``, a one-paragraph docstring naming ``title``, the block, the guard."""
    skeleton = (f'{header}\n"""API-consistency tests of {title} on the NPU.\n\nThe tests, and the helpers they '
                f'need, are in the block below.\n"""\n\n\n{MAIN_GUARD}')
    return merge_into(kit, skeleton, carried)
