# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""``docs``: is an API in Ascend's native-API docs for each torch version the branches ship? (资料补齐检查)

    python -m torch_npu_testing docs API --ascend DIR [--branches REF ...] [--write] [--json PATH]

Which torch versions a branch ships: the non-comment lines of ``version.txt`` at that ref, each cut to
its ``X.Y.Z`` (``2.7.1.post9`` -> 2.7.1; master lists 2.15.0, 2.14.0, 2.13.0). Ascend keeps the docs
of every version on master only, so they are read from DIR's work tree (which ``--write`` edits):
``docs/zh/api/native_api/pytorch_<X-Y-Z>/*.md`` and the version-independent private table
``docs/zh/api/native_api/private_apis.md``.

An API is *listed* when it is a heading there (``### torch.x`` or ``### <code><i>class</i></code> torch.x``;
``\\_`` read as ``_``), a ``> <font size="3">name()</font>`` entry under its class's heading, or the first
cell of a row of the private table. A missing entry is printed in the form of its neighbours:

- private (an underscore in the name; the private table covers every version, also one without a
  folder): a row appended to the table of the ``## <module>`` section of
  ``private_apis.md`` with the longest matching prefix, values left as ``TODO(...)``;
- a method or attribute of a listed class: a ``> <font size="3">name()</font>`` entry at the end of the
  class's block;
- otherwise: a heading after the block of the heading sharing the longest dotted prefix.

New entries copy the ``原生文档`` link form and the hardware rows of the ``支持情况`` table of the neighbour
they follow; the support values are ``TODO(✔/✘)`` for the contributor. ``--write`` refuses when a target
file has uncommitted changes, builds every file's new text first and writes each atomically.

JSON (``--json PATH``)::

    {"format": "torch_npu_testing.docs/1", "api": NAME, "docs_dir": PATH, "written": [PATH...],
     "versions": [{"branch", "commit", "torch_version", "folder", "listed", "file", "line", "private",
                   "entry", "target_file", "insert_after_line", "note"}]}
"""
import os
import re
import sys

from ..common.errors import UsageError
from ..common import gitutil
from . import apiname, gitrefs, locate, output

FORMAT = "torch_npu_testing.docs/1"
DOCS = "docs/zh/api/native_api"
PRIVATE = f"{DOCS}/private_apis.md"
CLASS_TAG = "<code><i>class</i></code> "
HEADING = re.compile(r"^(#{1,6}) +(<code><i>class</i></code> +)?(\S+)\s*$")
METHOD = re.compile(r'^> <font size="3">(\S+?)(\(\))?</font>\s*$')
LINK = re.compile(r"^\*\*原生文档\*\*：\[([^\]]*)\]\(([^)]*)\)")
TODO_MARK = "TODO(✔/✘)"


def unescape(text):
    return text.replace("\\_", "_")


def escape_name(name):
    return name.replace("_", "\\_") if name.startswith("_") else name


def torch_versions(directory, ref):
    text = gitrefs.show(directory, ref, "version.txt")
    if text is None:
        raise UsageError(f"{ref}: no version.txt at that ref in {directory} (cannot tell its torch version)")
    versions = []
    for line in text.splitlines():
        match = re.match(r"^\s*(\d+\.\d+\.\d+)", line)
        if match and not line.lstrip().startswith("#") and match.group(1) not in versions:
            versions.append(match.group(1))
    if not versions:
        raise UsageError(f"{ref}: version.txt names no X.Y.Z version")
    return versions


# --------------------------------------------------------------------------- reading a docs page
class Page:
    """One Markdown page: its lines, headings ``[(index, level, name, is_class)]`` and method entries."""

    def __init__(self, root, rel):
        self.rel = rel
        with open(os.path.join(root, rel), encoding="utf-8") as handle:
            self.lines = handle.read().split("\n")
        self.headings = []
        self.entries = {}  # full dotted name -> line index
        current = None
        for index, line in enumerate(self.lines):
            heading = HEADING.match(line)
            if heading:
                name = unescape(heading.group(3))
                self.headings.append((index, len(heading.group(1)), name, bool(heading.group(2))))
                current = name if name.startswith("torch") else None
                if current:
                    self.entries.setdefault(name, index)
                continue
            method = METHOD.match(line)
            if method and current:
                self.entries.setdefault(f"{current}.{unescape(method.group(1))}", index)

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
        rows, started = [], False
        for line in self.lines[index:]:
            if line.startswith("| ----") or line.startswith("|----"):
                started = True
                continue
            if started:
                if not line.startswith("|"):
                    break
                rows.append(line.strip("|").split("|")[0].strip())
        return rows


def pages(root, folder):
    base = os.path.join(root, folder)
    return [Page(root, f"{folder}/{name}") for name in sorted(os.listdir(base)) if name.endswith(".md")]


def common_prefix(a, b):
    count = 0
    for x, y in zip(a.split("."), b.split(".")):
        if x != y:
            break
        count += 1
    return count


# --------------------------------------------------------------------------- building entries
def support_block(link_text, url, rows):
    lines = ["<div style=\"margin-left: 2em\">", "", f"**原生文档**：[{link_text}]({url})", "", "**支持情况**：", "",
             "| 硬件 | 是否支持 |", "| ---- | :----: |"]
    lines += [f"| {row} | {TODO_MARK} |" for row in rows] + [""]
    return lines


def replace_name(link, old, new):
    text, url = link
    old_last, new_last = old.rsplit(".", 1)[-1], new.rsplit(".", 1)[-1]
    pattern = re.compile(r"(?<![A-Za-z0-9_])" + re.escape(old) + r"(?![A-Za-z0-9_])")
    if pattern.search(url):
        return pattern.sub(new, text), pattern.sub(new, url)
    pattern = re.compile(r"(?<=\.)" + re.escape(old_last) + r"(?![A-Za-z0-9_])")
    if pattern.search(url):
        return pattern.sub(new_last, text), pattern.sub(new_last, url)
    return None


def method_entry(page, class_index, api, kind):
    """(insert_before_index, lines) for a method/attribute entry at the end of the class block."""
    end = page.block_end(class_index)
    closing = max([i for i in range(class_index, end) if page.lines[i].strip() == "</div>"], default=end)
    parent = api.rsplit(".", 1)[0]
    siblings = [(index, name) for name, index in page.entries.items()
                if name.startswith(parent + ".") and class_index < index < end]
    link = None
    rows = page.hardware_rows(class_index)
    if siblings:
        index, name = siblings[-1]
        found = page.link_after(index)
        link = found and replace_name(found, name, api)
        rows = page.hardware_rows(index) or rows
    if not link:
        text, url = page.link_after(class_index) or (parent, "")
        link = (api, f"{url.split('#')[0]}#{api}")
    last = escape_name(api.rsplit(".", 1)[-1])
    label = last if kind == "attribute" else f"{last}()"
    lines = [f'> <font size="3">{label}</font>', ""] + support_block(link[0], link[1], rows) + ["</div>", ""]
    return closing, lines


def heading_entry(page, anchor_index, anchor_name, api, kind, version):
    level = page.level(anchor_index)
    found = page.link_after(anchor_index)
    link = found and replace_name(found, anchor_name, api)
    if not link:
        site = found and re.match(r"https?://[^/]+/docs/[^/]+/", found[1])
        base = site.group(0) if site else f"https://pytorch.org/docs/{'.'.join(version.split('.')[:2])}/"
        link = (api, f"{base}generated/{api}.html")
    tag = CLASS_TAG if kind == "class" and any(is_class for _, _, _, is_class in page.headings) else ""
    lines = [f"{'#' * level} {tag}{api}", ""] + support_block(link[0], link[1], page.hardware_rows(anchor_index))
    lines += ["</div>", ""]
    return page.block_end(anchor_index), lines


def private_entry(page, api):
    """(insert_before_index, lines) for a row of the private table section with the longest prefix."""
    best = None
    for index, level, name, _ in page.headings:
        if level == 2 and (api == name or api.startswith(name + ".")):
            if best is None or len(name) > len(best[1]):
                best = (index, name)
    if best is None:
        raise UsageError(f"{page.rel}: no '## torch...' section to hold {api}")
    end = page.block_end(best[0])
    rows = [i for i in range(best[0], end) if page.lines[i].startswith("|")]
    if not rows:
        raise UsageError(f"{page.rel}: section '## {best[1]}' has no table to add {api} to")
    header, last_row = rows[0], rows[-1]
    columns = [cell for cell in page.lines[header].strip().strip("|").split("|")]
    cells = [api] + [f"TODO({column.strip()})" for column in columns[1:]]
    return last_row + 1, ["|" + "|".join(cells) + "|"]


# --------------------------------------------------------------------------- checking one version
def api_kind(api):
    """kind from this interpreter's torch when importable (class headings, attribute entries), else None."""
    row = locate.probe_here_if_torch(api)
    return None if row is None else row.get("kind")


def check_version(root, api, version, private, kind, private_page):
    folder = f"{DOCS}/pytorch_{version.replace('.', '-')}"
    result = {"torch_version": version, "folder": folder, "listed": False, "file": None, "line": None,
              "private": private, "entry": None, "target_file": None, "insert_after_line": None, "note": None,
              "_insert": None}
    if private_page is not None and api in private_page.entries_private:
        result.update(listed=True, file=private_page.rel, line=private_page.entries_private[api] + 1)
        return result
    if not os.path.isdir(os.path.join(root, folder)):
        result["folder"] = None
        result["note"] = f"no {folder}/ in the docs: Ascend has no native-API list for torch {version} yet"
        if not (private and private_page is not None):
            return result
    folder_pages = pages(root, folder) if result["folder"] else []
    for page in folder_pages:
        if api in page.entries:
            result.update(listed=True, file=page.rel, line=page.entries[api] + 1)
            return result
    if private:
        if private_page is None:
            result["note"] = f"{PRIVATE} does not exist"
            return result
        before, lines = private_entry(private_page, api)
        target = private_page
    else:
        parent = api.rsplit(".", 1)[0]
        owner = [(page, page.entries[parent]) for page in folder_pages if parent in page.entries]
        if owner and kind != "module":
            target, index = owner[0]
            before, lines = method_entry(target, index, api, kind)
        else:
            best = None
            for page in folder_pages:
                for index, level, name, _ in page.headings:
                    if level >= 3 and name.startswith("torch"):
                        score = common_prefix(name, api)
                        if best is None or score >= best[0]:
                            best = (score, page, index, name)
            if best is None:
                result["note"] = f"{folder}/ has no API headings to follow"
                return result
            _, target, index, name = best
            before, lines = heading_entry(target, index, name, api, kind, version)
    result.update(entry="\n".join(lines), target_file=target.rel, insert_after_line=before,
                  _insert=(target, before, lines))
    return result


def load_private(root):
    if not os.path.isfile(os.path.join(root, PRIVATE)):
        return None
    page = Page(root, PRIVATE)
    page.entries_private = {}
    for index, line in enumerate(page.lines):
        if line.startswith("|") and not line.startswith("|--"):
            first = unescape(line.strip().strip("|").split("|")[0].strip())
            if first.startswith("torch"):
                page.entries_private.setdefault(first, index)
    return page


# --------------------------------------------------------------------------- writing
def planned_texts(results):
    """``{rel: new_text}``: every distinct insertion applied, bottom-up so indices stay valid."""
    inserts = {}
    for result in results:
        if result.get("_insert"):
            page, before, lines = result["_insert"]
            inserts.setdefault(page.rel, (page, set()))[1].add((before, tuple(lines)))
    texts = {}
    for rel, (page, edits) in inserts.items():
        lines = list(page.lines)
        for before, new in sorted(edits, reverse=True):
            lines[before:before] = list(new)
        texts[rel] = "\n".join(lines)
    return texts


def write(root, texts):
    dirty = gitutil.uncommitted_changes(root, *sorted(texts))
    if dirty:
        raise UsageError(f"refusing to write: uncommitted changes in {dirty[0].strip()} (commit or stash them first)")
    for rel, text in texts.items():
        output.write_text_atomic(os.path.join(root, rel), text)
    return sorted(texts)


def render(doc):
    lines = [f"### docs `{doc['api']}`", "", f"Docs read from `{doc['docs_dir']}` (work tree).", "",
             "| branch | torch | listed | where |", "| --- | --- | --- | --- |"]
    for version in doc["versions"]:
        if version["listed"]:
            state, where = "listed", f"`{version['file']}:{version['line']}`"
        elif version["entry"]:
            line = version["insert_after_line"] + 1
            state, where = "missing", f"add to `{version['target_file']}` before line {line}"
        else:
            state, where = "missing", version["note"] or "-"
        branch = f"{version['branch']} ({version['commit'][:7]})"
        lines.append(f"| {branch} | {version['torch_version']} | {state} | {where} |")
    shown = set()
    for version in doc["versions"]:
        key = (version["target_file"], version["entry"])
        if version["entry"] and key not in shown:
            shown.add(key)
            lines += ["", f"Entry to add to `{version['target_file']}` (torch {version['torch_version']}):", "",
                      "```markdown", version["entry"].rstrip("\n"), "```"]
    for rel in doc["written"]:
        lines += ["", f"Wrote {rel}"]
    return "\n".join(lines)


def add_arguments(parser):
    parser.add_argument("api", help="dotted API name, e.g. torch.autograd.grad_mode.set_grad_enabled.clone")
    parser.add_argument("--ascend", metavar="DIR", required=True, help="an Ascend/pytorch git checkout (on master)")
    parser.add_argument("--branches", nargs="+", metavar="REF",
                        help="refs whose torch versions to check (default: HEAD)")
    parser.add_argument("--write", action="store_true", help="add the missing entries to the docs in DIR")
    parser.add_argument("--json", metavar="PATH", help=f"also write the {FORMAT} document")


def main(args):
    parts = apiname.parse(args.api)
    output.check_json_target(args.json)
    root = gitrefs.check_ascend(args.ascend)
    refs = [(ref, gitrefs.commit_of(root, ref)) for ref in (args.branches or ["HEAD"])]
    if not os.path.isdir(os.path.join(root, DOCS)):
        raise UsageError(f"{root} has no {DOCS}/ in its work tree (Ascend keeps these docs on master: check it out)")
    private = apiname.underscore_reason(parts) is not None
    kind = api_kind(args.api)
    private_page = load_private(root)
    versions, checked = [], {}  # a torch version shipped by several refs is checked once
    for ref, commit in refs:
        for version in torch_versions(root, commit):
            if version not in checked:
                checked[version] = check_version(root, args.api, version, private, kind, private_page)
            versions.append(dict(checked[version], branch=ref, commit=commit))
    texts = planned_texts(versions)
    written = write(root, texts) if args.write and texts else []
    doc = {"format": FORMAT, "api": args.api, "docs_dir": os.path.join(root, DOCS), "written": written,
           "versions": [{key: value for key, value in v.items() if not key.startswith("_")} for v in versions]}
    print(render(doc))
    output.write_json(args.json, doc)
    sys.stdout.flush()
    return 0
