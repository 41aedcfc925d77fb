# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""``upstream scratch`` and ``upstream refresh`` / ``diff`` (real files, real git, tmp dirs).

Contract: scratch writes patched copies into a new directory; refresh regenerates a patch from the
edited copy with ``a/`` ``b/`` paths and an ``index`` line naming the base blob, keeps the patch's
description, and records the new base (and upstream tag/commit) in the manifest; the result applies.
"""
import re

import pytest
from test_upstream_support import PREAMBLE, TINY, TINY_PATCH, TINY_PATCHED, cli, git, git_blob, make_kit, tree_snapshot


pytestmark = pytest.mark.usefixtures("no_outside_config")


def test_scratch_writes_patched_copy(tmp_path, capsys):
    kit = make_kit(tmp_path)
    dest = tmp_path / "edit"
    code, out, _ = cli(kit.cli("scratch", "--dest", dest), capsys)
    assert code == 0
    assert (dest / TINY).read_text() == TINY_PATCHED
    assert "patched copy" in out and "upstream refresh --scratch" in out


def test_scratch_refuses_non_empty_destination(tmp_path, capsys):
    kit = make_kit(tmp_path)
    dest = tmp_path / "edit"
    dest.mkdir()
    (dest / "mine.txt").write_text("keep")
    code, _, err = cli(kit.cli("scratch", "--dest", dest), capsys)
    assert code == 2 and "not empty" in err
    assert (dest / "mine.txt").read_text() == "keep" and len(list(dest.iterdir())) == 1


def test_refresh_regenerates_patch_with_paths_and_index(tmp_path, capsys):
    """Edit the scratch copy, refresh: the new patch carries the edit, a/ b/ paths, the base blob."""
    kit = make_kit(tmp_path)
    dest = tmp_path / "edit"
    assert cli(kit.cli("scratch", "--dest", dest), capsys)[0] == 0
    edited = (dest / TINY).read_text().replace('DEVICE = "cpu"', 'DEVICE = "cpu"  # resolved here')
    (dest / TINY).write_text(edited)
    code, out, _ = cli(kit.cli("refresh", "--scratch", dest), capsys)
    assert code == 0, out
    text = kit.patch_path().read_text()
    assert text.startswith(PREAMBLE)
    assert f"diff --git a/{TINY} b/{TINY}\n" in text
    assert f"--- a/{TINY}\n+++ b/{TINY}\n" in text
    base = git_blob(kit.base())
    assert re.search(rf"^index {base}\.\.[0-9a-f]{{40}} 100644$", text, re.MULTILINE)
    assert '+DEVICE = "cpu"  # resolved here' in text
    assert kit.manifest_data()["patches"][TINY_PATCH]["base_blob"] == base
    # the refreshed patch reproduces the edited file exactly
    assert cli(kit.cli("apply"), capsys)[0] == 0
    assert kit.base().read_text() == edited


def test_refresh_for_a_new_upstream_base_records_tag(tmp_path, capsys):
    """Upstream moved (base changed, old patch conflicts): redo the edit on the new base, refresh with
    --upstream-tag; manifest gets the new base and tag; check then says it applies to the recorded base."""
    kit = make_kit(tmp_path)
    kit.base().write_text(kit.base().read_text().replace("VALUE = 1\n", "VALUE = 1  # upstream v3\n"))
    dest = tmp_path / "edit"
    code, out, _ = cli(kit.cli("scratch", "--dest", dest), capsys)
    assert code == 0 and "UNPATCHED copy" in out
    (dest / TINY).write_text((dest / TINY).read_text().replace("VALUE = 1  # upstream v3", "VALUE = 2  # adapted"))
    code, out, _ = cli(kit.cli("diff", "--scratch", dest, "--upstream-tag", "v3.0.0"), capsys)
    assert code == 0, out
    entry = kit.manifest_data()["patches"][TINY_PATCH]
    assert entry["base_blob"] == git_blob(kit.base())
    assert entry["upstream"] == {"repo": "pytorch/pytorch", "tag": "v3.0.0", "commit": None}
    assert entry["expected_failures"], "refresh must keep the expected failures"
    code, out, _ = cli(kit.cli("check"), capsys)
    assert code == 0 and "applies; base is the recorded base" in out and "@v3.0.0" in out


def test_refresh_without_ref_on_new_base_forgets_old_ref(tmp_path, capsys):
    kit = make_kit(tmp_path)
    kit.base().write_text(kit.base().read_text().replace("    unittest.main()\n", "    unittest.main(exit=True)\n"))
    dest = tmp_path / "edit"
    assert cli(kit.cli("scratch", "--dest", dest), capsys)[0] == 0
    code, out, _ = cli(kit.cli("refresh", "--scratch", dest), capsys)
    assert code == 0
    assert "upstream ref unrecorded" in out
    assert kit.manifest_data()["patches"][TINY_PATCH]["upstream"]["tag"] is None


def test_refresh_detects_commit_and_tag_of_git_checkout(tmp_path, capsys):
    kit = make_kit(tmp_path)
    git("init", "-q", ".", cwd=kit.source)
    git("add", "-A", cwd=kit.source)
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base", cwd=kit.source)
    git("tag", "v9.9.9", cwd=kit.source)
    head = git("rev-parse", "HEAD", cwd=kit.source).stdout.strip()
    dest = tmp_path / "edit"
    assert cli(kit.cli("scratch", "--dest", dest), capsys)[0] == 0
    assert cli(kit.cli("refresh", "--scratch", dest), capsys)[0] == 0
    upstream = kit.manifest_data()["patches"][TINY_PATCH]["upstream"]
    assert upstream["commit"] == head and upstream["tag"] == "v9.9.9"


def test_refresh_uses_scratch_record_for_source(tmp_path, capsys):
    kit = make_kit(tmp_path)
    dest = tmp_path / "edit"
    assert cli(kit.cli("scratch", "--dest", dest), capsys)[0] == 0
    code, out, _ = cli(kit.cli("refresh", "--scratch", dest, source=False), capsys)
    assert code == 0, out


def test_refresh_add_creates_new_patch_and_manifest_entry(tmp_path, capsys):
    kit = make_kit(tmp_path)
    new = "test/test_new_file.py"
    (kit.source / new).write_text("X = 'cpu'\n")
    dest = tmp_path / "edit"
    assert cli(kit.cli("scratch", "--dest", dest, "--add", new), capsys)[0] == 0
    (dest / new).write_text("X = DEVICE\n")
    code, out, err = cli(kit.cli("refresh", "--scratch", dest, "--add", new, "--upstream-commit", "abc123"), capsys)
    assert code == 2 and "--add needs --base KEY" in err
    code, out, _ = cli(kit.cli("refresh", "--scratch", dest, "--add", new, "--base", "v2.99",
                               "--upstream-commit", "abc123"), capsys)
    assert code == 0, out
    patch_text = (kit.patches / "v2.99" / (new + ".patch")).read_text()
    assert f"diff --git a/{new} b/{new}" in patch_text and "+X = DEVICE" in patch_text
    entry = kit.manifest_data()["patches"]["v2.99/" + new + ".patch"]
    assert entry["base_blob"] == git_blob(kit.source / new)
    assert entry["upstream"]["commit"] == "abc123" and entry["expected_failures"] == []
    code, out, _ = cli(kit.cli("check"), capsys)
    assert code == 0 and out.count("applies; base is the recorded base") == 2


def test_refresh_identical_copy_is_error_and_changes_nothing(tmp_path, capsys):
    kit = make_kit(tmp_path)
    dest = tmp_path / "edit"
    assert cli(kit.cli("scratch", "--dest", dest), capsys)[0] == 0
    (dest / TINY).write_text(kit.base().read_text())
    before = tree_snapshot(kit.patches)
    code, _, err = cli(kit.cli("refresh", "--scratch", dest), capsys)
    assert code == 2 and "identical to the upstream file" in err
    assert tree_snapshot(kit.patches) == before


def test_refresh_unknown_patch_and_missing_scratch_are_errors(tmp_path, capsys):
    kit = make_kit(tmp_path)
    code, _, err = cli(kit.cli("refresh", "--scratch", tmp_path / "none"), capsys)
    assert code == 2 and "does not exist" in err
    dest = tmp_path / "edit"
    assert cli(kit.cli("scratch", "--dest", dest), capsys)[0] == 0
    code, _, err = cli(kit.cli("refresh", "--scratch", dest, "--patch", "nope"), capsys)
    assert code == 2 and "unknown patch 'nope'" in err
