# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""verify's parts: JUnit XML from a real runner, the judgement of outcomes, the staleness check, the
stand-in's layout, a runner that stops before any test.

The JUnit XML is written by torch's own ``run_tests --save-xml`` in a real subprocess, over a file with
one test of every outcome (a failing subtest included), so the reader is checked against what the runner
writes, not against hand-written XML.
"""
import hashlib
import os
import sys
import textwrap

import pytest

from torch_npu_testing.common.errors import UsageError
from torch_npu_testing.common.results import Case, Outcome
from torch_npu_testing.common import stale
from torch_npu_testing.verify import classify, junit, runfile, standin, targets

EVERY_OUTCOME = textwrap.dedent('''
    import unittest
    from torch.testing._internal.common_utils import TestCase, run_tests


    class TestKinds(TestCase):
        def test_passes(self):
            pass

        def test_fails(self):
            self.assertEqual(1, 2)

        def test_errors(self):
            raise RuntimeError("boom")

        def test_skips_with_reason(self):
            self.skipTest("no such thing here")

        @unittest.expectedFailure
        def test_expected_failure(self):
            self.assertEqual(1, 2)

        @unittest.expectedFailure
        def test_unexpected_success(self):
            pass

        def test_subtests(self):
            for value in (1, 2):
                with self.subTest(value=value):
                    self.assertEqual(value, 1)


    if __name__ == "__main__":
        run_tests()
''')


def test_the_runners_junit_xml_gives_every_outcome(tmp_path, run_python):
    (tmp_path / "test_kinds.py").write_text(EVERY_OUTCOME)
    xml = tmp_path / "xml"
    done = run_python(["test_kinds.py", "-v", "--save-xml", xml], cwd=tmp_path)
    assert done.returncode != 0, done.stderr
    cases, paths = junit.read_cases(str(xml), "test/x/test_kinds.py")
    assert paths and all(case.file == "test/x/test_kinds.py" for case in cases)
    outcomes = {(case.id, case.subtest): case for case in cases}
    assert outcomes[("TestKinds.test_passes", None)].outcome is Outcome.PASSED
    assert outcomes[("TestKinds.test_fails", None)].outcome is Outcome.FAILED
    assert "AssertionError" in outcomes[("TestKinds.test_fails", None)].details
    errored = outcomes[("TestKinds.test_errors", None)]
    assert errored.outcome is Outcome.ERROR and errored.reason == "RuntimeError: boom"
    skipped = outcomes[("TestKinds.test_skips_with_reason", None)]
    assert skipped.outcome is Outcome.SKIPPED and skipped.reason == "no such thing here"
    assert outcomes[("TestKinds.test_expected_failure", None)].outcome is Outcome.EXPECTED_FAILURE
    assert outcomes[("TestKinds.test_unexpected_success", None)].outcome is Outcome.UNEXPECTED_SUCCESS
    subtest = [case for case in cases if case.id == "TestKinds.test_subtests" and case.subtest]
    assert [case.outcome for case in subtest] == [Outcome.FAILED] and "value=2" in subtest[0].subtest


def test_a_file_that_is_not_junit_xml_is_named(tmp_path):
    (tmp_path / "broken.xml").write_text("<testsuite")
    with pytest.raises(ValueError, match="broken.xml: not JUnit XML"):
        junit.read_cases(str(tmp_path), "f")


def _case(test, outcome, reason=None, details=None):
    return Case(file="f", id=test, outcome=outcome, reason=reason, details=details)


@pytest.mark.parametrize("reason, details, device", [
    ("RuntimeError: PyTorch is not linked with support for npu devices", None, "npu"),
    ("NotImplementedError: Could not run 'aten::empty_strided' with arguments from the 'npu' backend", None, "npu"),
    ("ModuleNotFoundError: No module named 'torch_npu'", None, "npu"),
    ("AssertionError: Torch not compiled with CUDA enabled", None, "cuda"),
    ("RuntimeError: Found no NVIDIA driver on your system", None, "cuda"),
    ("AssertionError: 1 != 2", '  File "/x/test/npu/test_y.py", line 3\n    torch.npu\nAssertionError: 1 != 2', None),
])
def test_needed_device_reads_the_error_not_the_traceback_paths(reason, details, device):
    assert classify.needed_device(classify.case_text(_case("T.t", Outcome.ERROR, reason, details))) == device


def test_judge_kit_tests_must_pass_theirs_may_need_a_device():
    kit = ["Kit.test_ok", "Kit.test_bad", "Kit.test_silent_skip", "Kit.test_skip", "Kit.test_xpass"]
    cases = [_case("Kit.test_ok", Outcome.PASSED), _case("Kit.test_bad", Outcome.ERROR, "RuntimeError: npu:0"),
             _case("Kit.test_silent_skip", Outcome.SKIPPED), _case("Kit.test_skip", Outcome.SKIPPED, "why"),
             _case("Kit.test_xpass", Outcome.UNEXPECTED_SUCCESS, "marked"),
             _case("Their.test_npu", Outcome.ERROR, "RuntimeError: torch.npu is not available"),
             _case("Their.test_broken", Outcome.FAILED, "AssertionError: 1 != 2"),
             _case("Their.test_ok", Outcome.PASSED)]
    needs, problems = classify.judge(cases, kit)
    assert needs == {"Their.test_npu": "npu"}
    assert problems == ["kit test Kit.test_bad error: RuntimeError: npu:0",
                        "kit test Kit.test_silent_skip skipped without a reason",
                        "kit test Kit.test_xpass unexpected success: marked",
                        "their test Their.test_broken failed: AssertionError: 1 != 2"]


def test_stale_files_names_other_bytes_unrecorded_and_gone(tmp_path):
    (tmp_path / "a.py").write_bytes(b"a")
    (tmp_path / "b.py").write_bytes(b"b")
    (tmp_path / "c.py").write_bytes(b"c")
    now = stale.file_digests(str(tmp_path), ["a.py", "b.py", "c.py", "d.py"])
    assert now["a.py"] == hashlib.sha256(b"a").hexdigest() and now["d.py"] is None
    recorded = {"a.py": now["a.py"], "b.py": hashlib.sha256(b"old").hexdigest(), "d.py": "x"}
    found = dict(stale.stale_files(recorded, now))
    assert set(found) == {"b.py", "c.py", "d.py"}
    assert found["b.py"].startswith("has other bytes now") and found["c.py"] == "is not in the record"
    assert found["d.py"] == "is not there any more"


def test_the_stand_in_holds_dests_testcase_and_an_autoload_entry_point(tmp_path):
    dest = tmp_path / "dest"
    (dest / "torch_npu" / "testing").mkdir(parents=True)
    (dest / "torch_npu" / "testing" / "testcase.py").write_text("# DEST's own\n")
    layout = standin.build(str(dest), str(tmp_path / "overlay"))
    overlay = tmp_path / "overlay"
    assert (overlay / "torch_npu" / "testing" / "testcase.py").read_text() == "# DEST's own\n"
    assert (overlay / "torch_npu" / "__init__.py").is_file()
    assert "torch_npu = torch_npu:_autoload" in (overlay / standin.DIST_INFO / "entry_points.txt").read_text()
    assert set(layout["files"]) == {"torch_npu", "torch_npu/testing/testcase.py"}
    variables = standin.environment(str(overlay), "available")
    assert variables["PYTHONPATH"].split(os.pathsep)[0] == str(overlay)
    assert variables[standin.SWITCH] == "available"
    with pytest.raises(UsageError, match="expected one of none, available"):
        standin.environment(str(overlay), "two")
    with pytest.raises(UsageError, match="lacks torch_npu/__init__.py"):
        standin.package_dir(str(tmp_path))


def test_runner_of_reads_the_main_guards_run_tests():
    import ast
    npu = "from torch_npu.testing.testcase import TestCase, run_tests\nif __name__ == '__main__':\n    run_tests()\n"
    torch = "from torch.testing._internal.common_utils import run_tests\nif __name__ == '__main__':\n    run_tests()\n"
    assert targets.runner_of(ast.parse(npu)) == targets.TORCH_NPU_RUNNER
    assert targets.runner_of(ast.parse(torch)) == targets.COMMON_UTILS_RUNNER
    assert targets.runner_of(ast.parse("import unittest\nunittest.main()\n")) == "unknown"


def test_a_runner_that_stops_before_any_test_is_a_runner_error(tmp_path):
    """A file that imports but whose main guard exits before running anything: ``<runner>``, a problem."""
    (tmp_path / "test" / "functorch").mkdir(parents=True)
    text = ("from torch.testing._internal.common_utils import TestCase, run_tests\n"
            "# --- API-consistency kit: begin (written by export; change the kit's file, not this block) ---\n"
            "class KitT(TestCase):\n    def test_a(self):\n        pass\n# --- API-consistency kit: end ---\n"
            "if __name__ == '__main__':\n    raise SystemExit(3)\n")
    (tmp_path / "test" / "functorch" / "test_stop.py").write_text(text)
    target = targets.read_file(str(tmp_path), "test/functorch/test_stop.py", text.encode())
    assert target.kit_ids == ["KitT.test_a"] and target.at_head == "committed at HEAD"
    run = runfile.run_file(sys.executable, target, str(tmp_path), False, {"command": "direct", "why": "t"}, {})
    assert run["verify"]["rc"] == 3 and run["cases"][0]["id"] == "<runner>"
    assert run["verify"]["problems"] == [f"<runner>: {run['cases'][0]['reason']}"]
    assert run["verify"]["ids_from_ast"] == ["KitT.test_a"] and run["verify"]["not_run"] is None


# --------------------------------------------------------------------------- interpreters, record, pr's reading
def test_interpreter_choices_refuse_both_kinds_and_two_pythons_of_one_torch(tmp_path):
    from torch_npu_testing.verify import interpreters

    with pytest.raises(UsageError, match="give --env or --python, not both"):
        interpreters.choose("master", str(tmp_path), ["master_213"], [sys.executable])
    with pytest.raises(UsageError, match="two interpreters import the same torch"):
        interpreters.choose("master", str(tmp_path), None, [sys.executable, sys.executable])
    with pytest.raises(UsageError, match=r"--python /nonexistent/python: cannot run it"):
        interpreters.choose("master", str(tmp_path), None, ["/nonexistent/python"])
    python = tmp_path / ".tox" / "master_214" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')  # checked before use: it must run
    python.chmod(0o755)
    with pytest.raises(UsageError, match=r"no interpreter for env master_213 .*run `tox -e master_213`"):
        interpreters.choose("master", str(tmp_path))
    assert interpreters.choose("master", str(tmp_path), ["master_214"]) == [("master_214", str(python))]


@pytest.mark.parametrize("text, why", [(None, "no verify results at"), ("{", "cannot be read"),
                                       ('{"format": "torch_npu_testing.results/2"}', "is not a torch_npu_testing"
                                                                                     ".verify/2 record")])
def test_a_record_that_is_missing_unreadable_or_of_another_format_is_refused_by_pr(tmp_path, text, why):
    from torch_npu_testing.verify import record

    path = tmp_path / "verify-master.json"
    if text is not None:
        path.write_text(text)
    document, problem = record.load(str(path))
    assert document is None and why in problem


def _record(tmp_path, device="cpu", stand_in=None):
    """A record as verify writes it, of one file of ``tmp_path`` (real bytes, real SHA-256)."""
    from torch_npu_testing.common import results
    from torch_npu_testing.verify import record

    (tmp_path / "test").mkdir(exist_ok=True)
    (tmp_path / "test" / "t.py").write_bytes(b"ran\n")
    cases = [Case(file="test/t.py", id="Kit.test_a", outcome=Outcome.PASSED),
             Case(file="test/t.py", id="Their.test_b", outcome=Outcome.ERROR, reason="RuntimeError: npu:0")]
    run = {"path": "test/t.py", "sha256": hashlib.sha256(b"ran\n").hexdigest(), "initial_grad_mode": True,
           "cases": results.cases_to_dicts(cases), "counts": results.tally(cases),
           "verify": {"kind": "file", "needs": {"Their.test_b": "npu"}, "problems": [], "how": {"command": "direct"},
                      "not_run": None}}
    env = {"name": "e", "python": sys.executable, "runner": {"starts": False, "why": "no run_test.py"},
           "results": record.env_results("e", str(tmp_path), ["x"], {"device": {"type": device}}, [run], [], "t", 1)}
    plan = targets.VerifyPlan("master", str(tmp_path), "c" * 40, [], [])
    doc = record.document(plan, [env], stand_in, ["python", "-m", "torch_npu_testing", "verify"], "t", 1.0)
    doc["files"] = [{"path": "test/t.py", "sha256": run["sha256"], "at_head": "not in HEAD", "runner": "unknown",
                     "kit_tests": ["Kit.test_a"], "their_tests": ["Their.test_b"]}]
    return doc


def test_pr_reads_the_record_first_line_and_log_from_verify(tmp_path):
    from torch_npu_testing.pr import log, verified
    from torch_npu_testing.verify import record

    doc = _record(tmp_path)
    assert verified.not_on_npu_line(doc) == "not run on an NPU: cpu"
    assert verified.not_on_npu_line(_record(tmp_path, "npu", {"mode": "available"})) == \
        "not run on an NPU: stand-in torch_npu reporting one NPU"
    assert verified.not_on_npu_line(_record(tmp_path, "npu")) is None
    path = record.write(doc, str(tmp_path / "out"))
    files = [{"path": "test/t.py", "kind": "test file", "sha256": doc["files"][0]["sha256"]}]
    facts = verified.gather(path, str(tmp_path), files, "master")
    assert facts["state"] == "ok" and facts["problems"] == [] and verified.warning_lines(facts) == []
    rows = log.verify_log_lines(facts["record"])
    assert "| `Kit.test_a` | kit | passed |" in rows
    assert "| `Their.test_b` | theirs | needs npu (not on this host): RuntimeError: npu:0 |" in rows
    classes = "\n".join(log.verify_log_lines(facts["record"], "classes"))
    assert "| `Their` | theirs | 1 | **1 error**; 1 need a device this host lacks |" in classes
    assert not any(line.startswith("| `") for line in log.verify_log_lines(facts["record"], "files"))


def test_pr_finds_a_record_of_another_checkout_or_of_other_bytes(tmp_path):
    from torch_npu_testing.pr import verified
    from torch_npu_testing.verify import record

    path = record.write(_record(tmp_path), str(tmp_path / "out"))
    files = [{"path": "test/t.py", "kind": "test file", "sha256": hashlib.sha256(b"planned\n").hexdigest()}]
    other = tmp_path / "other"
    (other / "test").mkdir(parents=True)
    (other / "test" / "t.py").write_bytes(b"edited\n")
    facts = verified.gather(path, str(other), files, "master")
    assert facts["state"] == "stale"
    assert facts["problems"][0].startswith(f"verify ran in {tmp_path}, not in --ascend {other}")
    assert facts["problems"][1].startswith("stale: test/t.py has other bytes now")
    assert facts["problems"][2].startswith("stale: DEST's test/t.py is not the file export plans at the branch's ref")
    assert verified.warning_lines(facts)[0].startswith("> ⚠ 描述已过期 / verify ran in ")


def test_simulated_mode_builds_the_device_first_and_a_failed_build_is_one_usage_error(tmp_path, monkeypatch):
    """--stand-in-npu=simulated: the device is built (or found) for each env's python before anything runs; a
    compiler that fails is a UsageError naming the python, the torch and the compiler's first error."""
    import sys
    overlay = tmp_path / "overlay"
    standin.build(str(tmp_path), str(overlay))
    assert standin.label("simulated") == "simulated NPU (host memory, CPU kernels), not an NPU run"
    assert standin.label("available") == standin.label("none") == "stand-in torch_npu, not an NPU run"
    compiler = tmp_path / "cxx"
    compiler.write_text("#!/bin/sh\necho 'simnpu.cpp:9:9: error: broken here' >&2\nexit 1\n")
    compiler.chmod(0o755)
    monkeypatch.setenv("CXX", str(compiler))
    monkeypatch.setenv("TORCH_NPU_TESTING_CACHE", str(tmp_path / "cache"))
    with pytest.raises(UsageError) as caught:
        standin.prepare_device(sys.executable, str(overlay))
    message = str(caught.value)
    assert message.startswith(f"--stand-in-npu=simulated: {sys.executable}: simulated NPU: cannot build for torch ")
    assert message.endswith("simnpu.cpp:9:9: error: broken here") and "\n" not in message
