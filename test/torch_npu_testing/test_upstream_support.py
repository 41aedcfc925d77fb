# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Shared builders for the ``upstream`` unit tests (no tests here).

:func:`make_kit` writes, under a tmp dir, a small fake PyTorch checkout (``version.txt`` plus two
stdlib-only unittest files under ``test/functorch``), patches made with real ``git diff`` (independent
of the code under test) and a manifest. Nothing imports torch, so running the patched files is fast.
"""
import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from torch_npu_testing.__main__ import main as cli_main

TINY = "test/functorch/test_tiny.py"
OTHER = "test/functorch/test_other.py"
BASE_KEY = "v2.99"
TINY_PATCH = f"{BASE_KEY}/{TINY}.patch"
OTHER_PATCH = f"{BASE_KEY}/{OTHER}.patch"

TINY_BASE = '''\
import unittest

DEVICE = "cpu"
VALUE = 1


class TestTiny(unittest.TestCase):
    def test_adds(self):
        self.assertEqual(1 + 1, 2)

    def test_needs_patch(self):
        self.assertEqual(VALUE, 2, "only the patched file sets VALUE = 2")

    def test_known_gap(self):
        self.assertEqual(DEVICE, "accelerator")

    def test_fixed_upstream(self):
        self.assertTrue(True)

    def test_raises(self):
        raise RuntimeError("boom")

    @unittest.skip("needs a GPU")
    def test_gpu(self):
        pass


if __name__ == "__main__":
    unittest.main()
'''

TINY_PATCHED = TINY_BASE.replace("VALUE = 1\n", "VALUE = 2  # adapted\n")

OTHER_BASE = '''\
import unittest

FLAG = False


class TestOther(unittest.TestCase):
    def test_flag(self):
        self.assertTrue(FLAG)


if __name__ == "__main__":
    unittest.main()
'''

OTHER_PATCHED = OTHER_BASE.replace("FLAG = False\n", "FLAG = True\n")

PREAMBLE = "Synthetic patch for the unit tests.\n\n"


def git(*args, cwd):
    return subprocess.run(["git", *args], cwd=str(cwd), capture_output=True, text=True, check=True,
                          env={**os.environ, "GIT_CEILING_DIRECTORIES": str(Path(cwd).parent)})


def git_blob(path):
    return git("hash-object", "--no-filters", str(path), cwd=Path(path).parent).stdout.strip()


def make_patch_text(workdir, target, old, new):
    """A git-style patch (a/ b/ paths, full index line) made with plain `git diff --no-index`."""
    work = Path(workdir)
    for side, text in (("a", old), ("b", new)):
        path = work / side / target
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    completed = subprocess.run(["git", "diff", "--no-index", "--no-prefix", "--full-index", "--no-color",
                                f"a/{target}", f"b/{target}"], cwd=str(work), capture_output=True, text=True,
                               check=False)
    assert completed.returncode == 1, completed.stderr
    return completed.stdout


def tree_snapshot(root):
    """{relative path: bytes} of every file under root (to prove nothing changed)."""
    root = Path(root)
    return {path.relative_to(root).as_posix(): path.read_bytes()
            for path in sorted(root.rglob("*")) if path.is_file() and ".git" not in path.relative_to(root).parts}


@dataclass
class Kit:
    root: Path
    source: Path
    patches: Path
    manifest: Path

    def patch_path(self, target=TINY):
        return self.patches / BASE_KEY / (target + ".patch")

    def manifest_data(self):
        return json.loads(self.manifest.read_text())

    def write_manifest(self, data):
        self.manifest.write_text(json.dumps(data, indent=2) + "\n")

    def base(self, target=TINY):
        return self.source / target

    def cli(self, command, *extra, source=True):
        """Arguments for ``python -m torch_npu_testing upstream <command>`` on this kit."""
        args = ["upstream", command, "--patches", str(self.patches), "--manifest", str(self.manifest)]
        if source:
            args += ["--source", str(self.source)]
        return args + [str(item) for item in extra]


def make_kit(tmp_path, with_other=False, expected=None):
    """A fake checkout + patches + manifest. ``expected``: the expected_failures list of the tiny patch."""
    root = Path(tmp_path)
    source = root / "pytorch"
    (source / "test" / "functorch").mkdir(parents=True)
    (source / "version.txt").write_text("2.99.0a0\n")
    (source / TINY).write_text(TINY_BASE)
    patches = root / "test_upstream"
    work = root / "patchwork"
    pairs = [(TINY, TINY_BASE, TINY_PATCHED)]
    if with_other:
        (source / OTHER).write_text(OTHER_BASE)
        pairs.append((OTHER, OTHER_BASE, OTHER_PATCHED))
    entries = {}
    for number, (target, old, new) in enumerate(pairs):
        patch = patches / BASE_KEY / (target + ".patch")
        patch.parent.mkdir(parents=True, exist_ok=True)
        patch.write_text(PREAMBLE + make_patch_text(work / str(number), target, old, new))
        entries[f"{BASE_KEY}/{target}.patch"] = {
            "upstream": {"repo": "pytorch/pytorch", "tag": "v2.99.0", "commit": None},
            "base_blob": git_blob(source / target),
            "expected_failures": [],
        }
    if expected is None:
        expected = [
            {"test": "TestTiny.test_known_gap", "reason": "synthetic device gap", "observed": "unit test"},
            {"test": "TestTiny.test_fixed_upstream", "reason": "was broken before"},
            {"test": "TestTiny.test_raises", "reason": "raises on this device", "devices": ["cpu"]},
        ]
    entries[TINY_PATCH]["expected_failures"] = expected
    manifest = patches / "manifest.json"
    manifest.write_text(json.dumps({"format": 1, "patches": entries}, indent=2) + "\n")
    return Kit(root=root, source=source, patches=patches, manifest=manifest)


def cli(args, capsys):
    """Run ``python -m torch_npu_testing ARGS`` in-process: (exit code, stdout, stderr)."""
    code = cli_main(args)
    out, err = capsys.readouterr()
    return code, out, err
