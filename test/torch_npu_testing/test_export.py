# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Unit tests of ``python -m torch_npu_testing export`` over synthetic kits and Ascend-like checkouts.

The checkouts are real git repositories in a temporary directory. Every refusal (not a checkout, not
Ascend/pytorch, not its top level, unknown branch, uncommitted target, missing or non-exportable kit
file, missing PR description) is checked to exit 2 with one line and to leave the checkout exactly as it was.
The conversion is checked on its text (header, docstring and tests kept, kit import gone, helpers copied
by AST from the kit's own portable.py and carried/ modules, lint-clean) and once by running an exported file against a
stand-in ``torch_npu`` whose ``torch_npu.testing.testcase`` is PyTorch's TestCase, with this kit made
unimportable (a few seconds: the run imports torch).
"""
import ast
import inspect
import json
import os
import re
import subprocess
import sys
import textwrap

import pytest

from torch_npu_testing import export, portable
from torch_npu_testing.carried import device as carried_device
from torch_npu_testing.carried import testcase as carried_testcase
from torch_npu_testing.export import branchmap
from torch_npu_testing.__main__ import main as cli_main
from torch_npu_testing.common.errors import UsageError

KIT_HEADER = export.KIT_HEADER
IMPORT_LINE = "from torch_npu_testing import TestCase, run_tests, device_type, requires_api, torch_version_at_least\n"

SYNTHETIC_TEST = KIT_HEADER + '''"""Synthetic API-consistency file: exercises every kit name the exporter rewrites.

Why it exists: it proves the exported form keeps the docstring and the tests and runs without the kit.
"""
''' + IMPORT_LINE + '''
import unittest

import torch

DEVICE = device_type()


class TestSyntheticApi(TestCase):
    def test_add_matches_cpu(self):
        """torch.add on DEVICE equals the CPU result."""
        x = torch.arange(4.0)
        torch.testing.assert_close(torch.add(x.to(DEVICE), 1).cpu(), torch.add(x, 1), rtol=0, atol=0)

    def test_version_gate(self):
        """torch_version_at_least agrees with the installed release."""
        self.assertTrue(torch_version_at_least("1.0"))
        self.assertFalse(torch_version_at_least("999.0"))

    @requires_api("torch.no_such_api_for_export_tests", since="99.0")
    def test_missing_api_skips(self):
        """A missing API skips with the reason."""
        raise AssertionError("must have been skipped")

    @unittest.skipUnless(os.environ.get("EXPORT_TEST_LEAK") == "1", "leak check only when asked")
    def test_leaks_grad_mode(self):
        """Leaves grad mode changed: the carried state guard must fail it by name."""
        torch.set_grad_enabled(not torch.is_grad_enabled())


if __name__ == "__main__":
    run_tests()
'''.replace("import unittest\n", "import os\nimport unittest\n", 1)

SECOND_TEST = KIT_HEADER + '''"""Second synthetic file (test/npu): device only."""
from torch_npu_testing import TestCase, run_tests, device_type

import torch

DEVICE = device_type()


class TestSecond(TestCase):
    def test_ones(self):
        """torch.ones on DEVICE is all ones."""
        self.assertTrue(bool(torch.ones(2, device=DEVICE).eq(1).all()))


if __name__ == "__main__":
    run_tests()
'''

# Bytes a text round trip would change: CRLF, trailing spaces, no final newline, a non-UTF-8 byte.
PATCH_BYTES = (b"diff --git a/test/functorch/test_x.py b/test/functorch/test_x.py\r\n"
               b"index 0123456..89abcde 100644\n--- a/test/functorch/test_x.py\n+++ b/test/functorch/test_x.py\n"
               b"@@ -1 +1 @@\n-device = 'cuda'   \n+device = 'npu' \xff")

FILE_A = "test/functorch/test_synthetic_api.py"
FILE_B = "test/npu/test_second.py"
PATCH = "test_upstream/test/functorch/test_x.py.patch"


def branch_map(left_out=None):
    return {
        "format": export.BRANCHES_FORMAT,
        "files": {FILE_A: {"title": "synthetic api"}, FILE_B: {"title": "second"}, PATCH: {"title": "x"}},
        "branches": {
            "master": {"torch": "2.13.0", "test_files": [FILE_A, FILE_B], "upstream_patches": [PATCH],
                       "left_out": {}},
            "v2.7.1": {"torch": "2.7.1", "test_files": [FILE_B], "upstream_patches": [],
                       "left_out": left_out or {FILE_A: "absent in 2.7.1"}},
        },
    }


def write(root, rel, content):
    path = os.path.join(str(root), rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb" if isinstance(content, bytes) else "w") as handle:
        handle.write(content)
    return path


def run_git(root, *args):
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args], cwd=str(root),
                          check=True, capture_output=True, text=True).stdout


@pytest.fixture
def kit(tmp_path):
    root = tmp_path / "kit"
    write(root, FILE_A, SYNTHETIC_TEST)
    write(root, FILE_B, SECOND_TEST)
    write(root, PATCH, PATCH_BYTES)
    mapping = root / "branches.json"
    mapping.write_text(json.dumps(branch_map()))
    return root


def make_ascend(root, setup_text='from setuptools import setup\nsetup(name="torch_npu")\n', npu_pkg=True,
                test_npu=True):
    os.makedirs(str(root), exist_ok=True)
    run_git(root, "init", "-q")
    write(root, "setup.py", setup_text)
    if npu_pkg:
        write(root, "torch_npu/__init__.py", "")
    if test_npu:
        write(root, "test/npu/test_existing.py", "import torch_npu\n")
    write(root, "test/functorch/.keep", "")
    run_git(root, "add", "-A")
    run_git(root, "commit", "-q", "-m", "base")
    return root


@pytest.fixture
def ascend(tmp_path):
    return make_ascend(tmp_path / "ascend")


@pytest.fixture
def use_map(kit, monkeypatch):
    """Make the CLI read the synthetic branch map."""
    monkeypatch.setattr(branchmap, "BRANCHES_FILE", str(kit / "branches.json"))
    return kit


def snapshot(root):
    """Every file's bytes (outside .git) plus git status: what 'nothing written' is compared with."""
    files = {}
    for dirpath, dirnames, filenames in os.walk(str(root)):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for name in filenames:
            path = os.path.join(dirpath, name)
            with open(path, "rb") as handle:
                files[os.path.relpath(path, str(root))] = handle.read()
    status = None
    if os.path.isdir(os.path.join(str(root), ".git")):
        status = subprocess.run(["git", "status", "--porcelain"], cwd=str(root), capture_output=True, text=True,
                                check=False).stdout
    return files, status


def cli(argv, capsys):
    code = cli_main(["export", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def assert_refused(argv, capsys, checkout, pattern):
    before = snapshot(checkout)
    code, out, err = cli(argv, capsys)
    assert code == 2, (out, err)
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("torch_npu_testing: error: "), err
    assert re.search(pattern, lines[0]), lines[0]
    assert snapshot(checkout) == before, "a refused export changed the checkout"
    return lines[0]


# --------------------------------------------------------------------------- the happy path
def test_export_writes_branch_files_at_upstream_paths(use_map, ascend, capsys):
    code, out, err = cli(["master", str(ascend), "--kit", str(use_map), "--year", "2026"], capsys)
    assert code == 0, err
    for rel in (FILE_A, FILE_B, PATCH):
        assert os.path.isfile(os.path.join(str(ascend), rel)), rel
        assert re.search(rf"^  create\s+{re.escape(rel)}", out, re.MULTILINE), out
    assert "suggested commit title:\n  [API一致性] add tests for synthetic api, second + upstream x patch (master)" in out
    status = run_git(ascend, "status", "--porcelain", "--untracked-files=all")
    assert sorted(line[3:] for line in status.splitlines()) == sorted([FILE_A, FILE_B, PATCH])


def test_exported_patch_is_byte_identical(use_map, ascend, capsys):
    assert cli(["master", str(ascend), "--kit", str(use_map)], capsys)[0] == 0
    with open(os.path.join(str(ascend), PATCH), "rb") as handle:
        assert handle.read() == PATCH_BYTES


def test_left_out_files_are_not_exported_and_said_why(use_map, ascend, capsys):
    code, out, _ = cli(["v2.7.1", str(ascend), "--kit", str(use_map)], capsys)
    assert code == 0
    assert os.path.isfile(os.path.join(str(ascend), FILE_B))
    assert not os.path.exists(os.path.join(str(ascend), FILE_A))
    assert not os.path.exists(os.path.join(str(ascend), PATCH))
    assert f"left out on v2.7.1:\n  {FILE_A}: absent in 2.7.1" in out


def test_dry_run_writes_nothing(use_map, ascend, capsys):
    before = snapshot(ascend)
    code, out, _ = cli(["master", str(ascend), "--kit", str(use_map), "--dry-run"], capsys)
    assert code == 0 and out.startswith("would write branch master")
    assert snapshot(ascend) == before


def test_second_export_reports_unchanged_and_replaces_changed_files(use_map, ascend, capsys):
    assert cli(["master", str(ascend), "--kit", str(use_map)], capsys)[0] == 0
    run_git(ascend, "add", "-A")
    run_git(ascend, "commit", "-q", "-m", "exported")
    code, out, _ = cli(["master", str(ascend), "--kit", str(use_map)], capsys)
    assert code == 0 and re.search(rf"^  unchanged\s+{re.escape(FILE_A)}", out, re.MULTILINE), out
    assert "git add" not in out
    write(use_map, FILE_B, SECOND_TEST.replace("is all ones", "holds ones"))
    code, out, _ = cli(["master", str(ascend), "--kit", str(use_map)], capsys)
    assert code == 0 and re.search(rf"^  replace\s+{re.escape(FILE_B)}", out, re.MULTILINE), out
    assert f"  git add {FILE_B}\n" in out


def test_replacing_keeps_the_mode_and_an_unchanged_file_is_not_rewritten(use_map, ascend, capsys):
    assert cli(["master", str(ascend), "--kit", str(use_map)], capsys)[0] == 0
    os.chmod(os.path.join(str(ascend), FILE_B), 0o755)
    run_git(ascend, "add", "-A")
    run_git(ascend, "commit", "-q", "-m", "exported")
    inode_a = os.stat(os.path.join(str(ascend), FILE_A)).st_ino
    write(use_map, FILE_B, SECOND_TEST.replace("is all ones", "holds ones"))
    code, out, _ = cli(["master", str(ascend), "--kit", str(use_map)], capsys)
    assert code == 0 and re.search(rf"^  replace\s+{re.escape(FILE_B)}", out, re.MULTILINE), out
    assert os.stat(os.path.join(str(ascend), FILE_B)).st_mode & 0o777 == 0o755
    assert os.stat(os.path.join(str(ascend), FILE_A)).st_ino == inode_a
    with open(os.path.join(str(ascend), FILE_B), encoding="utf-8") as handle:
        assert "holds ones" in handle.read()
    assert [name for name in os.listdir(os.path.join(str(ascend), "test", "npu")) if name.startswith(".")] == []


# --------------------------------------------------------------------------- refusals
def test_refuses_unknown_branch(use_map, ascend, capsys):
    assert_refused(["v9.9.9", str(ascend), "--kit", str(use_map)], capsys, ascend,
                   r"unknown branch 'v9\.9\.9': use one of master, v2\.7\.1")


def test_refuses_a_directory_that_is_not_a_git_work_tree(use_map, tmp_path, capsys):
    plain = tmp_path / "plain"
    write(plain, "setup.py", 'setup(name="torch_npu")\n')
    write(plain, "torch_npu/__init__.py", "")
    write(plain, "test/npu/x.py", "")
    assert_refused(["master", str(plain), "--kit", str(use_map)], capsys, plain, r"is not a git work tree")


def test_refuses_a_missing_destination(use_map, tmp_path, capsys):
    code, _, err = cli(["master", str(tmp_path / "nowhere"), "--kit", str(use_map)], capsys)
    assert code == 2 and "is not a directory" in err


@pytest.mark.parametrize("kwargs, missing", [
    ({"npu_pkg": False}, "torch_npu/__init__.py"),
    ({"test_npu": False}, "test/npu/"),
    ({"setup_text": "from setuptools import setup\nsetup(name='other')\n"}, "setup.py naming torch_npu"),
])
def test_refuses_a_git_checkout_that_is_not_ascend_pytorch(use_map, tmp_path, capsys, kwargs, missing):
    other = make_ascend(tmp_path / "other", **kwargs)
    assert_refused(["master", str(other), "--kit", str(use_map)], capsys, other,
                   rf"does not look like an Ascend/pytorch checkout \(missing: {re.escape(missing)}\)")


def test_refuses_a_subdirectory_of_the_checkout(use_map, ascend, capsys):
    assert_refused(["master", str(ascend / "test"), "--kit", str(use_map)], capsys, ascend,
                   r"is inside the git work tree .*; give the top of the checkout")


@pytest.mark.parametrize("change", ["modified", "staged", "untracked", "deleted"])
def test_refuses_uncommitted_changes_on_a_target_path(use_map, ascend, capsys, change):
    write(ascend, FILE_B, "old content\n")
    run_git(ascend, "add", FILE_B)
    run_git(ascend, "commit", "-q", "-m", "has the file")
    if change == "modified":
        write(ascend, FILE_B, "local edit\n")
    elif change == "staged":
        write(ascend, FILE_B, "staged edit\n")
        run_git(ascend, "add", FILE_B)
    elif change == "untracked":
        write(ascend, FILE_A, "someone's work in progress\n")
    else:
        os.unlink(os.path.join(str(ascend), FILE_B))
    line = assert_refused(["master", str(ascend), "--kit", str(use_map)], capsys, ascend,
                          r"target paths in .* have uncommitted changes")
    assert (FILE_A if change == "untracked" else FILE_B) in line


def test_uncommitted_changes_elsewhere_do_not_block(use_map, ascend, capsys):
    write(ascend, "test/npu/test_existing.py", "edited elsewhere\n")
    assert cli(["master", str(ascend), "--kit", str(use_map)], capsys)[0] == 0


def test_refuses_when_a_kit_file_is_missing(use_map, ascend, capsys):
    os.unlink(os.path.join(str(use_map), PATCH))
    assert_refused(["master", str(ascend), "--kit", str(use_map)], capsys, ascend,
                   rf"the kit at .* lacks {re.escape(PATCH)} \(listed for master\)")


@pytest.mark.parametrize("edit, pattern", [
    (lambda text: text.replace('"""Second synthetic file (test/npu): device only."""',
                               '"""Run with TORCH_NPU_TESTING_DEVICE=cpu."""'),
     r"test/npu/test_second\.py:3: still refers to this kit after export \('TORCH_NPU_TESTING'"),
    (lambda text: text.replace("bool(torch.ones(2, device=DEVICE).eq(1).all())",
                               "torch.ones(2), torch.ones(2), atol=0"
                               ).replace("assertTrue", "assertEqual"),
     r"test_second\.py:\d+: self\.assertEqual\(\.\.\., atol=\.\.\.\) raises TypeError with torch_npu's TestCase"),
    (lambda text: text.replace(KIT_HEADER, "# Copyright (c) someone else\n"),
     r"test_second\.py:1: does not start with the kit's two-line license header"),
    (lambda text: text.replace("DEVICE = device_type()",
                               "DEVICE = device_type()\n\n\nclass GlobalStateGuard:\n    pass"),
     r"defines 'GlobalStateGuard', a name the exported helpers define too"),
    (lambda text: text.replace("import torch\n", "import torch\nfrom torch_npu_testing.device import resolve_device\n"),
     r"imports the kit other than by the one line"),
    (lambda text: text.replace("device_type\n", "device_type as dt\n"),
     r"imports device_type as dt from the kit"),
])
def test_refuses_kit_files_that_cannot_be_exported_and_writes_none(use_map, ascend, capsys, edit, pattern):
    # FILE_A converts fine and comes first: it must not be written either.
    write(use_map, FILE_B, edit(SECOND_TEST))
    assert_refused(["master", str(ascend), "--kit", str(use_map)], capsys, ascend, pattern)


def test_refuses_a_report_path_that_does_not_exist(use_map, ascend, capsys):
    assert_refused(["master", str(ascend), "--kit", str(use_map), "--report", str(use_map / "nope.md")],
                   capsys, ascend, r"--report .*nope\.md: no such file")


def test_refuses_missing_arguments(capsys):
    code, _, err = cli([], capsys)
    assert code == 2 and "give BRANCH and DEST" in err


# --------------------------------------------------------------------------- report and listing
def description_facts(plan_files, problems=()):
    return json.dumps({"format": "torch_npu_testing.pr/1", "problems": list(problems),
                       "plan": {"files": [{"path": rel, "sha256": digest} for rel, digest in plan_files.items()]}})


def exported_digests(kit_root, ascend_root, branch="master"):
    import hashlib
    targets = export.convert_branch_files(str(kit_root), branch, branch_map()["branches"][branch])
    return {target.rel_path: hashlib.sha256(target.content).hexdigest() for target in targets}


def test_names_the_pr_description_or_how_to_make_it(use_map, ascend, capsys):
    code, out, _ = cli(["master", str(ascend), "--kit", str(use_map), "--dry-run"], capsys)
    assert code == 0
    assert (f"pull request description: none found (reports/pr-master.md); make it with: python -m "
            f"torch_npu_testing pr master --ascend {ascend} --results .tox/results --out reports") in out
    description = write(use_map, "reports/pr-master.md", "# description\n")
    write(use_map, "reports/pr-master.json", description_facts(exported_digests(use_map, ascend)))
    code, out, _ = cli(["master", str(ascend), "--kit", str(use_map), "--dry-run"], capsys)
    assert code == 0, out
    assert f"pull request description to paste: {description}" in out
    assert "not backed" not in out
    explicit = write(use_map, "elsewhere/pr.md", "x\n")
    write(use_map, "elsewhere/pr.json", description_facts(exported_digests(use_map, ascend)))
    code, out, _ = cli(["master", str(ascend), "--kit", str(use_map), "--dry-run", "--report", explicit], capsys)
    assert code == 0 and f"pull request description to paste: {explicit}" in out


def test_exits_1_after_writing_when_the_description_is_not_backed(use_map, ascend, capsys):
    write(use_map, "reports/pr-master.md", "# description\n")
    write(use_map, "reports/pr-master.json", description_facts(exported_digests(use_map, ascend),
                                                               ["no results for env master_213"]))
    code, out, _ = cli(["master", str(ascend), "--kit", str(use_map)], capsys)
    assert code == 1
    assert os.path.isfile(os.path.join(str(ascend), FILE_A)), "the files are still written"
    assert "the description is not backed by results yet:\n  - no results for env master_213" in out


def test_exits_1_when_the_description_describes_other_bytes(use_map, ascend, capsys):
    digests = exported_digests(use_map, ascend)
    digests[FILE_A] = "0" * 64
    write(use_map, "reports/pr-master.md", "# description\n")
    write(use_map, "reports/pr-master.json", description_facts(digests))
    code, out, _ = cli(["master", str(ascend), "--kit", str(use_map), "--dry-run"], capsys)
    assert code == 1
    assert f"the description is stale: {FILE_A} differs from what it describes" in out
    write(use_map, "reports/pr-master.json", "{not json")
    code, out, _ = cli(["master", str(ascend), "--kit", str(use_map), "--dry-run"], capsys)
    assert code == 1 and "pr-master.json (the facts behind the description) cannot be read" in out


def test_commit_title_for_the_real_branch_map():
    data = export.load_branch_map()
    master = data["branches"]["master"]
    title = export.commit_title("master", master["test_files"] + master["upstream_patches"], data)
    assert title == ("[API一致性] add tests for config.patch, _add_batch_dim, aot_*_joint_with_descriptors, "
                     "grad-mode switches + upstream test_aot_joint_with_descriptors patch (master)")
    old = data["branches"]["v2.7.1"]
    assert export.commit_title("v2.7.1", old["test_files"], data) == \
        "[API一致性] add tests for config.patch, _add_batch_dim, grad-mode switches (v2.7.1)"


def test_list_shows_the_real_branch_map(capsys):
    code, out, _ = cli(["--list"], capsys)
    assert code == 0
    for branch in ("master (torch 2.13.0):", "v2.12.0 (torch 2.12.0):", "v2.11.0 (torch 2.11.0):",
                   "v2.7.1 (torch 2.7.1):"):
        assert branch in out


def test_real_branch_map_matches_api_availability_and_patch_bases():
    """The aot joint test file goes to every branch whose torch has the API (not v2.7.1); the upstream
    patch only to master, the one branch whose upstream file it was made against."""
    data = export.load_branch_map()
    test_file = "test/functorch/test_aot_joint_with_descriptors_api.py"
    patch = "test_upstream/test/functorch/test_aot_joint_with_descriptors.py.patch"
    assert set(data["branches"]) == {"master", "v2.12.0", "v2.11.0", "v2.7.1"}
    for name, entry in data["branches"].items():
        listed = set(entry["test_files"]) | set(entry["upstream_patches"])
        assert (test_file in listed) == (name != "v2.7.1"), name
        assert (patch in listed) == (name == "master"), name
        assert set(entry["left_out"]) == {test_file, patch} - listed, name
        assert "test/npu/test_locally_disabling_gradient_omputation.py" in listed
        assert listed <= set(data["files"]), listed - set(data["files"])


def test_branch_map_rejects_paths_outside_the_tree(tmp_path):
    bad = branch_map()
    bad["branches"]["master"]["test_files"] = ["../escape.py"]
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad))
    with pytest.raises(UsageError, match=r"'\.\./escape\.py' is not a plain relative path"):
        export.load_branch_map(str(path))


# --------------------------------------------------------------------------- the converted text
def exported_text(kit_root, rel=FILE_A):
    with open(os.path.join(str(kit_root), rel)) as handle:
        text, problems = export.convert_test_file(rel, handle.read(), export.ascend_header(2026))
    assert problems == []
    return text


def test_exported_file_has_ascend_header_docstring_and_no_kit_reference(kit):
    text = exported_text(kit)
    assert text.startswith(export.ascend_header(2026))
    assert "# Licensed under the BSD 3-Clause License  (the \"License\");\n" in text
    assert ast.get_docstring(ast.parse(text)) == ast.get_docstring(ast.parse(SYNTHETIC_TEST))
    assert not re.search(r"torch[_-]npu[_-]testing", text, re.IGNORECASE)
    assert "SPDX" not in text and "kit contributors" not in text
    assert "import torch_npu  # noqa: F401" in text
    assert "\nfrom torch_npu.testing" not in text  # imported inside the carried functions, by device
    assert "class TestCase(StateGuardMixin, PortableAssertionsMixin, device_base_test_case(device_type())):" in text


def test_exported_tests_are_unchanged(kit):
    def top_level_segments(source):
        tree = ast.parse(source)
        return [ast.get_source_segment(source, node) for node in tree.body
                if not isinstance(node, (ast.Import, ast.ImportFrom))
                and ast.get_source_segment(source, node) is not None]
    original = top_level_segments(SYNTHETIC_TEST)
    exported = top_level_segments(exported_text(kit))
    # The original's statements (docstring, DEVICE, the test class, the main guard) appear in order.
    positions = [exported.index(segment) for segment in original]
    assert positions == sorted(positions)


def test_helpers_are_copied_from_the_kits_own_modules(kit):
    """The exported helpers are the kit's real code: portable.py and carried/, byte for byte."""
    text = exported_text(kit)
    for helper in (portable.StateGuardMixin, portable.GlobalStateGuard, portable.PortableAssertionsMixin,
                   portable.requires_api, portable.has_api, portable.parse_version, portable.torch_version_at_least,
                   carried_device.resolve_device, carried_device.device_type, carried_device.available_accelerator,
                   carried_testcase.TestCase, carried_testcase.run_tests, carried_testcase.device_base_test_case):
        assert inspect.getsource(helper) in text, helper.__name__
    second = exported_text(kit, FILE_B)
    assert "def requires_api" not in second and "def parse_version" not in second  # only what is used
    assert "def run_tests" in second and "def device_type" in second


def test_inline_takes_only_the_closure_of_the_wanted_names():
    gate = export.inline_helpers(["requires_api"])
    assert gate.names == ["_is_missing_module", "has_api", "_failing_with", "requires_api"]
    assert gate.stdlib_imports == ["import importlib", "import unittest"]
    version = export.inline_helpers(["torch_version_at_least"])
    assert version.names == ["parse_version", "torch_version_at_least"] and version.stdlib_imports == ["import re"]
    device = export.inline_helpers(["device_type"])
    assert "StateGuardMixin" not in device.names and {"resolve_device", "_DEVICE_CHOICE"} <= set(device.names)
    case = export.inline_helpers(["TestCase"])
    assert {"GlobalStateGuard", "PortableAssertionsMixin", "device_type", "device_base_test_case"} <= set(case.names)
    # carried.testcase imports the kit's device_type; the carried twin is what gets copied
    assert "def device_type():" in case.code and "TORCH_NPU_TESTING" not in case.code
    with pytest.raises(UsageError, match="does not define no_such_helper"):
        export.inline_helpers(["no_such_helper"])


def test_inline_refuses_ambiguous_or_missing_carried_definitions():
    sources = {"torch_npu_testing.portable": "def helper():\n    return 1\n",
               "torch_npu_testing.carried.device": "def helper():\n    return 2\n",
               "torch_npu_testing.carried.testcase": ("from ..device import helper, other\n\n\n"
                                                      "def run_tests():\n    return helper()\n\n\n"
                                                      "def TestCase():\n    return other()\n")}
    with pytest.raises(UsageError, match=r"cannot carry helper .*defined in torch_npu_testing.portable, "):
        export.inline_helpers(["run_tests"], sources)
    with pytest.raises(UsageError, match=r"cannot carry other .*defined by no carried source"):
        export.inline_helpers(["TestCase"], sources)


def test_stdlib_imports_join_the_files_first_stdlib_group():
    assert export.merge_stdlib_imports(["import os", "import unittest", "", "import torch"],
                                       ["import importlib", "import os", "import re"]) \
        == ["import importlib", "import os", "import re", "import unittest", "", "import torch"]
    assert export.merge_stdlib_imports(["import torch"], ["import re"]) == ["import re", "", "import torch"]
    assert export.merge_stdlib_imports(["import os"], ["import os"]) == ["import os"]


def test_exported_file_is_lint_clean(kit, tmp_path):
    if subprocess.run([sys.executable, "-m", "flake8", "--version"], capture_output=True, check=False).returncode:
        pytest.skip("flake8 is not installed in this interpreter: lint of the exported file not checked")
    for rel in (FILE_A, FILE_B):
        path = write(tmp_path, rel, exported_text(kit, rel))
        lint = subprocess.run([sys.executable, "-m", "flake8", "--isolated", "--max-line-length", "120", path],
                              capture_output=True, text=True, check=False)
        assert lint.returncode == 0, lint.stdout + lint.stderr


def make_standin(root):
    """A torch_npu without CANN: ``torch.npu.is_available()`` is False; the testcase module is PyTorch's."""
    write(root, "torch_npu/__init__.py", textwrap.dedent('''\
        import types

        import torch

        if not hasattr(torch, "npu"):
            torch.npu = types.SimpleNamespace(is_available=lambda: False)
    '''))
    write(root, "torch_npu/testing/__init__.py", "")
    write(root, "torch_npu/testing/testcase.py",
          "from torch.testing._internal.common_utils import TestCase, run_tests  # noqa: F401\n")
    # Any import of this kit from an exported file fails loudly.
    write(root, "torch_npu_testing.py", 'raise ImportError("an exported file imported torch_npu_testing")\n')
    return root


def outcome(output, test_name):
    """The verbose unittest result of one test: ``name (id)`` [docstring line] `` ... RESULT``."""
    match = re.search(rf"^{test_name} \([^)]*\)\n(?:[^\n]*? )?\.\.\. ([^\n]*)$", output, re.MULTILINE)
    return match.group(1) if match else None


def test_exported_file_runs_on_cpu_with_a_standin_torch_npu_and_without_the_kit(kit, tmp_path, clean_env):
    path = write(tmp_path / "ascend", FILE_A, exported_text(kit))
    standin = make_standin(tmp_path / "standin")
    env = clean_env(PYTHONPATH=str(standin), EXPORT_TEST_LEAK="1", TORCH_DEVICE_BACKEND_AUTOLOAD="0")
    run = subprocess.run([sys.executable, path, "-v"], capture_output=True, text=True, env=env,
                         cwd=str(tmp_path), timeout=600, check=False)
    output = run.stdout + run.stderr
    assert "an exported file imported torch_npu_testing" not in output
    assert outcome(output, "test_add_matches_cpu") == "ok", output
    assert outcome(output, "test_version_gate") == "ok", output
    assert re.match(r"skipped 'no_such_api_for_export_tests requires torch >= 99\.0",
                    outcome(output, "test_missing_api_skips")), output
    # The carried state guard is live: the leaking test fails by name, the others pass.
    assert outcome(output, "test_leaks_grad_mode") == "FAIL", output
    assert re.search(r"test_leaks_grad_mode leaked global state: grad mode: was (True|False), left", output), output
    assert "FAILED (failures=1, skipped=1)" in output and run.returncode == 1, output


def test_a_file_that_imports_torch_npu_itself_gets_no_second_import(kit):
    text = SECOND_TEST.replace("import torch\n", "import torch\nimport torch_npu\n", 1)
    new_text, problems = export.convert_test_file(FILE_B, text, export.ascend_header(2026))
    assert problems == [] and new_text.count("import torch_npu") == 1


def test_conversion_counts_lines_as_python_does(kit):
    # A form feed and a LINE SEPARATOR in the docstring: str.splitlines would see extra lines there.
    text = SECOND_TEST.replace("device only.", "device\x0c only\u2028 (odd breaks).")
    new_text, problems = export.convert_test_file(FILE_B, text, export.ascend_header(2026))
    assert problems == [] and "device\x0c only\u2028 (odd breaks)." in new_text
    assert "torch_npu_testing" not in new_text and "def device_type" in new_text


def test_notes_name_the_patch_base_and_kit_mentions_inside_it(use_map, ascend, capsys):
    upstream = {"repo": "pytorch/pytorch", "tag": None, "commit": "0099ec9f1e34286980b5e35da6173ff6f19c0e33"}
    manifest = {"format": 1, "patches": {"test/functorch/test_x.py.patch": {
        "upstream": upstream, "base_blob": "e595e334543e1722bc9a2522ed8e03466ee0343f"}}}
    write(use_map, "test_upstream/manifest.json", json.dumps(manifest))
    write(use_map, PATCH, PATCH_BYTES.replace(b"device = 'npu'", b"device = $TORCH_NPU_TESTING_DEVICE"))
    code, out, _ = cli(["master", str(ascend), "--kit", str(use_map), "--dry-run"], capsys)
    assert code == 0
    assert f"notes:\n  {PATCH}: made against pytorch/pytorch 0099ec9f1e34 (file blob e595e334543e)\n" in out
    assert f"  {PATCH}: copied byte for byte, and it mentions TORCH_NPU_TESTING (1 times)" in out
