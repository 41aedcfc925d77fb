# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""``search``: do existing tests of Ascend/pytorch (and PyTorch) already call an API? (社区用例检索与新增必要性)

    python -m torch_npu_testing search API --ascend DIR [--pytorch DIR] [--branches REF ...]
                                           [--alias NAME ...] [--paths test] [--json PATH]

Each ref (branch, tag or commit id; default: the checkout's HEAD) is searched in its committed tree:
``git grep -l -w -F`` on the ref finds the candidate files under ``--paths`` (default ``test``), without
checking anything out; each candidate ``.py`` file is then read at that ref and its AST tells which test
functions call the API (:mod:`torch_npu_testing.task.callfinder`). The printed ``git -C DIR grep ...``
commands rerun the text step exactly.

Names searched: the API, ``--alias`` names, and, when torch is importable here, its re-exports (the
same object bound under another dotted name, e.g. ``torch.set_grad_enabled.clone``, from
``locate_probe.aliases``). Without torch only the API and ``--alias`` names are searched (said in the
output).

JSON (``--json PATH``)::

    {"format": "torch_npu_testing.search/1", "api": NAME, "aliases": [...], "aliases_from": "torch 2.13.0",
     "repos": [{"role": "ascend"|"pytorch", "dir": PATH,
                "branches": [{"ref", "commit", "command", "commands": [...], "hits": [{"path", "class", "test",
                              "line", "kind": "direct"|"mention", "why"}], "direct": N, "related": N,
                              "unparsable": [PATH...],
                              "summary": "0 tests call X directly on v2.7.1 (bacce7d), 3 related tests"}]}]}
"""
import shlex
import sys

from ..common.errors import UsageError
from ..common import gitutil
from . import apiname, callfinder, gitrefs, locate, output

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


def summary_line(api, ref, commit, direct, related):
    verb = "test calls" if direct == 1 else "tests call"
    noun = "related test" if related == 1 else "related tests"
    return f"{direct} {verb} {api} directly on {ref} ({commit[:7]}), {related} {noun}"


def search_ref(directory, ref, commit, api, names, paths):
    groups = grep_groups(names)
    files, commands = candidates(directory, ref, groups, paths)
    texts = gitrefs.read_blobs(directory, commit, files)
    owners = {apiname.parent(name.split(".")) for name in names}
    hits, unparsable = [], []
    for path in files:
        try:
            hits += callfinder.find_tests(texts.get(path, ""), path, names, owners)
        except (SyntaxError, ValueError):
            unparsable.append(path)
    hits.sort(key=lambda hit: (hit["kind"] != "direct", hit["path"], hit["line"]))
    direct = sum(1 for hit in hits if hit["kind"] == "direct")
    related = len(hits) - direct
    return {"ref": ref, "commit": commit, "command": commands[0] if len(commands) == 1 else " ; ".join(commands),
            "commands": commands, "hits": hits, "direct": direct, "related": related, "unparsable": unparsable,
            "candidates": len(files), "summary": summary_line(api, ref, commit, direct, related)}


def render(doc):
    lines = [f"### search `{doc['api']}`", ""]
    names = [doc["api"]] + doc["aliases"]
    lines.append("Names searched: " + ", ".join(f"`{name}`" for name in names) + f" ({doc['aliases_from']})")
    for repo in doc["repos"]:
        for branch in repo["branches"]:
            lines += ["", f"#### {repo['role']} `{branch['ref']}` ({branch['commit']})", "", "```"]
            lines += branch["commands"]
            lines += ["```", f"{branch['candidates']} candidate files, AST-checked at {branch['commit'][:7]}."]
            for hit in branch["hits"]:
                kind = "direct call" if hit["kind"] == "direct" else f"mention only ({hit['why']})"
                lines.append(f"- `{callfinder.test_id(hit)}` (line {hit['line']}): {kind}")
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
    output.check_json_target(args.json)
    repos = [("ascend", gitrefs.check_ascend(args.ascend), args.branches or ["HEAD"])]
    if args.pytorch:
        repos.append(("pytorch", gitrefs.check_pytorch(args.pytorch), args.pytorch_branches or ["HEAD"]))
    resolved = [(role, directory, [(ref, gitrefs.commit_of(directory, ref)) for ref in refs])
                for role, directory, refs in repos]
    aliases, where = resolve_aliases(args.api)
    aliases += [alias for alias in args.alias if alias not in aliases and alias != args.api]
    names = [args.api] + aliases
    doc = {"format": FORMAT, "api": args.api, "aliases": aliases, "aliases_from": where, "repos": []}
    for role, directory, refs in resolved:
        doc["repos"].append({"role": role, "dir": directory, "branches": [
            search_ref(directory, ref, commit, args.api, names, args.paths) for ref, commit in refs]})
    print(render(doc))
    output.write_json(args.json, doc)
    sys.stdout.flush()
    return 0
