# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""``export``: additive merge into Ascend files on real git clones of a fake Ascend repository.

Their lines stay byte for byte (``git diff --numstat``: 0 deleted), every merged test id stays, the kit's
part is one block before their main guard, renamed on clashes, replaced in place by a re-export; branch
names resolve as on a normal clone; ``--api`` selects files; bad input is one line, exit 2, nothing written.
"""
import ast
import subprocess
import sys
from pathlib import Path

import pytest
from export_repo import AOT, CONFIG, GRAD, KIT_PATCH, PATCH, VMAP, clone, git, make_kit, make_origin

from torch_npu_testing.__main__ import main as cli_main
from torch_npu_testing.export import merge, plan

CLONE_API = "torch.autograd.grad_mode.set_grad_enabled.clone"


@pytest.fixture
def repo(tmp_path, monkeypatch):
    """``(origin, kit)`` with plan.exported_patches pointing at the tmp kit's v2.12 patch."""
    monkeypatch.setattr(plan, "exported_patches", lambda base, kit: [(KIT_PATCH, PATCH)] if base == "v2.12" else [])
    return make_origin(tmp_path / "src"), make_kit(tmp_path)


def run(capsys, *argv):
    code = cli_main(["export", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


def ids(text):
    return set(merge.test_ids(ast.parse(text)))


def numstat(dest):
    rows = [line.split("\t") for line in git(dest, "diff", "--numstat").splitlines()]
    return {path: (int(added), int(deleted)) for added, deleted, path in rows}


def status(dest):
    return git(dest, "status", "--porcelain", "--untracked-files=all")


def snapshot(dest):
    return {p: p.read_bytes() for p in Path(dest).rglob("*") if p.is_file() and ".git" not in p.parts}


def test_master_keeps_their_lines_and_tests_adds_one_block_and_is_idempotent(repo, tmp_path, capsys):
    origin, kit = repo
    dest = clone(origin, tmp_path / "master")
    before = {rel: (dest / rel).read_text() for rel in (GRAD, CONFIG, VMAP, AOT)}
    code, out, err = run(capsys, "master", dest, "--kit", kit)
    assert code == 0, err
    assert f"master -> master ({git(dest, 'rev-parse', 'HEAD')[:12]})" in out
    stats = numstat(dest)
    assert set(stats) == {GRAD, CONFIG, VMAP, AOT}        # nothing outside test/ on master
    kit_lines = len((kit / GRAD).read_text().splitlines())
    for rel, (added, deleted) in stats.items():
        text = (dest / rel).read_text()
        assert deleted == 0 and added <= kit_lines + plan.CARRIED_LIMIT, (rel, added, deleted)
        assert ids(before[rel]) < ids(text)
        last = ast.parse(text).body[-1]
        assert text.count(merge.BEGIN_MARK) == 1 and text.endswith("\n    run_tests()\n") and last.lineno > len(
            text[:text.index(merge.END_MARK)].splitlines())
        assert text.count("if __name__ ==") == 1 and "torch_npu_testing" not in text
    assert "their lines changed: none" in out
    first = snapshot(dest)
    code, out, _ = run(capsys, "master", dest, "--kit", kit)
    assert code == 0 and out.count("unchanged") == 4 and snapshot(dest) == first


def test_clashing_names_are_renamed_on_the_kit_side_only(repo, tmp_path, capsys):
    origin, kit = repo
    dest = clone(origin, tmp_path / "master")
    theirs = (dest / CONFIG).read_text()
    assert run(capsys, "master", dest, "--kit", kit)[0] == 0
    text = (dest / CONFIG).read_text()
    block = text[text.index(merge.BEGIN_MARK):text.index(merge.END_MARK)]
    assert "class KitTestCase(" in block and "def kit_device_type(" in block
    assert "from torch._functorch import config as kit_config" in block and "\ndevice = kit_device_type()" in block
    assert "class TestKitSmallFixtureApi(KitTestCase):" in block and "kit_config.patch(debug_assert=True)" in block
    assert text.replace(block, "").replace(merge.END_MARK + "\n\n\n", "") == theirs
    assert "\nimport torch\n" not in block         # the same import as theirs is not repeated
    assert 'acc.type if (acc := torch.accelerator.current_accelerator()) else "cpu"' in text
    compile(text, CONFIG, "exec")
    grad = (dest / GRAD).read_text()
    assert "\nkit_device = device_type()" in grad and "kit_doubled" not in grad and "\ndevice = 'npu:0'" in grad


def test_carried_block_is_small_and_holds_only_what_the_file_uses(repo, tmp_path, capsys):
    origin, _ = repo
    kit = make_kit(tmp_path / "k2", "kit_no_thread_api.py")
    dest = clone(origin, tmp_path / "master")
    assert run(capsys, "master", dest, "--kit", kit)[0] == 0
    text = (dest / GRAD).read_text()
    assert "def run_in_thread" not in text and "threading" not in text and "def requires_api" not in text
    full = (Path(plan.__file__).parents[1] / "runtime" / "carried.py").read_text()
    carried = full[full.index("# --- carried: begin"):full.index("# --- carried: end")]
    assert len(carried.splitlines()) - 1 <= plan.CARRIED_LIMIT
    assert "carried helper: " in run(capsys, "master", dest, "--kit", kit, "--dry-run")[1]


def test_real_kit_files_merge_with_a_carried_part_within_the_limit(repo, tmp_path, capsys):
    origin, _ = repo
    dest = clone(origin, tmp_path / "master")
    kit_root = Path(plan.__file__).parents[2]
    result = plan.plan_export(kit_root, "master", dest)
    for target in result.targets:
        if target.kind == plan.TEST_FILE:
            assert 0 < target.carried_lines <= plan.CARRIED_LIMIT and not target.changed_lines, target.rel_path
            assert set(target.their_ids) <= set(ids(target.content.decode())), target.rel_path


def test_reexport_after_a_kit_change_replaces_the_block_in_place(repo, tmp_path, capsys):
    origin, kit = repo
    dest = clone(origin, tmp_path / "master")
    assert run(capsys, "master", dest, "--kit", kit)[0] == 0
    git(dest, "commit", "-qam", "first export")
    (kit / GRAD).write_text((kit / GRAD).read_text().replace("return tensor * 2", "return tensor + tensor"))
    code, out, _ = run(capsys, "master", dest, "--kit", kit, "--api", CLONE_API)
    assert code == 0 and "update" in out
    assert numstat(dest) == {GRAD: (1, 1)}
    assert (dest / GRAD).read_text().count(merge.BEGIN_MARK) == 1


def test_normal_clone_branch_names_resolve_and_say_which_ref(repo, tmp_path, capsys):
    origin, kit = repo
    dest = clone(origin, tmp_path / "c")
    code, _, err = run(capsys, "v2.7.1", dest, "--kit", kit)
    assert code == 2 and "does not contain v2.7.1" in err and len(err.strip().splitlines()) == 1
    assert status(dest) == ""
    git(dest, "checkout", "-q", "--detach", "origin/v2.7.1")
    code, out, _ = run(capsys, "v2.7.1", dest, "--kit", kit)
    assert code == 0 and out.startswith(f"v2.7.1 -> origin/v2.7.1 ({git(dest, 'rev-parse', 'HEAD')[:12]})")
    assert "create   test/functorch/test_vmap_add_batch_dim_api.py" in out.replace("create  ", "create   ")
    assert f"{AOT}: torch._functorch.aot_autograd.aot_" in out and "does not exist in torch 2.7.1" in out
    created = (dest / VMAP).read_text()
    assert created.startswith("# Copyright (c) ") and created.count(merge.BEGIN_MARK) == 1
    assert "def run_tests" in created and created.endswith('    run_tests()\n')
    first = snapshot(dest)
    assert run(capsys, "v2.7.1", dest, "--kit", kit)[0] == 0 and snapshot(dest) == first


def test_two_remote_candidates_refuse_listing_them(repo, tmp_path, capsys):
    origin, kit = repo
    dest = clone(origin, tmp_path / "c")
    git(dest, "remote", "add", "fork", str(origin))
    git(dest, "fetch", "-q", "fork")
    code, _, err = run(capsys, "v2.7.1", dest, "--kit", kit)
    assert code == 2 and "origin/v2.7.1" in err and "fork/v2.7.1" in err and status(dest) == ""


def test_api_selects_only_its_file_and_the_patch_goes_where_the_branch_keeps_it(repo, tmp_path, capsys):
    origin, kit = repo
    dest = clone(origin, tmp_path / "c", "v2.7.1")
    code, out, _ = run(capsys, "v2.7.1", dest, "--kit", kit, "--api", CLONE_API)
    assert code == 0 and [line[3:] for line in status(dest).splitlines()] == [GRAD]
    dest12 = clone(origin, tmp_path / "c12", "v2.12.0")
    assert run(capsys, "v2.12.0", dest12, "--kit", kit, "--api", CLONE_API)[0] == 0
    assert PATCH not in status(dest12)
    aot = "torch._functorch.aot_autograd.aot_compile_joint_with_descriptors"
    assert run(capsys, "v2.12.0", dest12, "--kit", kit, "--api", aot)[0] == 0
    assert (dest12 / PATCH).read_text() == (kit / KIT_PATCH).read_text() and AOT in status(dest12)
    assert not any(p.startswith("test_upstream") for p in numstat(clone(origin, tmp_path / "m")) or [])


@pytest.mark.parametrize("argv, message", [
    (["v9.9.9"], "unknown Ascend/pytorch branch"),
    (["v2.10.0"], "is in maintenance"),
    (["v2.7.1", "--api", "torch.no_such.api"], "unknown target API"),
    (["v2.7.1", "--api", "torch._functorch.aot_autograd.aot_export_joint_with_descriptors"], "nothing to export"),
])
def test_bad_branch_or_api_is_one_line_and_writes_nothing(repo, tmp_path, capsys, argv, message):
    origin, kit = repo
    dest = clone(origin, tmp_path / "c", "v2.7.1")
    code, out, err = run(capsys, argv[0], dest, "--kit", kit, *argv[1:])
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1 and status(dest) == ""


def test_bad_destinations_and_broken_files_refuse_and_write_nothing(repo, tmp_path, capsys):
    origin, kit = repo
    assert run(capsys, "master", tmp_path / "missing", "--kit", kit)[0] == 2
    (tmp_path / "plain").mkdir()
    assert "not a git work tree" in run(capsys, "master", tmp_path / "plain", "--kit", kit)[2]
    dest = clone(origin, tmp_path / "c")
    assert "give the top" in run(capsys, "master", dest / "test", "--kit", kit)[2]
    (dest / CONFIG).write_text((dest / CONFIG).read_text() + merge.BEGIN_MARK + "\n")
    dirty = snapshot(dest)
    code, _, err = run(capsys, "master", dest, "--kit", kit)
    assert code == 2 and "repair it by hand" in err and snapshot(dest) == dirty
    git(dest, "checkout", "-q", "--", CONFIG)
    (kit / GRAD).write_text((kit / GRAD).read_text() + "from torch_npu_testing import find_api\n")
    code, _, err = run(capsys, "master", dest, "--kit", kit)
    assert code == 2 and "exactly one top-level" in err and status(dest) == ""


def test_disabled_list_entries_matching_kit_tests_are_warned_about(repo, tmp_path, capsys):
    origin, kit = repo
    dest = clone(origin, tmp_path / "c")
    code, out, _ = run(capsys, "master", dest, "--kit", kit, "--dry-run")
    assert code == 0 and status(dest) == ""
    assert "kit test TestKitSmallFixtureApi.test_doubled_on_the_device matches" in out
    assert "TestSomethingElse" not in out


def test_plan_at_ref_reads_the_branch_without_its_work_tree(repo, tmp_path):
    origin, kit = repo
    dest = clone(origin, tmp_path / "c")          # master checked out; v2.7.1 only as origin/v2.7.1
    at_ref = plan.plan_at_ref(kit, "v2.7.1", dest, [CLONE_API])
    assert (at_ref.ref, [t.rel_path for t in at_ref.targets]) == ("origin/v2.7.1", [GRAD])
    target = at_ref.targets[0]
    assert target.action == "update" and target.diff().startswith(f"--- a/{GRAD}\n+++ b/{GRAD}\n")
    assert not [line for line in target.diff().splitlines()[2:] if line.startswith("-")]
    git(dest, "checkout", "-q", "v2.7.1")
    in_tree = plan.plan_export(kit, "v2.7.1", dest, [CLONE_API])
    assert (in_tree.ref, in_tree.commit) == ("v2.7.1", at_ref.commit)
    assert [t.content for t in in_tree.targets] == [target.content]     # the bytes pr describes are export's


def test_cli_refusal_in_a_subprocess_is_one_line_exit_2(tmp_path):
    result = subprocess.run([sys.executable, "-m", "torch_npu_testing", "export", "master", str(tmp_path)],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1 and not result.stdout


def test_list_names_files_and_left_out_per_branch(capsys):
    code, out, _ = run(capsys, "--list")
    assert code == 0 and "v2.7.1:" in out and f"left out: {AOT}" in out and "v2.10.0" not in out
    sections, name = {}, None
    for line in out.splitlines():
        if not line.startswith(" "):
            name = line.rstrip(":")
        sections.setdefault(name, []).append(line)
    assert set(sections) == {"master", "v2.12.0", "v2.11.0", "v2.7.1"}
    for name in ("master", "v2.7.1"):
        assert not any("test_upstream" in line for line in sections[name]), name
    for name in ("v2.12.0", "v2.11.0"):
        assert any(line.startswith("  test_upstream/test/") for line in sections[name]), name


RENAME_SOURCE = '''import os
from torch._functorch import config
def device_type(x, config=1):
    return config + x
class TestCase(object):
    device_type = 3
    def f(self):
        return device_type(1), self.device_type, TestCase, "device_type"
def g():
    global os
    os = 2
    return [device_type for device_type in range(3)], g(device_type=device_type), (lambda config: config)
print(f"{device_type(2)} {config}")
'''


def test_rename_touches_module_level_names_only():
    from torch_npu_testing.export.rename import rename_module_names
    renamed = rename_module_names(RENAME_SOURCE, {"device_type": "kit_device_type", "config": "kit_config",
                                                  "TestCase": "KitTestCase", "os": "kit_os"})
    assert renamed.splitlines() == [
        "import os as kit_os", "from torch._functorch import config as kit_config",
        "def kit_device_type(x, config=1):", "    return config + x", "class KitTestCase(object):",
        "    device_type = 3", "    def f(self):",
        '        return kit_device_type(1), self.device_type, KitTestCase, "device_type"', "def g():",
        "    global kit_os", "    kit_os = 2",
        "    return [device_type for device_type in range(3)], g(device_type=kit_device_type), "
        "(lambda config: config)",
        'print(f"{kit_device_type(2)} {kit_config}")']


@pytest.mark.parametrize("line, message", [
    ("from . import helpers\n", "relative and __future__"),
    ("from os.path import *\n", "`import *`"),
    ("import torch_npu_testing.runtime\n", "exactly one top-level"),
])
def test_kit_files_of_another_shape_are_refused(line, message):
    from torch_npu_testing.common.errors import UsageError
    from torch_npu_testing.export.kitfile import parse_kit_file
    text = (Path(__file__).parent / "fixtures" / "kit" / "kit_small_api.py").read_text()
    with pytest.raises(UsageError, match=message.replace("*", r"\*")):
        parse_kit_file("x.py", text.replace("import torch\n", "import torch\n" + line, 1))
    with pytest.raises(UsageError, match="license header"):
        parse_kit_file("x.py", text.split("\n", 2)[2])


def test_kit_code_reading_a_name_their_file_rebinds_is_refused():
    from torch_npu_testing.common.errors import UsageError
    from torch_npu_testing.export.carry import load_carried
    from torch_npu_testing.export.kitfile import parse_kit_file
    text = (Path(__file__).parent / "fixtures" / "kit" / "kit_no_thread_api.py").read_text()
    kit = parse_kit_file("x.py", text.replace("DEVICE = device_type()", "DEVICE = device_type()\nSIZE = len('abc')"))
    theirs = "import torch\n\nlen = 3\n\n\nif __name__ == '__main__':\n    pass\n"
    with pytest.raises(UsageError, match="reads len, which this file defines"):
        merge.merge_into(kit, theirs, load_carried(), "x.py")
    merged = merge.merge_into(kit, theirs.replace("len = 3", "size = 3"), load_carried(), "x.py")
    assert merged.text.startswith("import torch\n\nsize = 3\n\n\n# --- API") and merged.their_ids == []


def test_a_file_without_main_guard_gets_one_and_the_changed_last_line_is_reported(repo, tmp_path, capsys):
    origin, kit = repo
    dest = clone(origin, tmp_path / "c")
    text = (dest / CONFIG).read_text()
    (dest / CONFIG).write_text(text[:text.index("\n\n\nif __name__")])       # no guard, no final newline
    git(dest, "commit", "-qam", "their file without a main guard")
    code, out, _ = run(capsys, "master", dest, "--kit", kit, "--api", "torch._functorch.config.patch")
    merged = (dest / CONFIG).read_text()
    last = "their lines changed: line 32: self.assertEqual(values.device.type, device_type)"
    assert code == 0 and numstat(dest)[CONFIG][1] == 1 and last in out
    assert merged.endswith("# --- API-consistency kit: end ---\n\n\nif __name__ == \"__main__\":\n    run_tests()\n")
    assert "\nclass KitTestCase(" in merged and "def run_tests" not in merged     # their run_tests runs it all
