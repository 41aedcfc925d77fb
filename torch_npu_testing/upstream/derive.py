# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""The base file a patch is made against, when the source does not hold it as is: a derived base.

No reachable source holds PyTorch's ``tags/v2.12.0`` copy of test_aot_joint_with_descriptors.py. The
manifest's ``derived_base`` says how to get close to it from a newer upstream file::

    "derived_base": {
      "from": {"repo": "pytorch/pytorch", "commit": "<sha>", "blob": "<blob of that file>"},
      "direct_tags": ["v2.12.0", "v2.11.0"],   # a checkout at one of these holds the base itself
      "drop_tests": ["test_a", ...],            # tests newer than the base, dropped by name (AST)
      "blob": "<blob of the derived file>", "lines": 1263, "tests": 18,
      "differs_from_real": "what is known about how it differs from the real base"
    }

:func:`resolve_base` picks, per patch, the base file of a PyTorch source: the source's file itself
when it is the recorded base (blob) or the checkout is at one of ``direct_tags``; else, when the file
holds every test of ``drop_tests``, the file with those tests dropped (each test method with its
decorators and the blank lines before it, found with :mod:`ast`, not by line numbers); else the
source's file as found (whether the patch applies is then for ``check`` to say).
"""
import ast
import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from ..common import gitutil
from ..common.errors import UsageError
from . import manifest
from .patches import blob_matches

SOURCE = "source"
DERIVED = "derived"


@dataclass(frozen=True)
class BaseFile:
    """The base file of one patch in one source: ``text`` and where it came from (``kind``, ``how``)."""

    text: str
    kind: str
    how: str
    source_blob: str
    dropped: tuple = ()
    source_tests: tuple = field(default=(), repr=False)

    @property
    def blob(self):
        return git_blob(self.data)

    @property
    def data(self):
        return self.text.encode("utf-8", errors="surrogateescape")

    @property
    def lines(self):
        return len(self.text.splitlines())

    @property
    def tests(self):
        return test_names(self.text)


def git_blob(data):
    """The git blob id of ``data`` (bytes), as ``git hash-object`` computes it."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _test_methods(tree):
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name.startswith("test"):
                    yield item
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            yield node


def _parse(text, what):
    try:
        return ast.parse(text)
    except SyntaxError as exc:
        raise UsageError(f"{what} is not valid Python (line {exc.lineno}: {exc.msg})") from None


def test_names(text, what="file"):
    """Names of the test functions/methods of a test file, in file order."""
    return [node.name for node in _test_methods(_parse(text, what))]


def drop_tests(text, names, what="file"):
    """``text`` without the test methods ``names``: each one's decorators, body and the blank lines before
    it. A name that is not a test of the file raises UsageError."""
    tree = _parse(text, what)
    found = {node.name: node for node in _test_methods(tree)}
    missing = [name for name in names if name not in found]
    if missing:
        raise UsageError(f"{what} has no test {', '.join(missing)}")
    lines = text.splitlines(keepends=True)
    drop = set()
    for name in names:
        node = found[name]
        start = min([node.lineno] + [decorator.lineno for decorator in node.decorator_list])
        while start > 1 and not lines[start - 2].strip():
            start -= 1
        drop.update(range(start, node.end_lineno + 1))
    return "".join(line for number, line in enumerate(lines, 1) if number not in drop)


def resolve_base(source, patch, data, derive=True):
    """The :class:`BaseFile` of ``patch`` in ``source``, or None when the source lacks the file; with
    ``derive`` False always the source's file as found."""
    path = Path(source) / patch.target
    if not path.is_file():
        return None
    raw = path.read_bytes()
    text = raw.decode("utf-8", errors="surrogateescape")
    actual = git_blob(raw)
    recorded = manifest.recorded_base(data, patch.name) or patch.base_blob
    spec = manifest.entry(data, patch.name).get("derived_base")
    if blob_matches(recorded, actual):
        return BaseFile(text, SOURCE, "the source's file is the recorded base", actual)
    if not spec or not derive:
        return BaseFile(text, SOURCE, "the source's file as found", actual)
    if blob_matches(spec.get("blob"), actual):
        return BaseFile(text, SOURCE, "the source's file is the known derived base", actual)
    commit, tag = gitutil.head_commit_and_tag(source)
    if tag and tag in (spec.get("direct_tags") or ()):
        return BaseFile(text, SOURCE, f"the source's file: the checkout is at {tag}", actual)
    names = list(spec.get("drop_tests") or ())
    tests = test_names(text, f"{patch.target} in {source}")
    if names and all(name in tests for name in names):
        derived = drop_tests(text, names, f"{patch.target} in {source}")
        origin = f"checkout {commit[:12]}" if commit else "the source"
        how = f"derived from {origin} (blob {actual[:12]}) by dropping {len(names)} later tests"
        return BaseFile(derived, DERIVED, how, actual, dropped=tuple(names), source_tests=tuple(tests))
    return BaseFile(text, SOURCE, "the source's file as found (not the recorded base, and it lacks tests "
                    "the derivation drops)", actual)


def describe(base, spec, recorded):
    """Lines saying what ``base`` is and how it differs from the known derived base and the real file."""
    lines = [f"{base.how}: {base.lines} lines, blob {base.blob[:12]}, {len(base.tests)} tests"]
    if base.kind == DERIVED:
        lines.append(f"dropped: {', '.join(base.dropped)}")
        known = spec.get("blob")
        if known and blob_matches(known, base.blob):
            lines.append(f"this is the known derived base (blob {known[:12]}, {spec.get('lines')} lines)")
        elif known:
            lines.append(f"differs from the known derived base {known[:12]} ({spec.get('lines')} lines): the "
                         "source is not the recorded upstream file, its other changes are kept")
    if recorded and blob_matches(recorded, base.blob):
        lines.append(f"this is the recorded real base (blob {recorded})")
    elif recorded:
        known_diff = spec.get("differs_from_real") if spec else None
        lines.append(f"not the real base (blob {recorded})" + (f": {known_diff}" if known_diff else ""))
    return lines
