# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Reading Ascend's native-API docs: one reader for ``docs`` (is an API listed?) and ``limits`` (what does
its entry allow?).

The docs live on master only, one folder per torch version: ``docs/zh/api/native_api/pytorch_<X-Y-Z>/*.md``.
A page is read from git (:class:`DocsTree`, whatever is checked out). An *entry* is a heading
(``### torch.x``, ``### <code><i>class</i></code> torch.x``; ``\\_`` read as ``_``) or a
``> <font size="3">name()</font>`` method entry under its class's heading. An entry's own block runs from its
line to the next heading or method entry; it holds the ``**支持情况**：`` table (one row per product, ✔ or
✘) and often a ``**限制与说明**：`` note, on the same line or on the lines after it, up to ``</div>``.
"""
import functools
import re

from . import gitrefs

DOCS = "docs/zh/api/native_api"
PRIVATE = f"{DOCS}/private_apis.md"
HEADING = re.compile(r"^(#{1,6}) +(<code><i>class</i></code> +)?(\S+)\s*$")
METHOD = re.compile(r'^> <font size="3">(\S+?)(\(\))?</font>\s*$')
LINK = re.compile(r"^\*\*原生文档\*\*：\[([^\]]*)\]\(([^)]*)\)")
NOTE = "**限制与说明**："
TERM = re.compile(r"</?term>")


def unescape(text):
    return text.replace("\\_", "_")


def version_folder(version):
    """``2.13.0`` -> ``docs/zh/api/native_api/pytorch_2-13-0``."""
    return f"{DOCS}/pytorch_{version.replace('.', '-')}"


class Page:
    """One Markdown page: its lines, headings ``[(index, level, name, is_class)]`` and method entries."""

    def __init__(self, rel, text):
        self.rel = rel
        self.lines = text.split("\n")
        self.headings = []
        self.entries = {}  # full dotted name -> line index
        self.starts = []  # (index, name or None, kind, level): every heading and method line, in order
        current = None
        for index, line in enumerate(self.lines):
            heading = HEADING.match(line)
            if heading:
                name = unescape(heading.group(3))
                self.headings.append((index, len(heading.group(1)), name, bool(heading.group(2))))
                current = name if name.startswith("torch") else None
                if current:
                    self.entries.setdefault(name, index)
                self.starts.append((index, current, "heading", len(heading.group(1))))
                continue
            method = METHOD.match(line)
            if method:
                name = f"{current}.{unescape(method.group(1))}" if current else None
                if name:
                    self.entries.setdefault(name, index)
                self.starts.append((index, name, "method", None))

    def level(self, index):
        """Level (number of ``#``) of the heading at ``index``."""
        return next(level for i, level, _, _ in self.headings if i == index)

    def block_end(self, index):
        """Index of the first line after the block of the heading at ``index``."""
        level = self.level(index)
        for i, other, _, _ in self.headings:
            if i > index and other <= level:
                return i
        return len(self.lines)

    def link_after(self, index):
        for line in self.lines[index:index + 12]:
            match = LINK.match(line)
            if match:
                return match.group(1), match.group(2)
        return None

    def hardware_rows(self, index):
        """First cells of the support table after ``index``, e.g. ``<term>Atlas A2 训练系列产品</term>``."""
        return [row[0] for row in self.support_rows(index, len(self.lines))]

    def support_rows(self, start, end):
        """``[[product cell, value cell]]`` of the first table between ``start`` and ``end``."""
        rows, started = [], False
        for line in self.lines[start:end]:
            if line.startswith("| ----") or line.startswith("|----"):
                started = True
                continue
            if started:
                if not line.startswith("|"):
                    break
                rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
        return rows

    def own_blocks(self):
        """``[(name, kind, start, end)]``: each entry's own lines, up to the next heading or method entry. An entry
        is a heading of level 3 or deeper (``# torch``, ``## torch.cuda`` title pages and sections) or a method."""
        bounds = [start[0] for start in self.starts] + [len(self.lines)]
        return [(name, kind, index, bounds[number + 1])
                for number, (index, name, kind, level) in enumerate(self.starts) if name and (level or 3) >= 3]

    def note_lines(self, start, end):
        """``[(index, text)]`` of the ``**限制与说明**：`` note inside ``start:end`` (text after the colon first),
        up to ``</div>``; blank lines left out. Empty when the block has no note."""
        for index in range(start, end):
            if self.lines[index].strip().startswith(NOTE):
                found = [(index, self.lines[index].strip()[len(NOTE):].strip())]
                for other in range(index + 1, end):
                    if self.lines[other].strip() == "</div>":
                        break
                    found.append((other, self.lines[other].strip()))
                return [(i, text) for i, text in found if text]
        return []


def product_name(cell):
    """``<term>Atlas A2 训练系列产品</term>`` -> ``Atlas A2 训练系列产品``."""
    return TERM.sub("", cell).strip()


class DocsTree:
    """The native-API docs as committed at one ref (master): file list and texts, read through git."""

    def __init__(self, root, commit):
        self.root, self.commit = root, commit
        self.files = set(gitrefs.list_tree(root, commit, DOCS))
        self._pages = {}

    def has_folder(self, folder):
        return any(path.startswith(folder + "/") for path in self.files)

    def folders(self):
        """Versions that have a folder, e.g. ``["2.7.1", "2.13.0"]`` (unsorted)."""
        found = set()
        for path in self.files:
            match = re.match(re.escape(DOCS) + r"/pytorch_(\d+)-(\d+)-(\d+)/", path)
            if match:
                found.add(".".join(match.groups()))
        return sorted(found)

    def pages(self, folder):
        names = sorted(path for path in self.files if path.startswith(folder + "/") and path.endswith(".md")
                       and "/" not in path[len(folder) + 1:])
        missing = [name for name in names if name not in self._pages]
        for rel, text in gitrefs.read_blobs(self.root, self.commit, missing).items():
            self._pages[rel] = Page(rel, text)
        return [self._pages[name] for name in names if name in self._pages]


@functools.lru_cache(maxsize=None)
def tree_at(root, commit):
    """The :class:`DocsTree` of ``commit``: one per process and commit (what a commit holds never changes), so
    ``pr``, which checks every API of a branch, lists master's docs and reads each page once."""
    return DocsTree(root, commit)
