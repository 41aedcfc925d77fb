# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""The base file a patch is made against, when the source does not hold it as is: a derived base.

No reachable source holds PyTorch's ``tags/v2.12.0`` copy of test_aot_joint_with_descriptors.py, but it
can be derived exactly from a newer upstream file. The manifest's ``derived_base`` says how::

    "derived_base": {
      "from": {"repo": "pytorch/pytorch", "commit": "<sha>", "blob": "<blob of that file>"},
      "direct_tags": ["v2.12.0", "v2.11.0"],   # a checkout at one of these holds the base itself
      "drop_tests": ["test_a", ...],            # tests newer than the base, dropped by name (AST)
      "edits": [{"kind": "drop_decorator", ...}, ...],   # then these, in order (:mod:`.edits`)
      "blob": "<blob of the derived file>", "lines": 1262, "chars": 60655, "tests": 18,
      "differs_from_real": "optional: what is known about how it differs from the real base"
    }

:func:`resolve_base` picks, per patch, the base file of a PyTorch source: the source's file itself
when it is the recorded base (blob) or the checkout is at one of ``direct_tags``; else, when the file
holds every test that ``drop_tests`` and ``edits`` name, the file with those tests dropped (each test
method with its decorators and the blank lines before it, found with :mod:`ast`, not by line numbers)
and the edits applied (an edit that does not find what it names raises UsageError); else the source's
file as found (whether the patch applies is then for ``check`` to say). Whatever the way, the base is
checked by its git blob against the recorded one (:func:`verified`), never assumed.
"""
import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from ..common import gitutil
from ..common.errors import UsageError
from . import edits as base_edits, manifest
from .edits import first_line, parse as _parse, test_methods as _test_methods, test_names
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
    edits: tuple = ()
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
        start = first_line(node)
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
    edits = list(spec.get("edits") or ())
    what = f"{patch.target} in {source}"
    tests = test_names(text, what)
    named = set(names) | {edit.get("test") for edit in edits}
    if named and named <= set(tests):
        derived = base_edits.apply_all(drop_tests(text, names, what) if names else text, edits, what)
        origin = f"checkout {commit[:12]}" if commit else "the source"
        how = f"derived from {origin} (blob {actual[:12]}) by dropping {len(names)} later tests"
        how += f" and {len(edits)} edits" if edits else ""
        return BaseFile(derived, DERIVED, how, actual, dropped=tuple(names),
                        edits=tuple(base_edits.describe(edit) for edit in edits), source_tests=tuple(tests))
    return BaseFile(text, SOURCE, "the source's file as found (not the recorded base, and it lacks tests "
                    "the derivation names)", actual)


def verified(base, recorded):
    """Whether ``base`` is the recorded base by its full git blob (an abbreviated record only matches)."""
    return bool(base is not None and recorded and len(recorded) == 40 and recorded.lower() == base.blob)


def describe(base, spec, recorded):
    """Lines saying what ``base`` is, how it was derived, and whether its blob is the recorded base's."""
    lines = [f"{base.how}: {base.lines} lines, {len(base.text)} characters, blob {base.blob}, "
             f"{len(base.tests)} tests"]
    if base.kind == DERIVED:
        lines.append(f"dropped: {', '.join(base.dropped)}")
        lines += [f"edit: {edit}" for edit in base.edits]
        known = spec.get("blob")
        if known and not blob_matches(known, base.blob):
            lines.append(f"differs from the known derived base {known[:12]} ({spec.get('lines')} lines): the "
                         "source is not the recorded upstream file, its other changes are kept")
    if verified(base, recorded):
        lines.append(f"blob verified: this is the recorded real base {recorded}")
    elif recorded and blob_matches(recorded, base.blob):
        lines.append(f"this is the recorded base {recorded} (an abbreviated id: record the full blob to verify it)")
    elif recorded:
        known_diff = spec.get("differs_from_real") if spec else None
        lines.append(f"NOT the recorded base {recorded}" + (f": {known_diff}" if known_diff else ""))
    return lines
