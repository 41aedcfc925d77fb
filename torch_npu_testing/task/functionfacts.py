# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""The facts of one function of a test file, for :mod:`torch_npu_testing.task.callfinder`: what is looked
for (:class:`Query`), the file's import bindings and functions (:class:`FileIndex`), and, per function body,
its direct calls of the API, related calls, mentions and calls of the file's own helpers
(:class:`FunctionFacts`). The call forms counted are listed in :mod:`callfinder`'s docstring.
"""
import ast


class Query:
    """What :func:`scan` looks for (dotted names as sets; ``methods`` as leaves)."""

    def __init__(self, targets, owners=(), siblings=(), methods=(), owner_modules=()):
        targets = list(targets)
        self.targets = set(targets)
        self.owners = set(owners)
        self.siblings = set(siblings) - self.owners
        self.methods = set(methods)
        self.owner_modules = set(owner_modules)
        self.last = targets[0].rsplit(".", 1)[-1] if targets else None  # the API's own leaf: listed first
        self.owner_leaves = {owner.rsplit(".", 1)[-1] for owner in self.owners | self.owner_modules}

    def family_leaf(self, name):
        """The leaf a related call is listed by, or None when ``name`` is not the owner's, a sibling's or the
        owner module's."""
        if name in self.owners or name in self.siblings:
            return name.rsplit(".", 1)[-1]
        for module in self.owner_modules:
            if name.startswith(module + "."):
                return f"{module.rsplit('.', 1)[-1]}.{name[len(module) + 1:]}"
        return None

    def role(self, leaf):
        if leaf.split(".")[0] in self.owner_leaves and "." in leaf:
            return "its own module"
        return "owner" if leaf in self.owner_leaves else "sibling"


def _statements(body):
    """Every statement below ``body``, through compound statements' bodies (never into expressions: imports
    are statements, and skipping expressions is most of the cost of a walk)."""
    for node in body:
        yield node
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            inner = getattr(node, field, None)
            if isinstance(inner, list):
                yield from _statements(inner)


def import_bindings(tree):
    """``{local name: dotted name}`` from every import statement of the file (top level and in bodies)."""
    bindings = {}
    for node in _statements(tree.body):
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


def _base_name(node):
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None


class FileIndex:
    """The file's functions by key (``(class name or "", function name)``), classes' bases, and its tests."""

    def __init__(self, tree):
        self.functions, self.bases, self.tests = {}, {}, []
        self._visit(tree.body, [])

    def _visit(self, body, classes):
        for node in body:
            if isinstance(node, ast.ClassDef):
                self.bases[node.name] = [name for name in map(_base_name, node.bases) if name]
                self._visit(node.body, classes + [node.name])
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.functions[(classes[-1] if classes else "", node.name)] = node
                if node.name.startswith("test"):
                    self.tests.append(("::".join(classes) or None, classes[-1] if classes else "", node))

    def method(self, cls, name, seen=()):
        """The key of ``cls.name`` defined in ``cls`` or its in-file bases (None when not in this file)."""
        if (cls, name) in self.functions:
            return (cls, name)
        for base in self.bases.get(cls, ()):
            if base not in seen and base != cls:
                found = self.method(base, name, seen + (cls,))
                if found:
                    return found
        return None

    @staticmethod
    def qualname(key):
        return f"{key[0]}.{key[1]}" if key[0] else key[1]


class FunctionFacts:
    """The facts of one function body: direct calls, related calls, mentions and calls of in-file helpers."""

    def __init__(self, node, cls, bindings, query, index):
        self.node, self.cls, self.bindings, self.query, self.index = node, cls, bindings, query, index
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
        if isinstance(node, ast.Call) and self.dotted(node.func) in self.query.owners:
            return True
        return isinstance(node, ast.Name) and node.id in self.instances

    def _target_of(self, node):
        """The target (or owner) ``node`` evaluates to: a name, ``functools.partial(target, ...)``."""
        value = self.dotted(node)
        if value in self.query.targets or value in self.query.owners:
            return value
        if isinstance(node, ast.Call) and (self.dotted(node.func) or "").rsplit(".", 1)[-1] == "partial" \
                and node.args:
            return self._target_of(node.args[0])
        return None

    def _collect_locals(self, nodes):
        """``f = torch.x`` / ``f = partial(torch.x, ...)`` / ``for f in [torch.x, torch.y]`` bind ``f`` to a
        target; ``x = <owner>(...)`` makes ``x`` an object of the owner."""
        lists = {}
        for node in nodes:
            if isinstance(node, ast.Assign):
                names = [t.id for t in node.targets if isinstance(t, ast.Name)]
                if isinstance(node.value, ast.Call) and self.dotted(node.value.func) in self.query.owners:
                    self.instances.update(names)
                elif self._target_of(node.value):
                    self.local.update({name: self._target_of(node.value) for name in names})
                elif self._first_target(node.value):
                    lists.update({name: self._first_target(node.value) for name in names})
            elif isinstance(node, (ast.For, ast.comprehension)) and isinstance(node.target, ast.Name):
                bound = lists.get(node.iter.id) if isinstance(node.iter, ast.Name) else self._first_target(node.iter)
                if bound:
                    self.local[node.target.id] = bound

    def _first_target(self, node):
        """The first target in a list or tuple literal (``[torch.lerp, torch.addcmul]``), else None."""
        if not isinstance(node, (ast.List, ast.Tuple)):
            return None
        return next((target for target in map(self._target_of, node.elts) if target), None)

    def helper_key(self, func):
        """The in-file function a call's ``func`` names, or None."""
        if isinstance(func, ast.Name) and func.id not in self.bindings and func.id not in self.local:
            return ("", func.id) if ("", func.id) in self.index.functions else None
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            receiver = func.value.id
            if receiver in ("self", "cls") and self.cls:
                return self.index.method(self.cls, func.attr)
            if receiver in self.index.bases and receiver not in self.bindings:
                return self.index.method(receiver, func.attr)
        return None

    def _method_form(self, func):
        """``x.<op>(...)``: a method form on an object that is not an imported name, ``self`` or ``cls``."""
        if not (isinstance(func, ast.Attribute) and func.attr in self.query.methods):
            return False
        receiver = func.value
        return not (isinstance(receiver, ast.Name) and receiver.id in ("self", "cls")) and \
            self.dotted(receiver) is None

    def analyse(self, source_lines):
        """``{"direct": [(line, why)], "related": [(line, leaf)], "mentions": [line], "helpers": [(line, key)]}``."""
        nodes = list(ast.walk(self.node))
        self._collect_locals(nodes)
        facts = {"direct": [], "related": [], "mentions": [], "helpers": []}
        call_funcs = set()
        for node in nodes:
            if not isinstance(node, ast.Call):
                continue
            call_funcs.add(id(node.func))
            name = self.dotted(node.func)
            if name in self.query.targets:
                facts["direct"].append((node.lineno, "calls it"))
            elif (isinstance(node.func, ast.Attribute) and node.func.attr == self.query.last
                  and self._made_by_owner(node.func.value)):
                facts["direct"].append((node.lineno, "calls it on an object its owner made"))
            elif self._method_form(node.func):
                facts["direct"].append((node.lineno, f"calls its method form .{node.func.attr}()"))
            elif name and self.query.family_leaf(name):
                facts["related"].append((node.lineno, self.query.family_leaf(name)))
            else:
                key = self.helper_key(node.func)
                if key and key != self._own_key():
                    facts["helpers"].append((node.lineno, key))
                arguments = list(node.args) + [keyword.value for keyword in node.keywords]
                if any(self._target_of(argument) in self.query.targets for argument in arguments):
                    callee = FileIndex.qualname(key) if key else self._callee_text(node.func)
                    facts["direct"].append((node.lineno, f"passes it to `{callee}`"))
        facts["mentions"] = self._mentions(nodes, call_funcs, source_lines)
        return {kind: sorted(values) for kind, values in facts.items()}

    def _callee_text(self, func):
        if isinstance(func, ast.Attribute):
            return (self._callee_text(func.value) + "." if not isinstance(func.value, ast.Call) else "") + func.attr
        return func.id if isinstance(func, ast.Name) else "a callable"

    def _own_key(self):
        return (self.cls, self.node.name)

    def _mentions(self, nodes, call_funcs, source_lines):
        mentions = []
        for node in nodes:
            if isinstance(node, (ast.Name, ast.Attribute)) and id(node) not in call_funcs:
                if self.dotted(node) in self.query.targets and not isinstance(getattr(node, "ctx", None), ast.Store):
                    mentions.append(node.lineno)
        end = getattr(self.node, "end_lineno", self.node.lineno)
        first = min([self.node.lineno] + [d.lineno for d in self.node.decorator_list])
        for offset, line in enumerate(source_lines[first - 1:end]):
            if any(target in line for target in self.query.targets):
                mentions.append(first + offset)
        return mentions
