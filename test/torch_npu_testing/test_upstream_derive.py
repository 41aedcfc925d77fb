# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""``upstream derive`` and the derived base: later tests dropped by name (AST), the source's file taken as
is when it is the recorded base or the checkout is at a direct tag, every base reported with its blob.

Fake PyTorch roots in temp dirs, real git (a tagged checkout), the real CLI in a subprocess.
"""
import json
import os
import subprocess
import sys
import textwrap

import pytest

from test_upstream_support import git, git_blob, make_patch_text, tree_snapshot
from torch_npu_testing.common.errors import UsageError
from torch_npu_testing.upstream import derive, manifest, patches, scratch

TARGET = "test/functorch/test_later.py"
NEWER = textwrap.dedent('''\
    import unittest

    DEVICE = "cpu"


    class TestLater(unittest.TestCase):
        def test_old(self):
            self.assertEqual(DEVICE, "cpu")

        @unittest.skipIf(False, "never")
        @unittest.expectedFailure
        def test_newer_one(self):
            raise AssertionError("newer than the base")

        def test_old_two(self):
            x = 1

            self.assertEqual(x, 1)

        def test_newer_two(self):
            pass


    if __name__ == "__main__":
        unittest.main()
    ''')
BASE = textwrap.dedent('''\
    import unittest

    DEVICE = "cpu"


    class TestLater(unittest.TestCase):
        def test_old(self):
            self.assertEqual(DEVICE, "cpu")

        def test_old_two(self):
            x = 1

            self.assertEqual(x, 1)


    if __name__ == "__main__":
        unittest.main()
    ''')
PATCHED = BASE.replace('DEVICE = "cpu"', 'DEVICE = "cpu"  # adapted')
DROP = ["test_newer_one", "test_newer_two"]


def test_drop_tests_removes_decorators_bodies_and_the_blank_lines_before():
    assert derive.drop_tests(NEWER, DROP) == BASE
    assert derive.test_names(BASE) == ["test_old", "test_old_two"]
    assert derive.git_blob(BASE.encode()) == derive.BaseFile(BASE, "source", "", "").blob
    with pytest.raises(UsageError, match="has no test test_missing"):
        derive.drop_tests(NEWER, ["test_missing"])
    with pytest.raises(UsageError, match="is not valid Python"):
        derive.test_names("def broken(:\n", "broken.py")


def make_kit(tmp_path, source_text=NEWER, tag=None):
    """A source root (a git checkout, tagged when asked), a v9 patch made against BASE with a derived_base."""
    source = tmp_path / "pytorch"
    (source / TARGET).parent.mkdir(parents=True)
    (source / "version.txt").write_text("9.0.0a0\n")
    (source / TARGET).write_text(source_text)
    git("init", "-q", cwd=source)
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "base", "--allow-empty", cwd=source)
    git("add", "-A", cwd=source)
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "files", cwd=source)
    if tag:
        git("tag", tag, cwd=source)
    patches_dir = tmp_path / "test_upstream"
    patch_file = patches_dir / "v9" / (TARGET + ".patch")
    patch_file.parent.mkdir(parents=True)
    patch_file.write_text(make_patch_text(tmp_path / "work", TARGET, BASE, PATCHED))
    base_blob = derive.git_blob(BASE.encode())
    entry = {"upstream": {"repo": "pytorch/pytorch", "tag": "v9.0.0", "commit": None, "real": False,
                          "obtained": "unit test"},
             "base_blob": base_blob, "run_under": ["9.0.0"], "export": True,
             "derived_base": {"from": {"commit": "f" * 40}, "direct_tags": ["v9.0.0"], "drop_tests": DROP,
                              "blob": base_blob, "lines": len(BASE.splitlines()), "tests": 2,
                              "differs_from_real": "synthetic: it is the real one"}}
    (patches_dir / "manifest.json").write_text(json.dumps({"format": 1, "patches": {f"v9/{TARGET}.patch": entry}}))
    return source, patches_dir


def resolve(source, patches_dir):
    [patch] = patches.select(patches_dir)
    return derive.resolve_base(source, patch, manifest.load(patches_dir / "manifest.json"))


def test_resolve_base_derives_from_a_newer_file(tmp_path):
    source, patches_dir = make_kit(tmp_path)
    base = resolve(source, patches_dir)
    assert base.kind == derive.DERIVED and base.text == BASE and base.dropped == tuple(DROP)
    assert base.source_blob == git_blob(source / TARGET)
    assert "derived from checkout" in base.how and base.tests == ["test_old", "test_old_two"]
    [status] = scratch.assess(source, patches.select(patches_dir), manifest.load(patches_dir / "manifest.json"))
    assert status.applies and status.base_matches and status.base.kind == derive.DERIVED


def test_resolve_base_takes_the_file_itself_when_it_is_the_base_or_at_a_direct_tag(tmp_path):
    source, patches_dir = make_kit(tmp_path / "a", source_text=BASE)
    assert resolve(source, patches_dir).how == "the source's file is the recorded base"
    tagged_text = BASE.replace("x = 1", "x = 1  # as at the tag")
    source, patches_dir = make_kit(tmp_path / "b", source_text=tagged_text, tag="v9.0.0")
    base = resolve(source, patches_dir)
    assert base.kind == derive.SOURCE and base.text == tagged_text and "checkout is at v9.0.0" in base.how
    source, patches_dir = make_kit(tmp_path / "c", source_text=tagged_text)
    assert "as found" in resolve(source, patches_dir).how


def run_cli(*args, cwd):
    env = {key: value for key, value in os.environ.items() if key != "PYTORCH_SRC"}
    env["TORCH_DEVICE_BACKEND_AUTOLOAD"] = "0"
    return subprocess.run([sys.executable, "-m", "torch_npu_testing", "upstream", *map(str, args)], cwd=str(cwd),
                          capture_output=True, text=True, env=env, timeout=120, check=False)


def test_derive_command_writes_a_fake_root_and_reports_the_base(tmp_path):
    source, patches_dir = make_kit(tmp_path)
    dest = tmp_path / "derived"
    result = run_cli("derive", "--source", source, "--patches", patches_dir, "--dest", dest, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (dest / TARGET).read_text() == BASE and (dest / "version.txt").is_file()
    out = result.stdout
    assert f"{len(BASE.splitlines())} lines, blob {derive.git_blob(BASE.encode())[:12]}, 2 tests" in out
    assert "dropped: test_newer_one, test_newer_two" in out and "this is the known derived base" in out
    assert "this is the recorded real base" in out and "tests: test_old, test_old_two" in out
    check = run_cli("check", "--source", dest, "--patches", patches_dir, cwd=tmp_path)
    assert check.returncode == 0 and "applies; base is the recorded base" in check.stdout


@pytest.mark.parametrize("case", ["dest not empty", "no source", "missing base", "unknown base key"])
def test_derive_bad_inputs_are_one_line_errors_that_change_nothing(tmp_path, case):
    source, patches_dir = make_kit(tmp_path)
    dest = tmp_path / "derived"
    args = ["derive", "--source", source, "--patches", patches_dir, "--dest", dest]
    if case == "dest not empty":
        dest.mkdir()
        (dest / "keep.txt").write_text("mine\n")
    elif case == "no source":
        args[2] = tmp_path / "nowhere"
    elif case == "missing base":
        (source / TARGET).unlink()
    else:
        args += ["--base", "v8"]
    before = tree_snapshot(tmp_path)
    result = run_cli(*args, cwd=tmp_path)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("torch_npu_testing: error: ")
    assert tree_snapshot(tmp_path) == before
