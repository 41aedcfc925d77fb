# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""What ``verify BRANCH DEST`` runs: the test files export writes for one task, as they are in DEST now.

The task is ``--api NAME`` (repeatable), else the selection the last export of the branch into DEST recorded
(:mod:`torch_npu_testing.export.record`); with neither, verify refuses (nothing to guess from).

The files come from export's own selection (:func:`torch_npu_testing.export.plan.select`, the one table):
a test file must be in DEST and hold the kit's block (export's marks); an upstream patch is not run here
(its evidence is ``upstream run``'s) and is listed as skipped. Each file is read once: its bytes (the
SHA-256 recorded is of them), its test ids by AST (the kit's, inside the block, and theirs), the runner
its main guard calls, and whether DEST's HEAD commit holds these very bytes.
"""
import ast
import hashlib
import os
from dataclasses import dataclass, field

from ..common import gitutil
from ..common.errors import UsageError
from ..export.checkout import check_ascend_checkout
from ..export.kitfile import is_main_guard
from ..export.merge import BEGIN_MARK, remove_block, test_ids
from ..export import record as export_record
from ..export.plan import select
from ..task import gitrefs

TORCH_NPU_RUNNER = "torch_npu"          # torch_npu.testing.testcase.run_tests: JUnit XML under IN_CI=1
COMMON_UTILS_RUNNER = "common_utils"    # torch.testing._internal.common_utils.run_tests: --save-xml DIR
CARRIED_RUNNER = "carried"            # the kit's carried run_tests (a file export creates): the device's runner
RUNNER_MODULES = {"torch_npu.testing.testcase": TORCH_NPU_RUNNER,
                  "torch.testing._internal.common_utils": COMMON_UTILS_RUNNER}


@dataclass
class VerifyFile:
    rel_path: str               # relative to DEST, e.g. test/functorch/test_x.py
    content: bytes
    kit_ids: list
    their_ids: list
    runner: str                 # TORCH_NPU_RUNNER, COMMON_UTILS_RUNNER, CARRIED_RUNNER or "unknown"
    at_head: str                # "committed at HEAD", "modified in the work tree", "not in HEAD"
    sha256: str = field(init=False)

    def __post_init__(self):
        self.sha256 = hashlib.sha256(self.content).hexdigest()

    @property
    def test_dir_name(self):
        """``functorch/test_x``: the name run_test.py takes with ``-i`` (relative to ``test/``, no ``.py``)."""
        return self.rel_path[len("test/"):-len(".py")]

    @property
    def ids(self):
        return self.their_ids + [test for test in self.kit_ids if test not in self.their_ids]


@dataclass
class VerifyPlan:
    branch: str
    dest: str
    head: str
    files: list
    patches: list               # Ascend paths of the upstream patches export writes (not run here)
    api_names: list = None      # the task (--api, else the last export's selection); None: every API
    chosen_by: str = ""         # where the selection came from, said in the output


def runner_of(tree):
    """Which runner the file's main guard calls: the module its ``run_tests`` name is imported from."""
    guards = [node for node in tree.body if is_main_guard(node)]
    called = {node.func.id for guard in guards for node in ast.walk(guard)
              if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)}
    found = "unknown"
    if any(isinstance(node, ast.FunctionDef) and node.name in called for node in tree.body):
        found = CARRIED_RUNNER
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module in RUNNER_MODULES:
            if any((alias.asname or alias.name) in called and alias.name == "run_tests" for alias in node.names):
                found = RUNNER_MODULES[node.module]
    return found


def read_file(dest, rel, head_bytes):
    """The :class:`VerifyFile` of ``rel`` in DEST; UsageError when it is missing or has no kit block."""
    path = os.path.join(dest, rel)
    if not os.path.isfile(path):
        raise UsageError(f"{rel} is not in {dest}: run `python -m torch_npu_testing export BRANCH {dest}` first")
    with open(path, "rb") as handle:
        content = handle.read()
    text = content.decode("utf-8", "replace")
    if not any(line.rstrip("\r") == BEGIN_MARK for line in text.splitlines()):
        raise UsageError(f"{rel} in {dest} has no kit block (export's begin mark): run export first")
    theirs, _ = remove_block(text, rel)
    try:
        tree, their_tree = ast.parse(text), ast.parse(theirs)
    except SyntaxError as exc:
        raise UsageError(f"{rel} in {dest} does not parse (line {exc.lineno}: {exc.msg})") from None
    their = test_ids(their_tree)
    kit = [test for test in test_ids(tree) if test not in their]
    at_head = ("not in HEAD" if head_bytes is None else
               "committed at HEAD" if head_bytes == content else "modified in the work tree")
    return VerifyFile(rel, content, kit, their, runner_of(tree), at_head)


def task_of(dest, branch, api_names):
    """``(api_names, chosen_by)``: ``--api`` as given, else the selection of the last export of ``branch`` into
    ``dest`` as export recorded it; UsageError when there is neither."""
    if api_names:
        return sorted(set(api_names)), "--api"
    last = export_record.read_last(dest, branch)
    if last is None or last.get("branch") != branch:
        raise UsageError(f"no export of {branch} into {dest} is recorded: run `python -m torch_npu_testing export "
                         f"{branch} {dest} --api NAME` first, or name the task with --api")
    return last.get("api_names"), f"the last export ({last.get('generated_at')})"


def plan_verify(kit_root, branch, dest, api_names=None):
    """The :class:`VerifyPlan` of ``verify BRANCH DEST`` for one task (``api_names``, else the last export's);
    UsageError (nothing run) when refused."""
    dest = check_ascend_checkout(dest)
    api_names, chosen_by = task_of(dest, branch, api_names)
    selection = select(branch, api_names, kit_root)
    head = gitutil.run_git(["rev-parse", "HEAD"], dest)
    if not head.ok:
        raise UsageError(f"{dest}: git rev-parse HEAD failed: {head.first_error}")
    at_head = gitrefs.read_blob_bytes(dest, "HEAD", list(selection.test_files))
    files = [read_file(dest, rel, at_head.get(rel)) for rel in selection.test_files]
    return VerifyPlan(branch, dest, head.stdout.strip(), files, [ascend for _, ascend in selection.patches],
                      api_names, chosen_by)
