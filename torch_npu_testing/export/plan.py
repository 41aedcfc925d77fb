# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""The export plan: which files a branch (or an API set) gets and the exact bytes of each; nothing written.

- :func:`select`: from the one table (:mod:`..common.table`), the test files of the chosen APIs that the
  branch's torch has, what is left out and why, and the upstream patches of the branch's base
  (``upstream_patches``; none on master and v2.7.1). With ``--api``, either aot API selects the aot file
  and a patch goes with the kit file of the same upstream test (``test_x_api.py`` ~ ``test_x.py.patch``).
- :func:`plan_export`: against DEST's work tree (a checkout whose HEAD contains the branch's commit);
- :func:`plan_at_ref`: against the branch's committed tree (for ``pr``: nothing checked out needed).

Every check runs before anything is written; a refusal is one UsageError line.
"""
import datetime
import difflib
import os
import posixpath
from dataclasses import dataclass, field

from ..common import gitutil, table
from ..common.errors import UsageError
from ..task import gitrefs
from .carry import load_carried
from .checkout import check_ascend_checkout
from .disabled import DISABLED_DIR, disabled_warnings
from .kitfile import parse_kit_file
from .merge import LINE_LIMIT, long_lines, merge_into, new_file

TEST_FILE = "test file"
UPSTREAM_PATCH = "upstream patch"
CARRIED_LIMIT = 150
DEFAULT_COPYRIGHT_HOLDER = "Huawei Technologies Co., Ltd"


@dataclass
class Selection:
    branch: str
    test_files: list
    patches: list           # (kit path, Ascend path)
    left_out: dict


@dataclass
class ExportTarget:
    rel_path: str
    kit_path: str
    kind: str
    content: bytes
    before: bytes = None
    action: str = ""
    changed_lines: list = field(default_factory=list)   # (line number, text) of their lines not kept
    renamed: dict = field(default_factory=dict)
    their_ids: list = field(default_factory=list)
    kit_ids: list = field(default_factory=list)
    carried_lines: int = 0
    runner: str = None      # merged test file: the module of its runner, which the kit's TestCase base follows

    def diff(self):
        """The unified diff (``a/`` ``b/`` paths) from what is there to what export writes."""
        old = (self.before or b"").decode("utf-8", "replace").splitlines(keepends=True)
        new = self.content.decode("utf-8", "replace").splitlines(keepends=True)
        return "".join(difflib.unified_diff(old, new, "/dev/null" if self.before is None else f"a/{self.rel_path}",
                                            f"b/{self.rel_path}"))


@dataclass
class Plan:
    branch: str
    ref: str
    commit: str
    dest: str
    targets: list
    left_out: dict
    warnings: list = field(default_factory=list)
    notes: list = field(default_factory=list)


def ascend_header(year, holder=DEFAULT_COPYRIGHT_HOLDER):
    """Ascend/pytorch's BSD-3-Clause header, for a file the branch lacks."""
    return (f"# Copyright (c) {year} {holder}\n# All rights reserved.\n#\n"
            "# Licensed under the BSD 3-Clause License  (the \"License\");\n"
            "# you may not use this file except in compliance with the License.\n"
            "# You may obtain a copy of the License at\n#\n# https://opensource.org/licenses/BSD-3-Clause\n#\n"
            "# Unless required by applicable law or agreed to in writing, software\n"
            "# distributed under the License is distributed on an \"AS IS\" BASIS,\n"
            "# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.\n"
            "# See the License for the specific language governing permissions and\n"
            "# limitations under the License.\n")


def exported_patches(base_key, kit_root):
    """``[(kit path, Ascend path)]`` of the patches the kit exports for ``base_key`` (the upstream manifest
    decides); kit paths relative to ``kit_root``."""
    from ..upstream.manifest import exported_patches as manifest_patches
    folder = os.path.join(kit_root, "test_upstream")
    return [(os.path.relpath(str(path), kit_root).replace(os.sep, "/"), ascend)
            for path, ascend in manifest_patches(base_key, patches_dir=folder)]


def _patch_goes_with(ascend_path, test_files):
    stem = posixpath.basename(ascend_path)[:-len(".py.patch")]
    return any(posixpath.basename(path) == f"{stem}_api.py" for path in test_files)


def select(branch, api_names=None, kit_root="."):
    """The :class:`Selection` of ``branch`` for ``api_names`` (None: every API) from the kit at ``kit_root``.
    UsageError when refused."""
    try:
        entry = table.branch(branch)
        for name in api_names or ():
            table.api(name)
    except KeyError as exc:
        raise UsageError(exc.args[0]) from None
    if entry["maintenance"]:
        raise UsageError(f"branch {branch} is in maintenance and takes no new tests "
                         f"(export to one of {', '.join(table.branches(include_maintenance=False))})")
    names = list(dict.fromkeys(api_names)) if api_names else None
    files, left_out = table.branch_test_files(branch, names)
    base = entry["upstream_patches"]
    patches = exported_patches(base, os.path.abspath(kit_root)) if base else []
    if names:
        patches = [pair for pair in patches if _patch_goes_with(pair[1], files)]
    outside = [path for _, path in patches if not path.startswith("test/")] if branch == "master" else []
    if outside:
        raise UsageError(f"internal error: master would get paths outside test/: {', '.join(outside)}")
    if not files and not patches:
        reasons = "; ".join(f"{path}: {why}" for path, why in left_out.items())
        raise UsageError(f"nothing to export to {branch}" + (f" ({reasons})" if reasons else ""))
    return Selection(branch, files, patches, left_out)


def _read_kit(kit_root, rel):
    path = os.path.join(kit_root, rel)
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as exc:
        raise UsageError(f"the kit at {kit_root} lacks {rel} ({exc.strerror}); run from the kit or pass --kit") \
            from None


def _changed_lines(before, after):
    old, new = before.splitlines(keepends=True), after.splitlines(keepends=True)
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    return [(index + 1, old[index].rstrip("\r\n")) for tag, a1, a2, _, _ in matcher.get_opcodes()
            if tag in ("replace", "delete") for index in range(a1, a2)]


def _test_target(kit_root, rel, before, carried, header):
    kit = parse_kit_file(rel, _read_kit(kit_root, rel).decode("utf-8"))
    if before is None:
        title = ", ".join(api["name"] for api in table.apis_of_file(rel)) or rel
        merged = new_file(kit, carried, header, title)
        their_text = None
    else:
        try:
            their_text = before.decode("utf-8")
        except UnicodeDecodeError:
            raise UsageError(f"{rel} in the checkout is not UTF-8 text") from None
        merged = merge_into(kit, their_text, carried, rel)
    if merged.carried_lines > CARRIED_LIMIT:
        raise UsageError(f"{rel}: the carried helper would add {merged.carried_lines} lines (limit {CARRIED_LIMIT})")
    lost = [test for test in merged.their_ids if test not in merged.ids]
    if lost:
        raise UsageError(f"internal error: {rel} would lose their tests {', '.join(lost)}")
    target = ExportTarget(rel, rel, TEST_FILE, merged.text.encode("utf-8"), before, renamed=merged.renamed,
                          their_ids=merged.their_ids, kit_ids=merged.kit_ids, carried_lines=merged.carried_lines,
                          runner=merged.runner)
    target.changed_lines = _changed_lines(merged.theirs, merged.text) if their_text is not None else []
    if len(target.changed_lines) > 2:
        raise UsageError(f"internal error: {rel} would change {len(target.changed_lines)} of their lines (at most 2)")
    return target


def build_targets(kit_root, selection, read, year=None):
    """Targets of ``selection``; ``read(path) -> bytes or None`` gives what the branch has at a path."""
    kit_root = os.path.abspath(kit_root)
    carried = load_carried()
    header = ascend_header(year or datetime.date.today().year)
    targets = [_test_target(kit_root, rel, read(rel), carried, header) for rel in selection.test_files]
    for kit_path, ascend_path in selection.patches:
        targets.append(ExportTarget(ascend_path, kit_path, UPSTREAM_PATCH, _read_kit(kit_root, kit_path),
                                    read(ascend_path)))
    for target in targets:
        target.action = "create" if target.before is None else (
            "unchanged" if target.before == target.content else "update")
    return targets


def line_warnings(targets):
    """One warning per line of a kit block longer than Ascend's lint allows (a renamed name can lengthen one)."""
    return [f"{target.rel_path}:{number}: {length} characters in the kit's block (Ascend lints test/ at "
            f"{LINE_LIMIT}): shorten that line in the kit's file" for target in targets if target.kind == TEST_FILE
            for number, length in long_lines(target.content.decode("utf-8"))]


def _head_contains(dest, branch, ref, commit):
    head = gitutil.run_git(["rev-parse", "HEAD"], dest)
    head_commit = head.stdout.strip() if head.ok else "?"
    if head_commit != commit and not gitutil.run_git(["merge-base", "--is-ancestor", commit, "HEAD"], dest).ok:
        raise UsageError(f"{dest} has {head_commit[:12]} checked out, which does not contain {branch} "
                         f"({ref} at {commit[:12]}): run `git -C {dest} checkout {branch}` first")


def plan_export(kit_root, branch, dest, api_names=None, *, year=None):
    """The :class:`Plan` of ``export BRANCH DEST``: their files from DEST's work tree. UsageError if refused."""
    selection = select(branch, api_names, kit_root)
    dest = check_ascend_checkout(dest)
    ref, commit = gitrefs.resolve_branch(dest, branch)
    _head_contains(dest, branch, ref, commit)

    def read(rel):
        path = os.path.join(dest, rel)
        if os.path.islink(path) or (os.path.exists(path) and not os.path.isfile(path)):
            raise UsageError(f"{rel} in {dest} exists and is not a regular file")
        if not os.path.exists(path):
            return None
        with open(path, "rb") as handle:
            return handle.read()

    targets = build_targets(kit_root, selection, read, year)
    for target in targets:
        if target.kind == UPSTREAM_PATCH and target.action == "update" \
                and gitutil.uncommitted_changes(dest, target.rel_path):
            raise UsageError(f"{target.rel_path} in {dest} has uncommitted changes: commit or stash them first")
    folder = os.path.join(dest, DISABLED_DIR)
    names = sorted(os.listdir(folder)) if os.path.isdir(folder) else []
    jsons = {f"{DISABLED_DIR}/{name}": read(f"{DISABLED_DIR}/{name}") for name in names}
    return Plan(branch, ref, commit, dest, targets, selection.left_out,
                disabled_warnings(targets, jsons) + line_warnings(targets))


def plan_at_ref(kit_root, branch, ascend_dir, api_names=None, *, year=None):
    """The :class:`Plan` against the branch's committed files in ``ascend_dir`` (work tree not used)."""
    selection = select(branch, api_names, kit_root)
    ascend_dir = gitrefs.check_ascend(ascend_dir)
    ref, commit = gitrefs.resolve_branch(ascend_dir, branch)
    paths = selection.test_files + [path for _, path in selection.patches]
    read = gitrefs.read_blob_bytes(ascend_dir, commit, paths).get  # one git process; absent: None
    targets = build_targets(kit_root, selection, read, year)
    jsons = gitrefs.read_blob_bytes(ascend_dir, commit, gitrefs.list_tree(ascend_dir, commit, DISABLED_DIR))
    return Plan(branch, ref, commit, ascend_dir, targets, selection.left_out,
                disabled_warnings(targets, jsons) + line_warnings(targets))
