# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""``new``: scaffold + target_apis.json + export_branches.json on a temp copy of the kit; refusals."""
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from torch_npu_testing.__main__ import main
from torch_npu_testing.task import locate, scaffold

PACKAGE = Path(__file__).resolve().parents[2] / "torch_npu_testing"
FLAKE8 = Path(sys.executable).with_name("flake8")


@pytest.fixture
def kit(tmp_path):
    root = tmp_path / "kit"
    (root / "torch_npu_testing").mkdir(parents=True)
    (root / "test" / "functorch").mkdir(parents=True)
    for name in ("target_apis.json", "export_branches.json"):
        shutil.copy(PACKAGE / name, root / "torch_npu_testing" / name)
    return root


def snapshot(root):
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def fake_rows(found_from):
    return [{"python": f"py{v}", "torch": v, "found": v >= found_from, "signature": "(x, batch_dim, level)"}
            for v in ("2.7.1", "2.9.1", "2.13.0")]


def test_new_writes_scaffold_and_both_maps(kit, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(locate, "locate_all", lambda name, pythons: fake_rows("2.9.1"))
    rel = "test/functorch/test_fake_thing_api.py"
    out = tmp_path / "new.json"
    assert main(["new", "torch._functorch.fake.thing", "--path", rel, "--kit", str(kit), "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert (doc["format"], doc["since"], doc["path"]) == ("torch_npu_testing.new/1", "2.9", rel)
    assert doc["branches"] == ["master", "v2.12.0", "v2.11.0"] and list(doc["left_out"]) == ["v2.7.1"]
    text = (kit / rel).read_text()
    assert text.startswith("# Copyright (c) 2026, torch_npu API-consistency kit contributors.\n")
    assert ("from torch_npu_testing import TestCase, run_tests, device_type, requires_api, torch_version_at_least"
            "\n\nimport torch\n") in text
    assert "``torch._functorch.fake.thing``" in text and 'if __name__ == "__main__":\n    run_tests()\n' in text
    for area in ("CallForms", "Dtypes", "Layouts", "Sizes", "SideEffects", "BadInput", "Threads", "Errors"):
        assert f"@requires_api(API, since='2.9')\nclass TestThing{area}(TestCase):" in text
    assert "def test_parameter_batch_dim(self):" in text
    assert text.count("self.fail(") == text.count("    def test_")
    if FLAKE8.exists():
        lint = subprocess.run([str(FLAKE8), "--max-line-length=120", str(kit / rel)], capture_output=True, text=True)
        assert lint.returncode == 0, lint.stdout
    targets = json.loads((kit / "torch_npu_testing/target_apis.json").read_text())
    assert targets["apis"][-1] == {"name": "torch._functorch.fake.thing", "task": "torch._functorch.fake.thing",
                                   "ascend_task_id": None, "since": "2.9", "test_file": rel}
    branches = json.loads((kit / "torch_npu_testing/export_branches.json").read_text())
    assert rel in branches["branches"]["master"]["test_files"]
    assert "added in 2.9" in branches["branches"]["v2.7.1"]["left_out"][rel]
    from torch_npu_testing.export import load_branch_map
    load_branch_map(str(kit / "torch_npu_testing/export_branches.json"))
    assert "left out of v2.7.1" in capsys.readouterr().out


def test_scaffold_fails_every_test_when_run(kit, monkeypatch, capsys):
    monkeypatch.setattr(locate, "locate_all", lambda name, pythons: fake_rows("2.7.1"))
    rel = "test/functorch/test_ndim_api.py"
    assert main(["new", "torch.Tensor.ndim", "--path", rel, "--kit", str(kit)]) == 0
    assert "@requires_api(API, since=None)" in (kit / rel).read_text()
    assert scaffold.since_from(fake_rows("2.7.1"))[0] is None


def test_existing_api_or_path_refuses_and_changes_nothing(kit, monkeypatch, capsys):
    monkeypatch.setattr(locate, "locate_all", lambda name, pythons: fake_rows("2.7.1"))
    (kit / "test/functorch/test_taken_api.py").write_text("x = 1\n")
    before = snapshot(kit)
    assert main(["new", "torch._functorch.config.patch", "--path", "test/functorch/test_new_api.py",
                 "--kit", str(kit)]) == 2
    assert "already in" in capsys.readouterr().err
    assert main(["new", "torch.fresh.api", "--path", "test/functorch/test_taken_api.py", "--kit", str(kit)]) == 2
    assert "already exists" in capsys.readouterr().err
    assert snapshot(kit) == before


@pytest.mark.parametrize("argv, message", [
    (["new", "torch.x.y", "--path", "tests/test_a.py"], "give test/<area>/test_<name>.py"),
    (["new", "torch.x.y", "--path", "test/../test_a.py"], "give test/<area>/test_<name>.py"),
    (["new", "torch.x.y", "--path", "test/nofolder/test_a.py"], "does not exist"),
    (["new", "x.y", "--path", "test/functorch/test_a.py"], "cannot parse API name"),
    (["new", "torch.x.y", "--path", "test/functorch/test_a.py", "--kit", "{tmp}"], "no torch_npu_testing/"),
    (["new", "torch.x.y", "--path", "test/functorch/test_a.py", "--json", "{tmp}/no/x.json"], "does not exist"),
])
def test_bad_input(kit, tmp_path, capsys, monkeypatch, argv, message):
    monkeypatch.setattr(locate, "locate_all", lambda name, pythons: fake_rows("2.7.1"))
    before = snapshot(kit)
    argv = [a.format(tmp=tmp_path) for a in argv]
    if "--kit" not in argv:
        argv += ["--kit", str(kit)]
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1 and message in captured.err, captured.err
    assert snapshot(kit) == before


def test_api_found_nowhere_refuses(kit, monkeypatch, capsys):
    monkeypatch.setattr(locate, "locate_all", lambda name, pythons: fake_rows("9.9"))
    before = snapshot(kit)
    assert main(["new", "torch.x.y", "--path", "test/functorch/test_a_api.py", "--kit", str(kit)]) == 2
    assert "not found in any torch probed" in capsys.readouterr().err
    assert snapshot(kit) == before
