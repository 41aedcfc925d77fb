# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Reading committed trees of an Ascend/pytorch or PyTorch checkout without checking anything out.

``search`` and ``docs`` take any git ref (branch, tag, commit id) and read the tree at that ref: a PR
description names the commit it searched, and the user's work tree stays untouched. Every check runs
before any output: a directory that is not a git repository, a checkout of the wrong project and an
unknown ref are each one :class:`UsageError` line.
"""
import os

from ..common.errors import UsageError
from ..common import gitutil


def check_repository(directory, role):
    """The real path of ``directory`` when it is the top of a git work tree, else UsageError."""
    option = f"--{role}"
    if not directory or not os.path.isdir(directory):
        raise UsageError(f"{option} {directory}: not a directory")
    real = os.path.realpath(directory)
    top = gitutil.run_git(["rev-parse", "--show-toplevel"], real, confine=False)
    if not top.ok:
        raise UsageError(f"{option} {directory}: not a git work tree")
    if os.path.realpath(top.stdout.strip()) != real:
        raise UsageError(f"{option} {directory}: inside the git work tree {top.stdout.strip()}; give its top")
    return real


def check_ascend(directory):
    """An Ascend/pytorch checkout: its HEAD tree has ``torch_npu/__init__.py`` and ``test/``."""
    real = check_repository(directory, "ascend")
    if not (exists(real, "HEAD", "torch_npu/__init__.py") and exists(real, "HEAD", "test")):
        raise UsageError(f"--ascend {directory}: not an Ascend/pytorch checkout (HEAD has no torch_npu/__init__.py "
                         "and test/)")
    return real


def check_pytorch(directory):
    """A PyTorch checkout: its HEAD tree has ``torch/__init__.py`` and ``test/``."""
    real = check_repository(directory, "pytorch")
    if not (exists(real, "HEAD", "torch/__init__.py") and exists(real, "HEAD", "test")):
        raise UsageError(f"--pytorch {directory}: not a PyTorch checkout (HEAD has no torch/__init__.py and test/)")
    return real


def _branch_candidates(directory, name):
    """``(local, remotes)``: ``refs/heads/<name>`` if it exists, and every ``refs/remotes/<remote>/<name>``."""
    result = gitutil.run_git(["for-each-ref", "--format=%(refname)", "refs/heads", "refs/remotes"], directory)
    refs = result.stdout.splitlines() if result.ok else []
    local = f"refs/heads/{name}" if f"refs/heads/{name}" in refs else None
    remotes = [ref for ref in refs if ref.startswith("refs/remotes/") and ref.split("/", 3)[-1] == name
               and not ref.endswith("/HEAD")]
    return local, remotes


def resolve_branch(directory, name):
    """``(ref, commit)`` of a branch name as a contributor types it (``v2.7.1``) in the checkout ``directory``.

    The local branch when there is one; else the single remote-tracking branch of that name
    (``origin/v2.7.1`` on a normal clone); two or more remote-tracking candidates refuse, listing them; a
    name that is no branch may still be any other ref (tag, ``origin/x``, commit id, ``HEAD``). ``ref`` is
    the short name used (``v2.7.1`` or ``origin/v2.7.1``), ``commit`` the full commit id. UsageError
    (one line) for an unknown or ambiguous name. This is THE resolver: search, docs, pr and export use it.
    """
    if not name or name.startswith("-"):
        raise UsageError(f"unknown branch or ref {name!r} in {directory}")
    local, remotes = _branch_candidates(directory, name)
    if local:
        return name, commit_of(directory, local)
    if len(remotes) > 1:
        shown = ", ".join(ref[len("refs/remotes/"):] for ref in remotes)
        raise UsageError(f"branch {name!r} is ambiguous in {directory}: {shown} (give one of them)")
    if remotes:
        return remotes[0][len("refs/remotes/"):], commit_of(directory, remotes[0])
    commit = resolve_commit(directory, name)
    if commit is None:
        raise UsageError(f"unknown ref {name!r} in {directory} (no local or remote-tracking branch, tag or "
                         "commit of that name)")
    return name, commit


def master_ref(directory):
    """``(ref, commit)`` of Ascend's master in ``directory`` (``master`` or ``origin/master``), whatever is
    checked out: the docs and the PR template live there. UsageError when it has none."""
    try:
        return resolve_branch(directory, "master")
    except UsageError as exc:
        raise UsageError(f"{directory} has no master branch (neither local nor remote-tracking): {exc}") from None


def exists(directory, ref, path):
    return gitutil.run_git(["cat-file", "-e", f"{ref}:{path}"], directory).ok


def resolve_commit(directory, ref):
    """Full commit id of ``ref`` in ``directory``, or None when it names no commit."""
    result = gitutil.run_git(["rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}"],
                             directory)
    return result.stdout.strip() if result.ok and result.stdout.strip() else None


def commit_of(directory, ref):
    """Full commit id of ``ref`` in ``directory``, or UsageError naming the unknown ref."""
    if not ref or ref.startswith("-"):
        raise UsageError(f"unknown ref {ref!r} in {directory}")
    commit = resolve_commit(directory, ref)
    if commit is None:
        raise UsageError(f"unknown ref {ref!r} in {directory} (a branch, tag or commit id)")
    return commit


def show(directory, ref, path):
    """Text of ``path`` at ``ref`` (None when absent)."""
    result = gitutil.run_git(["show", f"{ref}:{path}"], directory)
    return result.stdout if result.ok else None


def read_blob_entries(directory, ref, paths):
    """``{path: (blob id, bytes)}`` for many files at ``ref`` through one ``git cat-file --batch``; a path that
    is not a file there is left out. The blob id lets a caller reuse work on a file two refs share."""
    if not paths:
        return {}
    request = "".join(f"{ref}:{path}\n" for path in paths).encode("utf-8", "surrogateescape")
    data = gitutil.run_git_bytes(["cat-file", "--batch"], directory, request).stdout
    blobs = {}
    position = 0
    for path in paths:
        end = data.index(b"\n", position)
        header = data[position:end].decode("utf-8", "replace").split()
        position = end + 1
        if len(header) < 3 or header[1] == "missing":
            continue
        size = int(header[2])
        if header[1] == "blob":
            blobs[path] = (header[0], data[position:position + size])
        position += size + 1
    return blobs


def read_blob_bytes(directory, ref, paths):
    """``{path: bytes}`` for many files at ``ref`` (:func:`read_blob_entries` without the blob ids)."""
    return {path: blob for path, (_, blob) in read_blob_entries(directory, ref, paths).items()}


def read_blobs(directory, ref, paths):
    """``{path: text}`` for many files at ``ref`` (:func:`read_blob_bytes`, decoded as UTF-8)."""
    return {path: blob.decode("utf-8", "replace") for path, blob in read_blob_bytes(directory, ref, paths).items()}


def list_tree(directory, ref, folder):
    """Paths of the files below ``folder`` at ``ref``."""
    result = gitutil.run_git(["ls-tree", "-r", "--name-only", ref, "--", folder], directory)
    return result.stdout.splitlines() if result.ok else []
