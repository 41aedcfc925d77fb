# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Rename module-level names in Python source, by AST and tokens: never by pattern on the raw text.

:func:`rename_module_names` renames each name of ``mapping`` where it names the *module-level* binding:
its definitions (``def``/``class``, assignments, import aliases, ``global`` statements) and every reference
that resolves to the module scope. A function parameter or local of the same name, a method, a class
attribute, an attribute access (``x.name``), a keyword argument and any text inside a string stay as they
are. Each edit is checked against the token found at its position before anything is changed.
"""
import ast
import io
import tokenize

from ..common.errors import UsageError

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef,
           ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def bound_names(statements):
    """Names a block of statements binds in its own scope (not descending into nested scopes)."""
    names, declared_global = set(), set()
    todo = list(statements)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
            todo.extend(node.decorator_list)
            continue
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update(binding_name(alias, node) for alias in node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            declared_global.update(node.names)
        if not isinstance(node, _SCOPES):
            todo.extend(ast.iter_child_nodes(node))
    return names - declared_global, declared_global


def binding_name(alias, node):
    """The name an import alias binds (``import a.b`` binds ``a``)."""
    if alias.asname:
        return alias.asname
    return alias.name.split(".")[0] if isinstance(node, ast.Import) else alias.name


def _arg_names(args):
    every = args.posonlyargs + args.args + args.kwonlyargs + [a for a in (args.vararg, args.kwarg) if a]
    return {arg.arg for arg in every}


class _Renamer(ast.NodeVisitor):
    def __init__(self, mapping, tokens, lines):
        self.mapping, self.tokens, self.lines, self.edits = mapping, tokens, lines, []
        self.shadow = frozenset()       # mapped names that are local in the enclosing function scopes
        self.at_module = True           # statements of the module itself (not inside a def or class)

    def edit(self, row, col, old, new):
        self.edits.append((row, col, old, new))

    def visit_Name(self, node):
        if node.id in self.mapping and node.id not in self.shadow:
            self.edit(node.lineno, node.col_offset, node.id, self.mapping[node.id])

    def _name_token(self, node):
        for index, token in enumerate(self.tokens):
            if token.start >= (node.lineno, 0) and token.string in ("def", "class"):
                return self.tokens[index + 1]
        raise UsageError(f"cannot find the name of {node.name} at line {node.lineno}")

    def _definition(self, node, body_scope):
        keywords = [keyword.value for keyword in getattr(node, "keywords", [])]
        for child in node.decorator_list + getattr(node, "bases", []) + keywords:
            self.visit(child)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for default in node.args.defaults + [d for d in node.args.kw_defaults if d]:
                self.visit(default)
        if self.at_module and node.name in self.mapping:
            token = self._name_token(node)
            self.edit(token.start[0], -token.start[1] - 1, node.name, self.mapping[node.name])
        body_scope(node)

    def _function_body(self, node):
        local, declared = bound_names(node.body)
        local |= _arg_names(node.args)
        saved = (self.shadow, self.at_module)
        self.shadow = (self.shadow | (local & set(self.mapping))) - declared
        self.at_module = False
        for statement in node.body:
            self.visit(statement)
        self.shadow, self.at_module = saved

    def _class_body(self, node):
        local, _ = bound_names(node.body)
        saved = (self.shadow, self.at_module)
        self.at_module = False
        for statement in node.body:
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.shadow = saved[0]
            else:
                self.shadow = saved[0] | (local & set(self.mapping))
            self.visit(statement)
        self.shadow, self.at_module = saved

    def visit_FunctionDef(self, node):
        self._definition(node, self._function_body)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node):
        self._definition(node, self._class_body)

    def visit_Lambda(self, node):
        saved = self.shadow
        self.shadow = saved | (_arg_names(node.args) & set(self.mapping))
        self.visit(node.body)
        self.shadow = saved

    def _comprehension(self, node):
        saved = self.shadow
        targets = {n.id for g in node.generators for n in ast.walk(g.target) if isinstance(n, ast.Name)}
        self.shadow = saved | (targets & set(self.mapping))
        self.generic_visit(node)
        self.shadow = saved

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _comprehension

    def _import(self, node):
        for alias in node.names:
            name = binding_name(alias, node)
            if not self.at_module or name not in self.mapping:
                continue
            if alias.asname:
                start = (alias.lineno, _char_col(self.lines, (alias.lineno, alias.col_offset)))
                end = (alias.end_lineno, _char_col(self.lines, (alias.end_lineno, alias.end_col_offset)))
                token = [t for t in self.tokens if start <= t.start and t.end <= end and t.string == alias.asname][-1]
                self.edit(token.start[0], -token.start[1] - 1, alias.asname, self.mapping[name])
            elif isinstance(node, ast.Import) and "." in alias.name:
                raise UsageError(f"cannot rename `import {alias.name}` (it binds {name}, which the other file "
                                 "binds too); import it with `as` in the kit file")
            else:
                self.edits.append((alias.end_lineno, alias.end_col_offset, "", f" as {self.mapping[name]}"))

    visit_Import = visit_ImportFrom = _import

    def visit_Global(self, node):
        for token in self.tokens:
            if (node.lineno, 0) <= token.start and token.end <= (node.end_lineno, 10 ** 9) \
                    and token.type == tokenize.NAME and token.string in self.mapping:
                self.edit(token.start[0], -token.start[1] - 1, token.string, self.mapping[token.string])


def rename_module_names(source, mapping):
    """``source`` with each module-level name ``old`` of ``mapping`` renamed to ``mapping[old]``."""
    if not mapping:
        return source
    tree = ast.parse(source)
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    lines = source.splitlines(keepends=True)
    renamer = _Renamer(dict(mapping), tokens, lines)
    for statement in tree.body:
        renamer.visit(statement)
    for row, col, old, new in sorted(set(renamer.edits), key=lambda e: (e[0], _char_col(lines, e)), reverse=True):
        line = lines[row - 1]
        start = _char_col(lines, (row, col, old, new))
        if line[start:start + len(old)] != old or (old and line[start + len(old):start + len(old) + 1].isidentifier()):
            raise UsageError(f"internal error: expected {old!r} at line {row}, column {start} while renaming")
        lines[row - 1] = line[:start] + new + line[start + len(old):]
    return "".join(lines)


def _char_col(lines, edit):
    """Column in characters: AST gives UTF-8 byte offsets (>= 0), tokens give characters (stored as -c-1)."""
    row, col = edit[0], edit[1]
    if col < 0:
        return -col - 1
    return len(lines[row - 1].encode("utf-8")[:col].decode("utf-8", "replace"))
