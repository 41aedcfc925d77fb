# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""``search``: do existing tests of Ascend/pytorch (and PyTorch) already call an API? (社区用例检索与新增必要性)

    python -m torch_npu_testing search API --ascend DIR [--pytorch DIR] [--branches REF ...]
                                           [--alias NAME ...] [--paths test] [--json PATH]

Each ref (default: the checkout's HEAD) is searched in its committed tree. A branch name is taken as a
contributor types it (``v2.7.1``: the local branch, else the single ``origin/v2.7.1``;
:func:`torch_npu_testing.task.gitrefs.resolve_branch`); tags and commit ids work too. The output names the
ref and commit used.
``git grep -l -w -F`` on the ref finds the candidate files under ``--paths`` (default ``test``), without
checking anything out; each candidate ``.py`` file is then read at that ref and its AST tells which test
functions call the API (:mod:`torch_npu_testing.task.callfinder`): directly, by the method or in-place form
of an op (``x.movedim(...)``, ``x.addcmul_(...)``), or through the file's own helper functions and methods,
followed :data:`callfinder.MAX_DEPTH` levels deep (each such hit names the helpers and the line of the call).
The printed ``git -C DIR grep ...`` commands rerun the text step exactly. A file two refs share (same blob)
is parsed once; eight or more files are parsed in a pool of processes.

Names searched (:mod:`.opnames`, from this interpreter's torch, which ``search`` needs: without torch it
is one line naming the kit env to run it with, exit 2): the API, its re-exports
(``torch.set_grad_enabled.clone``, as ``locate`` finds them), its name in its defining module
(``torch._functorch.eager_transforms.jacrev`` for ``torch.func.jacrev``) and ``functorch``'s wrapper, an op's
documented aliases (``torch.moveaxis`` for ``torch.movedim``), and ``--alias`` names. A name that does not
resolve here is one line, exit 2.

Related tests by owner: a test that calls the API's owner or a sibling of it (:mod:`.family`: for
``set_grad_enabled.clone`` also ``no_grad``, ``enable_grad``, ...), or anything of the private module that
owns it (``torch._functorch.aot_autograd`` for ``aot_export_module``), is ``related`` even in a file that never
names the leaf (each member's leaf is grepped on its own). ``home`` is where the new tests belong
(:mod:`.placement`): a file about the API whose tests exercise it, ranked first, else the API's own file at
Ascend's ``test/<area>/test_<name>_api.py`` convention (``"source": "convention"``); ``new`` and ``pr`` cite it.

JSON (``--json PATH``)::

    {"format": "torch_npu_testing.search/1", "api": NAME, "aliases": [...], "names": [NAME, ...],
     "methods": ["movedim", ...], "documented_aliases": [...], "module": DEFINING_MODULE,
     "aliases_from": "torch 2.13.0", "helper_depth": 3,
     "family": {"owner", "owner_kind", "from", "members": [{"name", "role": "owner"|"sibling", "names"}]},
     "repos": [{"role": "ascend"|"pytorch", "dir": PATH,
                "branches": [{"asked": "v2.7.1", "ref": "origin/v2.7.1", "commit", "command", "commands": [...],
                              "hits": [{"path", "class", "test", "line", "kind": "direct"|"mention"|"related",
                                        "why", "calls", "via": [HELPER...], "via_line": N|null}],
                              "direct": N, "related": N, "through_helpers": N, "unparsable": [PATH...],
                              "files": [{"path", "tests", "hits", "direct", "helpers", "body", "family", "owner",
                                         "named", "exercising", "eligible"}],
                              "home": {"path", "why", "source": "tests"|"convention"},
                              "summary": "0 tests call X directly on origin/v2.7.1 (bacce7d), 3 related tests; ..."}]}]}
"""
import multiprocessing
import os
import shlex
import sys
from concurrent.futures import ProcessPoolExecutor

from ..common.errors import UsageError
from ..common import gitutil
from ..common.toolspython import require_torch
from . import apiname, callfinder, family, gitrefs, jsonfile, opnames, placement

FORMAT = "torch_npu_testing.search/1"


def grep_groups(names):
    """Word groups for ``git grep --all-match``: (parent, last) of each name, just (last,) under ``torch``."""
    groups = []
    for name in names:
        parts = name.split(".")
        group = (parts[-1],) if parts[-2] == "torch" else (parts[-2], parts[-1])
        if group not in groups:
            groups.append(group)
    singles = {group for group in groups if len(group) == 1}
    return [group for group in groups if len(group) == 1 or (group[-1],) not in singles]


def grep_args(group, ref, paths):
    args = ["grep", "-l", "-w", "-F"]
    if len(group) > 1:
        args.append("--all-match")
    for word in group:
        args += ["-e", word]
    return args + [ref, "--"] + list(paths)


def candidates(directory, ref, groups, paths):
    """``(files, commands)``: the .py files any group's grep lists at ``ref``, and the commands run."""
    files, commands = [], []
    for group in groups:
        args = grep_args(group, ref, paths)
        commands.append(" ".join(["git", "-C", shlex.quote(directory)] + [shlex.quote(a) for a in args]))
        result = gitutil.run_git(args, directory)
        if result.returncode not in (0, 1):
            raise UsageError(f"git grep failed in {directory} at {ref}: {result.first_error}")
        for line in result.stdout.splitlines():
            path = line[len(ref) + 1:] if line.startswith(ref + ":") else line
            if path.endswith(".py") and path not in files:
                files.append(path)
    return files, commands


def summary_line(api, ref, commit, direct, related, home=None):
    verb = "test calls" if direct == 1 else "tests call"
    noun = "related test" if related == 1 else "related tests"
    text = f"{direct} {verb} {api} directly on {ref} ({commit[:7]}), {related} {noun}"
    if not home:
        return text
    new = " (a new file)" if home.get("source") == "convention" else ""
    return text + f"; new tests belong in {home['path']}{new}"


def family_names(doc_family):
    """``(owners, siblings, leaves)``: dotted names of the owner and of the siblings, and every member's leaf."""
    owners, siblings, leaves = set(), set(), []
    for member in doc_family["members"]:
        (owners if member["role"] == "owner" else siblings).update(member["names"])
        leaves.append(member["name"].rsplit(".", 1)[-1])
    return owners, siblings, leaves


def query_of(api_names, doc_family):
    """``(owners, siblings, owner_modules, owner_leaves)`` for :func:`callfinder.scan`: the owner class under
    all its names (the parents of the API's names) and its siblings; for an API owned by a private module,
    that module (a call of anything in it exercises the API's own module)."""
    owners, siblings, leaves = family_names(doc_family)
    owner_modules = set()
    if doc_family.get("owner_kind") == "module":
        if apiname.underscore_reason(doc_family["owner"].split(".")):
            owner_modules.add(doc_family["owner"])
        return owners, siblings, owner_modules, {module.rsplit(".", 1)[-1] for module in owner_modules}
    if owners:
        owners |= {apiname.parent(name.split(".")) for name in api_names["targets"]
                   if name.split(".")[:-1] not in (["torch"], ["torch", "Tensor"])}
    return owners, siblings, owner_modules, {leaves[0]} if owners else set()


PARALLEL_FROM = 8  # files to parse before a pool of processes pays for its start (~0.3 s each)


def _scan_one(item):
    text, path, query = item
    try:
        return callfinder.scan(text, path, *query)
    except (SyntaxError, ValueError):
        return None


def _scan_all(items):
    """:func:`callfinder.scan` of each ``(text, path, query)``, in a pool of fresh processes (spawned: this
    one has torch's threads) when there are enough files and CPUs; the biggest files are handed out first."""
    workers = min(4, os.cpu_count() or 1)
    if workers < 2 or len(items) < PARALLEL_FROM:
        return [_scan_one(item) for item in items]
    order = sorted(range(len(items)), key=lambda index: -len(items[index][0]))
    with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        results = dict(zip(order, pool.map(_scan_one, [items[index] for index in order])))
    return [results[index] for index in range(len(items))]


def scan_files(directory, commit, files, query, cache):
    """``(hits, counts, unparsable)`` of ``files`` at ``commit``; ``cache`` keeps each (blob, path)'s answer, so a
    file two refs share is parsed once."""
    entries = gitrefs.read_blob_entries(directory, commit, files)
    todo = [(blob, path) for path, (blob, _) in entries.items() if (blob, path) not in cache]
    answers = _scan_all([(entries[path][1].decode("utf-8", "replace"), path, query) for _, path in todo])
    cache.update(zip(todo, answers))
    hits, counts, unparsable = [], {}, []
    for path, (blob, _) in entries.items():
        if cache[(blob, path)] is None:
            unparsable.append(path)
            continue
        found, counts[path] = cache[(blob, path)]
        hits += [dict(hit) for hit in found]
    return hits, counts, unparsable


def search_ref(directory, ref, commit, api, api_names, paths, doc_family=None, cache=None):
    """One ref's hits, ranked files and home (``api_names``: :func:`opnames.names`)."""
    doc_family = doc_family or {"members": []}
    owners, siblings, owner_modules, owner_leaves = query_of(api_names, doc_family)
    targets = api_names["targets"]
    groups = grep_groups(targets)
    extra = [(leaf,) for leaf in family_names(doc_family)[2] + api_names["methods"]] + [(m,) for m in owner_modules]
    groups += [group for group in dict.fromkeys(extra) if group not in groups]
    files, commands = candidates(directory, ref, groups, paths)
    query = (targets, owners, siblings, api_names["methods"], owner_modules)
    hits, counts, unparsable = scan_files(directory, commit, files, query, {} if cache is None else cache)
    api_leaves = {name.rsplit(".", 1)[-1] for name in targets}
    family_leaves = set(family_names(doc_family)[2])
    ranked = placement.rank(placement.file_rows(hits, counts, owner_leaves, api_leaves, family_leaves))
    order = {item["path"]: index for index, item in enumerate(ranked)}
    kinds = {"direct": 0, "mention": 1, "related": 2}
    hits.sort(key=lambda hit: (order[hit["path"]], kinds[hit["kind"]], not set(hit["calls"]) & owner_leaves,
                               hit["line"]))
    direct = sum(1 for hit in hits if hit["kind"] == "direct")
    home = placement.home(ranked, api, api_names.get("module"),
                          lambda folder: gitrefs.exists(directory, commit, folder))
    return {"ref": ref, "commit": commit, "command": commands[0] if len(commands) == 1 else " ; ".join(commands),
            "commands": commands, "hits": hits, "direct": direct, "related": len(hits) - direct,
            "through_helpers": sum(1 for hit in hits if hit["kind"] == "direct" and hit["via"]),
            "unparsable": unparsable, "candidates": len(files), "files": ranked, "home": home,
            "summary": summary_line(api, ref, commit, direct, len(hits) - direct, home)}


def suggest_home(api, ascend, ref):
    """``(path, line)``: where the new tests of ``api`` belong on ``ref`` of the checkout ``ascend`` (a file
    about the API, else its own file at Ascend's *_api.py convention), and the line that says why."""
    directory = gitrefs.check_ascend(ascend)
    ref, commit = gitrefs.resolve_branch(directory, ref)
    branch = search_ref(directory, ref, commit, api, opnames.names(api, "new"), ["test"], family.family(api))
    home = branch["home"]
    return home["path"], f"search on {ref} ({commit[:7]}): new tests belong in {home['path']} ({home['why']})"


def render(doc):
    lines = [f"### search `{doc['api']}`", ""]
    methods = ", ".join(f"`x.{leaf}()`" for leaf in doc["methods"])
    lines.append("Names searched: " + ", ".join(f"`{name}`" for name in doc["names"]) + f" ({doc['aliases_from']})"
                 + (f"; method forms {methods}" if methods else ""))
    members = doc["family"]["members"]
    if members:
        lines.append("Related by owner and siblings: " + ", ".join(
            f"`{member['name']}` ({member['role']})" for member in members) + f" ({doc['family']['from']})")
    lines.append(f"Calls through the file's own helpers are followed {callfinder.MAX_DEPTH} levels deep.")
    for repo in doc["repos"]:
        for branch in repo["branches"]:
            asked = f" (asked: `{branch['asked']}`)" if branch.get("asked", branch["ref"]) != branch["ref"] else ""
            lines += ["", f"#### {repo['role']} `{branch['ref']}` ({branch['commit']}){asked}", "", "```"]
            lines += branch["commands"]
            lines += ["```", f"{branch['candidates']} candidate files, AST-checked at {branch['commit'][:7]}."]
            home = branch["home"]
            lines.append(f"New tests belong in `{home['path']}`: {home['why']}.")
            for hit in branch["hits"]:
                lines.append(f"- `{callfinder.hit_test_id(hit)}` (line {hit['line']}): {callfinder.hit_text(hit)}")
            for path in branch["unparsable"]:
                lines.append(f"- `{path}`: not parsable as Python 3, not checked")
            lines += ["", branch["summary"]]
    return "\n".join(lines)


def add_arguments(parser):
    parser.add_argument("api", help="dotted API name, e.g. torch.autograd.grad_mode.set_grad_enabled.clone")
    parser.add_argument("--ascend", metavar="DIR", required=True, help="an Ascend/pytorch git checkout")
    parser.add_argument("--pytorch", metavar="DIR", help="also search this PyTorch git checkout")
    parser.add_argument("--branches", nargs="+", metavar="REF", help="refs to search (default: HEAD)")
    parser.add_argument("--pytorch-branches", nargs="+", metavar="REF", help="refs of --pytorch (default: HEAD)")
    parser.add_argument("--alias", action="append", default=[], metavar="NAME", help="another dotted name to match")
    parser.add_argument("--paths", nargs="+", default=["test"], help="folders to search (default: test)")
    parser.add_argument("--json", metavar="PATH", help=f"also write the {FORMAT} document")


def main(args):
    apiname.parse(args.api)
    for alias in args.alias:
        apiname.parse(alias)
    jsonfile.check_json_target(args.json)
    require_torch("search")
    repos = [("ascend", gitrefs.check_ascend(args.ascend), args.branches or ["HEAD"])]
    if args.pytorch:
        repos.append(("pytorch", gitrefs.check_pytorch(args.pytorch), args.pytorch_branches or ["HEAD"]))
    resolved = [(role, directory, [(asked,) + gitrefs.resolve_branch(directory, asked) for asked in refs])
                for role, directory, refs in repos]
    api_names = opnames.names(args.api)
    api_names["targets"] += [alias for alias in args.alias if alias not in api_names["targets"]]
    doc_family = family.family(args.api)
    doc = {"format": FORMAT, "api": args.api, "aliases": api_names["targets"][1:], "names": api_names["targets"],
           "methods": api_names["methods"], "documented_aliases": api_names["documented_aliases"],
           "module": api_names["module"], "aliases_from": f"torch {api_names['torch']}", "family": doc_family,
           "helper_depth": callfinder.MAX_DEPTH, "repos": []}
    for role, directory, refs in resolved:
        cache = {}
        doc["repos"].append({"role": role, "dir": directory, "branches": [
            dict(search_ref(directory, ref, commit, args.api, api_names, args.paths, doc_family, cache), asked=asked)
            for asked, ref, commit in refs]})
    print(render(doc))
    jsonfile.write_json(args.json, doc)
    sys.stdout.flush()
    return 0
