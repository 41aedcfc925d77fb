# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""``upstream apply`` / ``revert`` in the user's checkout (real files, real git, tmp dirs).

Contract: every selected patch is checked first and either all apply or none does; applying twice is
reported, not doubled; a dirty target in a git checkout is refused; no .rej/.orig file ever appears;
revert restores the exact upstream bytes.
"""
import os
import stat

import pytest
from test_upstream_support import (OTHER, OTHER_PATCHED, TINY, TINY_BASE, TINY_PATCH, TINY_PATCHED, cli, git, make_kit,
                                   tree_snapshot)


pytestmark = pytest.mark.usefixtures("no_outside_config")


def leftovers(root):
    return [path for path in root.rglob("*") if path.suffix in (".rej", ".orig") or path.name.endswith(".tnt-tmp")]


def test_apply_then_revert_round_trip(tmp_path, capsys):
    """apply writes the patched file (mode kept), revert gives back the exact upstream bytes."""
    kit = make_kit(tmp_path, with_other=True)
    os.chmod(kit.base(), 0o640)
    code, out, _ = cli(kit.cli("apply"), capsys)
    assert code == 0, out
    assert kit.base().read_text() == TINY_PATCHED
    assert (kit.source / OTHER).read_text() == OTHER_PATCHED
    assert stat.S_IMODE(os.stat(kit.base()).st_mode) == 0o640
    assert f"applied {TINY_PATCH}" in out
    code, out, _ = cli(kit.cli("revert"), capsys)
    assert code == 0, out
    assert kit.base().read_text() == TINY_BASE
    assert f"reverted {TINY_PATCH}" in out
    assert leftovers(kit.root) == []


def test_apply_twice_is_reported_not_doubled(tmp_path, capsys):
    kit = make_kit(tmp_path)
    assert cli(kit.cli("apply"), capsys)[0] == 0
    before = tree_snapshot(kit.source)
    code, _, err = cli(kit.cli("apply"), capsys)
    assert code == 2
    assert "already applied" in err and "nothing changed" in err and len(err.strip().splitlines()) == 1
    assert tree_snapshot(kit.source) == before
    assert kit.base().read_text().count("# adapted") == 1


def test_all_or_none_when_one_patch_conflicts(tmp_path, capsys):
    """The second patch conflicts: the first, applicable one is not applied either."""
    kit = make_kit(tmp_path, with_other=True)
    (kit.source / OTHER).write_text((kit.source / OTHER).read_text().replace("FLAG = False", "FLAG = None"))
    before = tree_snapshot(kit.source)
    code, _, err = cli(kit.cli("apply"), capsys)
    assert code == 2
    assert "test_other.py.patch does not apply" in err and "nothing changed" in err
    assert tree_snapshot(kit.source) == before
    assert leftovers(kit.root) == []


def test_apply_refuses_missing_base(tmp_path, capsys):
    kit = make_kit(tmp_path, with_other=True)
    (kit.source / OTHER).unlink()
    before = tree_snapshot(kit.source)
    code, _, err = cli(kit.cli("apply"), capsys)
    assert code == 2 and "base file test/functorch/test_other.py is missing" in err
    assert tree_snapshot(kit.source) == before


def test_apply_refuses_dirty_target_in_git_checkout(tmp_path, capsys):
    """In a git checkout, uncommitted changes in the file apply would write are refused."""
    kit = make_kit(tmp_path)
    git("init", "-q", ".", cwd=kit.source)
    git("add", "-A", cwd=kit.source)
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base", cwd=kit.source)
    kit.base().write_text(kit.base().read_text() + "# local edit\n")
    before = tree_snapshot(kit.source)
    code, _, err = cli(kit.cli("apply"), capsys)
    assert code == 2
    assert "has uncommitted changes" in err and len(err.strip().splitlines()) == 1
    assert tree_snapshot(kit.source) == before


def test_apply_in_clean_git_checkout_and_unrelated_dirt(tmp_path, capsys):
    """A clean target in a git checkout applies, even with other files dirty; git sees only that change."""
    kit = make_kit(tmp_path)
    git("init", "-q", ".", cwd=kit.source)
    git("add", "-A", cwd=kit.source)
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base", cwd=kit.source)
    (kit.source / "version.txt").write_text("dirty elsewhere\n")
    code, _, _ = cli(kit.cli("apply"), capsys)
    assert code == 0
    status = git("status", "--porcelain", cwd=kit.source).stdout.splitlines()
    assert sorted(line[3:] for line in status) == sorted([TINY, "version.txt"])


def test_apply_inside_unrelated_repository(tmp_path, capsys):
    """A non-git checkout below another repo is not treated as that repo (no false dirty refusal)."""
    outer = tmp_path / "outer"
    outer.mkdir()
    git("init", "-q", ".", cwd=outer)
    kit = make_kit(outer)
    code, _, err = cli(kit.cli("apply"), capsys)
    assert code == 0, err
    assert kit.base().read_text() == TINY_PATCHED


def test_revert_when_not_applied_is_error(tmp_path, capsys):
    kit = make_kit(tmp_path)
    before = tree_snapshot(kit.source)
    code, _, err = cli(kit.cli("revert"), capsys)
    assert code == 2 and "is not applied" in err
    assert tree_snapshot(kit.source) == before


def test_revert_after_hand_edits_of_patched_lines_is_error(tmp_path, capsys):
    kit = make_kit(tmp_path)
    assert cli(kit.cli("apply"), capsys)[0] == 0
    kit.base().write_text(kit.base().read_text().replace("VALUE = 2  # adapted", "VALUE = 5"))
    before = tree_snapshot(kit.source)
    code, _, err = cli(kit.cli("revert"), capsys)
    assert code == 2 and "changed by hand" in err
    assert tree_snapshot(kit.source) == before


def test_apply_selected_patch_only(tmp_path, capsys):
    kit = make_kit(tmp_path, with_other=True)
    code, _, _ = cli(kit.cli("apply", "--patch", "test_other"), capsys)
    assert code == 0
    assert (kit.source / OTHER).read_text() == OTHER_PATCHED
    assert kit.base().read_text() == TINY_BASE
