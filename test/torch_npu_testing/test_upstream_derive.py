# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""``upstream derive`` and the derived base: later tests dropped by name (AST), then the manifest's edits
(a decorator dropped, a replacement inside one test, a comment after an expected string), the source's file
taken as is when it is the recorded base or the checkout is at a direct tag, every base checked by its blob.

Fake PyTorch roots in temp dirs, real git (a tagged checkout), the real CLI in a subprocess.
"""
import json
import os
import subprocess
import sys

import pytest

from test_upstream_support import cli, git, git_blob, make_patch_text, tree_snapshot
from torch_npu_testing.common.errors import UsageError
from torch_npu_testing.upstream import derive, edits, manifest, patches, scratch

TARGET = "test/functorch/test_later.py"
HEAD = '''\
import unittest

DEVICE = "cpu"


def later(flag, other=None):
    return lambda test: test


class TestLater(unittest.TestCase):
    def assertExpectedInline(self, actual, expected):
        self.assertEqual(actual, expected)

    def test_old(self):
        self.assertEqual(DEVICE, "cpu")
'''
NEWER = HEAD + '''
    @unittest.skipIf(False, "never")
    @unittest.expectedFailure
    def test_newer_one(self):
        raise AssertionError("newer than the base")

    @later(flag=False)
    def test_old_two(self):
        x = 1

        self.assertEqual(x, 1)
        self.assertExpectedInline(
            str({'a': 1}),
            """\\
{'a': 1, 'call_id': 1}""",
        )
        self.assertExpectedInline("\u00e9", """\u00e9""")

    def test_newer_two(self):
        pass


if __name__ == "__main__":
    unittest.main()
'''
BASE = HEAD + '''
    def test_old_two(self):
        x = 1

        self.assertEqual(x, 1)
        self.assertExpectedInline(
            str({'a': 1}),
            """\\
{'a': 1}""",  # noqa: B950
        )
        self.assertExpectedInline("\u00e9", """\u00e9""")  # kept


if __name__ == "__main__":
    unittest.main()
'''
PATCHED = BASE.replace('DEVICE = "cpu"', 'DEVICE = "cpu"  # adapted')
DROP = ["test_newer_one", "test_newer_two"]
EDITS = [
    {"kind": "drop_decorator", "test": "test_old_two", "decorator": "later(flag=False)"},
    {"kind": "replace", "test": "test_old_two", "old": "{'a': 1, 'call_id': 1}", "new": "{'a': 1}", "count": 1},
    {"kind": "comment_expected", "test": "test_old_two", "strings": [1], "comment": "# noqa: B950"},
    {"kind": "comment_expected", "test": "test_old_two", "strings": [2], "comment": "# kept", "why": "non-ASCII"},
]
NAME = f"v9/{TARGET}.patch"


def test_drop_tests_then_edits_give_the_base():
    assert derive.test_names(NEWER) == ["test_old", "test_newer_one", "test_old_two", "test_newer_two"]
    dropped = derive.drop_tests(NEWER, DROP)
    assert "test_newer" not in dropped and "@later(flag=False)" in dropped
    assert edits.apply_all(dropped, EDITS) == BASE
    assert derive.test_names(BASE) == ["test_old", "test_old_two"]
    assert derive.git_blob(BASE.encode()) == derive.BaseFile(BASE, "source", "", "").blob
    assert [edits.describe(edit) for edit in EDITS[:3]] == [
        "test_old_two: @later(flag=False) dropped", "test_old_two: \"{'a': 1, 'call_id': 1}\" -> \"{'a': 1}\" (1x)",
        "test_old_two: '# noqa: B950' after expected string(s) 1"]
    with pytest.raises(UsageError, match="has no test test_missing"):
        derive.drop_tests(NEWER, ["test_missing"])
    with pytest.raises(UsageError, match="is not valid Python"):
        derive.test_names("def broken(:\n", "broken.py")


@pytest.mark.parametrize("edit, message", [
    ({"kind": "drop_decorator", "test": "test_old", "decorator": "later(flag=False)"},
     "test_old has no decorator @later"),
    ({"kind": "drop_decorator", "test": "test_gone", "decorator": "x"}, "the file has 0 tests of that name"),
    ({"kind": "replace", "test": "test_old_two", "old": "'call_id'", "new": "", "count": 2},
     r"holds \"'call_id'\" 1 time\(s\), the edit expects 2"),
    ({"kind": "replace", "test": "test_old", "old": "'call_id'", "new": ""}, "holds \"'call_id'\" 0 time"),
    ({"kind": "comment_expected", "test": "test_old_two", "strings": [3], "comment": "# c"},
     r"has no expected string #3 \(2 assertExpectedInline"),
    ({"kind": "comment_expected", "test": "test_old", "strings": [1], "comment": "# c"}, "no expected string #1"),
])
def test_an_edit_that_does_not_find_what_it_names_raises(edit, message):
    with pytest.raises(UsageError, match=message):
        edits.apply_all(NEWER, [edit], "newer.py")


def test_decorators_over_several_lines_and_comments_already_there():
    once = edits.apply_all(NEWER, [EDITS[2]])
    with pytest.raises(UsageError, match="expected string #1 already ends with a comment"):
        edits.apply_all(once, [EDITS[2]])
    spread = NEWER.replace("    @later(flag=False)\n", "    @later(\n        flag=False, other=1\n    )\n")
    with pytest.raises(UsageError, match="has no decorator"):
        edits.apply_all(spread, [EDITS[0]])
    dropped = edits.apply_all(spread, [dict(EDITS[0], decorator="later(flag=False, other=1)")])
    assert dropped == NEWER.replace("    @later(flag=False)\n", "")
    with pytest.raises(UsageError, match="decorator 'later\\(' of the edit is not a Python expression"):
        edits.apply_all(NEWER, [dict(EDITS[0], decorator="later(")])
    commented = NEWER.replace("    @later(flag=False)\n", "    @later(flag=False)  # why\n")
    with pytest.raises(UsageError, match="@later\\(flag=False\\) of test_old_two shares its line with other code"):
        edits.apply_all(commented, [EDITS[0]])


@pytest.mark.parametrize("bad, message", [
    ("nope", "must be a list"),
    ([{"kind": "rename"}], "needs a 'kind' of drop_decorator, replace, comment_expected"),
    ([{"kind": "replace", "test": "t", "old": "a"}], r"edits\[1\] \(replace\) lacks new"),
    ([{"kind": "comment_expected", "test": "t", "strings": [0], "comment": "#"}], "lists positions from 1"),
])
def test_malformed_edits_are_refused_when_the_manifest_loads(tmp_path, bad, message):
    _, patches_dir = make_kit(tmp_path)
    path = patches_dir / "manifest.json"
    data = json.loads(path.read_text())
    data["patches"][NAME]["derived_base"]["edits"] = bad
    path.write_text(json.dumps(data))
    with pytest.raises(UsageError, match=message):
        manifest.load(path)


def test_a_verified_base_needs_the_full_blob(tmp_path):
    _, patches_dir = make_kit(tmp_path)
    path = patches_dir / "manifest.json"
    data = json.loads(path.read_text())
    entry = data["patches"][NAME]
    entry["upstream"]["blob_verified"] = True
    path.write_text(json.dumps(data))
    assert manifest.load(path)["patches"][NAME]["base_blob"] == derive.git_blob(BASE.encode())
    entry["base_blob"] = entry["base_blob"][:7]
    path.write_text(json.dumps(data))
    with pytest.raises(UsageError, match="blob_verified needs base_blob as a full 40-hex"):
        manifest.load(path)
    for bad, message in (({"drop_tests": "test_a"}, "drop_tests must be a list"),
                         (["not an object"], "derived_base is not an object")):
        entry["upstream"]["blob_verified"], entry["derived_base"] = False, bad
        path.write_text(json.dumps(data))
        with pytest.raises(UsageError, match=message):
            manifest.load(path)


def make_kit(tmp_path, source_text=NEWER, tag=None, base_blob=None):
    """A source root (a git checkout, tagged when asked), a v9 patch made against BASE with a derived_base;
    ``base_blob`` overrides the recorded base (then the patch's index line is rewritten to agree)."""
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
    real_blob = derive.git_blob(BASE.encode())
    text = make_patch_text(tmp_path / "work", TARGET, BASE, PATCHED)
    patch_file.write_text(text.replace(f"index {real_blob}", f"index {base_blob}") if base_blob else text)
    entry = {"upstream": {"repo": "pytorch/pytorch", "tag": "v9.0.0", "commit": None, "real": True,
                          "blob_verified": True, "obtained": "unit test"},
             "base_blob": base_blob or real_blob, "run_under": ["9.0.0"], "export": True,
             "derived_base": {"from": {"commit": "f" * 40}, "direct_tags": ["v9.0.0"], "drop_tests": DROP,
                              "edits": EDITS, "blob": real_blob, "lines": len(BASE.splitlines()), "tests": 2}}
    (patches_dir / "manifest.json").write_text(json.dumps({"format": 1, "patches": {NAME: entry}}))
    return source, patches_dir


def resolve(source, patches_dir):
    [patch] = patches.select(patches_dir)
    return derive.resolve_base(source, patch, manifest.load(patches_dir / "manifest.json"))


def test_resolve_base_derives_from_a_newer_file_and_verifies_the_blob(tmp_path):
    source, patches_dir = make_kit(tmp_path)
    base = resolve(source, patches_dir)
    assert base.kind == derive.DERIVED and base.text == BASE and base.dropped == tuple(DROP)
    assert base.edits == tuple(edits.describe(edit) for edit in EDITS) and len(base.edits) == 4
    assert base.source_blob == git_blob(source / TARGET)
    assert "derived from checkout" in base.how and "by dropping 2 later tests and 4 edits" in base.how
    assert base.tests == ["test_old", "test_old_two"]
    [status] = scratch.assess(source, patches.select(patches_dir), manifest.load(patches_dir / "manifest.json"))
    assert status.applies and status.base_matches and status.base_verified and status.base.kind == derive.DERIVED
    assert status.describe().endswith(f"base is the recorded base {base.blob[:12]} ({base.how}); blob verified")
    assert derive.verified(base, base.blob) and not derive.verified(base, base.blob[:7])
    assert not derive.verified(None, base.blob)


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


def test_derive_command_writes_a_fake_root_and_verifies_the_base(tmp_path):
    source, patches_dir = make_kit(tmp_path)
    dest = tmp_path / "derived"
    result = run_cli("derive", "--source", source, "--patches", patches_dir, "--dest", dest, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (dest / TARGET).read_text() == BASE and (dest / "version.txt").is_file()
    out, blob = result.stdout, derive.git_blob(BASE.encode())
    assert f"{len(BASE.splitlines())} lines, {len(BASE)} characters, blob {blob}, 2 tests" in out
    assert "dropped: test_newer_one, test_newer_two" in out and "edit: test_old_two: @later(flag=False) dropped" in out
    assert f"blob verified: this is the recorded real base {blob}" in out and "tests: test_old, test_old_two" in out
    check = run_cli("check", "--source", dest, "--patches", patches_dir, cwd=tmp_path)
    assert check.returncode == 0 and "applies; base is the recorded base" in check.stdout


def test_derive_says_when_the_result_is_not_the_recorded_base(tmp_path, capsys):
    """A source that holds the named tests but differs elsewhere: written, reported, exit 1 (in process)."""
    other = NEWER.replace('self.assertEqual(DEVICE, "cpu")', 'self.assertEqual(DEVICE, "cpu")  # later change')
    source, patches_dir = make_kit(tmp_path, source_text=other)
    dest = tmp_path / "derived"
    code, out, _ = cli(["upstream", "derive", "--source", str(source), "--patches", str(patches_dir),
                        "--dest", str(dest)], capsys)
    assert code == 1
    blob = derive.git_blob(BASE.encode())
    assert f"differs from the known derived base {blob[:12]}" in out and f"NOT the recorded base {blob}" in out
    assert f"upstream: {NAME}: the base written is NOT the recorded base" in out
    assert (dest / TARGET).read_text() == BASE.replace('"cpu")\n', '"cpu")  # later change\n', 1)


def test_describe_says_verified_abbreviated_or_not():
    base = derive.BaseFile(BASE, derive.DERIVED, "derived from x", "f" * 40, dropped=("test_a",), edits=("e",))
    blob = base.blob
    lines = derive.describe(base, {"blob": blob}, blob)
    assert lines[0] == f"derived from x: {len(BASE.splitlines())} lines, {len(BASE)} characters, blob {blob}, 2 tests"
    assert lines[1:] == ["dropped: test_a", "edit: e", f"blob verified: this is the recorded real base {blob}"]
    assert "(an abbreviated id: record the full blob to verify it)" in derive.describe(base, {}, blob[:7])[-1]
    lines = derive.describe(base, {"blob": "0" * 40, "lines": 3, "differs_from_real": "known gap"}, "1" * 40)
    assert lines[-2].startswith("differs from the known derived base 000000000000 (3 lines)")
    assert lines[-1] == f"NOT the recorded base {'1' * 40}: known gap"
    source = derive.BaseFile(BASE, derive.SOURCE, "the source's file as found", blob)
    assert derive.describe(source, {}, None) == [derive.describe(source, {}, None)[0]]


def test_an_abbreviated_record_matches_but_is_not_verified(tmp_path):
    blob = derive.git_blob(BASE.encode())
    source, patches_dir = make_kit(tmp_path, base_blob=blob[:7])
    data = json.loads((patches_dir / "manifest.json").read_text())
    data["patches"][NAME]["upstream"]["blob_verified"] = False
    (patches_dir / "manifest.json").write_text(json.dumps(data))
    result = run_cli("derive", "--source", source, "--patches", patches_dir, "--dest", tmp_path / "d", cwd=tmp_path)
    assert result.returncode == 0 and f"this is the recorded base {blob[:7]} (an abbreviated id" in result.stdout
    check = run_cli("check", "--source", source, "--patches", patches_dir, cwd=tmp_path)
    assert check.returncode == 0 and "blob verified" not in check.stdout, check.stdout


@pytest.mark.parametrize("case", ["dest not empty", "no source", "missing base", "unknown base key", "edit misses"])
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
    elif case == "edit misses":
        (source / TARGET).write_text(NEWER.replace("    @later(flag=False)\n", ""))
    else:
        args += ["--base", "v8"]
    before = tree_snapshot(tmp_path)
    result = run_cli(*args, cwd=tmp_path)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("torch_npu_testing: error: ")
    if case == "edit misses":
        assert "test_old_two has no decorator @later(flag=False)" in result.stderr
    assert tree_snapshot(tmp_path) == before
