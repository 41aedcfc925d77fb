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
  not an imported module or ``self`` (``x.movedim(0, 1)``), a method on an object made by the owner
  (``torch.set_grad_enabled(False).clone()``, or ``x = torch.set_grad_enabled(True)`` then ``x.clone()``),
  a name bound to it (``f = torch.x``, ``f = partial(torch.x, ...)``, ``for f in [torch.x, torch.y]``, ``ops = [...]``
  then ``for f in ops``), a module-level decorator that names it (``jacrev_and_jacfwd =
  parametrize("jacapi", [subtest(jacrev), ...])`` on a test), or
  by passing it to a callable that calls it (``self.assertRaises(E, torch.x, ...)``,
  ``self.compare_with_numpy(torch_fn, ...)``), decorators included;
- *mentions* it when it names a target without calling it (``fn = torch.x``, a string or comment);
- calls the owner or a sibling (*related*): ``calls`` lists the family leaves it calls.

Helpers: a test also calls what the file's own functions it calls do: module-level functions
(``helper(...)``) and methods of its class or of the class's bases defined in the file
(``self.helper(...)``, ``cls.helper(...)``, ``Class.helper(...)``), followed through at most
:data:`MAX_DEPTH` helper levels (test -> h1 -> h2 -> h3). Such a hit is ``direct`` (or ``related``) with
``via`` naming the helper chain and ``line`` the test's line that calls the first helper.
"""
import ast

from . import functionfacts
from .functionfacts import FileIndex, FunctionFacts

MAX_DEPTH = 3


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
        self.bindings = functionfacts.import_bindings(tree)
        self.index = FileIndex(tree)
        self.words = _words(self.bindings, query)
        self.facts, self.memo = {}, {}
        self.reaching = self._reaching()
        self.carriers = self._carriers(tree)

    def _carriers(self, tree):
        """``{name: line}``: module-level names whose value names a target (a parametrize decorator)."""
        carriers = {}
        for node in tree.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                reader = FunctionFacts(node, "", self.bindings, self.query, self.index)
                if any(reader.dotted(part) in self.query.targets for part in ast.walk(node.value)
                       if isinstance(part, (ast.Name, ast.Attribute))):
                    carriers[node.targets[0].id] = node.lineno
        return carriers

    def _decorated(self, node):
        """``(line, name)`` of the test's first decorator that is a carrier, else None."""
        for decorator in node.decorator_list:
            name = decorator.func if isinstance(decorator, ast.Call) else decorator
            if isinstance(name, ast.Name) and name.id in self.carriers:
                return decorator.lineno, name.id
        return None

    def _has(self, key, words):
        node = self.index.functions[key]
        first = min([node.lineno] + [d.lineno for d in node.decorator_list])
        return any(word in line for line in self.lines[first - 1:getattr(node, "end_lineno", node.lineno)]
                   for word in words)

    def facts_of(self, key):
        if key not in self.facts:
            function = FunctionFacts(self.index.functions[key], key[0], self.bindings, self.query, self.index)
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
        if not self._has(key, self.words | {helper[1] for helper in self.reaching} | set(self.carriers)):
            return None  # cannot name the API, its family or a reaching helper: no AST walk (most tests)
        found = self.summary(key, MAX_DEPTH)
        decorated = None if found["direct"] else self._decorated(node)
        if decorated:
            line, name = decorated
            found = dict(found, direct=(line, [], self.carriers[name], f"calls it through the decorator `{name}`"))
        mentions = self.facts_of(key)["mentions"]
        calls = sorted(found["calls"])
        via, via_line = [], None
        if found["direct"]:
            line, chain, via_line, why = found["direct"]
            kind, via = "direct", [FileIndex.qualname(helper) for helper in chain]
            why += f" through {_chain_text(via)} (line {via_line})" if via else ""
            via_line = via_line if via else (via_line if decorated else None)
            why += f" (line {via_line})" if decorated else ""
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
    scanner = _Scanner(text, path, functionfacts.Query(targets, owners, siblings, methods, owner_modules))
    hits = [scanner.hit(class_path, cls, node) for class_path, cls, node in scanner.index.tests]
    return [hit for hit in hits if hit], len(scanner.index.tests)


def find_tests(text, path, targets, owners=(), siblings=(), methods=(), owner_modules=()):
    """:func:`scan`'s hits only."""
    return scan(text, path, targets, owners, siblings, methods, owner_modules)[0]


def hit_test_id(hit):
    parts = [hit["path"]] + ([hit["class"]] if hit["class"] else []) + [hit["test"]]
    return "::".join(parts)


def hit_text(hit):
    """How a hit calls the API, as search lists it (``direct call (calls it through helper `h` (line 8))``)."""
    if hit["kind"] == "direct":
        return "direct call" + ("" if hit["why"] == "calls it" else f" ({hit['why']})")
    return f"{hit['kind']} ({hit['why']})"
