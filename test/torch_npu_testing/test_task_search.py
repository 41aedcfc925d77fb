# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""``search``: AST hits per ref in a fake Ascend checkout, summary lines, JSON, and every bad input."""
import json
import subprocess

import pytest

from torch_npu_testing.__main__ import main
from torch_npu_testing.task import callfinder

from ascend_fixture import API, clone_of, make_ascend


@pytest.fixture(scope="module")
def ascend(tmp_path_factory):
    return make_ascend(tmp_path_factory.mktemp("search") / "ascend")


def hits_by_test(branch):
    return {callfinder.hit_test_id(hit): hit["kind"] for hit in branch["hits"]}


def test_search_finds_every_call_form_per_branch(ascend, tmp_path, capsys):
    out = tmp_path / "search.json"
    assert main(["search", API, "--ascend", str(ascend), "--branches", "master", "v2.7.1", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    doc = json.loads(out.read_text())
    assert doc["format"] == "torch_npu_testing.search/1" and doc["api"] == API
    master, v271 = doc["repos"][0]["branches"]
    prefix = "test/npu/test_grad.py::TestGradModeClone::"
    family = {"test/npu/test_switches.py::TestSwitches::test_no_grad": "related",
              "test/npu/test_switches.py::TestSwitches::test_set_grad_enabled": "related",
              "test/test_autograd.py::TestAutograd::test_sum": "related"}
    assert hits_by_test(master) == dict(family, **{
        prefix + "test_chained": "direct", prefix + "test_alias_module": "direct", prefix + "test_instance": "direct",
        prefix + "test_as_name": "direct", "test/npu/test_grad.py::test_module_level": "direct",
        prefix + "test_named_only": "mention", prefix + "test_owner_only": "related"})
    assert hits_by_test(v271) == dict(family, **{prefix + "test_chained": "direct",
                                                 prefix + "test_alias_module": "direct",
                                                 prefix + "test_owner_only": "related"})
    assert v271["unparsable"] == ["test/npu/test_broken.py"]
    commit = subprocess.run(["git", "rev-parse", "v2.7.1"], cwd=ascend, capture_output=True, text=True).stdout.strip()
    assert v271["commit"] == commit
    line = (f"2 tests call {API} directly on v2.7.1 ({commit[:7]}), 4 related tests; new tests belong in "
            "test/npu/test_grad.py")
    assert v271["summary"] == line and line in text
    assert f"5 tests call {API} directly on master" in text
    assert f"git -C {ascend} grep -l -w -F --all-match -e set_grad_enabled -e clone v2.7.1 -- test" in text
    assert f"`{prefix}test_chained` (line 8): direct call" in text


def test_search_rerun_command_is_exact(ascend, capsys):
    assert main(["search", API, "--ascend", str(ascend), "--branches", "v2.7.1"]) == 0
    capsys.readouterr()
    listed = subprocess.run(["git", "grep", "-l", "-w", "-F", "--all-match", "-e", "set_grad_enabled", "-e", "clone",
                             "v2.7.1", "--", "test"], cwd=ascend, capture_output=True, text=True).stdout.split()
    assert listed == ["v2.7.1:test/npu/test_broken.py", "v2.7.1:test/npu/test_grad.py"]


def test_callfinder_ignores_unrelated_clone():
    text = "import torch\n\ndef test_a():\n    torch.ones(1).clone()\n"
    assert callfinder.find_tests(text, "t.py", [API], ["torch.autograd.grad_mode.set_grad_enabled"]) == []


@pytest.mark.parametrize("argv, message", [
    (["search", "torch..x", "--ascend", "{ascend}"], "cannot parse API name"),
    (["search", "numpy.add", "--ascend", "{ascend}"], "cannot parse API name"),
    (["search", API, "--ascend", "{missing}"], "not a directory"),
    (["search", API, "--ascend", "{plain}"], "not a git work tree"),
    (["search", API, "--ascend", "{ascend}/test"], "inside the git work tree"),
    (["search", API, "--ascend", "{other}"], "not an Ascend/pytorch checkout"),
    (["search", API, "--ascend", "{ascend}", "--branches", "v9.9"], "unknown ref 'v9.9'"),
    (["search", API, "--ascend", "{ascend}", "--pytorch", "{ascend}"], "not a PyTorch checkout"),
    (["search", API, "--ascend", "{ascend}", "--json", "{missing}/x.json"], "does not exist"),
])
def test_search_bad_input_is_one_line_exit_2_nothing_written(ascend, tmp_path, capsys, argv, message):
    plain = tmp_path / "plain"
    plain.mkdir()
    other = tmp_path / "other"
    other.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=other, check=True)
    values = {"ascend": ascend, "missing": tmp_path / "missing", "plain": plain, "other": other}
    json_path = tmp_path / "out.json"
    argv = [a.format(**values) for a in argv] + ([] if "--json" in argv else ["--json", str(json_path)])
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and message in captured.err, captured.err
    assert not json_path.exists()


def test_pytorch_checkout_is_searched_the_same_way(ascend, tmp_path, capsys):
    pytorch = tmp_path / "pytorch"
    (pytorch / "torch").mkdir(parents=True)
    (pytorch / "test").mkdir()
    (pytorch / "torch" / "__init__.py").write_text("")
    (pytorch / "test" / "test_autograd.py").write_text(
        "import torch\n\nclass TestAutograd:\n    def test_clone(self):\n"
        "        torch.autograd.set_grad_enabled(True).clone()\n")
    commit = ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "p"]
    for args in (["init", "-q"], ["add", "-A"], commit):
        subprocess.run(["git", *args], cwd=pytorch, check=True)
    out = tmp_path / "s.json"
    assert main(["search", API, "--ascend", str(ascend), "--pytorch", str(pytorch), "--json", str(out)]) == 0
    repos = json.loads(out.read_text())["repos"]
    assert [repo["role"] for repo in repos] == ["ascend", "pytorch"]
    assert repos[1]["branches"][0]["ref"] == "HEAD"
    assert hits_by_test(repos[1]["branches"][0]) == {"test/test_autograd.py::TestAutograd::test_clone": "direct"}
    assert "#### pytorch `HEAD`" in capsys.readouterr().out


def test_alias_names_are_searched_too(ascend, tmp_path, capsys):
    """--alias adds a dotted name to those the installed torch resolves (the no-torch refusal:
    test_task_search_counting.py)."""
    out = tmp_path / "s.json"
    assert main(["search", API, "--ascend", str(ascend), "--branches", "master", "--alias", "torch.grad_switch.clone",
                 "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["names"][-1] == "torch.grad_switch.clone" and "torch.set_grad_enabled.clone" in doc["names"]
    assert "`torch.grad_switch.clone` (torch 2." in capsys.readouterr().out


def test_owner_and_sibling_callers_are_related_and_the_home_file_ranks_first(ascend, tmp_path, capsys):
    """At a commit before any clone test, the file whose tests are about set_grad_enabled / no_grad (and never
    name clone) is found and ranked first: it is where the new tests belong."""
    work = tmp_path / "before"
    subprocess.run(["git", "clone", "-q", str(ascend), str(work)], check=True)
    subprocess.run(["git", "rm", "-q", "test/npu/test_grad.py"], cwd=work, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "before"], cwd=work,
                   check=True)
    out = tmp_path / "s.json"
    assert main(["search", API, "--ascend", str(work), "--json", str(out)]) == 0
    text = capsys.readouterr().out
    doc = json.loads(out.read_text())
    members = [(m["name"].rsplit(".", 1)[-1], m["role"]) for m in doc["family"]["members"]]
    assert members[:3] == [("set_grad_enabled", "owner"), ("no_grad", "sibling"), ("enable_grad", "sibling")]
    branch = doc["repos"][0]["branches"][0]
    assert [callfinder.hit_test_id(hit) for hit in branch["hits"]] == [
        "test/npu/test_switches.py::TestSwitches::test_set_grad_enabled",  # the owner's test first
        "test/npu/test_switches.py::TestSwitches::test_no_grad",
        "test/test_autograd.py::TestAutograd::test_sum"]
    assert branch["home"]["path"] == "test/npu/test_switches.py"
    assert ("New tests belong in `test/npu/test_switches.py`: 2 of its 2 tests exercise it: 2 its family (1 its owner "
            "or own module), 2 named for it or its family") in text
    assert "calls set_grad_enabled (owner), not the API itself" in text


def test_an_api_outside_the_table_gets_its_family_too(ascend, tmp_path):
    out = tmp_path / "s.json"
    assert main(["search", "torch.no_grad.clone", "--ascend", str(ascend), "--branches", "v2.7.1",
                 "--json", str(out)]) == 0
    branch = json.loads(out.read_text())["repos"][0]["branches"][0]
    assert branch["home"]["path"] == "test/npu/test_switches.py"
    assert (branch["files"][0]["family"], branch["files"][0]["named"], branch["files"][0]["owner"]) == (2, 2, 1)


def test_branch_names_on_a_normal_clone(ascend, tmp_path, capsys):
    """A normal clone has only master local: v2.7.1 is origin/v2.7.1, said with its commit."""
    clone = clone_of(ascend, tmp_path / "clone")
    out = tmp_path / "s.json"
    assert main(["search", API, "--ascend", str(clone), "--branches", "v2.7.1", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    branch = json.loads(out.read_text())["repos"][0]["branches"][0]
    commit = subprocess.run(["git", "rev-parse", "origin/v2.7.1"], cwd=clone, capture_output=True,
                            text=True).stdout.strip()
    assert (branch["asked"], branch["ref"], branch["commit"]) == ("v2.7.1", "origin/v2.7.1", commit)
    assert f"#### ascend `origin/v2.7.1` ({commit}) (asked: `v2.7.1`)" in text


def test_two_remote_candidates_refuse_and_list_them(ascend, tmp_path, capsys):
    clone = clone_of(ascend, tmp_path / "clone2")
    subprocess.run(["git", "remote", "add", "fork", str(ascend)], cwd=clone, check=True)
    subprocess.run(["git", "fetch", "-q", "fork"], cwd=clone, check=True)
    out = tmp_path / "s.json"
    assert main(["search", API, "--ascend", str(clone), "--branches", "v2.7.1", "--json", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "ambiguous" in err and "fork/v2.7.1, origin/v2.7.1" in err
    assert not out.exists()
    # a local branch wins over remote-tracking ones
    subprocess.run(["git", "branch", "-q", "v2.7.1", "origin/v2.7.1"], cwd=clone, check=True)
    assert main(["search", API, "--ascend", str(clone), "--branches", "v2.7.1", "--json", str(out)]) == 0
    assert json.loads(out.read_text())["repos"][0]["branches"][0]["ref"] == "v2.7.1"
