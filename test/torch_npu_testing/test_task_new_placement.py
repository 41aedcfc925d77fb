# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""``new`` without ``--path`` (issue 32 item 5): the task's own file at Ascend's *_api.py convention, unless
``search`` finds a file about the API; a file that calls the API once is never taken."""
import json
import shutil
import textwrap
from pathlib import Path

import pytest

from ascend_fixture import git, write

from torch_npu_testing.__main__ import main
from torch_npu_testing.common.layout import TABLE_REL
from torch_npu_testing.task import locate

PACKAGE = Path(__file__).resolve().parents[2] / "torch_npu_testing"

ONE_MENTION = textwrap.dedent('''\
    import torch
    from torch_npu.testing.testcase import TestCase, run_tests


    class TestNpuGraphs(TestCase):
        def test_graph_capture(self):
            with torch.inference_mode():
                torch.ones(2).movedim(0, 0)
    ''')

ABOUT_IT = textwrap.dedent('''\
    import torch
    from torch_npu.testing.testcase import TestCase, run_tests


    def moved(x):
        return torch.movedim(x, 0, 1)


    class TestMovedim(TestCase):
        def test_movedim_shape(self):
            self.assertEqual(moved(torch.ones(2, 3)).shape, (3, 2))

        def test_movedim_values(self):
            self.assertEqual(torch.ones(2, 3).movedim(0, 1).sum(), 6)
    ''')


@pytest.fixture
def kit(tmp_path, monkeypatch):
    root = tmp_path / "kit"
    (root / "torch_npu_testing" / "common").mkdir(parents=True)
    (root / "test" / "functorch").mkdir(parents=True)
    (root / "test" / "npu").mkdir(parents=True)
    shutil.copy(PACKAGE / "common" / "table.json", root / TABLE_REL)
    rows = [{"python": "py", "torch": "2.13.0", "found": True, "signature": "(input, source, destination)"}]
    monkeypatch.setattr(locate, "locate_all", lambda name, pythons: rows)
    return root


def make_checkout(root, files):
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "master")
    write(root, "torch_npu/__init__.py", "")
    for rel, text in files.items():
        write(root, rel, text)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "master")
    return root


def run_new(kit, tmp_path, *extra):
    out = tmp_path / "new.json"
    assert main(["new", "torch.movedim", "--no-opinfo", "--kit", str(kit), "--json", str(out), *extra]) == 0
    return json.loads(out.read_text())


def test_without_path_or_ascend_the_api_gets_its_own_file(kit, tmp_path, capsys):
    doc = run_new(kit, tmp_path)
    assert doc["path"] == "test/npu/test_movedim_api.py" and (kit / doc["path"]).is_file()
    assert doc["suggested_by"].startswith("no --path and no --ascend to search: test/npu/test_movedim_api.py")
    assert "Wrote test/npu/test_movedim_api.py" in capsys.readouterr().out


def test_a_one_mention_file_is_never_taken(kit, tmp_path):
    checkout = make_checkout(tmp_path / "ascend", {"test/dynamo/test_npugraphs.py": ONE_MENTION})
    doc = run_new(kit, tmp_path, "--ascend", str(checkout))
    assert doc["path"] == "test/npu/test_movedim_api.py"
    assert "new tests belong in test/npu/test_movedim_api.py (no file has 2 or more tests" in doc["suggested_by"]
    assert not (kit / "test/dynamo").exists()


def test_a_file_about_the_api_is_taken(kit, tmp_path):
    files = {"test/dynamo/test_npugraphs.py": ONE_MENTION, "test/npu/test_movedim_cases.py": ABOUT_IT}
    checkout = make_checkout(tmp_path / "ascend", files)
    doc = run_new(kit, tmp_path, "--ascend", str(checkout))
    assert doc["path"] == "test/npu/test_movedim_cases.py" and (kit / doc["path"]).is_file()
    why = "(2 of its 2 tests exercise it: 2 call it (1 through the file's helpers), 2 named for it or its family)"
    assert doc["suggested_by"].endswith(why)
