# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""``new``: scaffold + the API's row in table.json on a temp copy of the kit; the path search suggests;
refusals."""
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ascend_fixture import clone_of, make_ascend

from torch_npu_testing.__main__ import main
from torch_npu_testing.common.layout import PUBLIC_NAMES
from torch_npu_testing.task import locate, scaffold, scaffold_text

PACKAGE = Path(__file__).resolve().parents[2] / "torch_npu_testing"
FLAKE8 = Path(sys.executable).with_name("flake8")


@pytest.fixture
def kit(tmp_path):
    root = tmp_path / "kit"
    (root / "torch_npu_testing" / "common").mkdir(parents=True)
    (root / "test" / "functorch").mkdir(parents=True)
    (root / "test" / "npu").mkdir(parents=True)
    shutil.copy(PACKAGE / "common" / "table.json", root / "torch_npu_testing" / "common" / "table.json")
    return root


def table_apis(kit):
    return json.loads((kit / scaffold.TABLE_REL).read_text())["apis"]


def snapshot(root):
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def fake_rows(found_from):
    return [{"python": f"py{v}", "torch": v, "found": v >= found_from, "signature": "(x, batch_dim, level)"}
            for v in ("2.7.1", "2.9.1", "2.13.0")]


def test_new_writes_scaffold_and_the_table_row(kit, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(locate, "locate_all", lambda name, pythons: fake_rows("2.9.1"))
    rel = "test/functorch/test_fake_thing_api.py"
    out = tmp_path / "new.json"
    assert main(["new", "torch._functorch.fake.thing", "--path", rel, "--kit", str(kit), "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert (doc["format"], doc["since"], doc["path"], doc["draft"]) == ("torch_npu_testing.new/2", "2.9", rel,
                                                                        "scaffold")
    assert doc["opinfo"]["entries"] == [] and doc["opinfo"]["lookups"][0]["error"] is None
    assert sorted(doc["branches"]) == ["master", "v2.11.0", "v2.12.0"] and list(doc["left_out"]) == ["v2.7.1"]
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
    assert table_apis(kit)[-1] == {"name": "torch._functorch.fake.thing", "title": "fake.thing",
                                   "ascend_task_id": None, "since": "2.9", "test_file": rel, "coverage": []}
    assert table_apis(kit)[:-1] == json.loads((PACKAGE / "common" / "table.json").read_text())["apis"]
    assert sorted(doc["written"]) == sorted([str(kit / rel), str(kit / scaffold.TABLE_REL)])
    out = capsys.readouterr().out
    assert "left out of v2.7.1: thing does not exist in torch 2.7.1 (added in 2.9)" in out
    assert "export sends it to " + ", ".join(doc["branches"]) in out
    # probed: 2.7.1, 2.9.1, 2.13.0; master builds against 2.13 (probed), v2.12.0 / v2.11.0 not
    assert "; probed on the torch of master; not probed on the torch of " in out
    assert "since: every torch probed" not in out  # since is 2.9 here


def test_new_claims_only_the_torches_it_probed(kit, capsys, monkeypatch):
    """Probed only 2.13: "since" says so, and the branches whose torch was not probed are named as such."""
    monkeypatch.setattr(locate, "locate_all", lambda name, pythons: [
        {"python": "py", "torch": "2.13.0", "found": True, "signature": "(x)"}])
    rel = "test/functorch/test_other_thing_api.py"
    assert main(["new", "torch._functorch.other.thing", "--path", rel, "--kit", str(kit), "--no-opinfo"]) == 0
    out = capsys.readouterr().out
    assert "(since: every torch probed; found in torch 2.13.0; absent in -)" in out
    assert "all supported torch" not in out
    assert "; probed on the torch of master; not probed on the torch of v2.7.1, v2.11.0, v2.12.0 (" in out


def test_scaffold_fails_every_test_when_run(kit, monkeypatch, capsys):
    monkeypatch.setattr(locate, "locate_all", lambda name, pythons: fake_rows("2.7.1"))
    rel = "test/functorch/test_ndim_api.py"
    assert main(["new", "torch.Tensor.ndim", "--path", rel, "--kit", str(kit)]) == 0
    assert "@requires_api(API, since=None)" in (kit / rel).read_text()
    assert scaffold.since_from(fake_rows("2.7.1"))[0] is None


def test_existing_api_or_path_refuses_and_changes_nothing(kit, monkeypatch, capsys):
    monkeypatch.setattr(locate, "locate_all", lambda name, pythons: fake_rows("2.7.1"))
    (kit / "test/functorch/test_taken_api.py").write_text("x = 1\n")
    (kit / "test/npu/test_fresh_api_api.py").write_text("x = 1\n")  # the own file new would take without --path
    before = snapshot(kit)
    assert main(["new", "torch._functorch.config.patch", "--path", "test/functorch/test_new_api.py",
                 "--kit", str(kit)]) == 2
    assert "already in" in capsys.readouterr().err
    assert main(["new", "torch.fresh.api", "--path", "test/functorch/test_taken_api.py", "--kit", str(kit)]) == 2
    assert "already exists" in capsys.readouterr().err
    assert main(["new", "torch.fresh.api", "--kit", str(kit)]) == 2
    assert "test/npu/test_fresh_api_api.py already exists" in capsys.readouterr().err
    assert snapshot(kit) == before


@pytest.mark.parametrize("argv, message", [
    (["new", "torch.x.y", "--path", "tests/test_a.py"], "give test/<area>/test_<name>.py"),
    (["new", "torch.x.y", "--path", "test/../test_a.py"], "give test/<area>/test_<name>.py"),
    (["new", "torch.x.y", "--path", "test/nofolder/test_a.py"], "does not exist"),
    (["new", "x.y", "--path", "test/functorch/test_a.py"], "cannot parse API name"),
    (["new", "torch.x.y", "--path", "test/functorch/test_a.py", "--kit", "{tmp}"], "no torch_npu_testing/"),
    (["new", "torch.x.y", "--ascend", "{tmp}"], "not a git work tree"),
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


def test_the_scaffold_imports_only_public_names():
    assert set(scaffold_text.SCAFFOLD_NAMES) <= set(PUBLIC_NAMES)


def test_search_suggests_the_path_and_an_existing_table_file_is_joined(kit, tmp_path, monkeypatch, capsys):
    """On a normal clone, search says the clone tests belong in the file whose tests are about the owner and
    its siblings; new takes that path. A table test file there is joined: no scaffold written."""
    monkeypatch.setattr(locate, "locate_all", lambda name, pythons: fake_rows("2.7.1"))
    origin = make_ascend(tmp_path / "origin")
    subprocess.run(["git", "rm", "-q", "test/npu/test_grad.py"], cwd=origin, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "x"], cwd=origin,
                   check=True)
    clone = clone_of(origin, tmp_path / "clone")
    out = tmp_path / "n.json"
    assert main(["new", "torch.no_grad.clone", "--ascend", str(clone), "--branch", "v2.7.1", "--kit", str(kit),
                 "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["path"] == "test/npu/test_switches.py"
    assert doc["suggested_by"].startswith("search on origin/v2.7.1 (")
    assert "new tests belong in test/npu/test_switches.py" in capsys.readouterr().out
    assert (kit / "test/npu/test_switches.py").exists()
    grad = "test/npu/test_locally_disabling_gradient_omputation.py"
    (kit / grad).write_text("kept\n")
    assert main(["new", "torch.enable_grad.clone", "--path", grad, "--kit", str(kit)]) == 0
    assert (kit / grad).read_text() == "kept\n" and table_apis(kit)[-1]["test_file"] == grad
    assert "already a test file of the kit" in capsys.readouterr().out


def test_a_folder_is_made_only_where_the_ascend_branch_has_it_or_with_mkdir(kit, tmp_path, monkeypatch, capsys):
    """A --path folder the kit lacks: refused (nothing changed, no stray folder) unless the --ascend branch has
    it (test/npu on master) or --mkdir asks; either way the file is written and joins the table."""
    monkeypatch.setattr(locate, "locate_all", lambda name, pythons: fake_rows("2.7.1"))
    shutil.rmtree(kit / "test" / "npu")
    clone = clone_of(make_ascend(tmp_path / "origin"), tmp_path / "clone")
    before = snapshot(kit)
    assert main(["new", "torch.x.y", "--path", "test/nnn/test_y_api.py", "--ascend", str(clone),
                 "--kit", str(kit)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "folder test/nnn does not exist in" in err and "nor on master of" in err, err
    assert "give --mkdir" in err and snapshot(kit) == before and not (kit / "test" / "nnn").exists()
    assert main(["new", "torch.x.y", "--path", "test/npu/test_y_api.py", "--ascend", str(clone),
                 "--kit", str(kit)]) == 0
    assert (kit / "test/npu/test_y_api.py").is_file()
    assert main(["new", "torch.x.z", "--path", "test/nn/test_z_api.py", "--mkdir", "--kit", str(kit)]) == 0
    assert (kit / "test/nn/test_z_api.py").is_file()
    assert [api["test_file"] for api in table_apis(kit)[-2:]] == ["test/npu/test_y_api.py", "test/nn/test_z_api.py"]
