# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""What ``export`` prints: the ref and commit used, each file with what happened to it, what is left out,
warnings, the PR description to paste (written by ``pr``) and the next git commands.

The PR description is ``reports/pr-BRANCH.md`` (or ``--report PATH``); its ``.json`` twin lists the claims
no result backs (``problems``) and the SHA-256 of every file it describes: :func:`description_problems`
turns those into the reasons ``export`` exits 1 (unbacked claims, or a description of other bytes, found by
the one staleness check, :func:`torch_npu_testing.verify.stale.stale_files`). The next steps printed are
``verify`` (the files as written, run whole) and then ``pr``.
"""
import json
import os

from ..common import recordnames, table
from ..common.errors import UsageError
from ..common.results import sha256_of_bytes
from ..verify.stale import stale_files

DESCRIPTIONS_DIR = "reports"
PR_FORMAT = "torch_npu_testing.pr/1"


def description_name(branch, api_names=None):
    """``pr-v2.12.0.md`` for branch ``v2.12.0``; ``pr-v2.12.0--NAME.md`` for the task ``--api NAME``
    (:mod:`..common.recordnames`)."""
    return recordnames.name("pr", branch, api_names, ".md")


def find_description(kit_root, branch, explicit=None, api_names=None):
    """The PR description to paste: ``explicit`` (must exist) or ``KIT/reports/pr-BRANCH[--KEY].md`` of this
    task, else None (another task's description is never this one's)."""
    if explicit:
        if not os.path.isfile(explicit):
            raise UsageError(f"--report {explicit}: no such file")
        return explicit
    path = os.path.join(kit_root, DESCRIPTIONS_DIR, description_name(branch, api_names))
    return path if os.path.isfile(path) else None


def _api_options(api_names):
    return "".join(f" --api {name}" for name in api_names or ())


def description_problems(path, plan, api_names=None):
    """Why the description at ``path`` cannot be pasted as it is: unbacked claims, or stale file hashes."""
    facts_path = os.path.splitext(path)[0] + ".json"
    try:
        with open(facts_path, encoding="utf-8") as handle:
            facts = json.load(handle)
    except (OSError, ValueError) as exc:
        return [f"{facts_path} (the facts behind the description) cannot be read: {exc}"]
    if not isinstance(facts, dict) or facts.get("format") != PR_FORMAT:
        return [f"{facts_path} is not a {PR_FORMAT} document"]
    problems = [str(problem) for problem in facts.get("problems", [])]
    recorded = {entry.get("path"): entry.get("sha256") for entry in facts.get("plan", {}).get("files", [])}
    written = {target.rel_path: sha256_of_bytes(target.content) for target in plan.targets}
    for path, why in stale_files(recorded, written):
        problems.append(f"the description is stale: {path} {why} (run `python -m torch_npu_testing verify "
                        f"{plan.branch} {plan.dest}`, then `pr {plan.branch} --ascend {plan.dest}"
                        f"{_api_options(api_names)}` again)")
    return problems


def commit_title(branch, targets):
    """``[API一致性] add tests for set_grad_enabled.clone (v2.7.1)``, naming the APIs of the files written."""
    titles = [api["title"] for target in targets for api in table.apis_of_file(target.kit_path)]
    patches = [os.path.basename(t.rel_path)[:-len(".py.patch")] for t in targets if t.rel_path.endswith(".patch")]
    text = "[API一致性] add tests for " + ", ".join(dict.fromkeys(titles)) if titles else "[API一致性] update"
    if patches:
        text += f" + upstream {', '.join(patches)} patch"
    return f"{text} ({branch})"


def _file_line(target, width):
    if target.kind != "test file":
        return f"  {target.action:<{width}}  {target.rel_path}  ({target.kind}, from {target.kit_path})"
    diff = target.diff().splitlines()
    added = sum(1 for line in diff if line.startswith("+") and not line.startswith("+++"))
    deleted = sum(1 for line in diff if line.startswith("-") and not line.startswith("---"))
    renamed = ", ".join(f"{old} -> {new}" for old, new in target.renamed.items()) or "none"
    return (f"  {target.action:<{width}}  {target.rel_path}  (+{added} -{deleted}; their tests kept: "
            f"{len(target.their_ids)}; kit tests: {len(target.kit_ids)}; carried helper: {target.carried_lines} "
            f"lines; kit names renamed: {renamed})")


def describe(plan, dry_run=False, description=None, problems=(), api_names=None):
    """The lines ``export`` prints."""
    verb = "would write" if dry_run else "wrote"
    out = [f"{plan.branch} -> {plan.ref} ({plan.commit[:12]}); {verb} into {plan.dest}:"]
    width = max(len(target.action) for target in plan.targets)
    for target in plan.targets:
        out.append(_file_line(target, width))
        if target.kind == "test file":
            changed = "; ".join(f"line {n}: {text.strip()}" for n, text in target.changed_lines) or "none"
            out.append(f"  {'':<{width}}  their lines changed: {changed}")
    out.extend([f"left out on {plan.branch}:"] + [f"  {rel}: {why}" for rel, why in plan.left_out.items()]
               if plan.left_out else [])
    out.extend(["warnings:"] + [f"  {line}" for line in plan.warnings] if plan.warnings else [])
    title = commit_title(plan.branch, plan.targets)
    out += ["suggested commit title:", f"  {title}"]
    if description:
        out.append(f"pull request description to paste: {description}")
        out.extend(["the description is not backed by results yet:"] + [f"  - {p}" for p in problems]
                   if problems else [])
    else:
        out.append(f"pull request description: none found "
                   f"({DESCRIPTIONS_DIR}/{description_name(plan.branch, api_names)})")
    if not dry_run:
        out += ["next: run the files as written, whole, as Ascend CI runs them (add --stand-in-npu on a CPU box), "
                "then describe them:", f"  python -m torch_npu_testing verify {plan.branch} {plan.dest}",
                f"  python -m torch_npu_testing pr {plan.branch} --ascend {plan.dest}{_api_options(api_names)}"]
        written = [target.rel_path for target in plan.targets]
        out += ["then, in the checkout (every file of this export, changed now or by an earlier one):",
                f"  git -C {plan.dest} add {' '.join(written)}", f"  git -C {plan.dest} commit -m '{title}'"]
    return "\n".join(out)
