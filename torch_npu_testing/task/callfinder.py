# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Which test functions of one Python file call an API, from the file's AST (not from text alone).

A *test* is a ``def test*`` at module level or in a class (nested classes included). Names resolve
through the file's imports: ``import torch`` / ``import torch.autograd.grad_mode as gm`` /
``from torch.autograd import grad_mode`` / ``from torch import set_grad_enabled as sge``, and through
local assignments inside a function (``f = torch.set_grad_enabled``). A :class:`Query` holds what is
looked for: ``targets``, the API's dotted names (its re-exports and documented aliases included, e.g.
``torch.moveaxis`` for ``torch.movedim``, from :mod:`torch_npu_testing.task.opnames`); ``methods``, the
method and in-place forms of an op (``x.movedim(...)``, ``x.add_(...)``); ``owners``, ``siblings`` (the
API's family, :mod:`torch_npu_testing.task.family`) and ``owner_modules`` (a private module owning the
API: a call of anything in it calls the API's own module). A function

- calls the API *directly* with ``torch.set_grad_enabled.clone(x)``, a method form on any object that is
  not an imported module or ``self`` (``x.movedim(0, 1)``), or a method on an object made by the owner
  (``torch.set_grad_enabled(False).clone()``, or ``x = torch.set_grad_enabled(True)`` then ``x.clone()``),
  decorators included;
- *mentions* it when it names a target without calling it (``fn = torch.x``, a string or comment);
- calls the owner or a sibling (*related*): ``calls`` lists the family leaves it calls.

Helpers: a test also calls what the file's own functions it calls do: module-level functions
(``helper(...)``) and methods of its class or of the class's bases defined in the file
(``self.helper(...)``, ``cls.helper(...)``, ``Class.helper(...)``), followed through at most
:data:`MAX_DEPTH` helper levels (test -> h1 -> h2 -> h3). Such a hit is ``direct`` (or ``related``) with
``via`` naming the helper chain and ``line`` the test's line that calls the first helper.
"""
import ast

MAX_DEPTH = 3


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


def _import_bindings(tree):
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


class _Function:
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
        for node in nodes:
            if isinstance(node, ast.Assign):
                names = [t.id for t in node.targets if isinstance(t, ast.Name)]
                if isinstance(node.value, ast.Call) and self.dotted(node.value.func) in self.query.owners:
                    self.instances.update(names)
                elif self._target_of(node.value):
                    self.local.update({name: self._target_of(node.value) for name in names})
            elif isinstance(node, (ast.For, ast.comprehension)) and isinstance(node.target, ast.Name) \
                    and isinstance(node.iter, (ast.List, ast.Tuple)):
                bound = [self._target_of(element) for element in node.iter.elts]
                if bound and all(bound):
                    self.local[node.target.id] = bound[0]

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
                    if any(self._target_of(arg) in self.query.targets for arg in node.args):
                        facts["direct"].append((node.lineno, f"passes it to `{FileIndex.qualname(key)}`"))
        facts["mentions"] = self._mentions(nodes, call_funcs, source_lines)
        return {kind: sorted(values) for kind, values in facts.items()}

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


def _words(bindings, query):
    """Words one of which a function must contain to reach the API or its family itself: the names' leaves,
    the method forms, the owner modules' leaves, and imported names bound to one of them."""
    names = query.targets | query.owners | query.siblings
    leaves = {name.rsplit(".", 1)[-1] for name in names | query.owner_modules} | query.methods
    words = set(leaves)
    for local, dotted in bindings.items():
        if (dotted.rsplit(".", 1)[-1] in leaves
                or any(name.startswith(dotted + ".") and dotted != "torch" and dotted.count(".") >= name.count(".") - 1
                       for name in names)
                or any(dotted == module or dotted.startswith(module + ".") or module.startswith(dotted + ".")
                       and dotted != "torch" for module in query.owner_modules)):
            words.add(local)
    return words


class _Scanner:
    """One file: which functions reach the API (or its family) through in-file helpers, and each test's hit."""

    def __init__(self, text, path, query):
        tree = ast.parse(text, filename=path)
        self.path, self.query, self.lines = path, query, text.splitlines()
        self.bindings = _import_bindings(tree)
        self.index = FileIndex(tree)
        self.words = _words(self.bindings, query)
        self.facts, self.memo = {}, {}
        self.reaching = self._reaching()

    def _has(self, key, words):
        node = self.index.functions[key]
        first = min([node.lineno] + [d.lineno for d in node.decorator_list])
        return any(word in line for line in self.lines[first - 1:getattr(node, "end_lineno", node.lineno)]
                   for word in words)

    def facts_of(self, key):
        if key not in self.facts:
            function = _Function(self.index.functions[key], key[0], self.bindings, self.query, self.index)
            self.facts[key] = function.analyse(self.lines)
        return self.facts[key]

    def _reaching(self):
        """Helper keys that reach a direct or related call within MAX_DEPTH - 1 further helper levels."""
        helpers = [key for key in self.index.functions if not key[1].startswith("test")]
        reach = {key for key in helpers if self._has(key, self.words)
                 and (self.facts_of(key)["direct"] or self.facts_of(key)["related"])}
        for _ in range(MAX_DEPTH - 1):
            names = {key[1] for key in reach}
            new = {key for key in helpers if key not in reach and names and self._has(key, names)
                   and any(callee in reach for _, callee in self.facts_of(key)["helpers"])}
            if not new:
                break
            reach |= new
        return reach

    def summary(self, key, remaining, stack=()):
        """``{"direct": (line, chain, api_line, why) | None, "related": (line, chain) | None, "calls": set}``."""
        if (key, remaining) in self.memo:
            return self.memo[(key, remaining)]
        facts = self.facts_of(key)
        direct = (facts["direct"][0][0], [], facts["direct"][0][0], facts["direct"][0][1]) if facts["direct"] else None
        related = (facts["related"][0][0], []) if facts["related"] else None
        calls = {leaf for _, leaf in facts["related"]}
        for line, callee in facts["helpers"] if remaining > 0 else ():
            if callee not in self.reaching or callee in stack or callee == key:
                continue
            inner = self.summary(callee, remaining - 1, stack + (key,))
            if inner["direct"] and not direct:
                direct = (line, [callee] + inner["direct"][1], inner["direct"][2], inner["direct"][3])
            if inner["related"] and not related:
                related = (line, [callee] + inner["related"][1])
            calls |= inner["calls"]
        result = {"direct": direct, "related": related, "calls": calls}
        self.memo[(key, remaining)] = result
        return result

    def hit(self, class_path, cls, node):
        key = (cls, node.name)
        if not self._has(key, self.words | {helper[1] for helper in self.reaching}):
            return None  # cannot name the API, its family or a reaching helper: no AST walk (most tests)
        found = self.summary(key, MAX_DEPTH)
        mentions = self.facts_of(key)["mentions"]
        calls = sorted(found["calls"])
        via, via_line = [], None
        if found["direct"]:
            line, chain, via_line, why = found["direct"]
            kind, via = "direct", [FileIndex.qualname(helper) for helper in chain]
            why += f" through {_chain_text(via)} (line {via_line})" if via else ""
        elif mentions:
            kind, line, why = "mention", mentions[0], "names it without calling it"
        elif found["related"]:
            line, chain = found["related"]
            via = [FileIndex.qualname(helper) for helper in chain]
            roles = [f"{leaf} ({self.query.role(leaf)})" for leaf in calls]
            kind, why = "related", f"calls {', '.join(roles)}, not the API itself"
            why += f", through {_chain_text(via)}" if via else ""
        else:
            return None
        return {"path": self.path, "class": class_path, "test": node.name, "line": line, "kind": kind, "why": why,
                "calls": calls, "via": via, "via_line": via_line}


def _chain_text(via):
    return ("helper " if len(via) == 1 else "helpers ") + " -> ".join(f"`{name}`" for name in via)


def scan(text, path, targets, owners=(), siblings=(), methods=(), owner_modules=()):
    """``(hits, tests)``: the hits of one file (``[{"path", "class", "test", "line", "kind", "why", "calls", "via",
    "via_line"}]``) and its number of tests; SyntaxError propagates. ``calls``: the family leaves the test
    calls, through helpers too (sorted); ``via``: the helper chain of a hit through helpers (else ``[]``)."""
    scanner = _Scanner(text, path, Query(targets, owners, siblings, methods, owner_modules))
    hits = [scanner.hit(class_path, cls, node) for class_path, cls, node in scanner.index.tests]
    return [hit for hit in hits if hit], len(scanner.index.tests)


def find_tests(text, path, targets, owners=(), siblings=(), methods=(), owner_modules=()):
    """:func:`scan`'s hits only."""
    return scan(text, path, targets, owners, siblings, methods, owner_modules)[0]


def hit_test_id(hit):
    parts = [hit["path"]] + ([hit["class"]] if hit["class"] else []) + [hit["test"]]
    return "::".join(parts)
