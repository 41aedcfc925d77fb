# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""``mutate`` end to end on a fake API package (fixtures/mutate): a strong and a weak test file of it.

Each file runs once per module (real subprocesses, forked children, a temp copy of the fixtures) and the
tests read its JSON and output: killed, survived (one explained by the docstring), timeout, no effect, not
applicable and not reached; the calls the package makes for itself left alone; fork and fresh-process
modes giving the same outcomes.
"""
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "mutate"
APIS = ("fakeapi.scale", "fakeapi.Level.clone", "fakeapi.settings.lookup")


def _mutate(folder, file, *options):
    command = [sys.executable, "-m", "torch_npu_testing", "mutate", file, "--internal-package", "fakeapi",
               "--jobs", "2", "--json", "out.json"]
    if "--api" not in options:
        command += [part for api in APIS for part in ("--api", api)]
    return subprocess.run(command + list(options), cwd=folder, capture_output=True, text=True, timeout=300,
                          check=False)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """``{name: (CompletedProcess, document)}`` of the strong file, the weak file and the weak file's
    Level.clone mutants in fresh processes."""
    found = {}
    for name, file, options, status in (
            ("strong", "test_strong_api.py", ("--fail-under", "95"), 1),
            ("weak", "test_weak_api.py", ("--timeout", "3"), 0),
            ("fresh", "test_weak_api.py", ("--timeout", "3", "--api", "fakeapi.Level.clone", "--fresh-processes",
                                           "--quiet"), 0)):
        folder = tmp_path_factory.mktemp(name)
        shutil.copytree(FIXTURES, folder, dirs_exist_ok=True)
        done = _mutate(folder, file, *options)
        assert done.returncode == status, done.stderr
        found[name] = (done, json.loads((folder / "out.json").read_text()))
    return found


def _outcomes(document, api):
    block = next(block for block in document["apis"] if block["name"] == api)
    return {record["code"]: record for record in block["mutants"]}


def test_the_document_names_its_format_and_each_apis_kind(runs):
    _, document = runs["strong"]
    assert document["format"] == "torch_npu_testing.mutate/3"
    assert document["device"] is None  # no --device: no device block
    assert document["mode"] == "fork" and document["fresh_reasons"] == []
    assert {block["name"]: block["kind"] for block in document["apis"]} == {
        "fakeapi.scale": "python function", "fakeapi.Level.clone": "method",
        "fakeapi.settings.lookup": "shared method"}


def test_a_strong_file_kills_the_faults_it_can_observe(runs):
    done, document = runs["strong"]
    scale = _outcomes(document, "fakeapi.scale")
    for code in ("param-int+1:factor", "param-default:offset", "args-contiguous", "result-shift", "result-int+1",
                 "result-bf16", "result-narrow", "result-contiguous", "result-detached", "result-transposed",
                 "error-type", "error-swallowed", "state-grad-flipped"):
        assert scale[code]["outcome"] == "killed", code
        assert scale[code]["killed_by"].startswith("TestScale."), code
    assert scale["result-narrow"]["killed_by"] == "TestScale.test_floating_values_strides_and_history"
    assert scale["result-cpu"]["outcome"] == "no effect"  # a CPU run: the result is on the CPU already
    assert scale["result-view-copy"]["outcome"] == "not applicable"  # scale never returns a view
    assert scale["result-once-differentiable"]["killed_by"] == "TestScale.test_second_order_gradients"
    assert _outcomes(document, "fakeapi.settings.lookup")["error-message-generic"]["outcome"] == "killed"
    assert "strength fakeapi.scale: killed 15 of 15 (0 survived, 0 timeouts, 4 not reached, 3 no effect, " \
           "5 not applicable)" in done.stdout  # not reached: no in-place write, module, RNG draw or warning


def test_a_survivor_the_docstring_explains_stays_scored_and_is_marked(runs):
    done, document = runs["strong"]
    clone = _outcomes(document, "fakeapi.Level.clone")
    assert clone["copy-self"]["outcome"] == "survived"
    assert "never re-enters it" in clone["copy-self"]["explained"]
    for code in ("cm-exit-no-restore", "cm-enter-noop", "decorator-unchanged", "decorator-no-wraps"):
        assert clone[code]["outcome"] == "killed", code
    block = next(block for block in document["apis"] if block["name"] == "fakeapi.Level.clone")
    assert block["strength"]["killed"] == 4 and block["strength"]["scored"] == 5
    assert "survived: copy-self: clone() returns self instead of a new object (explained: " in done.stdout


def test_a_weak_file_shows_survivors_timeouts_and_where_it_never_looks(runs):
    done, document = runs["weak"]
    scale = _outcomes(document, "fakeapi.scale")
    assert scale["result-int+1"]["outcome"] == "timeout"  # the waiting test never sees its value
    assert scale["result-bf16"]["outcome"] == "no effect"  # small integers are exact in bfloat16
    assert scale["state-grad-flipped"]["outcome"] == "survived"
    assert scale["result-narrow"]["outcome"] == "survived"
    assert scale["args-contiguous"]["outcome"] == "not reached"  # no non-contiguous input
    assert scale["param-int+1:factor"]["killed_by"] == "TestScaleWeakly.test_small_integer_values"
    clone = _outcomes(document, "fakeapi.Level.clone")
    assert clone["copy-self"]["outcome"] == "survived" and clone["copy-self"]["explained"] is None
    assert clone["cm-enter-noop"]["outcome"] == "not reached"  # the weak file never enters a clone
    lookup = _outcomes(document, "fakeapi.settings.lookup")
    assert lookup["result-shift"]["outcome"] == "not applicable"  # an int, not a tensor
    assert lookup["param-default:default"]["outcome"] == "not reached"
    block = next(block for block in document["apis"] if block["name"] == "fakeapi.scale")
    assert block["strength"]["counts"]["timeout"] == 1
    assert block["strength"]["scored"] == block["strength"]["counts"]["killed"] + block["strength"]["counts"][
        "survived"]


def test_timeouts_count_as_kills_only_when_asked(runs, tmp_path):
    from torch_npu_testing.mutate import score
    _, document = runs["weak"]
    block = next(block for block in document["apis"] if block["name"] == "fakeapi.scale")
    plain, counted = score.strength(block["mutants"]), score.strength(block["mutants"], timeout_kills=True)
    assert counted["killed"] == plain["killed"] + 1 and counted["scored"] == plain["scored"] + 1


def test_calls_the_package_makes_for_itself_are_not_faulted(runs):
    _, document = runs["weak"]
    block = next(block for block in document["apis"] if block["name"] == "fakeapi.scale")
    # test_shape, test_small_integer_values, test_waits_for_the_value call it once each; scale_twice's two
    # calls are the package's own
    assert block["baseline_calls"] == 3


def test_progress_lines_one_per_mutant_on_stderr(runs):
    done, document = runs["weak"]
    total = sum(len(block["mutants"]) for block in document["apis"])
    lines = [line for line in done.stderr.splitlines() if line.startswith("mutate: [")]
    assert len(lines) == total
    assert lines[-1].startswith(f"mutate: [{total}/{total}] ") and "elapsed" in lines[-1] and "left)" in lines[-1]
    assert "target 1.25 x (import" in done.stderr


def test_fork_and_fresh_processes_give_the_same_outcomes(runs):
    _, forked = runs["weak"]
    done, fresh = runs["fresh"]
    assert fresh["mode"] == "fresh" and fresh["fresh_reasons"] == ["--fresh-processes was given"]
    assert "mutate: fresh process per mutant: --fresh-processes was given" in done.stderr

    def summary(document):
        return {code: (r["outcome"], r["killed_by"], r["calls"], r["changed"])
                for code, r in _outcomes(document, "fakeapi.Level.clone").items()}
    assert summary(fresh) == summary(forked)


def test_fail_under_exits_1_under_the_figure_and_still_writes_the_document(runs):
    done, document = runs["strong"]  # 22 of 24 killed over the three APIs
    assert document["percent"] == 91.7
    assert "mutate: strength 91.7% is under --fail-under 95.0%" in done.stderr


def test_quiet_prints_the_strength_lines_alone(runs):
    done, _ = runs["fresh"]
    assert "mutate: [" not in done.stderr and "killing test" not in done.stdout
    assert done.stdout.startswith("strength fakeapi.Level.clone: killed 0 of 1 (1 survived, 0 timeouts, ")


def test_report_shows_one_strength_line_per_api_with_its_survivors(runs, tmp_path):
    from torch_npu_testing.__main__ import main
    from torch_npu_testing.report import strength
    _, document = runs["weak"]
    folder = tmp_path / "results" / "strength"
    folder.mkdir(parents=True)
    (folder / "test_weak_api.json").write_text(json.dumps(document))
    (folder / "broken.json").write_text("{")
    main(["report", "--results", str(tmp_path / "results"), "--out", str(tmp_path / "out"), "--envs", "v2_12"])
    text = (tmp_path / "out" / "report.md").read_text()
    scale = next(block for block in document["apis"] if block["name"] == "fakeapi.scale")
    survivors = ", ".join(f"`{m['code']}`" for m in scale["mutants"] if m["outcome"] == "survived")
    assert f"- `strength fakeapi.scale: killed {scale['strength']['killed']} of {scale['strength']['scored']} (" in text
    assert f"; survivors: {survivors}\n" in text and "`state-grad-flipped`" in survivors
    assert "- strength results " in text and "broken.json: unreadable" in text
    assert [row["name"] for row in strength.rows(str(tmp_path / "results"), ["fakeapi.Level.clone"])] == [
        None, "fakeapi.Level.clone"]
    assert strength.markdown_lines([]) == []


def test_pr_shows_the_strength_lines_under_the_coverage_of_its_verification_section(runs, tmp_path):
    from torch_npu_testing.pr import verification
    from torch_npu_testing.report import strength
    _, document = runs["weak"]
    (tmp_path / "strength").mkdir()
    (tmp_path / "strength" / "test_weak_api.json").write_text(json.dumps(document))
    lines = strength.markdown_lines(strength.rows(str(tmp_path), ["fakeapi.scale"]))
    assert len([line for line in lines if line.startswith("- `strength ")]) == 1
    section = verification._coverage_and_checks({"coverage": ["- coverage line"], "kit_checks": [],
                                                 "strength": lines})
    assert section.index("- coverage line") < section.index(lines[2]) < section.index(
        "### 自检 / checks (each says the source it reads)")
