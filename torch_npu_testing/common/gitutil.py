# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""The few git commands the kit's tools need (upstream patches, export), run so they cannot surprise us.

- ``git apply`` run inside a directory that sits below some *other* repository applies paths relative
  to that repository's top and silently skips the rest. Every command here therefore runs, unless a
  caller asks otherwise (``confine=False``), with ``GIT_CEILING_DIRECTORIES`` set to the parent of its
  working directory: git sees the directory's own ``.git`` (a real PyTorch checkout) and nothing above it.
- ``git apply`` only ever runs in scratch copies (never ``patch -f``, never in the user's tree), with
  ``--whitespace=nowarn`` so a user's ``apply.whitespace`` setting cannot change the outcome.
- ``git diff --no-index --no-prefix --full-index`` over ``a/<path>`` and ``b/<path>`` copies yields a
  patch with the usual ``a/`` ``b/`` paths and full blob ids in its ``index`` line.
"""
import os
import shutil
import subprocess

from .errors import UsageError


class GitResult:
    """Outcome of one git command: ``ok``, ``returncode``, ``stdout``, ``stderr``, ``first_error``."""

    def __init__(self, completed):
        self.returncode = completed.returncode
        self.stdout = completed.stdout
        self.stderr = completed.stderr
        self.ok = completed.returncode == 0

    @property
    def first_error(self):
        for line in (self.stderr or "").splitlines():
            line = line.strip()
            if line:
                return line
        return f"git exited with status {self.returncode}"


def git_executable():
    git = shutil.which("git")
    if git is None:
        raise UsageError("git is required by this command but was not found (install git and put it on PATH)")
    return git


def _env(cwd, confine):
    env = dict(os.environ)
    if confine:
        env["GIT_CEILING_DIRECTORIES"] = os.path.dirname(os.path.realpath(cwd))
    env.pop("GIT_DIR", None)
    env.pop("GIT_WORK_TREE", None)
    env.pop("GIT_INDEX_FILE", None)
    env["GIT_TERMINAL_PROMPT"] = "0"
    env["LC_ALL"] = "C"
    return env


def _run(args, cwd, confine, **io):
    return subprocess.run([git_executable(), "-c", "core.quotepath=off", "-c", "color.ui=false", *args],
                          check=False, cwd=str(cwd), env=_env(cwd, confine), capture_output=True, **io)


def run_git(args, cwd, input_text=None, confine=True):
    """Run ``git <args>`` in ``cwd``; never raises on failure.

    ``confine`` (the default) keeps git from seeing any repository above ``cwd`` (module docstring);
    ``confine=False`` lets it find the enclosing work tree, to tell "inside a repository" from "not one".
    """
    return GitResult(_run(args, cwd, confine, input=input_text, text=True, encoding="utf-8",
                          errors="surrogateescape"))


def run_git_bytes(args, cwd, input_bytes=None, confine=True):
    """:func:`run_git` for byte streams (``git cat-file --batch``): the ``CompletedProcess``, stdout as bytes."""
    return _run(args, cwd, confine, input=input_bytes)


def hash_object(path):
    """The git blob id of a file's bytes, exactly as ``git hash-object --no-filters`` computes it."""
    path = os.path.abspath(str(path))
    result = run_git(["hash-object", "--no-filters", "--", path], cwd=os.path.dirname(path))
    if not result.ok:
        raise UsageError(f"git hash-object failed for {path}: {result.first_error}")
    return result.stdout.strip()


def apply_check(patch_path, cwd, reverse=False):
    """``git apply --check`` (``-R`` when ``reverse``) of ``patch_path`` against the files in ``cwd``."""
    args = ["apply", "--check", "--whitespace=nowarn"]
    if reverse:
        args.append("-R")
    return run_git(args + [os.path.abspath(str(patch_path))], cwd=cwd)


def apply(patch_path, cwd, reverse=False):
    """``git apply`` in a scratch directory ``cwd``; callers check first, so failure is an internal error."""
    args = ["apply", "--whitespace=nowarn"]
    if reverse:
        args.append("-R")
    return run_git(args + [os.path.abspath(str(patch_path))], cwd=cwd)


def is_corrupt(result):
    """True when git rejected the patch text itself rather than failing to match the files."""
    text = (result.stderr or "").lower()
    return any(marker in text for marker in (
        "corrupt patch", "no valid patches", "patch fragment without header", "unrecognized input",
        "patch with only garbage", "git diff header lacks filename"))


def is_repository_root(directory):
    """True when ``directory`` is the top of a git working tree (has its own ``.git`` dir or file)."""
    if not os.path.exists(os.path.join(str(directory), ".git")):
        return False
    result = run_git(["rev-parse", "--show-toplevel"], cwd=directory)
    return result.ok and os.path.realpath(result.stdout.strip()) == os.path.realpath(str(directory))


def uncommitted_changes(directory, *relative_paths):
    """``git status --porcelain`` lines (modified, staged, untracked, deleted) for paths of the repository
    rooted at ``directory``."""
    result = run_git(["status", "--porcelain", "--untracked-files=all", "--", *relative_paths], cwd=directory)
    if not result.ok:
        raise UsageError(f"git status failed in {directory}: {result.first_error}")
    return [line for line in result.stdout.splitlines() if line.strip()]


def head_commit_and_tag(directory):
    """``(commit, tag)`` of the checkout's HEAD; tag is the exact tag on HEAD or None; (None, None) if no repo."""
    if not is_repository_root(directory):
        return None, None
    commit = run_git(["rev-parse", "HEAD"], cwd=directory)
    if not commit.ok:
        return None, None
    tag = run_git(["describe", "--tags", "--exact-match", "HEAD"], cwd=directory)
    return commit.stdout.strip(), (tag.stdout.strip() if tag.ok else None)


def diff_files(workdir, relative_path):
    """Unified diff of ``workdir/a/<path>`` -> ``workdir/b/<path>`` with ``a/`` ``b/`` names and full ids.

    Returns the patch text ('' when the two files are identical).
    """
    old = f"a/{relative_path}"
    new = f"b/{relative_path}"
    result = run_git(["diff", "--no-index", "--no-prefix", "--full-index", "--no-ext-diff", "--no-color",
                      "--no-renames", "--", old, new], cwd=workdir)
    if result.returncode not in (0, 1):
        raise UsageError(f"git diff failed for {relative_path}: {result.first_error}")
    return result.stdout
