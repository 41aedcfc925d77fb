# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""``new`` for an op: the OpInfo lookup, the drafted file run for real, and the plain scaffold's loops.

Contract: the lookup finds an API's op_db entries by function, method variant, alias and name (every entry
of a name: ``nn.functional.pad`` gives five, one class per entry and area); the draft reads op_db when it
runs and, on the CPU, passes with at least one case run (not skipped) in each of its areas while every
placeholder fails; the same draft fails when the API is replaced by a broken one (values moved, an error
not raised); a torch whose op_db lacks the entry skips the entry's classes with the reason; op_db failing
to import is one clear line and the plain scaffold, whose space loops fail per labelled subtest. Drafts are
run in real subprocesses through ``suite`` (torch is imported there; op_db once per process).
"""
import json
import os
import shutil
import stat
import sys
from pathlib import Path

import pytest

from torch_npu_testing.__main__ import main
from torch_npu_testing.task import locate, opinfo_lookup, opinfo_probe

REPO_ROOT = Path(__file__).resolve().parents[2]
PACKAGE = REPO_ROOT / "torch_npu_testing"
AREAS = ("Values", "Dtypes", "BadInput", "Gradients")
PLACEHOLDER_AREAS = ("CallForms", "Layouts", "SideEffects", "Threads")
BROKEN_VSTACK = '''
import torch

_original = torch.vstack


def vstack(tensors, *args, **kwargs):
    """Values moved (rows rolled) and no error for bad input: what the draft must catch."""
    try:
        result = _original(tensors, *args, **kwargs)
    except (RuntimeError, TypeError):
        return torch.zeros(0)
    return result if "out" in kwargs or result.dim() == 0 else result.roll(1, 0)


torch.vstack = vstack
'''
NO_VSTACK_ENTRY = '''
import torch.testing._internal.common_methods_invocations as invocations

invocations.op_db[:] = [op for op in invocations.op_db if op.name != "vstack"]
'''
NO_OP_DB = '''
import sys

sys.modules["torch.testing._internal.common_methods_invocations"] = None
'''


@pytest.fixture
def kit(tmp_path):
    root = tmp_path / "kit"
    (root / "torch_npu_testing" / "common").mkdir(parents=True)
    (root / "test" / "ops").mkdir(parents=True)
    shutil.copy(PACKAGE / "common" / "table.json", root / "torch_npu_testing" / "common" / "table.json")
    return root


@pytest.fixture
def here_only(monkeypatch):
    """locate in this interpreter only (the temp kit has no .tox): one torch, found."""
    monkeypatch.setattr(locate, "locate_all", lambda name, pythons: [
        {"python": sys.executable, "torch": "2.13.0", "found": True, "signature": "(tensors, *, out=None)"}])


def draft(kit, api, rel, *extra):
    out = kit.parent / "new.json"
    assert main(["new", api, "--path", rel, "--kit", str(kit), "--json", str(out), *extra]) == 0
    return json.loads(out.read_text()), (kit / rel).read_text()


def run_suite(run_python, kit, rel, tmp_path, site=None):
    """The file through ``suite`` in a real subprocess: ``{class: {outcome: count}}`` and the cases."""
    env = {"TORCH_NPU_TESTING_DEVICE": "cpu", "PYTHONPATH": os.pathsep.join(filter(None, [site, str(REPO_ROOT)]))}
    results = tmp_path / f"r{len(list(tmp_path.glob('r*.json')))}.json"
    proc = run_python(["-m", "torch_npu_testing", "suite", rel, "--no-coverage", "--no-grad-mode-probe",
                       "--results", str(results)], cwd=kit, **env)
    assert results.exists(), proc.stderr[-3000:]
    cases = json.loads(results.read_text())["runs"][0]["cases"]
    outcomes = {}
    for case in cases:
        klass = case["id"].split(".")[-2]
        outcomes.setdefault(klass, {}).setdefault(case["outcome"], 0)
        outcomes[klass][case["outcome"]] += 1
    return outcomes, cases


def site_dir(tmp_path, name, text):
    folder = tmp_path / name
    folder.mkdir()
    (folder / "sitecustomize.py").write_text(text)
    return str(folder)


# --------------------------------------------------------------------------- the lookup, in process
@pytest.mark.parametrize("api, expected", [
    ("torch.Tensor.addcdiv", [("addcdiv", "", "method")]),
    ("torch.moveaxis", [("movedim", "", "alias moveaxis")]),
    ("torch.nn.functional.pad", [("nn.functional.pad", v, "function")
                                 for v in ("constant", "reflect", "replicate", "replicate_negative", "circular")]),
    ("torch.no.such_op", []),
])
def test_lookup_by_function_method_alias_and_name(api, expected):
    result = opinfo_lookup.lookup(api)
    assert result["error"] is None and result["torch"]
    assert sorted((e["name"], e["variant_test_name"], e["matched_as"]) for e in result["entries"]) == sorted(expected)


def test_lookup_describes_the_variants_a_draft_calls_by_name():
    [entry] = opinfo_lookup.lookup("torch.Tensor.addcdiv")["entries"]
    assert entry["api_form"] == {"form": "method", "target": "addcdiv"}
    assert [(v["label"], v["form"], v["requires"]) for v in entry["variants"]] == [
        ("torch.addcdiv", "function", "op"), ("Tensor.addcdiv_", "inplace_method", "inplace_variant")]
    assert entry["out"] == "torch.addcdiv" and not entry["has_error_inputs"] and entry["supports_autograd"]
    [elu] = opinfo_lookup.lookup("torch.nn.functional.elu")["entries"]
    assert [(v["label"], v["form"]) for v in elu["variants"]] == [
        ("torch.nn.functional.elu(inplace=True)", "inplace_kwarg")] and elu["has_ref"] and elu["out"] is None
    [det] = opinfo_lookup.lookup("torch.linalg.det")["entries"]
    assert [v["requires"] for v in det["variants"]] == ["alias:det:op", "alias:det:method_variant"]


def test_lookup_says_why_when_op_db_cannot_be_imported(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch.testing._internal.common_methods_invocations", None)
    result = opinfo_lookup.lookup("torch.vstack")
    assert result["entries"] == [] and result["error"].startswith("op_db failed to import: ModuleNotFoundError")
    lines = opinfo_probe.summary_lines("torch.vstack", [result], [])
    assert lines[0].startswith(f"OpInfo: {sys.executable} (torch ") and "op_db failed to import" in lines[0]
    assert lines[1].startswith("OpInfo: no op_db entry for torch.vstack") and "plain scaffold" in lines[1]


def test_several_entries_for_one_name_give_one_class_each(kit, here_only, capsys):
    doc, text = draft(kit, "torch.nn.functional.pad", "test/ops/test_pad_api.py")
    assert doc["draft"] == "opinfo" and len(doc["opinfo"]["entries"]) == 5
    for variant in ("Constant", "Reflect", "Replicate", "ReplicateNegative", "Circular"):
        for area in ("Values", "Dtypes", "Gradients"):
            assert text.count(f"class TestPad{variant}{area}(TestCase):") == 1
    assert text.count("= entry('nn.functional.pad', ") == 5 and "class TestPadBadInput(TestCase):" in text
    assert "torch.nn.functional.pad(input, *args, **kwargs)" in text and ".op(" not in text
    assert "is nn.functional.pad (circular), nn.functional.pad (constant)" in capsys.readouterr().out


# --------------------------------------------------------------------------- drafts run for real
def test_an_opinfo_draft_passes_on_the_cpu_and_fails_for_a_broken_op(kit, here_only, run_python, tmp_path):
    """vstack: every area runs cases on the CPU and passes; placeholders fail; a vstack with its values moved
    and no error for bad input fails Values and BadInput; a torch without the entry skips with the reason."""
    rel = "test/ops/test_vstack_api.py"
    doc, text = draft(kit, "torch.vstack", rel)
    assert doc["format"] == "torch_npu_testing.new/2" and doc["draft"] == "opinfo"
    assert ("from torch_npu_testing import TestCase, run_tests, device_type, requires_api, skip_unless_vehicle, "
            "api_limit\n") in text
    assert "    return torch.vstack(input, *args, **kwargs)" in text and "SampleInput(" not in text
    outcomes, cases = run_suite(run_python, kit, rel, tmp_path)
    for area in AREAS:
        counts = outcomes[f"TestVstack{area}"]
        assert counts.get("passed", 0) >= 1 and set(counts) <= {"passed", "skipped"}, (area, counts)
    for area in PLACEHOLDER_AREAS:
        assert set(outcomes[f"TestVstack{area}"]) == {"failed"}
    failed = [c for c in cases if c["outcome"] == "failed"]
    assert all("not written yet: torch.vstack" in c["details"] for c in failed)
    assert {c["subtest"] for c in failed if "test_sparse_layouts" in c["id"]} >= {"[torch.sparse_coo]"}
    skipped = [c for c in cases if c["outcome"] == "skipped" and "match_the_cpu" in c["id"]]
    assert skipped and all(c["reason"].startswith("no accelerator") for c in skipped)

    broken, cases = run_suite(run_python, kit, rel, tmp_path, site_dir(tmp_path, "broken", BROKEN_VSTACK))
    assert broken["TestVstackValues"].get("failed", 0) >= 1 and broken["TestVstackBadInput"].get("failed", 0) >= 1
    assert any("not raised" in (c.get("details") or "") for c in cases if "TestVstackBadInput" in c["id"])

    gone, cases = run_suite(run_python, kit, rel, tmp_path, site_dir(tmp_path, "gone", NO_VSTACK_ENTRY))
    for area in AREAS:
        assert set(gone[f"TestVstack{area}"]) == {"skipped"}
    reasons = {c["reason"] for c in cases if c["outcome"] == "skipped" and "TestVstackValues" in c["id"]}
    assert reasons == {f"torch {torch_version()}'s op_db lacks the entry ('vstack', variant '')"}


def torch_version():
    import torch
    return torch.__version__


def test_op_db_failing_to_import_is_one_line_then_the_plain_scaffold(kit, here_only, run_python, tmp_path,
                                                                     capsys):
    """A --python whose op_db cannot be imported: a clear line, the plain scaffold; its loops over the spaces
    from torch fail once per labelled case when run."""
    poisoned = site_dir(tmp_path, "poisoned", NO_OP_DB)
    wrapper = tmp_path / "python-without-op-db"
    wrapper.write_text(f"#!/bin/sh\nPYTHONPATH={poisoned} exec {sys.executable} \"$@\"\n")
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    rel = "test/ops/test_vstack_api.py"
    doc, text = draft(kit, "torch.vstack", rel, "--python", str(wrapper))
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"OpInfo: {wrapper} (torch ") and "op_db failed to import: ModuleNotFoundError" in out[0]
    assert out[1].startswith("OpInfo: no op_db entry for torch.vstack") and doc["draft"] == "scaffold"
    assert "for item in DTYPES:" in text and "op_db" not in text
    outcomes, cases = run_suite(run_python, kit, rel, tmp_path)
    assert all(set(counts) == {"failed"} for counts in outcomes.values())
    dtypes = [c["subtest"] for c in cases if "test_every_dtype_of_the_space" in c["id"]]
    assert {"[torch.float32]", "[torch.bool]", "[torch.complex128]", "[torch.uint16]"} <= set(dtypes)
    assert len(dtypes) == len(set(dtypes)) >= 20
    sizes = [c["subtest"] for c in cases if "test_sizes" in c["id"]]
    assert sizes == ["[('0-size dim', (0, 3))]", "[('0-d', ())]", "[('size-1 dims', (1, 3, 1))]",
                     "[('distinct sizes per dim', (2, 3, 4))]"]


def test_no_opinfo_writes_the_plain_scaffold_without_a_lookup(kit, here_only, monkeypatch, capsys):
    monkeypatch.setattr(opinfo_probe, "lookup_all", lambda api, pythons: pytest.fail("looked up"))
    doc, text = draft(kit, "torch.vstack", "test/ops/test_vstack_api.py", "--no-opinfo")
    assert doc["draft"] == "scaffold" and doc["opinfo"] is None and "class TestVstackDtypes(TestCase):" in text
    assert "OpInfo" not in capsys.readouterr().out


def test_a_draft_names_every_variant_ref_out_and_in_place_the_entry_has(kit, here_only):
    """clamp_max: numpy ref, method and in-place variants, out=, error_inputs, each a test calling by name;
    upstream's expected failure of its test_errors applied through honour()."""
    doc, text = draft(kit, "torch.clamp_max", "test/ops/test_clamp_max_api.py")
    for test in ("test_reference_inputs_match_the_numpy_ref", "test_variants_agree_on_the_cpu",
                 "test_out_variant_writes_the_result", "test_error_inputs_raise_their_type_and_message_on_the_cpu",
                 "test_inplace_writes_the_result_into_its_input", "test_gradcheck_in_float64_on_the_cpu"):
        assert f"    def {test}(self):" in text
    assert '@honour(OP_CLAMP_MAX, "test_errors")' in text and "class TestClampMaxBadInput(TestCase):" in text
    assert "    return input.clamp_max_(*args, **kwargs)" in text and "out=out" in text
    assert "BadInput" not in text.split("Not known to OpInfo")[1].split('"""')[0]
    compile(text, "draft", "exec")


def test_merge_keeps_each_entry_once_with_the_releases_that_have_it():
    from torch_npu_testing.task import opinfo_draft
    entry = opinfo_lookup.lookup("torch.vstack")["entries"][0]
    merged = opinfo_draft.merge([{"torch": "2.13.0", "entries": [entry]}, {"torch": "2.12.0", "entries": []},
                                 {"torch": "2.7.1", "entries": [entry]}])
    assert [e["torch"] for e in merged] == [["2.7.1", "2.13.0"]]
    text = opinfo_draft.render("torch.vstack", None, merged, ["2.7.1", "2.12.0", "2.13.0"], None)
    assert "Entries not in every torch probed: vstack only in torch 2.7.1, 2.13.0." in " ".join(text.split())


def test_the_lookup_runs_by_path_and_prints_one_json_object(capsys):
    assert opinfo_lookup.main(["torch.moveaxis"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert [e["name"] for e in printed["entries"]] == ["movedim"] and printed["python"] == sys.executable


def test_lookup_helpers_and_a_failing_interpreter(tmp_path):
    """A dotted name reaching an unimported submodule resolves; odd values are not bound or in-place; an
    interpreter whose lookup prints nothing is a result with its error, not a crash."""
    assert opinfo_lookup.resolve("torch.utils.benchmark").__name__ == "torch.utils.benchmark"
    assert not opinfo_lookup.bound_to("torch.no.thing", object()) and not opinfo_lookup.takes_inplace(1)
    failing = tmp_path / "python-that-fails"
    failing.write_text("#!/bin/sh\necho 'no torch here' >&2\nexit 1\n")
    failing.chmod(failing.stat().st_mode | stat.S_IXUSR)
    [result] = opinfo_probe.lookup_all("torch.vstack", [str(failing)])
    assert result == {"torch": None, "entries": [], "error": "lookup failed: no torch here", "python": str(failing)}


def test_every_drafted_test_says_why_it_exists():
    """pr ticks "code comments complete" only when each test has a docstring: every drafted OpInfo test has
    its own (placeholders too), within 120 columns."""
    import ast
    from torch_npu_testing.task import opinfo_draft
    names = set()
    for api in ("torch.nn.functional.pad", "torch.addcdiv", "torch.vstack", "torch.clamp_max"):
        entries = opinfo_draft.merge([{"torch": "2.13.0", "entries": opinfo_lookup.lookup(api)["entries"]}])
        text = opinfo_draft.render(api, None, entries, ["2.13.0"], None)
        methods = [item for node in ast.parse(text).body if isinstance(node, ast.ClassDef) for item in node.body
                   if isinstance(item, ast.FunctionDef) and item.name.startswith("test")]
        assert [m.name for m in methods if not ast.get_docstring(m)] == [], api
        assert max(len(line) for line in text.splitlines()) <= 120, api
        names.update(m.name for m in methods)
    assert names >= set(opinfo_draft.TEST_DOCS)
