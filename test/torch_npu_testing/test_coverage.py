# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Unit tests of torch_npu_testing.suite.coverage: the implementation coverage the suite records per API.

Contract: regions are function / class names resolved with ast (bodies only, a class's every method,
"*" every function of the file; names the source lacks are listed missing); an API is "measured", a "C
implementation, not measured", "absent" or an import "error"; the suite measures each API only while
its own test file runs and records lines covered/total, branches covered/total, the unreached ranges
with their first source line, per API and env; `--no-coverage` records nothing; no coverage.py: one
line saying so. Honest numbers: removing a test class from a scratch copy of a real API file lowers
that API's figures.
"""
import ast
import io
import json
import os
import shutil
import sys

import pytest

from torch_npu_testing.common import table
from torch_npu_testing.suite import coverage, run as suite

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

IMPL = '''\
import functools


def decorate(fn):
    return fn


@decorate
def target(x, flag=None):
    """Docstring."""
    if x > 0:
        y = x + 1
    else:
        y = -x
    if flag is not None:
        raise ValueError("flag")
    return y


class Helper:
    limit = 3

    def small(self, n):
        return n < self.limit

    def never(self):
        a = 1
        b = 2
        return a + b


def unrelated():
    return 0
'''

TEST_FILE = '''
import unittest

import fakeapi.impl as impl


class TargetTests(unittest.TestCase):
    def test_positive(self):
        self.assertEqual(impl.target(2), 3)

    def test_helper(self):
        self.assertTrue(impl.Helper().small(1))
'''

OTHER_FILE = '''
import unittest

import fakeapi.impl as impl


class Other(unittest.TestCase):
    def test_negative_and_flag(self):
        self.assertEqual(impl.target(-2), 2)
        with self.assertRaises(ValueError):
            impl.target(1, flag=True)
        impl.Helper().never()
'''

FAKE_API = {"name": "fakeapi.impl.target", "title": "target", "test_file": "test/test_fake.py",
            "coverage": [{"file": "fakeapi/impl.py", "names": ["target", "Helper", "gone"]},
                         {"file": "fakeapi/nowhere.py", "names": ["x"]}]}


def line_of(text, source=IMPL):
    return source.splitlines().index(text) + 1


# --------------------------------------------------------------------------- regions
def test_names_resolve_to_function_bodies_not_def_lines_or_decorators():
    owner, found, missing = coverage.resolve_names(IMPL, ["target", "Helper", "gone"])
    assert found == ["target", "Helper"] and missing == ["gone"]
    body = range(line_of('    """Docstring."""'), line_of("    return y") + 1)
    assert {line for line, name in owner.items() if name == "target"} == set(body)
    assert line_of("@decorate") not in owner and line_of("def target(x, flag=None):") not in owner
    assert owner[line_of("        return n < self.limit")] == "Helper.small"
    assert owner[line_of("        b = 2")] == "Helper.never"
    assert line_of("    limit = 3") not in owner  # class body statements run at import
    assert line_of("    return 0") not in owner


def test_star_is_every_function_and_nested_ones_belong_to_the_innermost():
    source = "def a():\n    def b():\n        return 1\n    return b\n\n\nclass C:\n    def m(self):\n        pass\n"
    owner, found, missing = coverage.resolve_names(source, ["*"])
    assert (found, missing) == (["*"], [])
    assert owner == {2: "a", 3: "a.b", 4: "a", 9: "C.m"}


def test_regions_name_files_relative_to_the_root_and_report_what_this_release_lacks(tmp_path):
    (tmp_path / "fakeapi").mkdir()
    (tmp_path / "fakeapi" / "impl.py").write_text(IMPL)
    owners, records = coverage.resolve_regions(FAKE_API["coverage"], str(tmp_path))
    assert list(owners) == [str(tmp_path / "fakeapi" / "impl.py")]
    assert records[0] == {"file": "fakeapi/impl.py", "names": ["target", "Helper", "gone"],
                          "found": ["target", "Helper"], "missing": ["gone"]}
    assert records[1]["missing"] == ["x"] and records[1]["note"] == "no such file in this torch"
    (tmp_path / "fakeapi" / "bad.py").write_text("def (:\n")
    owners, records = coverage.resolve_regions([{"file": "fakeapi/bad.py", "names": ["f"]}], str(tmp_path))
    assert owners == {} and records[0]["missing"] == ["f"] and records[0]["note"].startswith("cannot parse it: Syn")


def test_the_tables_regions_resolve_in_this_torch():
    """Every measured API of the table has region lines here, and the names it lacks are named."""
    root = coverage.torch_parent()
    for entry in table.apis():
        status, _ = coverage.classify(entry["name"])
        assert status in ("measured", "c_implementation", "absent"), entry["name"]
        if status == "measured":
            owners, records = coverage.resolve_regions(entry["coverage"], root)
            assert owners and all(not record["missing"] for record in records), (entry["name"], records)


@pytest.mark.parametrize("name, status, note", [
    ("os.path.join", "measured", None),
    ("torch.autograd.grad_mode.set_grad_enabled.clone", "measured", None),
    ("torch.autograd.grad_mode.set_grad_enabled", "measured", None),
    ("math.sqrt", "c_implementation", "C implementation, not measured"),
    ("torch._C._functorch._add_batch_dim", "c_implementation", "C implementation, not measured"),
    ("torch._functorch.no_such_module.f", "absent", "absent"),
    ("torch.autograd.grad_mode.no_such_thing", "absent", "absent"),
    ("torch.Tensor.add", "c_implementation", "C implementation, not measured"),
    ("os.sep", "error", "not a function, class or module: a str"),
])
def test_classify(name, status, note):
    assert coverage.classify(name) == (status, note)


def test_a_row_with_no_regions_says_none_are_declared_not_that_they_are_missing():
    entry = {"name": "torch.nn.utils.parameters_to_vector", "coverage": []}
    regions = coverage.ApiRegions(entry, os.path.dirname(os.path.dirname(coverage.__file__)))
    assert (regions.status, regions.note) == ("not_measured", "no regions declared (its table row's coverage is [])")
    assert coverage.figures_text(regions.base()) == "not measured: no regions declared (its table row's coverage is [])"


def test_classify_a_module_that_fails_to_import_is_an_error(tmp_path, monkeypatch):
    (tmp_path / "broken_cov_mod.py").write_text("raise RuntimeError('no CANN')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    status, note = coverage.classify("broken_cov_mod.f")
    assert status == "error" and "RuntimeError: no CANN" in note


# --------------------------------------------------------------------------- the suite measures
@pytest.fixture
def fake(tmp_path, monkeypatch):
    """A package ``fakeapi`` outside torch, its test file and another file calling it too."""
    root = tmp_path / "site"
    (root / "fakeapi").mkdir(parents=True)
    (root / "fakeapi" / "__init__.py").write_text("")
    (root / "fakeapi" / "impl.py").write_text(IMPL)
    work = tmp_path / "work"
    (work / "test").mkdir(parents=True)
    (work / "test" / "test_fake.py").write_text(TEST_FILE)
    (work / "test" / "test_other.py").write_text(OTHER_FILE)
    monkeypatch.syspath_prepend(str(root))
    monkeypatch.chdir(work)
    yield root, work
    for name in [n for n in sys.modules if n == "fakeapi" or n.startswith("fakeapi.")]:
        del sys.modules[name]


def run_fake(root, paths, apis=(FAKE_API,), **kwargs):
    meter = coverage.CoverageMeter(apis=list(apis), root=str(root))
    stream = io.StringIO()
    document = suite.run_suite(paths, grad_mode_files=(), stream=stream, coverage=meter, **kwargs)
    return document, stream.getvalue()


def test_suite_records_lines_branches_and_unreached_ranges_of_its_own_test_file(fake):
    root, work = fake
    document, output = run_fake(root, ["test/test_fake.py", "test/test_other.py"], results_path="r.json")
    block = json.loads((work / "r.json").read_text())["coverage"]
    assert block == document["coverage"] and block["format"] == coverage.FORMAT
    entry = block["apis"]["fakeapi.impl.target"]
    # target(2) runs 4 of target's 6 statements, Helper().small 1 of 1, never 0 of 3; test_other.py's calls of
    # the other paths do not count for this API (the docstring is no statement)
    assert entry["status"] == "measured"
    assert entry["lines"] == {"covered": 5, "total": 10}
    assert entry["branches"] == {"covered": 2, "total": 4}
    unreached = [(u["name"], u["start"], u["end"], u["source"]) for u in entry["unreached"]]
    assert unreached == [
        ("target", line_of("        y = -x"), line_of("        y = -x"), "y = -x"),
        ("target", line_of('        raise ValueError("flag")'), line_of('        raise ValueError("flag")'),
         'raise ValueError("flag")'),
        ("Helper.never", line_of("        a = 1"), line_of("        return a + b"), "a = 1")]
    assert {u["file"] for u in entry["unreached"]} == {"fakeapi/impl.py"}
    assert [(p["line"], p["missing_to"]) for p in entry["partial_branches"]] == [
        (line_of("    if x > 0:"), [line_of("        y = -x")]),
        (line_of("    if flag is not None:"), [line_of('        raise ValueError("flag")')])]
    assert entry["regions"][0]["missing"] == ["gone"] and entry["regions"][1]["missing"] == ["x"]
    assert "coverage  target: lines 5/10, branches 2/4" in output.splitlines()


def test_an_api_whose_test_file_did_not_run_is_not_run_not_zero(fake):
    root, _ = fake
    document, output = run_fake(root, ["test/test_other.py"])
    entry = document["coverage"]["apis"]["fakeapi.impl.target"]
    assert entry["status"] == "not_run" and "lines" not in entry
    assert "coverage  target: not measured: its test file test/test_fake.py did not run" in output


def test_c_functions_and_absent_apis_are_said_so_not_zero(fake):
    root, _ = fake
    apis = [dict(FAKE_API, name="math.sqrt", title="sqrt"), dict(FAKE_API, name="fakeapi.impl.gone", title="gone")]
    document, output = run_fake(root, ["test/test_fake.py"], apis=apis)
    assert {name: (e["status"], e["note"]) for name, e in document["coverage"]["apis"].items()} == {
        "math.sqrt": ("c_implementation", "C implementation, not measured"),
        "fakeapi.impl.gone": ("absent", "absent")}
    assert "coverage  sqrt: C implementation, not measured" in output
    assert "coverage  gone: absent" in output


def test_no_coverage_flag_records_nothing_and_prints_no_coverage_line(tmp_path, monkeypatch, capsys):
    from torch_npu_testing.__main__ import main as cli_main
    (tmp_path / "test").mkdir()
    (tmp_path / "test" / "test_fake.py").write_text("import unittest\n\n\nclass T(unittest.TestCase):\n"
                                                    "    def test_x(self):\n        pass\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TORCH_NPU_TESTING_DEVICE", "cpu")
    assert cli_main(["suite", "test/test_fake.py", "--no-coverage", "--results", "r.json"]) == 0
    assert json.loads((tmp_path / "r.json").read_text())["coverage"] is None
    assert "coverage" not in capsys.readouterr().err.replace("--no-coverage", "")


def test_without_coverage_py_the_suite_runs_and_says_why(tmp_path, monkeypatch):
    (tmp_path / "test").mkdir()
    (tmp_path / "test" / "test_fake.py").write_text("import unittest\n\n\nclass T(unittest.TestCase):\n"
                                                    "    def test_x(self):\n        pass\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setitem(sys.modules, "coverage", None)  # import coverage -> ImportError
    stream = io.StringIO()
    document = suite.run_suite(["test/test_fake.py"], grad_mode_files=(), stream=stream)
    assert document["totals"]["passed"] == 1
    assert document["coverage"]["apis"] == {} and "coverage.py is not importable" in document["coverage"]["unavailable"]
    assert [line for line in stream.getvalue().splitlines() if line.startswith("coverage")] == [
        f"coverage: not measured ({document['coverage']['unavailable']})"]


def test_figures_text_and_api_line():
    measured = {"status": "measured", "lines": {"covered": 40, "total": 52}, "branches": {"covered": 10, "total": 16}}
    assert coverage.api_line(measured, "2.12.0+cpu") == "lines 40/52, branches 10/16 on torch 2.12.0"
    assert coverage.figures_text({"status": "c_implementation", "note": None}) == "C implementation, not measured"
    assert coverage.api_line({"status": "absent", "note": "absent"}, "2.7.1") == "absent on torch 2.7.1"
    assert coverage.figures_text({"status": "error", "note": "boom"}) == "not measured: boom"
    assert coverage.coverage_of({"coverage": None}) is None and coverage.coverage_of([]) is None


# --------------------------------------------------------------------------- honest numbers
CONFIG_API = "torch._functorch.config.patch"


def _test_classes(source):
    tree = ast.parse(source)
    return [node for node in tree.body if isinstance(node, ast.ClassDef)
            and any(isinstance(item, ast.FunctionDef) and item.name.startswith("test") for item in node.body)]


def _without(source, node):
    lines = source.splitlines(keepends=True)
    start = min([node.lineno] + [d.lineno for d in node.decorator_list])
    return "".join(lines[:start - 1] + lines[node.end_lineno:])


def _config_figures(work, relative):
    meter = coverage.CoverageMeter(apis=[table.api(CONFIG_API)], cwd=str(work))
    document = suite.run_suite([relative], grad_mode_files=(), stream=io.StringIO(), coverage=meter)
    entry = document["coverage"]["apis"][CONFIG_API]
    assert entry["status"] == "measured"
    return entry["lines"]["covered"], entry["branches"]["covered"], document["totals"]["tests"]


def test_removing_a_test_class_from_a_scratch_copy_lowers_the_apis_coverage(tmp_path, monkeypatch):
    """The real config.patch file, copied; its largest test classes removed one at a time until the figure
    drops (the first one normally does): the number measures the tests, not the mere import."""
    relative = table.api(CONFIG_API)["test_file"]
    copy = tmp_path / relative
    copy.parent.mkdir(parents=True)
    shutil.copyfile(os.path.join(REPO_ROOT, relative), copy)
    monkeypatch.chdir(tmp_path)
    source = copy.read_text(encoding="utf-8")
    full = _config_figures(tmp_path, relative)
    classes = sorted(_test_classes(source), key=lambda node: -len(node.body))
    assert classes, "no test class found"
    for node in classes[:3]:
        copy.write_text(_without(source, node), encoding="utf-8")
        reduced = _config_figures(tmp_path, relative)
        assert reduced[2] < full[2]  # fewer tests ran
        if reduced[:2] < full[:2] and reduced[0] <= full[0] and reduced[1] <= full[1]:
            return
    pytest.fail(f"removing {[n.name for n in classes[:3]]} did not lower {full[:2]} (lines, branches covered)")
