# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""What ``export`` wrote, recorded: the task (branch and ``--api`` selection) that ``verify`` and ``pr`` default to.

Format :data:`FORMAT`: ``branch``, ``api_names`` (null: every API of the branch), ``ref``, ``commit``, ``dest``,
``generated_at``, ``files`` (``path``, ``kind``, ``action``, ``sha256`` of the bytes written). Two copies, both
written atomically after the files: ``DEST/.git/torch_npu_testing/export-BRANCH.json``, the last export of the
branch into that checkout (in git's own folder, so DEST's diff never holds it), and
``KIT/reports/export-BRANCH--KEY.json``, keyed by branch and selection like every other record.
"""
import datetime
import json
import os

from ..common import gitutil, recordnames
from ..common.atomic import write_text_atomic
from ..common.documents import WrongFormat, read_document
from ..common.results import sha256_of_bytes

FORMAT = "torch_npu_testing.export/1"
REPORTS = "reports"


def last_path(dest, branch):
    """``DEST/<git dir>/torch_npu_testing/export-BRANCH.json``; None when DEST's git dir cannot be found."""
    found = gitutil.run_git(["rev-parse", "--absolute-git-dir"], dest)
    if not found.ok:
        return None
    return os.path.join(found.stdout.strip(), "torch_npu_testing", recordnames.name("export", branch))


def document(plan, api_names):
    return {"format": FORMAT, "branch": plan.branch, "api_names": sorted(set(api_names)) if api_names else None,
            "ref": plan.ref, "commit": plan.commit, "dest": os.path.realpath(plan.dest),
            "generated_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "files": [{"path": t.rel_path, "kind": t.kind, "action": t.action, "sha256": sha256_of_bytes(t.content)}
                      for t in plan.targets]}


def write(plan, api_names, kit_root):
    """Write both copies; return the path of the keyed one in the kit."""
    doc = document(plan, api_names)
    text = json.dumps(doc, indent=1, ensure_ascii=False) + "\n"
    last = last_path(plan.dest, plan.branch)
    if last:
        write_text_atomic(last, text)
    keyed = os.path.join(kit_root, REPORTS, recordnames.name("export", plan.branch, api_names))
    write_text_atomic(keyed, text)
    return keyed


def read_last(dest, branch):
    """The last export of ``branch`` into ``dest`` (a dict), or None when there is none (or it is unreadable)."""
    path = last_path(dest, branch)
    if not path:
        return None
    try:
        return read_document(path, FORMAT)
    except (OSError, ValueError, WrongFormat):
        return None
