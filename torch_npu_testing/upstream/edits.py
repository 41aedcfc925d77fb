# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""The edits of a derived base beyond dropping later tests (manifest ``derived_base.edits``).

A newer upstream test file differs from an older tag's not only by added tests: a decorator came later,
an expected string gained entries, a lint comment went away. Each edit names the test it belongs to and
is found there through :mod:`ast` (the test's span: its decorators to its last line), never by a line
number, so it means the same in any copy of the file. The kinds, applied in the manifest's order::

    {"kind": "drop_decorator", "test": "test_x", "decorator": "torch._dynamo.config.patch(k=False)"}
        remove that decorator of test_x (its expression, without the ``@``, compared as a syntax tree),
        all its lines (a decorator sharing its line with a comment is refused);
    {"kind": "replace", "test": "test_x", "old": "{'a': 1, 'b': 2}", "new": "{'a': 1}", "count": 1}
        replace ``old`` by ``new`` inside test_x; it must occur exactly ``count`` times there (default 1);
    {"kind": "comment_expected", "test": "test_x", "strings": [1, 3], "comment": "# noqa: B950"}
        append two spaces and ``comment`` to the line on which the expected string (second argument) of
        the N-th ``assertExpectedInline`` call of test_x closes (N counts from 1, in source order).

An edit may carry a ``why`` (free text, for the reader). An edit that does not find exactly what it names
raises UsageError: a derivation from another file then
fails with the reason, instead of quietly giving a file that is not the base.
"""
import ast

from ..common.errors import UsageError

KINDS = {
    "drop_decorator": ("test", "decorator"),
    "replace": ("test", "old", "new"),
    "comment_expected": ("test", "strings", "comment"),
}
EXPECTED_CALL = "assertExpectedInline"


def validate(edits, where):
    """Check the shape of a manifest's ``edits`` list; a malformed one raises UsageError naming ``where``."""
    if not isinstance(edits, list):
        raise UsageError(f"{where}: derived_base.edits must be a list")
    for number, edit in enumerate(edits, 1):
        if not isinstance(edit, dict) or edit.get("kind") not in KINDS:
            raise UsageError(f"{where}: derived_base.edits[{number}] needs a 'kind' of {', '.join(KINDS)}")
        missing = [key for key in KINDS[edit["kind"]] if key not in edit]
        if missing:
            raise UsageError(f"{where}: derived_base.edits[{number}] ({edit['kind']}) lacks {', '.join(missing)}")
        strings = edit.get("strings", [1])
        if not strings or not all(isinstance(item, int) and item >= 1 for item in strings):
            raise UsageError(f"{where}: derived_base.edits[{number}]: 'strings' lists positions from 1")


def describe(edit):
    """A short phrase for one edit, for what ``derive`` and ``check`` print."""
    if edit["kind"] == "drop_decorator":
        return f"{edit['test']}: @{edit['decorator']} dropped"
    if edit["kind"] == "replace":
        return f"{edit['test']}: {edit['old']!r} -> {edit['new']!r} ({edit.get('count', 1)}x)"
    return f"{edit['test']}: {edit['comment']!r} after expected string(s) {', '.join(map(str, edit['strings']))}"


def apply_all(text, edits, what="file"):
    """``text`` with every edit applied in order (each one found afresh in the text the previous left)."""
    for edit in edits:
        text = APPLY[edit["kind"]](text, edit, what)
    return text


def test_names(text, what="file"):
    """Names of the test functions/methods of a test file, in file order."""
    return [node.name for node in test_methods(parse(text, what))]


def parse(text, what):
    try:
        return ast.parse(text)
    except SyntaxError as exc:
        raise UsageError(f"{what} is not valid Python (line {exc.lineno}: {exc.msg})") from None


def test_methods(tree):
    """The test functions of a module: methods of its classes and module-level functions named test*."""
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name.startswith("test"):
                    yield item
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            yield node


def first_line(node):
    """The first line of a test: its first decorator's, else its ``def``'s."""
    return min([node.lineno] + [decorator.lineno for decorator in node.decorator_list])


def _test(text, name, what):
    found = [node for node in test_methods(parse(text, what)) if node.name == name]
    if len(found) != 1:
        raise UsageError(f"{what}: edit of {name}: the file has {len(found)} tests of that name, not 1")
    return found[0]


def _drop_decorator(text, edit, what):
    node = _test(text, edit["test"], what)
    try:  # compared as syntax trees: spacing and line breaks inside the decorator do not matter
        wanted = ast.dump(ast.parse(edit["decorator"].strip(), mode="eval").body)
    except SyntaxError:
        raise UsageError(f"{what}: decorator {edit['decorator']!r} of the edit is not a Python expression") from None
    found = [decorator for decorator in node.decorator_list if ast.dump(decorator) == wanted]
    if len(found) != 1:
        raise UsageError(f"{what}: {edit['test']} has no decorator @{edit['decorator']}")
    lines = text.splitlines(keepends=True)
    start, end = found[0].lineno, found[0].end_lineno
    if lines[start - 1].strip() != "@" + (ast.get_source_segment(text, found[0]) or "").splitlines()[0].strip():
        raise UsageError(f"{what}: @{edit['decorator']} of {edit['test']} shares its line with other code")
    return "".join(lines[:start - 1] + lines[end:])


def _replace(text, edit, what):
    node = _test(text, edit["test"], what)
    lines = text.splitlines(keepends=True)
    start, end = first_line(node) - 1, node.end_lineno
    span = "".join(lines[start:end])
    count = edit.get("count", 1)
    found = span.count(edit["old"])
    if found != count:
        raise UsageError(f"{what}: {edit['test']} holds {edit['old']!r} {found} time(s), the edit expects {count}")
    return "".join(lines[:start]) + span.replace(edit["old"], edit["new"]) + "".join(lines[end:])


def _expected_strings(node):
    calls = [call for call in ast.walk(node) if isinstance(call, ast.Call)
             and isinstance(call.func, ast.Attribute) and call.func.attr == EXPECTED_CALL]
    calls.sort(key=lambda call: (call.lineno, call.col_offset))
    return [call.args[1] if len(call.args) > 1 else None for call in calls]


def _comment_expected(text, edit, what):
    node = _test(text, edit["test"], what)
    strings = _expected_strings(node)
    lines = text.splitlines(keepends=True)
    for position in edit["strings"]:
        string = strings[position - 1] if position <= len(strings) else None
        if not (isinstance(string, ast.Constant) and isinstance(string.value, str)):
            raise UsageError(f"{what}: {edit['test']} has no expected string #{position} "
                             f"({len(strings)} {EXPECTED_CALL} call(s))")
        line = lines[string.end_lineno - 1]
        body = line.rstrip("\r\n")
        tail = body.encode("utf-8", "surrogateescape")[string.end_col_offset:]  # ast offsets count bytes
        if b"#" in tail:
            raise UsageError(f"{what}: {edit['test']}: expected string #{position} already ends with a comment")
        lines[string.end_lineno - 1] = f"{body}  {edit['comment']}{line[len(body):]}"
    return "".join(lines)


APPLY = {"drop_decorator": _drop_decorator, "replace": _replace, "comment_expected": _comment_expected}
