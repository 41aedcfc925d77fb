# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Unit tests of ``python -m torch_npu_testing report``: collecting the envs' results and rendering them.

Results folders are real files in tmp dirs. Most results are built here in the suite's format (with the
results model: ``results.tally``), for the cases a real run cannot produce on demand: an env whose tests
failed, an env that crashed before writing results, corrupt / empty / unknown-format files, a missing
upstream source, APIs absent or not called. One end-to-end test runs the real suite with API-call recording and
then the real ``report`` command (both in this process); SHA-256 values are compared with the
``sha256sum`` binary.
"""
import argparse
import io
import json
import os
import shutil
import subprocess

import pytest

from torch_npu_testing import report
from torch_npu_testing.common import results, table as branches
from torch_npu_testing.suite import run as suite
from torch_npu_testing.common.table import load_apis
from torch_npu_testing.report import collect as collect_module
from torch_npu_testing.common.results import Case, Outcome
from torch_npu_testing.upstream import runner, source

ENVS = ["v2_7", "v2_11", "v2_12", "master_213", "master_214"]
TORCH = {"v2_7": "2.7.1+cpu", "v2_11": "2.11.0+cpu", "v2_12": "2.12.0+cpu", "master_213": "2.13.0+cpu",
         "master_214": "2.14.1+cpu", "v2_9": "2.9.1+cpu"}
CONFIG_FILE = "test/functorch/test_functorch_config_api.py"
GRAD_FILE = suite.GRAD_MODE_FILES[0]
AOT = ("torch._functorch.aot_autograd.aot_export_joint_with_descriptors",
       "torch._functorch.aot_autograd.aot_compile_joint_with_descriptors")
CONFIG_TESTS = [("FunctorchConfigPatch.test_patch_restores", "passed", None),
                ("FunctorchConfigPatch.test_on_accelerator", "skipped", "needs an accelerator | npu or cuda")]
GRAD_TESTS = [("SetGradEnabledClone.test_clone_keeps_mode", "passed", None),
              ("NoGrad.test_no_grad_disables", "passed", None)]


# --------------------------------------------------------------------------- building results
def write_file(root, relative, text):
    path = os.path.join(root, relative)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)
    return path


def make_run(root, path, tests, grad_mode=True):
    """A run in the suite's format; a test is ``(id, outcome, reason or details)``, or
    ``(id, outcome, extra, subtest label)`` for one case of a test with subtests."""
    cases = []
    for test_id, outcome, extra, *subtest in tests:
        skipped = outcome == "skipped"
        cases.append(Case(path, test_id, Outcome(outcome), subtest[0] if subtest else None,
                          reason=extra if skipped else None, details=None if skipped else extra, duration_s=0.01))
    return {"path": path, "sha256": results.sha256_of(os.path.join(root, path)), "initial_grad_mode": grad_mode,
            "cases": results.cases_to_dicts(cases), "counts": results.tally(cases), "duration_s": 0.2}


def isolation(enabled, disabled):
    same = (results.outcome_map(results.cases_from_dicts(enabled["cases"]))
            == results.outcome_map(results.cases_from_dicts(disabled["cases"])))
    return {"path": enabled["path"], "enabled": enabled["counts"], "disabled": disabled["counts"], "same": same}


def api_details(env, called_by, states=None):
    """``api_call_details`` with every manifest API called directly by ``called_by[name]`` (a test id)."""
    states = states or {}
    apis = {}
    for api in load_apis():
        name = api["name"]
        state = states.get(name, "absent" if env == "v2_7" and name in AOT else "direct")
        info = {"task": name, "ascend_task_id": None, "since": api["since"], "test_file": api["test_file"],
                "status": "present", "reason": None, "expected_absent": False, "kind": "python function",
                "defined_at": "torch/x.py:1", "tests": {}, "calls_outside_tests": 0}
        if state in ("absent", "absent_unexpected"):
            info.update(status="absent", reason="torch._functorch.aot_autograd has no attribute 'x'",
                        expected_absent=state == "absent", kind=None, defined_at=None)
        elif state in ("direct", "indirect"):
            info["tests"][called_by[name]] = {
                "direct": int(state == "direct"), "indirect": int(state == "indirect"),
                "direct_sites": [f"{api['test_file']}:10"] if state == "direct" else [],
                "indirect_sites": [] if state == "direct" else ["torch/utils/_contextlib.py:1 (f) from t.py:3"],
                "threads": []}
        apis[name] = info
    return {"torch_version": TORCH.get(env, "2.12.0"), "mechanism": "sys.setprofile", "unmeasured_tests": [],
            "apis": apis}


def make_results(root, env, config_tests=CONFIG_TESTS, grad_tests=GRAD_TESTS, grad_off_tests=None,
                 api_states=None, api_calls=True):
    """A results dict for ``env`` over two real files under ``root`` (written if absent)."""
    for path in (CONFIG_FILE, GRAD_FILE):
        if not os.path.exists(os.path.join(root, path)):
            write_file(root, path, f"# {path}\n")
    runs = [make_run(root, CONFIG_FILE, config_tests), make_run(root, GRAD_FILE, grad_tests),
            make_run(root, GRAD_FILE, grad_tests if grad_off_tests is None else grad_off_tests, grad_mode=False)]
    data = {
        "format": results.FORMAT, "env": env, "started_at": "2026-01-01T00:00:00+00:00", "duration_s": 9.5,
        "command": ["python", "-m", "torch_npu_testing", "suite", "--results", f".tox/results/{env}.json",
                    "--api-calls"],
        "cwd": str(root),
        "probe": {"python": "3.11.7", "python_executable": f"{root}/.tox/{env}/bin/python",
                  "platform": "Linux-x86_64", "machine": "x86_64",
                  "torch": {"version": TORCH.get(env, "2.12.0"), "file": "/site/torch", "cuda_build": None,
                            "git_version": "abc"},
                  "torch_npu": {"installed_version": None, "file": None, "imported": False, "version": None},
                  "cann": {"version": None, "file": None},
                  "device": {"type": "cpu", "reason": "no NPU or other accelerator available", "notes": [],
                             "count": 1},
                  "initial_grad_mode": True,
                  "environment": {"TORCH_DEVICE_BACKEND_AUTOLOAD": "0", "TORCH_NPU_TESTING_DEVICE": None,
                                  "TOX_ENV_NAME": env}},
        "runs": runs,
        "grad_mode_isolation": [isolation(runs[1], runs[2])],
        "totals": suite.totals(runs),
    }
    if api_calls:
        details = api_details(env, {name: (GRAD_TESTS[0][0] if name.endswith("clone") else CONFIG_TESTS[0][0])
                                    for name in (api["name"] for api in load_apis())}, api_states)
        data["api_calls"] = {name: list(info["tests"]) for name, info in details["apis"].items()}
        data["api_call_details"] = details
    return data


def write_results(results_dir, env, data):
    os.makedirs(results_dir, exist_ok=True)
    with open(os.path.join(results_dir, f"{env}.json"), "w", encoding="utf-8") as handle:
        json.dump(data, handle)


@pytest.fixture
def workspace(tmp_path):
    """``(root, results_dir)`` with good results for the four default envs."""
    results_dir = tmp_path / "results"
    for env in ENVS:
        write_results(results_dir, env, make_results(tmp_path, env))
    return tmp_path, results_dir


def build(results_dir, envs=ENVS, upstream=None):
    upstream = [upstream] if isinstance(upstream, (str, os.PathLike)) else upstream
    doc = collect_module.collect_results(str(results_dir), envs, load_apis(), upstream)
    return doc, report.render(doc)


def run_main(results_dir, out_dir, *extra):
    parser = argparse.ArgumentParser()
    report.add_arguments(parser)
    return report.main(parser.parse_args(["--results", str(results_dir), "--out", str(out_dir), *extra]))


# --------------------------------------------------------------------------- the clean case
def test_clean_results_pass_and_render_every_section_in_template_order(workspace, capsys):
    root, results_dir = workspace
    assert run_main(results_dir, root / "reports") == 0
    markdown_path = capsys.readouterr().out.strip()
    assert markdown_path == str(root / "reports" / "report.md")
    text = open(markdown_path, encoding="utf-8").read()
    assert "**Result: PASS**" in text
    positions = [text.index(heading) for heading in
                 ("| | `v2_7` | `v2_11` | `v2_12` | `master_213` | `master_214` |", "## 【测试环境】", "## 【测试命令】",
                  "## 【测试日志】", "## 【upstream patch 实跑日志】")]
    assert positions == sorted(positions)
    assert f"| `{CONFIG_FILE}` | 1 passed, 1 skipped | 1 passed, 1 skipped |" in text
    assert f"| `{GRAD_FILE}` (grad mode disabled at start) | 2 passed |" in text
    assert "| target APIs called by a test | 3/5 called, 2 absent in this torch | 5/5 called |" in text
    assert "Totals: 3 tests, 3 cases run: 3 passed, 1 skipped." not in text  # counts are per case
    assert "Totals: 6 tests, 6 cases run: 5 passed, 1 skipped." in text
    doc = json.load(open(root / "reports" / "report.json", encoding="utf-8"))
    assert doc["verdict"] == "pass" and doc["problems"] == []
    assert doc["envs"][2]["results"]["env"] == "v2_12"  # the raw results the report was made from


def test_each_test_is_listed_with_its_outcome_and_skip_reason_escaped(workspace):
    _, results_dir = workspace
    _, text = build(results_dir)
    assert "| `FunctorchConfigPatch.test_patch_restores` | passed |" in text
    assert "| `FunctorchConfigPatch.test_on_accelerator` | skipped: needs an accelerator \\| npu or cuda |" in text
    assert "- 2 tests, 2 cases: passed 1, failed 0, skipped 1, errors 0 (0.2 s)" in text


def test_environment_and_exact_commands_are_shown(workspace):
    root, results_dir = workspace
    _, text = build(results_dir)
    environment = text[text.index("## 【测试环境】"):text.index("## 【测试命令】")]
    assert "| torch | 2.11.0+cpu from `/site/torch` |" in environment
    assert "| torch_npu | not installed |" in environment
    assert "| CANN | not found |" in environment
    assert "| Device | cpu x1: no NPU or other accelerator available |" in environment
    assert "| Initial grad mode | enabled |" in environment
    assert (f"cd {root} && TORCH_DEVICE_BACKEND_AUTOLOAD=0 TOX_ENV_NAME=v2_12 {root}/.tox/v2_12/bin/python -m "
            "torch_npu_testing suite --results .tox/results/v2_12.json --api-calls") in text
    assert "tox -e v2_7,v2_11,v2_12,master_213,master_214,upstream,report" in text


def test_grad_mode_isolation_shows_both_initial_modes(workspace):
    _, results_dir = workspace
    _, text = build(results_dir)
    assert f"| `{GRAD_FILE}` | 2 passed | 2 passed | yes |" in text


# --------------------------------------------------------------------------- failures
def test_an_env_whose_tests_failed_fails_the_report_and_shows_the_failure(workspace, capsys):
    root, results_dir = workspace
    tests = CONFIG_TESTS + [("FunctorchConfigPatch.test_bad", "failed", "Traceback...\nAssertionError: 1 != 2")]
    write_results(results_dir, "v2_12", make_results(root, "v2_12", config_tests=tests))
    assert run_main(results_dir, root / "reports") == 1
    assert f"v2_12: {CONFIG_FILE}: FunctorchConfigPatch.test_bad failed" in capsys.readouterr().err
    text = (root / "reports" / "report.md").read_text(encoding="utf-8")
    assert "**Result: FAIL** — 1 problem(s)" in text
    assert "| 1 passed, **1 failed**, 1 skipped |" in text
    assert "| `FunctorchConfigPatch.test_bad` | **failed** |" in text  # details, no reason recorded
    assert "```text\nTraceback...\nAssertionError: 1 != 2\n```" in text


def test_a_file_that_could_not_be_imported_is_shown_with_its_traceback(workspace):
    root, results_dir = workspace
    data = make_results(root, "v2_11")
    details = "Traceback (most recent call last):\nSyntaxError: ``` in a string\n"
    data["runs"][0] = dict(make_run(root, CONFIG_FILE, [("<import>", "error", details)]), import_error=details)
    write_results(results_dir, "v2_11", data)
    doc, text = build(results_dir)
    assert doc["problems"] == [f"v2_11: {CONFIG_FILE} could not be imported"]
    assert "- **the file could not be imported**" in text
    assert "````text\nTraceback (most recent call last):\nSyntaxError: ``` in a string\n````" in text


def test_an_expected_env_without_results_is_listed_as_not_run(workspace):
    root, results_dir = workspace
    os.remove(results_dir / "master_214.json")
    (results_dir / "v2_11.json").rename(results_dir / "v2_11.json.tmp")  # crashed while writing
    doc, text = build(results_dir)
    states = {entry["name"]: entry["state"] for entry in doc["envs"]}
    assert states == {"v2_7": "ok", "v2_11": "missing", "v2_12": "ok", "master_213": "ok", "master_214": "missing"}
    assert ("| environment | torch 2.7.1+cpu, cpu x1 | **no results** | torch 2.12.0+cpu, cpu x1 | "
            "torch 2.13.0+cpu, cpu x1 | **no results** |") in text
    assert ("**no results: env did not run or crashed before writing results** "
            f"(`{results_dir}/master_214.json`)") in text
    assert ("v2_11: no results: env did not run or crashed before writing results "
            "(a partial v2_11.json.tmp was left behind)") in doc["problems"][0]
    assert doc["verdict"] == "fail"


def test_expected_envs_are_configurable_and_extra_results_are_still_shown(workspace, monkeypatch):
    root, results_dir = workspace
    write_results(results_dir, "installed", make_results(root, "installed"))
    doc, _ = build(results_dir, envs=collect_module.expected_envs("v2_12, master_213"))
    assert [entry["name"] for entry in doc["envs"]] == ["v2_12", "master_213", "installed", "master_214", "v2_11",
                                                        "v2_7"]
    monkeypatch.setenv(collect_module.ENVS_VARIABLE, "v2_12,npu_host")
    assert collect_module.expected_envs() == ["v2_12", "npu_host"]
    doc, _ = build(results_dir, envs=collect_module.expected_envs())
    assert doc["envs"][1]["state"] == "missing" and doc["verdict"] == "fail"
    monkeypatch.delenv(collect_module.ENVS_VARIABLE)
    assert collect_module.expected_envs() == ENVS


@pytest.mark.parametrize("content, state, message", [
    ('{"format": "torch_npu_testing.results/2", "runs": [', "corrupt", "results file is not valid JSON"),
    ("", "corrupt", "results file is empty"),
    ('{"format": "torch_npu_testing.results/1", "runs": []}', "unknown_format",
     "results format 'torch_npu_testing.results/1' is not 'torch_npu_testing.results/2' "
     "(written by an older or "
     "newer torch_npu_testing, or not a results file): not interpreted; re-run it (tox -e v2_12)"),
    ('{"passed": 3}', "unknown_format", "results format None is not"),
    ('[1, 2]', "unknown_format", "results format None is not"),
    ('{"format": "torch_npu_testing.results/2", "env": "v2_12"}', "invalid",
     "results file is incomplete: missing 'started_at'"),
])
def test_corrupt_or_foreign_results_are_reported_not_dropped(workspace, content, state, message):
    root, results_dir = workspace
    (results_dir / "v2_12.json").write_text(content, encoding="utf-8")
    doc, text = build(results_dir)
    entry = doc["envs"][2]
    assert (entry["name"], entry["state"]) == ("v2_12", state)
    assert entry["message"].startswith(message)
    assert doc["problems"] == [f"v2_12: {entry['message']} ({results_dir}/v2_12.json)"]
    assert f"**{entry['message']}**" in text
    assert run_main(results_dir, root / "reports") == 1


def test_a_results_folder_that_does_not_exist_lists_every_env_missing(tmp_path):
    doc, text = build(tmp_path / "nowhere")
    assert [entry["state"] for entry in doc["envs"]] == ["missing"] * 5
    assert "does not exist" in doc["notes"][0]
    assert len(doc["problems"]) == 5


def test_a_file_that_changed_since_the_run_makes_the_results_stale(workspace):
    root, results_dir = workspace
    write_file(root, CONFIG_FILE, "# edited after the envs ran\n")
    doc, text = build(results_dir)
    now = results.sha256_of(root / CONFIG_FILE)
    assert f"v2_7: {CONFIG_FILE} changed since this run (now {now}); the results are stale, re-run the env" \
        in doc["problems"]
    assert "— **changed since this run" in text


def test_a_grad_mode_dependent_file_fails_the_isolation_probe(workspace):
    root, results_dir = workspace
    off = [GRAD_TESTS[0], ("NoGrad.test_no_grad_disables", "failed", "AssertionError")]
    write_results(results_dir, "master_214", make_results(root, "master_214", grad_off_tests=off))
    doc, text = build(results_dir)
    assert f"master_214: {GRAD_FILE} fails with grad mode disabled at start" in doc["problems"]
    assert f"master_214: {GRAD_FILE} outcomes depend on the initial grad mode" in doc["problems"]
    assert f"| `{GRAD_FILE}` | 1 passed, **1 failed** | 2 passed | **no** |" in text


def test_a_file_run_by_other_envs_but_not_this_one_is_a_problem(workspace):
    root, results_dir = workspace
    data = make_results(root, "v2_11")
    data["runs"] = data["runs"][1:]
    write_results(results_dir, "v2_11", data)
    doc, text = build(results_dir)
    assert f"v2_11: {CONFIG_FILE} was not run in this env (other envs ran it)" in doc["problems"]
    assert f"| `{CONFIG_FILE}` | 1 passed, 1 skipped | not run |" in text


# --------------------------------------------------------------------------- API coverage
def test_an_api_called_by_no_test_fails(workspace):
    root, results_dir = workspace
    write_results(results_dir, "v2_12", make_results(root, "v2_12", api_states={AOT[1]: "not_called"}))
    doc, text = build(results_dir)
    assert doc["problems"] == [f"v2_12: API {AOT[1]}: called by no test"]
    assert f"| `{AOT[1]}` | the API name; Ascend task id not set | **FAIL: called by no test** | 0 | 0 |" in text
    assert "| 5/5 called | 4/5 called, **1 not proven** | 5/5 called |" in text


def test_an_api_absent_from_this_torch_is_not_a_failure_unless_it_should_exist(workspace):
    root, results_dir = workspace
    doc, text = build(results_dir)
    assert "absent in this torch (2.7.1+cpu; added in 2.9) — not a failure" in text
    write_results(results_dir, "v2_12", make_results(root, "v2_12", api_states={AOT[0]: "absent_unexpected"}))
    doc, _ = build(results_dir)
    assert doc["problems"] == [f"v2_12: API {AOT[0]}: absent in torch 2.12.0+cpu, expected since 2.9: "
                               "torch._functorch.aot_autograd has no attribute 'x'"]


def test_an_api_only_torch_called_is_not_proven(workspace):
    root, results_dir = workspace
    clone = "torch.autograd.grad_mode.set_grad_enabled.clone"
    write_results(results_dir, "v2_11", make_results(root, "v2_11", api_states={clone: "indirect"}))
    doc, text = build(results_dir)
    assert doc["problems"] == [
        f"v2_11: API {clone}: no test calls it explicitly; only torch called it on a test's behalf"]
    assert (f"  - only through torch in `{GRAD_FILE}`:\n"
            "    - `SetGradEnabledClone.test_clone_keeps_mode` (1 call): torch/utils/_contextlib.py:1 (f) from t.py:3"
            ) in text


def test_results_without_api_call_measurement_are_not_proof(workspace):
    root, results_dir = workspace
    write_results(results_dir, "v2_7", make_results(root, "v2_7", api_calls=False))
    doc, _ = build(results_dir)
    assert len(doc["problems"]) == 5
    assert doc["problems"][0] == ("v2_7: API torch._functorch.config.patch: not measured: the suite ran without "
                                  "--api-calls")


def test_called_apis_name_the_test_and_the_call_site(workspace):
    _, results_dir = workspace
    _, text = build(results_dir)
    assert "| `torch._functorch.config.patch` | the API name; Ascend task id not set | ok | 1 | 0 |" in text
    assert ("- `torch._functorch.config.patch` (python function: torch/x.py:1)\n"
            f"  - called explicitly in `{CONFIG_FILE}`:\n"
            "    - `FunctorchConfigPatch.test_patch_restores` (1 call): line 10\n") in text


# --------------------------------------------------------------------------- upstream
def test_without_a_pytorch_source_upstream_is_one_line_and_not_a_failure(workspace):
    root, results_dir = workspace
    doc, text = build(results_dir)
    [upstream] = doc["upstream"]
    assert upstream["state"] == "absent" and doc["verdict"] == "pass"
    assert text.rstrip().endswith(upstream["message"])
    assert upstream["message"].startswith("not run: no upstream results")
    # what `upstream run --if-source` writes when it is given no source
    runner.write_results(results_dir / "upstream.json", runner.skipped_document(source.NO_SOURCE))
    doc, text = build(results_dir)
    assert doc["upstream"][0]["state"] == "skipped" and doc["verdict"] == "pass"
    assert f"### torch not recorded (`{results_dir}/upstream.json`)\n\nnot run: no PyTorch source" in text
    assert [entry["name"] for entry in doc["envs"]] == ENVS  # upstream.json is not read as an env


PATCH = "test/functorch/test_aot_joint_with_descriptors.py.patch"
TARGET = "test/functorch/test_aot_joint_with_descriptors.py"


def upstream_document(tests, applies=True, base_matches=True, stale=(), torch="2.13.0+cpu"):
    """An upstream results document made by the upstream tool's own ``results_document``; a test is
    ``(id, outcome, reason, details)`` or with a fifth item, its subtest label."""
    cases = [Case(TARGET, test_id, Outcome(outcome), *subtest, reason=reason, details=details)
             for test_id, outcome, reason, details, *subtest in tests]
    data = {"patch": PATCH, "target": TARGET, "source": "/src/pytorch",
            "upstream": {"repo": "pytorch/pytorch", "tag": None, "note": "newer than v2.13.0",
                         "commit": "0099ec9f1e34286980b5e35da6173ff6f19c0e33"},
            "recorded_base": "a" * 40, "base_blob": ("a" if base_matches else "b") * 40,
            "base_matches": base_matches, "applies": applies, "python_executable": "/venv/bin/python",
            "python": "3.11.7", "torch": torch, "device": "cpu", "seconds": 4.2,
            "counts": results.tally(cases), "stale_expected_failures": list(stale), "log": None}
    return runner.results_document("/src/pytorch", [runner.PatchRun(data=data, tests=cases)])


def test_upstream_results_show_the_patch_and_expected_failures_with_reasons(workspace):
    root, results_dir = workspace
    tests = [("TestAOTJointWithDescriptors.test_simple", "passed", None, None),
             ("TestAOTJointWithDescriptors.test_inductor", "expected_failure",
              "inductor codegen not supported for npu", "RuntimeError"),
             ("TestAOTJointWithDescriptors.test_cuda_only", "skipped", "needs CUDA", None)]
    runner.write_results(results_dir / "upstream.json", upstream_document(tests, base_matches=False))
    doc, text = build(results_dir)
    assert doc["verdict"] == "pass"
    section = text[text.index("## 【upstream patch 实跑日志】"):]
    assert f"### torch 2.13.0+cpu (`{results_dir}/upstream.json`)\n\n#### `{PATCH}`" in section
    assert ("- patches `test/functorch/test_aot_joint_with_descriptors.py` of pytorch/pytorch commit 0099ec9f1e34 "
            "(newer than v2.13.0)") in section
    assert ("- base file matches the patch: **no**: the patch records base `" + "a" * 40 + "`, the source has `"
            + "b" * 40 + "` (the patch still applies)\n- patch applies: yes\n"
            "- torch 2.13.0+cpu, device cpu, python `/venv/bin/python`, 4.2 s\n"
            "- 3 tests, 3 cases: 1 passed, 1 skipped, 1 expected failure") in section
    assert ("| `TestAOTJointWithDescriptors.test_inductor` | expected_failure: inductor codegen not supported "
            "for npu |") in section
    assert (f"- torch 2.13.0+cpu (`{results_dir}/upstream.json`): {PATCH}: 1 passed, 1 skipped, "
            "1 expected failure") in text
    assert (f"cd {os.getcwd()} && PYTORCH_SRC=/src/pytorch /venv/bin/python -m torch_npu_testing upstream run "
            f"--results {results_dir}/upstream.json") in text


def test_upstream_results_per_torch_are_shown_separately(workspace):
    """The upstream env writes upstream-<torch>.json per torch: each is read and shown under its torch."""
    _, results_dir = workspace
    passing = [("T.test_table", "passed", None, None, f"(n={n})") for n in range(3)]
    failing = passing[:2] + [("T.test_table", "failed", "AssertionError: 2", "Traceback\nAssertionError: 2", "(n=2)")]
    runner.write_results(results_dir / "upstream-2.13.0.json", upstream_document(passing))
    runner.write_results(results_dir / "upstream-2.14.1.json", upstream_document(failing, torch="2.14.1+cpu"))
    doc, text = build(results_dir)
    assert [upstream["torch"] for upstream in doc["upstream"]] == ["2.13.0+cpu", "2.14.1+cpu"]
    assert [entry["name"] for entry in doc["envs"]] == ENVS
    assert doc["problems"] == [f"upstream {PATCH} (torch 2.14.1+cpu): T.test_table (n=2) failed (AssertionError: 2)"]
    section = text[text.index("## 【upstream patch 实跑日志】"):]
    first = section.index(f"### torch 2.13.0+cpu (`{results_dir}/upstream-2.13.0.json`)")
    second = section.index(f"### torch 2.14.1+cpu (`{results_dir}/upstream-2.14.1.json`)")
    assert first < second
    assert "| `T.test_table` | 3 cases, all passed <details><summary>labels</summary>(n=0), (n=1), (n=2)</details> |" \
        in section[first:second]
    assert ("| `T.test_table` | 3 cases; 2 passed <details><summary>labels</summary>(n=0), (n=1)</details>; "
            "`(n=2)` **failed**: AssertionError: 2 |") in section[second:]
    assert "```text\nTraceback\nAssertionError: 2\n```" in section[second:]
    # --upstream picks files explicitly
    doc, _ = build(results_dir, upstream=str(results_dir / "upstream-2.13.0.json"))
    assert [upstream["torch"] for upstream in doc["upstream"]] == ["2.13.0+cpu"] and doc["verdict"] == "pass"


def test_upstream_failures_fail_the_report_and_stale_expectations_are_noted(workspace):
    _, results_dir = workspace
    tests = [("T.test_x", "failed", "AssertionError", "Traceback\nBoom"),
             ("T.test_y", "unexpected_success", "passed, but expected to fail", None)]
    runner.write_results(results_dir / "upstream.json", upstream_document(tests, stale=["T.test_gone"]))
    doc, text = build(results_dir)
    where = f"upstream {PATCH} (torch 2.13.0+cpu)"
    assert doc["problems"] == [f"{where}: T.test_x failed (AssertionError)"]
    assert "| `T.test_x` | **failed**: AssertionError |" in text
    assert "```text\nTraceback\nBoom\n```" in text
    assert f"{where}: the manifest expects T.test_gone to fail here, but no such test ran" in doc["notes"]
    assert any("T.test_y passed although the manifest expects it to fail" in note for note in doc["notes"])


@pytest.mark.parametrize("content, message", [
    ("{", "results file is not valid JSON"),
    ('{"kind": "torch_npu_testing.upstream", "format": 1, "patches": []}',
     "results format 1 is not 'torch_npu_testing.results/2' (written by an older or newer torch_npu_testing, or "
     "not a results file): not interpreted; re-run it (tox -e upstream)"),
    ('{"kind": "other", "format": "torch_npu_testing.results/2", "patches": []}', "not upstream results"),
    ('{"kind": "upstream", "format": "torch_npu_testing.results/2", "patches": []}',
     "upstream results list no patch"),
    ('{"kind": "upstream", "format": "torch_npu_testing.results/2", "patches": [{"cases": [{"id": "x"}]}]}',
     "upstream results are incomplete: a case lacks 'file'"),
])
def test_corrupt_or_unknown_upstream_results_fail_the_report(workspace, content, message):
    _, results_dir = workspace
    (results_dir / "upstream.json").write_text(content, encoding="utf-8")
    doc, text = build(results_dir)
    assert doc["problems"][0].startswith(f"upstream: {message}")
    assert f"**{doc['upstream'][0]['message']}**" in text


def test_maintenance_envs_are_shown_but_not_required(workspace):
    root, results_dir = workspace
    write_results(results_dir, "v2_9", make_results(root, "v2_9"))
    doc, text = build(results_dir, envs=collect_module.expected_envs())
    assert doc["expected_envs"] == branches.default_envs() == ENVS
    assert [entry["name"] for entry in doc["envs"]] == ENVS + ["v2_9"] and doc["verdict"] == "pass"
    assert "| `master_214` | `v2_9` (maintenance) |" in text
    assert "### v2_9 (maintenance: Ascend branch v2.9.0, not required)" in text
    os.remove(results_dir / "v2_9.json")
    doc, _ = build(results_dir, envs=collect_module.expected_envs())
    assert [entry["name"] for entry in doc["envs"]] == ENVS and doc["verdict"] == "pass"


def test_subtest_cases_are_counted_and_folded(workspace):
    root, results_dir = workspace
    table = [("FunctorchConfigPatch.test_table", "passed", None, f"(n={n})") for n in range(72)]
    write_results(results_dir, "v2_12", make_results(root, "v2_12", config_tests=CONFIG_TESTS + table))
    doc, text = build(results_dir)
    assert doc["verdict"] == "pass"
    assert f"| `{CONFIG_FILE}` | 1 passed, 1 skipped | 1 passed, 1 skipped | 73 passed, 1 skipped |" in text
    assert "- 3 tests, 74 cases: passed 73, failed 0, skipped 1, errors 0 (0.2 s)" in text
    assert ("| `FunctorchConfigPatch.test_table` | 72 cases, all passed <details><summary>labels</summary>(n=0), "
            "(n=1), ") in text


# --------------------------------------------------------------------------- SHA-256
@pytest.mark.skipif(shutil.which("sha256sum") is None, reason="the sha256sum binary is not installed")
def test_sha256_values_equal_the_sha256sum_binary(tmp_path):
    contents = {"empty.py": b"", "text.py": "# 中文 comment\nprint('x')\n".encode(), "big.py": os.urandom(200_000)}
    for name, data in contents.items():
        (tmp_path / name).write_bytes(data)
        expected = subprocess.run(["sha256sum", str(tmp_path / name)], capture_output=True, text=True,
                                  check=True).stdout.split()[0]
        assert results.sha256_of(str(tmp_path / name)) == expected


# --------------------------------------------------------------------------- end to end
REAL_FILE = '''\
from torch_npu_testing import TestCase, run_tests

import torch


class SetGradEnabledClone(TestCase):
    def test_clone_keeps_mode(self):
        self.assertFalse(torch.set_grad_enabled(False).clone().mode)
        torch.set_grad_enabled(True)

    def test_fails_on_purpose(self):
        torch.testing.assert_close(torch.tensor(1.0), torch.tensor(2.0), atol=0, rtol=0)


if __name__ == "__main__":
    run_tests()
'''


@pytest.mark.skipif(shutil.which("sha256sum") is None, reason="the sha256sum binary is not installed")
def test_real_suite_results_render_with_failures_and_coverage(tmp_path, monkeypatch, capsys):
    """The real suite (in this process, with --api-calls) writes results; the real report renders them."""
    (tmp_path / "test_clone_api.py").write_text(REAL_FILE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TORCH_NPU_TESTING_DEVICE", "cpu")
    monkeypatch.delenv("IN_CI", raising=False)
    document = suite.run_suite(["test_clone_api.py"], "results/v2_12.json", api_calls=True, stream=io.StringIO(),
                               env_name="v2_12")
    assert results.failed_count(document["totals"]) == 1  # one test fails on purpose
    assert run_main("results", "out", "--envs", "v2_12,master_213") == 1
    assert capsys.readouterr().out.strip() == "out/report.md"
    text = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    digest = subprocess.run(["sha256sum", str(tmp_path / "test_clone_api.py")], capture_output=True, text=True,
                            check=True).stdout.split()[0]
    assert f"- SHA-256: `{digest}`" in text
    assert "| `SetGradEnabledClone.test_fails_on_purpose` | **failed**: AssertionError: Scalars are not equal! |" \
        in text
    assert "AssertionError: Scalars are not equal!" in text
    assert ("  - called explicitly in `test_clone_api.py`:\n"
            "    - `SetGradEnabledClone.test_clone_keeps_mode` (1 call): line 8\n") in text
    assert "**FAIL: called by no test**" in text  # the other four APIs: this file does not call them
    assert "**no results: env did not run or crashed before writing results**" in text  # master_213
    doc = json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))
    problems = doc["problems"]
    assert "v2_12: test_clone_api.py: SetGradEnabledClone.test_fails_on_purpose failed" in problems
    assert problems[-1].startswith("master_213: no results")


# --------------------------------------------------------------------------- implementation coverage
def coverage_block(torch_version, statuses):
    """A suite ``coverage`` block: every manifest API measured (40/52, 10/16) unless ``statuses`` says else."""
    apis = {}
    for api in load_apis():
        status = statuses.get(api["name"], "measured")
        entry = {"title": api["title"], "test_file": api["test_file"], "status": status, "regions": [],
                 "note": {"c_implementation": "C implementation, not measured", "absent": "absent"}.get(status)}
        if status == "measured":
            entry.update(lines={"covered": 40, "total": 52}, branches={"covered": 10, "total": 16},
                         unreached=[{"file": "torch/utils/_config_module.py", "name": "ConfigPatch.__exit__",
                                     "start": 812, "end": 814, "source": "if self.x | y:"}],
                         partial_branches=[{"file": "torch/utils/_config_module.py", "name": "ConfigModule.patch",
                                            "line": 790, "missing_to": ["exit"], "source": "if changes:"}])
        apis[api["name"]] = entry
    return {"format": "torch_npu_testing.coverage/1", "torch_version": torch_version, "tool": "coverage.py",
            "apis": apis}


def test_implementation_coverage_per_api_and_env_with_unreached_lines(workspace):
    root, results_dir = workspace
    batch = "torch._functorch.vmap._add_batch_dim"
    for env in ("v2_7", "master_213"):
        data = make_results(root, env)
        statuses = {batch: "c_implementation", AOT[0]: "absent", AOT[1]: "absent"} if env == "v2_7" else {}
        data["coverage"] = coverage_block(TORCH[env], statuses)
        write_results(results_dir, env, data)
    doc, text = build(results_dir)
    assert doc["verdict"] == "pass"  # figures inform, they never fail the report
    rows = {entry["name"]: entry["implementation_coverage"] for entry in doc["envs"]}
    master = {row["name"]: row for row in rows["master_213"]}
    assert master[batch]["line"] == "lines 40/52, branches 10/16 on torch 2.13.0"
    old = {row["name"]: row["line"] for row in rows["v2_7"]}
    assert old[batch] == "C implementation, not measured on torch 2.7.1"
    assert old[AOT[0]] == "absent on torch 2.7.1"
    assert {row["text"] for row in rows["v2_12"]} == {
        "not measured: the suite ran with --no-coverage (or wrote no coverage)"}
    assert ("| `_add_batch_dim` | C implementation, not measured | not measured: the suite ran with --no-coverage "
            "(or wrote no coverage) | not measured: the suite ran with --no-coverage (or wrote no coverage) | "
            "lines 40/52, branches 10/16 |") in text
    assert ("  - `torch/utils/_config_module.py` 812-814 in `ConfigPatch.__exit__`: `if self.x | y:`") in text
    assert ("  - branch never taken: `torch/utils/_config_module.py` 790 in `ConfigModule.patch` (to exit): "
            "`if changes:`") in text
