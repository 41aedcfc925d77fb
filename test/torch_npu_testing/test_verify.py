# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""``verify BRANCH DEST`` end to end on a fake Ascend checkout (real git, real subprocesses).

The checkout (export_repo.py) holds its own ``test/run_test.py`` (fixtures/ascend_ci, written to Ascend's
invocation) and the fixtures in Ascend's two shapes; export merges the small kit file into all four.
Under ``--stand-in-npu`` DEST's run_test.py starts and runs each file; their tests that put tensors on
``npu`` are listed as ``needs npu``; the grad-mode file also runs under both initial grad modes. Without it,
run_test.py cannot start (no torch_npu), the functorch files run directly, and the grad-mode file (which
imports torch_npu at the top) is ``not run: needs an Ascend host`` with its ids from the AST. Bad input is
one line, exit 2, nothing written. Each verify costs a few interpreter starts (about 20 s here).
"""
import hashlib
import json
import sys

import pytest
from export_repo import AOT, CONFIG, GRAD, VMAP, clone, git, make_kit, make_origin

from torch_npu_testing.__main__ import main as cli_main
from torch_npu_testing.verify import record, runfile, targets

FILES = (CONFIG, VMAP, AOT, GRAD)
CONFIG_API = "torch._functorch.config.patch"


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """``(dest, kit)``: a clone of the fake origin at master with the small kit exported into it."""
    root = tmp_path_factory.mktemp("verify")
    origin = make_origin(root / "src")
    dest = clone(origin, root / "dest")
    kit = make_kit(root / "k")
    assert cli_main(["export", "master", str(dest), "--kit", str(kit)]) == 0
    return dest, kit


@pytest.fixture(autouse=True)
def plain_environment(monkeypatch):
    for name in ("IN_CI", "CI", "TEST_REPORT_PATH", "PYTHONPATH", "TORCH_NPU_TESTING_STANDIN_NPU",
                 "TORCH_NPU_TESTING_DEVICE", "TORCH_DEVICE_BACKEND_AUTOLOAD"):
        monkeypatch.delenv(name, raising=False)


def verify(dest, kit, out, *extra):
    return cli_main(["verify", "master", str(dest), "--kit", str(kit), "--python", sys.executable,
                     "--out", str(out), *extra])


def runs_by_path(document):
    (env,) = document["envs"]
    return env, {(run["path"], run["verify"]["kind"], run["initial_grad_mode"]): run for run in env["results"]["runs"]}


@pytest.fixture(scope="module")
def stand_in_record(exported, tmp_path_factory):
    dest, kit = exported
    out = tmp_path_factory.mktemp("out")
    rc = verify(dest, kit, out, "--stand-in-npu")
    return rc, json.loads((out / "verify-master.json").read_text())


def test_stand_in_run_passes_and_records_dest_commit_and_the_bytes_run(exported, stand_in_record):
    dest, _ = exported
    rc, document = stand_in_record
    assert rc == 0, document["problems"]
    assert document["format"] == "torch_npu_testing.verify/2" and document["verdict"] == "pass"
    assert document["dest"]["head"] == git(dest, "rev-parse", "HEAD").strip()
    assert document["stand_in"]["label"] == "stand-in torch_npu, not an NPU run"
    for item in document["files"]:
        assert item["sha256"] == hashlib.sha256((dest / item["path"]).read_bytes()).hexdigest()
        assert item["at_head"] == "modified in the work tree"
    assert [item["path"] for item in document["files"]] == list(FILES)


def test_stand_in_run_uses_dests_run_test_and_lists_every_test_id(exported, stand_in_record):
    _, document = stand_in_record
    env, runs = runs_by_path(document)
    assert env["runner"]["starts"] is True
    assert env["results"]["format"] == "torch_npu_testing.results/2"
    for item in document["files"]:
        run = runs[(item["path"], "file", True)]
        assert run["verify"]["command"][1:5] == ["run_test.py", "-v", "-i", item["path"][5:-3]]
        assert run["verify"]["environment"]["TORCH_DEVICE_BACKEND_AUTOLOAD"] == "1"
        ids = {case["id"] for case in run["cases"]}
        assert set(item["kit_tests"]) <= ids and set(item["their_tests"]) <= ids and item["their_tests"]
        kit_outcomes = {case["outcome"] for case in run["cases"] if case["id"] in item["kit_tests"]}
        assert kit_outcomes <= {"passed", "skipped"}


def test_their_tests_on_npu_are_listed_as_needing_it(stand_in_record):
    _, document = stand_in_record
    _, runs = runs_by_path(document)
    run = runs[(GRAD, "file", True)]
    needs = run["verify"]["needs"]
    assert needs and set(needs.values()) == {"npu"}
    failing = {case["id"] for case in run["cases"] if case["outcome"] in ("error", "failed")}
    assert failing == set(needs)


def test_the_grad_mode_file_also_runs_under_both_initial_grad_modes_from_dest(exported, stand_in_record):
    dest, _ = exported
    _, document = stand_in_record
    env, runs = runs_by_path(document)
    grad = {mode: runs[(GRAD, "grad-mode probe", mode)] for mode in (False, True)}
    sha = hashlib.sha256((dest / GRAD).read_bytes()).hexdigest()
    assert all(run["sha256"] == sha and run["cases"] for run in grad.values())
    (probe,) = env["results"]["grad_mode_isolation"]
    assert probe["path"] == GRAD and probe["same"] is True


@pytest.fixture(scope="module")
def plain_record(exported, tmp_path_factory):
    dest, kit = exported
    out = tmp_path_factory.mktemp("plain")
    rc = verify(dest, kit, out)
    return rc, json.loads((out / "verify-master.json").read_text())


def test_without_stand_in_the_grad_mode_file_is_not_run_and_needs_an_ascend_host(plain_record):
    rc, document = plain_record
    assert rc == 0, document["problems"]
    env, runs = runs_by_path(document)
    assert env["runner"]["starts"] is False and "torch_npu" in env["runner"]["why"]
    run = runs[(GRAD, "file", True)]
    assert run["verify"]["not_run"] == "needs an Ascend host"
    assert "torch_npu" in run["cases"][0]["reason"]
    grad_file = next(item for item in document["files"] if item["path"] == GRAD)
    assert run["verify"]["ids_from_ast"] == grad_file["their_tests"] + grad_file["kit_tests"]
    assert run["verify"]["grad_mode_probe"] == "not run: needs an Ascend host"


def test_without_stand_in_the_functorch_files_run_whole_directly(plain_record):
    _, document = plain_record
    _, runs = runs_by_path(document)
    run = runs[(CONFIG, "file", True)]
    assert run["verify"]["command"][1:] == ["functorch/test_functorch_config_api.py", "-v", "--save-xml",
                                            run["verify"]["environment"]["TEST_REPORT_PATH"]]
    assert run["verify"]["environment"]["IN_CI"] == "1"
    config = next(item for item in document["files"] if item["path"] == CONFIG)
    assert {case["outcome"] for case in run["cases"]} == {"passed"}
    assert run["counts"]["tests"] == len(config["kit_tests"]) + len(config["their_tests"]) == 5


def test_a_failing_kit_test_fails_the_run(tmp_path):
    """One file, run directly (one interpreter start): the kit test's failure is a problem of the run."""
    origin = make_origin(tmp_path / "src")
    dest = clone(origin, tmp_path / "dest")
    kit = make_kit(tmp_path / "k", "kit_failing_api.py")
    assert cli_main(["export", "master", str(dest), "--kit", str(kit)]) == 0
    plan = targets.plan_verify(str(kit), "master", str(dest))
    config = next(target for target in plan.files if target.rel_path == CONFIG)
    run = runfile.run_file(sys.executable, config, plan.dest, False, {"command": "direct", "why": "test"}, {})
    assert run["verify"]["rc"] != 0 and run["verify"]["junit_files"]
    assert run["verify"]["problems"] == ["kit test TestKitFailingFixtureApi.test_fails_on_purpose failed: "
                                         + next(c["reason"] for c in run["cases"] if c["outcome"] == "failed")]
    assert record.problems_of([{"name": "e", "results": {"runs": [run]}}]) == [
        f"e: {CONFIG}: {run['verify']['problems'][0]}"]


# --------------------------------------------------------------------------- bad input
@pytest.fixture(scope="module")
def fresh(tmp_path_factory):
    root = tmp_path_factory.mktemp("fresh")
    origin = make_origin(root / "src")
    return clone(origin, root / "dest"), make_kit(root / "k")


def without_xmlrunner(root):
    """This interpreter, with a finder that hides ``xmlrunner`` (as an env without unittest-xml-reporting)."""
    hide = root / "hide"
    hide.mkdir()
    (hide / "sitecustomize.py").write_text(
        "import sys\n"
        "class Hide:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'xmlrunner':\n"
        "            raise ModuleNotFoundError(name)\n"
        "sys.meta_path.insert(0, Hide())\n")
    python = root / "python-without-xmlrunner"
    python.write_text(f'#!/bin/sh\nPYTHONPATH="{hide}" exec "{sys.executable}" "$@"\n')
    python.chmod(0o755)
    return python


def _bad(capsys, argv, message, out):
    assert cli_main(argv) == 2
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and error[0].startswith("torch_npu_testing: error: ") and message in error[0], error
    assert not out.exists()


@pytest.mark.parametrize("case", ["not a checkout", "no export recorded", "not exported", "file missing",
                                  "unknown api", "unknown env",
                                  "env of another branch", "env without interpreter", "python without torch",
                                  "python without xmlrunner"])
def test_bad_input_is_one_line_exit_2_nothing_written(fresh, exported, tmp_path, capsys, case):
    dest, kit = fresh
    out = tmp_path / "out"
    base = ["verify", "master", str(exported[0]), "--kit", str(exported[1]), "--out", str(out)]
    argv, message = {
        "not a checkout": (["verify", "master", str(tmp_path), "--out", str(out)], "not a git work tree"),
        "no export recorded": (["verify", "master", str(dest), "--kit", str(kit), "--out", str(out)],
                               "no export of master into"),
        "not exported": (["verify", "master", str(dest), "--kit", str(kit), "--out", str(out), "--api", CONFIG_API],
                         "has no kit block"),
        "file missing": (["verify", "master", str(dest), "--kit", str(kit), "--out", str(out), "--api", CONFIG_API],
                         "is not in"),
        "unknown api": (base + ["--api", "torch.nope"], "unknown target API 'torch.nope'"),
        "unknown env": (base + ["--env", "nope"], "--env nope: not an env of master"),
        "env of another branch": (base + ["--env", "v2_12"], "not an env of master"),
        "env without interpreter": (base + ["--env", "master_213"], "no interpreter for env master_213"),
        "python without torch": (base + ["--python", "/bin/false"], "cannot import torch"),
        "python without xmlrunner": (base + ["--python", str(without_xmlrunner(tmp_path))],
                                     "no module xmlrunner (the file's runner needs it): install it with `"),
    }[case]
    if case == "file missing":
        (dest / CONFIG).unlink()
    try:
        _bad(capsys, argv, message, out)
    finally:
        git(dest, "checkout", "-q", "--", ".")


def test_verify_runs_the_task_the_last_export_recorded_and_keys_its_record(tmp_path, capsys):
    """export --api one API, then verify with no --api: only that task's file runs (the other files of the
    branch have no kit block and are not its business), and the record is keyed by branch and task."""
    origin = make_origin(tmp_path / "src")
    dest = clone(origin, tmp_path / "dest")
    kit = make_kit(tmp_path / "k")
    assert cli_main(["export", "master", str(dest), "--kit", str(kit), "--api", CONFIG_API]) == 0
    printed = capsys.readouterr().out
    assert f"git -C {dest} add {CONFIG}\n" in printed
    assert git(dest, "status", "--porcelain").split() == ["M", CONFIG]  # the record is not in DEST's diff
    out = tmp_path / "out"
    assert cli_main(["verify", "master", str(dest), "--kit", str(kit), "--python", sys.executable,
                     "--out", str(out)]) == 0
    assert f"task: {CONFIG_API} (from the last export" in capsys.readouterr().out
    document = json.loads((out / f"verify-master--{CONFIG_API}.json").read_text())
    assert [item["path"] for item in document["files"]] == [CONFIG] and document["api_names"] == [CONFIG_API]
    assert sorted(path.name for path in out.iterdir()) == [f"verify-master--{CONFIG_API}.json"]


def test_an_unknown_stand_in_mode_is_refused_by_the_parser(exported, tmp_path, capsys):
    with pytest.raises(SystemExit) as exited:
        cli_main(["verify", "master", str(exported[0]), "--stand-in-npu=bogus", "--out", str(tmp_path / "o")])
    assert exited.value.code == 2 and not (tmp_path / "o").exists()
