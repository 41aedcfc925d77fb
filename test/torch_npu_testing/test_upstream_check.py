# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""``upstream check`` and the inputs every command validates first (real files, real git, tmp dirs).

Contract: check reports per patch whether it applies and whether the base file is the recorded base,
touches nothing, and answers each bad input with one clear line and a non-zero exit.
"""
import hashlib
import re

import pytest
from test_upstream_support import PREAMBLE, TINY, TINY_PATCH, cli, git, git_blob, make_kit, tree_snapshot

from torch_npu_testing.common.errors import UsageError
from torch_npu_testing.common import gitutil
from torch_npu_testing.upstream import manifest, patches, scratch, source


pytestmark = pytest.mark.usefixtures("no_outside_config")


def assert_one_line_error(code, err, *needles):
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("torch_npu_testing: error: ")
    for needle in needles:
        assert needle in lines[0]


def test_check_reports_applies_and_recorded_base(tmp_path, capsys):
    """A clean checkout at the recorded base: 'applies; base is the recorded base', exit 0, nothing touched."""
    kit = make_kit(tmp_path)
    before = tree_snapshot(kit.root)
    code, out, _ = cli(kit.cli("check"), capsys)
    assert code == 0
    assert f"{TINY_PATCH}: applies; base is the recorded base" in out
    assert "pytorch/pytorch@v2.99.0" in out
    assert tree_snapshot(kit.root) == before


def test_check_says_base_differs_but_still_applies(tmp_path, capsys):
    """A base changed away from the hunks: reported as not the recorded base, and still as applying."""
    kit = make_kit(tmp_path)
    kit.base().write_text(kit.base().read_text().replace("    unittest.main()\n", "    unittest.main(verbosity=2)\n"))
    code, out, _ = cli(kit.cli("check"), capsys)
    assert code == 0
    assert "applies; base is NOT the recorded base" in out
    assert git_blob(kit.base())[:12] in out


def test_check_reports_conflict(tmp_path, capsys):
    """Hunk context gone from the base: 'does not apply' with git's reason, exit 1, no files written."""
    kit = make_kit(tmp_path)
    kit.base().write_text(kit.base().read_text().replace("VALUE = 1\n", "VALUE = 3\n"))
    before = tree_snapshot(kit.root)
    code, out, _ = cli(kit.cli("check"), capsys)
    assert code == 1
    assert "does not apply (patch failed: test/functorch/test_tiny.py" in out
    assert "base is NOT the recorded base" in out
    assert tree_snapshot(kit.root) == before


def test_check_reports_missing_base(tmp_path, capsys):
    kit = make_kit(tmp_path)
    kit.base().unlink()
    code, out, _ = cli(kit.cli("check"), capsys)
    assert code == 1
    assert f"base file missing: {TINY} is not in the checkout" in out


def test_check_reports_already_patched(tmp_path, capsys):
    """A checkout that already holds the patched file is recognised (reverse applies), exit 1."""
    kit = make_kit(tmp_path)
    kit.base().write_text(kit.base().read_text().replace("VALUE = 1\n", "VALUE = 2  # adapted\n"))
    code, out, _ = cli(kit.cli("check"), capsys)
    assert code == 1
    assert "already applied in the checkout (the file is the patch's result)" in out


@pytest.mark.parametrize("command", ["check", "run", "apply", "revert", "scratch"])
def test_missing_source_dir_is_one_line_error(tmp_path, capsys, command):
    kit = make_kit(tmp_path)
    extra = ["--dest", tmp_path / "new"] if command == "scratch" else []
    args = kit.cli(command, *extra, source=False) + ["--source", str(tmp_path / "nowhere")]
    code, _, err = cli(args, capsys)
    assert_one_line_error(code, err, "nowhere", "does not exist")


@pytest.mark.parametrize("command", ["check", "run", "apply"])
def test_non_pytorch_dir_is_one_line_error(tmp_path, capsys, command):
    kit = make_kit(tmp_path)
    other = tmp_path / "not_pytorch"
    (other / "src").mkdir(parents=True)
    code, _, err = cli(kit.cli(command, source=False) + ["--source", str(other)], capsys)
    assert_one_line_error(code, err, "does not look like a PyTorch checkout")


def test_source_comes_from_pytorch_src(tmp_path, capsys, monkeypatch):
    kit = make_kit(tmp_path)
    monkeypatch.setenv(source.SOURCE_ENV, str(kit.source))
    code, out, _ = cli(kit.cli("check", source=False), capsys)
    assert code == 0
    assert str(kit.source) in out


def test_no_source_at_all_is_one_line_error(tmp_path, capsys):
    kit = make_kit(tmp_path)
    code, _, err = cli(kit.cli("check", source=False), capsys)
    assert_one_line_error(code, err, "PYTORCH_SRC", "--source")


@pytest.mark.parametrize("command", ["check", "run", "apply", "revert"])
def test_unknown_patch_name_is_one_line_error(tmp_path, capsys, command):
    kit = make_kit(tmp_path)
    code, _, err = cli(kit.cli(command, "--patch", "test_nothing"), capsys)
    assert_one_line_error(code, err, "unknown patch 'test_nothing'", f"{TINY_PATCH}")


def test_patch_selected_by_stem_path_or_name(tmp_path):
    kit = make_kit(tmp_path, with_other=True)
    names = patches.discover(kit.patches)
    assert patches.resolve_name("test_tiny", names) == TINY_PATCH
    assert patches.resolve_name(TINY, names) == TINY_PATCH
    assert patches.resolve_name(TINY_PATCH, names) == TINY_PATCH
    assert [p.name for p in patches.select(kit.patches, ["test_other"])] == ["v2.99/test/functorch/test_other.py.patch"]
    assert len(patches.select(kit.patches)) == 2


@pytest.mark.parametrize("damage", ["garbage", "bad_hunk", "no_index", "wrong_target"])
@pytest.mark.parametrize("command", ["check", "run", "apply"])
def test_corrupt_patch_is_one_line_error(tmp_path, capsys, damage, command):
    kit = make_kit(tmp_path)
    text = kit.patch_path().read_text()
    if damage == "garbage":
        text = "this is not a patch\n"
    elif damage == "bad_hunk":  # headers fine, hunk line counts wrong: only git notices
        text = re.sub(r"@@ -(\d+),(\d+) \+(\d+),(\d+) @@",
                      lambda m: f"@@ -{m[1]},{int(m[2]) + 50} +{m[3]},{int(m[4]) + 50} @@", text, count=1)
    elif damage == "no_index":
        text = "\n".join(line for line in text.splitlines() if not line.startswith("index ")) + "\n"
    else:
        text = text.replace("test_tiny.py", "test_elsewhere.py")
    kit.patch_path().write_text(text)
    before = tree_snapshot(kit.root)
    code, _, err = cli(kit.cli(command), capsys)
    assert_one_line_error(code, err, "corrupt patch", f"{TINY_PATCH}")
    assert tree_snapshot(kit.root) == before


def test_manifest_base_disagreeing_with_index_line_is_error(tmp_path, capsys):
    kit = make_kit(tmp_path)
    data = kit.manifest_data()
    data["patches"][TINY_PATCH]["base_blob"] = "0" * 40
    kit.write_manifest(data)
    code, _, err = cli(kit.cli("check"), capsys)
    assert_one_line_error(code, err, "disagrees with the patch's index line")


def test_missing_patches_dir_is_one_line_error(tmp_path, capsys):
    kit = make_kit(tmp_path)
    args = kit.cli("check")
    args[args.index("--patches") + 1] = str(tmp_path / "no_patches")
    code, _, err = cli(args, capsys)
    assert_one_line_error(code, err, "patches directory", "does not exist")


def test_hash_object_is_the_git_blob_id(tmp_path):
    """gitutil.hash_object agrees with the blob id definition sha1('blob <size>\\0' + bytes)."""
    path = tmp_path / "f.py"
    path.write_bytes(b"x = 1\n\xff no utf8\n")
    data = path.read_bytes()
    assert gitutil.hash_object(path) == hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def test_check_inside_another_repository_and_tmpdir(tmp_path, monkeypatch, capsys):
    """Checkout and temp dirs below an unrelated git repo: git apply must not resolve paths against it
    (it would silently skip them); the ceiling keeps the verdicts right."""
    outer = tmp_path / "outer"
    outer.mkdir()
    git("init", "-q", ".", cwd=outer)
    kit = make_kit(outer)
    (outer / "tmp").mkdir()
    monkeypatch.setattr("tempfile.tempdir", str(outer / "tmp"))
    code, out, _ = cli(kit.cli("check"), capsys)
    assert code == 0 and "applies; base is the recorded base" in out
    kit.base().write_text(kit.base().read_text().replace("VALUE = 1\n", "VALUE = 3\n"))
    code, out, _ = cli(kit.cli("check"), capsys)
    assert code == 1 and "does not apply" in out


def test_assess_reads_only(tmp_path):
    """scratch.assess gives statuses without writing into the checkout."""
    kit = make_kit(tmp_path)
    before = tree_snapshot(kit.source)
    [status] = scratch.assess(kit.source, patches.select(kit.patches), manifest.load(kit.manifest))
    assert status.applies and status.base_matches
    assert status.actual_base == git_blob(kit.base())
    assert tree_snapshot(kit.source) == before


def test_patch_preamble_and_blobs_are_parsed(tmp_path):
    kit = make_kit(tmp_path)
    [patch] = patches.select(kit.patches)
    assert patch.target == TINY
    assert patch.preamble == PREAMBLE
    assert patch.base_blob == git_blob(kit.base())
    assert len(patch.result_blob) == 40


def test_source_validation_errors_are_usage_errors(tmp_path):
    with pytest.raises(UsageError, match="is not a directory"):
        (tmp_path / "file").write_text("x")
        source.validate(tmp_path / "file")
    assert source.given_source(None, environ={}) is None
    assert str(source.given_source(None, environ={"PYTORCH_SRC": "/x"})) == "/x"
