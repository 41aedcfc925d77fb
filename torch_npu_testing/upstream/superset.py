# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Is one patch of an upstream file a superset of another patch of it (``upstream superset``)?

The kit's v2.12 patch replaces the patch Ascend merged for the same file, so it must keep what that
one does. On a base file both apply to, :func:`compare` checks:

1. *applies*: every hunk of both patches is found in the base (exact old lines, any offset);
2. *adaptations*: every base line the other patch removes, ours removes too; every line it adds is
   added by ours in the same test (or, at module level, anywhere at module level), except a module-level
   definition of a name that ours also defines at module level (ours resolves it its own way);
3. *tests*: every test of the other patched file is in ours; a test the other lets run on ``device``
   is not skipped by ours there (decorators are evaluated with ``device_type`` = ``DEVICE`` = device;
   one whose effect cannot be told counts as a skip);
4. *confirmed lines*: which of our hunks rely on base lines the other patch does not confirm (as
   context or removed lines): those are the hunks to list in the manifest.

It also says what ours adds beyond the other (lines per test, skips that do not apply on ``device``).
"""
import ast
import re
from dataclasses import dataclass, field

from ..common.errors import UsageError

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
MODULE = "<module>"


@dataclass
class Hunk:
    header: str
    old_start: int
    lines: list  # (sign, text)

    @property
    def old(self):
        return [text for sign, text in self.lines if sign in " -"]


@dataclass
class Applied:
    """One patch located in a base: base line numbers (1-based) it removes / keeps as context, the lines
    it adds with the base line they stand before, the patched text, and each hunk's start."""

    removed: dict
    context: set
    added: list
    result: str
    starts: list


@dataclass
class Report:
    problems: list = field(default_factory=list)
    additions: list = field(default_factory=list)
    unconfirmed: list = field(default_factory=list)

    @property
    def ok(self):
        return not self.problems

    def lines(self):
        out = [f"NOT a superset: {problem}" for problem in self.problems]
        out += [f"adds: {item}" for item in self.additions]
        out += [f"hunk relies on lines the other patch does not confirm: {item}" for item in self.unconfirmed]
        out.append("superset: yes" if self.ok else f"superset: no ({len(self.problems)} problems)")
        return out


def parse_hunks(text, what="patch"):
    hunks, current = [], None
    for line in text.split("diff --git", 1)[-1].splitlines()[1:]:
        match = _HUNK.match(line)
        if match:
            current = Hunk(line, int(match.group(1)), [])
            hunks.append(current)
        elif current is not None and line[:1] in (" ", "-", "+"):
            current.lines.append((line[0], line[1:]))
        elif current is not None and line == "":
            current.lines.append((" ", ""))
    if not hunks:
        raise UsageError(f"{what} has no hunks")
    return hunks


def _locate(base_lines, hunk):
    old, wanted = hunk.old, hunk.old_start - 1
    spots = [start for start in range(len(base_lines) - len(old) + 1) if base_lines[start:start + len(old)] == old]
    return min(spots, key=lambda start: abs(start - wanted)) if spots else None


def apply_to(base_text, patch_text, what):
    """Locate every hunk of ``patch_text`` in ``base_text`` and apply it; UsageError when one is not found."""
    base_lines = base_text.splitlines()
    result, removed, context, added, starts, position = [], {}, set(), [], [], 0
    for hunk in parse_hunks(patch_text, what):
        start = _locate(base_lines, hunk)
        if start is None or start < position:
            raise UsageError(f"{what}: hunk {hunk.header} does not apply to the base")
        starts.append(start + 1)
        result.extend(base_lines[position:start])
        number = start + 1
        for sign, text in hunk.lines:
            if sign == "+":
                added.append((number, text))
                result.append(text)
                continue
            if sign == "-":
                removed[number] = text
            else:
                context.add(number)
                result.append(text)
            number += 1
        position = number - 1
    result.extend(base_lines[position:])
    return Applied(removed, context, added, "\n".join(result) + "\n", starts)


def test_spans(text):
    """``[(first line, last line, test name)]`` of the test methods of a file (decorators included)."""
    spans = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            first = min([node.lineno] + [decorator.lineno for decorator in node.decorator_list])
            spans.append((first, node.end_lineno, node.name))
    return spans


def _scope(spans, number):
    return next((name for first, last, name in spans if first <= number <= last), MODULE)


def _module_names(text):
    names = set()
    for node in ast.parse(text).body:
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        names.update(target.id for target in targets if isinstance(target, ast.Name))
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
    return names


def _blocks(added):
    """Runs of consecutive added lines: ``[(anchor, [text, ...])]``."""
    blocks = []
    for anchor, text in added:
        if blocks and blocks[-1][0] == anchor:
            blocks[-1][1].append(text)
        else:
            blocks.append((anchor, [text]))
    return blocks


def _defined_names(lines):
    try:
        return _module_names("\n".join(lines))
    except SyntaxError:
        return set()


def _check_adaptations(theirs, ours, spans, report):
    for number, text in sorted(theirs.removed.items()):
        if number not in ours.removed:
            report.problems.append(f"the other patch changes base line {number} ({text.strip()!r}); ours keeps it")
    ours_added = {}
    for number, text in ours.added:
        ours_added.setdefault(_scope(spans, number), set()).add(text.strip())
    our_names = _module_names(ours.result)
    for anchor, lines in _blocks(theirs.added):
        scope = _scope(spans, anchor)
        missing = [line for line in lines if line.strip() and line.strip() not in ours_added.get(scope, set())]
        if not missing:
            continue
        defined = _defined_names(lines)
        if scope == MODULE and defined and defined <= our_names:
            continue  # ours defines the same names its own way
        for line in missing:
            report.problems.append(f"{scope}: the other patch adds {line.strip()!r}; ours does not")


def _decorator_skips(decorator, device, source):
    """True (skips on device), False (runs) or None (cannot tell) for one decorator."""
    text = ast.get_source_segment(source, decorator) or ""
    names = {"device_type": device, "DEVICE": device}
    if isinstance(decorator, ast.Call):
        func = ast.get_source_segment(source, decorator.func) or ""
        if func.endswith(("skipIf", "skipUnless")) and decorator.args:
            try:
                value = bool(eval(compile(ast.Expression(decorator.args[0]), "<skip>", "eval"),
                                  {"__builtins__": {}}, names))
            except Exception:  # noqa: BLE001 - a condition on anything else cannot be told here
                return None
            return value if func.endswith("skipIf") else not value
        return True if func.endswith(".skip") or func == "skip" else (None if "skip" in func.lower() else False)
    if text.endswith("requires_cuda"):
        return device != "cuda"
    return None if "skip" in text.lower() or text.startswith("requires") else False


def _skips(result_text, device):
    """``{test: [decorator source text that skips (or may skip) on device]}`` of a patched file."""
    found = {}
    for node in ast.walk(ast.parse(result_text)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            found[node.name] = [ast.get_source_segment(result_text, decorator) for decorator in node.decorator_list
                                if _decorator_skips(decorator, device, result_text) is not False]
    return found


def _check_tests(theirs, ours, device, report):
    their_skips, our_skips = _skips(theirs.result, device), _skips(ours.result, device)
    for test, skips in their_skips.items():
        if test not in our_skips:
            report.problems.append(f"{test}: in the other patched file, not in ours")
        elif not skips and our_skips[test]:
            report.problems.append(f"{test}: runs on {device} with the other patch; ours skips it there "
                                   f"({'; '.join(our_skips[test])})")


def _additions(theirs, ours, spans, device, report):
    their_added = {}
    for number, text in theirs.added:
        their_added.setdefault(_scope(spans, number), set()).add(text.strip())
    counts = {}
    for number, text in ours.added:
        scope = _scope(spans, number)
        if text.strip() and text.strip() not in their_added.get(scope, set()):
            counts[scope] = counts.get(scope, 0) + 1
    report.additions += [f"{scope}: {count} line(s) the other patch does not add" for scope, count in counts.items()]
    their_decorators = _all_decorators(theirs.result)
    for test, decorators in _all_decorators(ours.result).items():
        for decorator in decorators:
            if decorator not in their_decorators.get(test, []):
                report.additions.append(f"{test}: decorator {' '.join(decorator.split())} (does not skip on {device})")


def _all_decorators(text):
    return {node.name: [ast.get_source_segment(text, decorator) for decorator in node.decorator_list]
            for node in ast.walk(ast.parse(text))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test")}


def _unconfirmed(base_text, theirs, ours_text, report):
    confirmed = set(theirs.removed) | theirs.context
    base_lines = base_text.splitlines()
    for hunk in parse_hunks(ours_text, "our patch"):
        start = _locate(base_lines, hunk) + 1
        numbers = range(start, start + len(hunk.old))
        outside = [number for number in numbers if number not in confirmed]
        if outside:
            report.unconfirmed.append(f"{hunk.header.split(' @@')[0]} @@ (base lines {outside[0]}-{outside[-1]})")


def compare(base_text, other_patch, our_patch, device="npu"):
    """A :class:`Report`: is ``our_patch`` a superset of ``other_patch`` on ``base_text``?"""
    theirs = apply_to(base_text, other_patch, "the other patch")
    ours = apply_to(base_text, our_patch, "our patch")
    spans = test_spans(base_text)
    report = Report()
    _check_adaptations(theirs, ours, spans, report)
    _check_tests(theirs, ours, device, report)
    _additions(theirs, ours, spans, device, report)
    _unconfirmed(base_text, theirs, our_patch, report)
    return report
