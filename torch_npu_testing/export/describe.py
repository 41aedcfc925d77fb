# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""What ``export`` prints after the plan: files, left-out files, notes, commit title, the PR description.

The PR description is ``pr-BRANCH.md`` written by ``python -m torch_npu_testing pr`` (default folder
``reports/`` of the kit, or ``--report PATH``). Its ``pr-BRANCH.json`` says which claims no result backs
(``problems``) and the SHA-256 of every file it describes; :func:`description_problems` turns those into
the reasons ``export`` exits 1: a description whose claims are not backed, or one made for other bytes
than the ones just exported (stale).
"""
import hashlib
import json
import os

from ..common.errors import UsageError

DESCRIPTIONS_DIR = "reports"
PR_FORMAT = "torch_npu_testing.pr/1"


def description_name(branch):
    """``pr-v2.12.0.md`` for branch ``v2.12.0`` (``/`` in a branch name becomes ``_``)."""
    return f"pr-{branch.replace('/', '_')}.md"


def find_description(kit_root, branch, explicit=None):
    """The PR description to paste: ``explicit`` (must exist) or ``KIT/reports/pr-BRANCH.md``, else None."""
    if explicit:
        if not os.path.isfile(explicit):
            raise UsageError(f"--report {explicit}: no such file")
        return explicit
    path = os.path.join(kit_root, DESCRIPTIONS_DIR, description_name(branch))
    return path if os.path.isfile(path) else None


def make_description_command(branch, dest):
    return (f"python -m torch_npu_testing pr {branch} --ascend {dest} --results .tox/results "
            f"--out {DESCRIPTIONS_DIR}")


def description_problems(path, plan):
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
    for target in plan.targets:
        digest = hashlib.sha256(target.content).hexdigest()
        if recorded.get(target.rel_path) != digest:
            problems.append(f"the description is stale: {target.rel_path} differs from what it describes "
                            f"(run `{make_description_command(plan.branch, plan.dest)}` again)")
    return problems


def commit_title(branch, rel_paths, branch_map):
    """A suggested one-line commit / PR title, e.g.

    ``[API一致性] add tests for config.patch, _add_batch_dim + upstream test_x patch (v2.12.0)``.
    """
    files = branch_map.get("files", {})

    def title(rel):
        return files.get(rel, {}).get("title") or os.path.basename(rel)

    tests = [title(rel) for rel in rel_paths if not rel.endswith(".patch")]
    patches = [title(rel) for rel in rel_paths if rel.endswith(".patch")]
    text = "[API一致性] add tests for " + ", ".join(tests) if tests else "[API一致性] add"
    if patches:
        text += f" + upstream {', '.join(patches)} patch{'es' if len(patches) > 1 else ''}"
    return f"{text} ({branch})"


def describe(plan, branch_map, dry_run=False, description=None, problems=()):
    """The lines ``export`` prints (``description``: path of the PR description or None)."""
    verb = "would write" if dry_run else "wrote"
    out = [f"{verb} branch {plan.branch} (torch {plan.torch}) into {plan.dest}"
           + (f" (checked out: {plan.checkout_branch})" if plan.checkout_branch else "") + ":"]
    width = max(len(target.action) for target in plan.targets)
    for target in plan.targets:
        out.append(f"  {target.action:<{width}}  {target.rel_path}  ({target.kind})")
    if plan.left_out:
        out.append(f"left out on {plan.branch}:")
        out.extend(f"  {rel}: {why}" for rel, why in plan.left_out.items())
    if plan.notes:
        out.append("notes:")
        out.extend(f"  {note}" for note in plan.notes)
    title = commit_title(plan.branch, [t.rel_path for t in plan.targets], branch_map)
    out.append("suggested commit title:")
    out.append(f"  {title}")
    if description:
        out.append(f"pull request description to paste: {description}")
        if problems:
            out.append("the description is not backed by results yet:")
            out.extend(f"  - {problem}" for problem in problems)
    else:
        expected = os.path.join(DESCRIPTIONS_DIR, description_name(plan.branch))
        out.append(f"pull request description: none found ({expected}); "
                   f"make it with: {make_description_command(plan.branch, plan.dest)}")
    changed = [target.rel_path for target in plan.targets if target.action != "unchanged"]
    if changed and not dry_run:
        out.append("next, in the checkout:")
        out.append(f"  git add {' '.join(changed)}")
        out.append(f"  git commit -m '{title}'")
    return "\n".join(out)
