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
functions call the API (:mod:`torch_npu_testing.task.callfinder`). The printed ``git -C DIR grep ...``
commands rerun the text step exactly.

Names searched: the API, ``--alias`` names, and, when torch is importable here, its re-exports (the
same object bound under another dotted name, e.g. ``torch.set_grad_enabled.clone``, from
``where_defined.aliases``). Without torch only the API and ``--alias`` names are searched (said in the
output).

Related tests by owner: a test that calls the API's owner or a sibling of it (:mod:`.family`: for
``set_grad_enabled.clone`` also ``no_grad``, ``enable_grad``, ...) is ``related`` even in a file that never
names the leaf (each member's leaf is grepped on its own). Files are ranked so the one where new tests
belong comes first (a direct caller; else the file whose tests call the owner and are named for the
family, by share of its tests); ``home`` names it, and ``new`` / ``pr`` cite it.

JSON (``--json PATH``)::

    {"format": "torch_npu_testing.search/1", "api": NAME, "aliases": [...], "aliases_from": "torch 2.13.0",
     "family": {"owner", "owner_kind", "from", "members": [{"name", "role": "owner"|"sibling", "names"}]},
     "repos": [{"role": "ascend"|"pytorch", "dir": PATH,
                "branches": [{"asked": "v2.7.1", "ref": "origin/v2.7.1", "commit", "command", "commands": [...],
                              "hits": [{"path", "class", "test", "line", "kind": "direct"|"mention"|"related",
                                        "why", "calls"}],
                              "direct": N, "related": N, "unparsable": [PATH...],
                              "files": [{"path", "tests", "hits", "direct", "named", "named_for", "calls_owner"}],
                              "home": {"path", "why"} | null,
                              "summary": "0 tests call X directly on origin/v2.7.1 (bacce7d), 3 related tests; ..."}]}]}
"""
import shlex
import sys

from ..common.errors import UsageError
from ..common import gitutil
from . import apiname, callfinder, family, gitrefs, jsonfile, locate

FORMAT = "torch_npu_testing.search/1"


def resolve_aliases(name):
    """``(aliases, where)``: re-exports from this interpreter's torch, or ``([], reason)`` without torch."""
    row = locate.probe_here_if_torch(name)
    if row is None:
        return [], "torch is not importable here: re-exports not resolved (add them with --alias)"
    if not row["found"]:
        return [], f"torch {row['torch']}: {row['error']}; re-exports not resolved"
    return list(row["aliases"]), f"torch {row['torch']}"


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
    return text + (f"; new tests belong in {home['path']}" if home else "")


def family_names(doc_family):
    """``(owners, siblings, leaves)``: dotted names of the owner and of the siblings, and every member's leaf."""
    owners, siblings, leaves = set(), set(), []
    for member in doc_family["members"]:
        (owners if member["role"] == "owner" else siblings).update(member["names"])
        leaves.append(member["name"].rsplit(".", 1)[-1])
    return owners, siblings, leaves


def rank_files(hits, counts, leaves):
    """Files with hits, best home for new tests first: a direct caller, then a file whose tests call the
    owner and are named for the family (the largest share of its tests), then by the number of hits."""
    owner_leaf = leaves[0] if leaves else None
    files = []
    for path in dict.fromkeys(hit["path"] for hit in hits):
        mine = [hit for hit in hits if hit["path"] == path]
        tests = max(counts.get(path, 0), len(mine))
        named_for = [leaf for leaf in leaves if any(leaf in hit["test"] for hit in mine)]
        named = sum(1 for hit in mine if any(leaf in hit["test"] for leaf in leaves))
        direct = sum(1 for hit in mine if hit["kind"] == "direct")
        owner = any(owner_leaf in hit.get("calls", ()) for hit in mine) or direct > 0
        files.append({"path": path, "tests": tests, "hits": len(mine), "direct": direct, "named": named,
                      "named_for": named_for, "calls_owner": owner})
    files.sort(key=lambda f: (-(f["direct"] > 0), -f["calls_owner"], -f["named"] / f["tests"],
                              -f["hits"] / f["tests"], -f["hits"], f["path"]))
    return files


def home_of(files):
    """Where new tests belong: the first ranked file, when it calls the API or its owner, else None."""
    if not files or not (files[0]["direct"] or files[0]["calls_owner"]):
        return None
    best = files[0]
    why = (f"{best['direct']} of its {best['tests']} tests call the API directly" if best["direct"] else
           f"{best['hits']} of its {best['tests']} tests call the owner or its siblings, "
           f"{best['named']} named for {', '.join(best['named_for']) or '-'}")
    return {"path": best["path"], "why": why}


def search_ref(directory, ref, commit, api, names, paths, doc_family=None):
    owners, siblings, leaves = family_names(doc_family or {"members": []})
    owners |= {apiname.parent(name.split(".")) for name in names}
    groups = grep_groups(names) + [(leaf,) for leaf in leaves if (leaf,) not in grep_groups(names)]
    files, commands = candidates(directory, ref, groups, paths)
    texts = gitrefs.read_blobs(directory, commit, files)
    hits, unparsable, counts = [], [], {}
    for path in files:
        try:
            found, counts[path] = callfinder.scan(texts.get(path, ""), path, names, owners, siblings)
        except (SyntaxError, ValueError):
            unparsable.append(path)
            continue
        hits += found
    ranked = rank_files(hits, counts, leaves)
    order = {item["path"]: index for index, item in enumerate(ranked)}
    kinds = {"direct": 0, "mention": 1, "related": 2}
    owner_leaf = leaves[0] if leaves else None
    hits.sort(key=lambda hit: (order[hit["path"]], kinds[hit["kind"]], owner_leaf not in hit.get("calls", ()),
                               hit["line"]))
    direct = sum(1 for hit in hits if hit["kind"] == "direct")
    related = len(hits) - direct
    home = home_of(ranked)
    return {"ref": ref, "commit": commit, "command": commands[0] if len(commands) == 1 else " ; ".join(commands),
            "commands": commands, "hits": hits, "direct": direct, "related": related, "unparsable": unparsable,
            "candidates": len(files), "files": ranked, "home": home,
            "summary": summary_line(api, ref, commit, direct, related, home)}


def render(doc):
    lines = [f"### search `{doc['api']}`", ""]
    names = [doc["api"]] + doc["aliases"]
    lines.append("Names searched: " + ", ".join(f"`{name}`" for name in names) + f" ({doc['aliases_from']})")
    members = doc["family"]["members"]
    if members:
        lines.append("Related by owner and siblings: " + ", ".join(
            f"`{member['name']}` ({member['role']})" for member in members) + f" ({doc['family']['from']})")
    for repo in doc["repos"]:
        for branch in repo["branches"]:
            asked = f" (asked: `{branch['asked']}`)" if branch.get("asked", branch["ref"]) != branch["ref"] else ""
            lines += ["", f"#### {repo['role']} `{branch['ref']}` ({branch['commit']}){asked}", "", "```"]
            lines += branch["commands"]
            lines += ["```", f"{branch['candidates']} candidate files, AST-checked at {branch['commit'][:7]}."]
            if branch["home"]:
                lines.append(f"New tests belong in `{branch['home']['path']}`: {branch['home']['why']}.")
            for hit in branch["hits"]:
                kind = "direct call" if hit["kind"] == "direct" else f"{hit['kind']} ({hit['why']})"
                lines.append(f"- `{callfinder.hit_test_id(hit)}` (line {hit['line']}): {kind}")
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
    repos = [("ascend", gitrefs.check_ascend(args.ascend), args.branches or ["HEAD"])]
    if args.pytorch:
        repos.append(("pytorch", gitrefs.check_pytorch(args.pytorch), args.pytorch_branches or ["HEAD"]))
    resolved = [(role, directory, [(asked,) + gitrefs.resolve_branch(directory, asked) for asked in refs])
                for role, directory, refs in repos]
    aliases, where = resolve_aliases(args.api)
    aliases += [alias for alias in args.alias if alias not in aliases and alias != args.api]
    names = [args.api] + aliases
    doc_family = family.family(args.api)
    doc = {"format": FORMAT, "api": args.api, "aliases": aliases, "aliases_from": where, "family": doc_family,
           "repos": []}
    for role, directory, refs in resolved:
        doc["repos"].append({"role": role, "dir": directory, "branches": [
            dict(search_ref(directory, ref, commit, args.api, names, args.paths, doc_family), asked=asked)
            for asked, ref, commit in refs]})
    print(render(doc))
    jsonfile.write_json(args.json, doc)
    sys.stdout.flush()
    return 0
