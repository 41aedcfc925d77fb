# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Which test functions of one Python file call an API, from the file's AST (not from text alone).

A *test* is a ``def test*`` at module level or in a class (nested classes included). Names resolve
through the file's imports: ``import torch`` / ``import torch.autograd.grad_mode as gm`` /
``from torch.autograd import grad_mode`` / ``from torch import set_grad_enabled as sge``, and through
local assignments inside the test (``f = torch.set_grad_enabled``). ``targets`` are the API's dotted
name and its re-exports (``torch.set_grad_enabled.clone`` for
``torch.autograd.grad_mode.set_grad_enabled.clone``). A test is

- ``direct`` when it calls a target: ``torch.set_grad_enabled.clone(x)``, a method on an object made by
  the target's owner (``torch.set_grad_enabled(False).clone()``, or ``x = torch.set_grad_enabled(True)``
  then ``x.clone()``), decorators included;
- ``mention`` when it names a target without calling it (``fn = torch.x``, a string or comment holding
  the dotted name);
- ``related`` when it calls the target's owner or one of its siblings (``siblings``: the dotted names of
  the other members of the API's family, :mod:`torch_npu_testing.task.family`) but not the target itself
  (uses ``set_grad_enabled`` or ``no_grad`` but never ``.clone``). ``calls`` lists the family leaves it calls.
"""
import ast


def _import_bindings(tree):
    bindings = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    bindings[alias.asname] = alias.name
                else:
                    top = alias.name.split(".")[0]
                    bindings[top] = top
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                if alias.name != "*":
                    bindings[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return bindings


def _tests(tree):
    """``[(class_path or None, FunctionDef)]`` for every test function."""
    found = []

    def visit(body, classes):
        for node in body:
            if isinstance(node, ast.ClassDef):
                visit(node.body, classes + [node.name])
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
                found.append(("::".join(classes) or None, node))
    visit(tree.body, [])
    return found


class _Function:
    def __init__(self, node, bindings, targets, owners, last, siblings=frozenset()):
        self.node = node
        self.bindings = bindings
        self.targets = targets
        self.owners = owners
        self.siblings = siblings
        self.last = last
        self.local = {}
        self.instances = set()

    def dotted(self, node):
        if isinstance(node, ast.Name):
            return self.local.get(node.id) or self.bindings.get(node.id)
        if isinstance(node, ast.Attribute):
            base = self.dotted(node.value)
            return f"{base}.{node.attr}" if base else None
        return None

    def _made_by_owner(self, node):
        if isinstance(node, ast.Call) and self.dotted(node.func) in self.owners:
            return True
        return isinstance(node, ast.Name) and node.id in self.instances

    def analyse(self, source_lines):
        for node in ast.walk(self.node):
            if isinstance(node, ast.Assign):
                names = [t.id for t in node.targets if isinstance(t, ast.Name)]
                value = self.dotted(node.value)
                if isinstance(node.value, ast.Call) and self.dotted(node.value.func) in self.owners:
                    self.instances.update(names)
                elif value in self.targets or value in self.owners:
                    self.local.update({name: value for name in names})
        direct, owner_calls, mentions = [], [], []
        call_funcs = set()
        for node in ast.walk(self.node):
            if not isinstance(node, ast.Call):
                continue
            call_funcs.add(id(node.func))
            name = self.dotted(node.func)
            if name in self.targets:
                direct.append(node.lineno)
            elif (isinstance(node.func, ast.Attribute) and node.func.attr == self.last
                  and self._made_by_owner(node.func.value)):
                direct.append(node.lineno)
            elif name in self.owners or name in self.siblings:
                owner_calls.append((node.lineno, name.rsplit(".", 1)[-1]))
        for node in ast.walk(self.node):
            if isinstance(node, (ast.Name, ast.Attribute)) and id(node) not in call_funcs:
                if self.dotted(node) in self.targets and not isinstance(getattr(node, "ctx", None), ast.Store):
                    mentions.append(node.lineno)
        end = getattr(self.node, "end_lineno", self.node.lineno)
        first = min([self.node.lineno] + [d.lineno for d in self.node.decorator_list])
        for offset, line in enumerate(source_lines[first - 1:end]):
            if any(target in line for target in self.targets):
                mentions.append(first + offset)
        return sorted(direct), sorted(owner_calls), sorted(mentions)


def _words(bindings, names):
    """Words one of which a test must contain to reach any of ``names``: their leaves, and imported names
    bound to one of them (``from torch import set_grad_enabled as sge``)."""
    leaves = {name.rsplit(".", 1)[-1] for name in names}
    words = set(leaves)
    for local, dotted in bindings.items():
        if dotted.rsplit(".", 1)[-1] in leaves or any(name.startswith(dotted + ".") and dotted != "torch"
                                                      and dotted.count(".") >= name.count(".") - 1
                                                      for name in names):
            words.add(local)
    return words


def find_tests(text, path, targets, owners=(), siblings=()):
    """Hits of one file: ``[{"path", "class", "test", "line", "kind", "why", "calls"}]``; SyntaxError
    propagates. ``calls``: the leaves of the owner / siblings the test calls (sorted)."""
    return scan(text, path, targets, owners, siblings)[0]


def scan(text, path, targets, owners=(), siblings=()):
    """``(hits, tests)``: :func:`find_tests`'s hits and the number of tests in the file."""
    tree = ast.parse(text, filename=path)
    bindings = _import_bindings(tree)
    targets = set(targets)
    owners = set(owners)
    siblings = set(siblings) - owners
    last = next(iter(targets)).rsplit(".", 1)[-1]
    owner_leaves = {owner.rsplit(".", 1)[-1] for owner in owners}
    lines = text.splitlines()
    hits = []
    tests = _tests(tree)
    words = _words(bindings, targets | owners | siblings)
    for class_path, node in tests:
        first = min([node.lineno] + [d.lineno for d in node.decorator_list])
        if not any(word in line for line in lines[first - 1:getattr(node, "end_lineno", node.lineno)]
                   for word in words):
            continue  # cannot name any of them: skip the AST walk (most tests of a large file)
        direct, owner_calls, mentions = _Function(node, bindings, targets, owners, last, siblings).analyse(lines)
        calls = sorted({leaf for _, leaf in owner_calls})
        if direct:
            kind, line, why = "direct", direct[0], "calls it"
        elif mentions:
            kind, line, why = "mention", mentions[0], "names it without calling it"
        elif owner_calls:
            roles = [f"{leaf} ({'owner' if leaf in owner_leaves else 'sibling'})" for leaf in calls]
            kind, line, why = "related", min(owner_calls)[0], f"calls {', '.join(roles)}, not the API itself"
        else:
            continue
        hits.append({"path": path, "class": class_path, "test": node.name, "line": line, "kind": kind, "why": why,
                     "calls": calls})
    return hits, len(tests)


def hit_test_id(hit):
    parts = [hit["path"]] + ([hit["class"]] if hit["class"] else []) + [hit["test"]]
    return "::".join(parts)
