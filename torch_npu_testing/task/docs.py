# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""``docs``: is an API in Ascend's native-API docs for each torch version the branches ship? (资料补齐检查)

    python -m torch_npu_testing docs API --ascend DIR [--branches REF ...] [--write] [--json PATH]

Which torch versions a branch ships: the non-comment lines of ``version.txt`` at that ref, each cut to
its ``X.Y.Z`` (``2.7.1.post9`` -> 2.7.1; master lists 2.15.0, 2.14.0, 2.13.0). Branch names are taken as a
contributor types them (``v2.7.1`` -> ``origin/v2.7.1`` on a normal clone; :func:`.gitrefs.resolve_branch`).
Ascend keeps the docs of every version on master only, so they are read from master (``master``, else
``origin/master``) through git, whatever is checked out: ``docs/zh/api/native_api/pytorch_<X-Y-Z>/*.md`` and
the version-independent private table ``docs/zh/api/native_api/private_apis.md``. Only ``--write`` needs
master checked out (it edits the work tree, and refuses otherwise, saying so).

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

    {"format": "torch_npu_testing.docs/1", "api": NAME, "docs_dir": PATH, "docs_from": "master (abc1234)",
     "docs_commit": SHA, "written": [PATH...],
     "versions": [{"branch", "commit", "torch_version", "folder", "listed", "file", "line", "private",
                   "entry", "target_file", "insert_after_line", "note"}]}
"""
import os
import re
import sys

from ..common.errors import UsageError
from ..common import gitutil
from ..common.toolspython import require_torch
from . import apiname, gitrefs, jsonfile, locate
from .docs_entries import heading_entry, method_entry, private_entry
from .docs_reader import DOCS, PRIVATE, Page, tree_at, unescape

FORMAT = "torch_npu_testing.docs/1"


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


def common_prefix(a, b):
    count = 0
    for x, y in zip(a.split("."), b.split(".")):
        if x != y:
            break
        count += 1
    return count


# --------------------------------------------------------------------------- checking one version
def api_kind(api):
    """The API's kind in this interpreter's torch (class headings, attribute entries); UsageError when it does
    not resolve there: docs never proposes an entry for an API that does not exist."""
    row = locate.probe_here(api)
    if not row.get("found"):
        raise UsageError(f"{api} does not resolve in torch {row.get('torch')} here: {row.get('error') or 'not found'} "
                         f"(check the name; `locate {api} --tox` probes every branch torch)")
    return row.get("kind")


def check_version(tree, api, version, private, kind, private_page):
    folder = f"{DOCS}/pytorch_{version.replace('.', '-')}"
    result = {"torch_version": version, "folder": folder, "listed": False, "file": None, "line": None,
              "private": private, "entry": None, "target_file": None, "insert_after_line": None, "note": None,
              "_insert": None}
    if private_page is not None and api in private_page.entries_private:
        result.update(listed=True, file=private_page.rel, line=private_page.entries_private[api] + 1)
        return result
    if not tree.has_folder(folder):
        result["folder"] = None
        result["note"] = f"no {folder}/ in the docs: Ascend has no native-API list for torch {version} yet"
        if not (private and private_page is not None):
            return result
    folder_pages = tree.pages(folder) if result["folder"] else []
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


def load_private(tree):
    if PRIVATE not in tree.files:
        return None
    page = Page(PRIVATE, gitrefs.show(tree.root, tree.commit, PRIVATE) or "")
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


def check_writable(root, docs_ref, docs_commit):
    """``--write`` edits the docs in the work tree: it must be a checkout of master (HEAD at its commit)."""
    head = gitrefs.resolve_commit(root, "HEAD")
    if head != docs_commit:
        raise UsageError(f"--write edits the docs in the work tree of {root}: check out master first (HEAD is "
                         f"{(head or 'no commit')[:7]}, {docs_ref} is {docs_commit[:7]}; without --write the docs "
                         "are read from master through git)")


def write(root, texts):
    dirty = gitutil.uncommitted_changes(root, *sorted(texts))
    if dirty:
        raise UsageError(f"refusing to write: uncommitted changes in {dirty[0].strip()} (commit or stash them first)")
    for rel, text in texts.items():
        jsonfile.write_text_atomic(os.path.join(root, rel), text)
    return sorted(texts)


def render(doc):
    lines = [f"### docs `{doc['api']}`", "", f"Docs read from `{doc['docs_from']}` through git.", "",
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
    parser.add_argument("--ascend", metavar="DIR", required=True,
                        help="an Ascend/pytorch git checkout, any branch checked out (docs are read from master)")
    parser.add_argument("--branches", nargs="+", metavar="REF",
                        help="refs whose torch versions to check (default: HEAD)")
    parser.add_argument("--write", action="store_true",
                        help="add the missing entries to the docs in DIR's work tree (needs master checked out)")
    parser.add_argument("--json", metavar="PATH", help=f"also write the {FORMAT} document")


def main(args):
    parts = apiname.parse(args.api)
    jsonfile.check_json_target(args.json)
    require_torch("docs")
    kind = api_kind(args.api)
    root = gitrefs.check_ascend(args.ascend)
    refs = [gitrefs.resolve_branch(root, ref) for ref in (args.branches or ["HEAD"])]
    docs_ref, docs_commit = gitrefs.master_ref(root)
    tree = tree_at(root, docs_commit)
    if not tree.files:
        raise UsageError(f"{docs_ref} ({docs_commit[:7]}) of {root} has no {DOCS}/ (Ascend keeps these docs on "
                         "master)")
    if args.write:
        check_writable(root, docs_ref, docs_commit)
    private = apiname.underscore_reason(parts) is not None
    private_page = load_private(tree)
    versions, checked = [], {}  # a torch version shipped by several refs is checked once
    for ref, commit in refs:
        for version in torch_versions(root, commit):
            if version not in checked:
                checked[version] = check_version(tree, args.api, version, private, kind, private_page)
            versions.append(dict(checked[version], branch=ref, commit=commit))
    texts = planned_texts(versions)
    written = write(root, texts) if args.write and texts else []
    doc = {"format": FORMAT, "api": args.api, "docs_dir": os.path.join(root, DOCS),
           "docs_from": f"{docs_ref} ({docs_commit[:7]})", "docs_commit": docs_commit, "written": written,
           "versions": [{key: value for key, value in v.items() if not key.startswith("_")} for v in versions]}
    print(render(doc))
    jsonfile.write_json(args.json, doc)
    sys.stdout.flush()
    return 0
