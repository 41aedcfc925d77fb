# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""The kit's shape, checked: the runtime apart from the tools, one table, each idea defined once.

- ``torch_npu_testing/runtime`` (what a test file imports at run time) imports nothing of the tools;
- ``tox.ini`` names exactly the table's envs with the table's torch and torch_npu pins and labels;
- version parsing, dotted-name lookup, the device choice, atomic writes, the thread runner, the git
  runner, the results' test id: each is defined once in the package (and the API test files define no
  thread runner of their own);
- modules stay under 400 lines and functions under 60, so every name can say what it holds.
"""
import ast
import configparser
import re
from pathlib import Path

import pytest

from torch_npu_testing.common import layout, table

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "torch_npu_testing"
# torch_npu_testing/standin/torch_npu is another package (the stand-in ``torch_npu``, imported by that name from
# a folder put on the path, often where the kit is not installed): its own rules below, not the kit's.
STANDIN_PACKAGE = PACKAGE / "standin" / "torch_npu"
SOURCES = sorted(path for path in PACKAGE.rglob("*.py") if STANDIN_PACKAGE not in path.parents)


def _tree(path):
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _imported_modules(path):
    """Absolute names of the modules ``path`` imports (relative imports resolved)."""
    package = ".".join(path.relative_to(ROOT).with_suffix("").parts)
    if path.name != "__init__.py":
        package = package.rsplit(".", 1)[0]
    found = []
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([node.module] if node.module else []))
            found += [base] + [f"{base}.{alias.name}" for alias in node.names]
    return found


@pytest.mark.parametrize("path", sorted((PACKAGE / "runtime").glob("*.py")), ids=lambda p: p.name)
def test_the_runtime_imports_no_tool_module(path):
    tools = [name for name in _imported_modules(path)
             if name.startswith("torch_npu_testing") and not name.startswith("torch_npu_testing.runtime")]
    assert tools == [], f"{path.name} imports kit tooling: {tools}"


@pytest.mark.parametrize("path", sorted((PACKAGE / "standin").rglob("*.py")), ids=lambda p: p.name)
def test_the_stand_in_imports_nothing_of_the_kit(path):
    """The stand-in (``standin/``: bottom floor, like the runtime) and the ``torch_npu`` package inside it run in
    processes that may not have the kit: they import the standard library and torch only."""
    found = [name for name in _imported_modules(path) if name.startswith("torch_npu_testing")
             and not name.startswith("torch_npu_testing.standin")]
    assert found == [], f"{path.name} imports the kit: {found}"


def test_the_package_root_loads_names_from_the_runtime_only():
    import torch_npu_testing
    assert set(torch_npu_testing._LAZY.values()) <= {"torch_npu_testing.runtime.carried",
                                                     "torch_npu_testing.runtime.carried_limits",
                                                     "torch_npu_testing.runtime.testcase"}
    assert set(torch_npu_testing.__all__) == set(layout.PUBLIC_NAMES)


# --------------------------------------------------------------------------- one table
def _tox():
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(ROOT / "tox.ini", encoding="utf-8")
    return parser


def _factor_lines(text):
    """``{factor: value}`` of the ``factor: value`` lines of a tox setting."""
    return dict(re.findall(r"^\s*([\w!]+):\s*(.+?)\s*$", text, re.M))


def test_tox_envs_pins_and_labels_are_the_tables():
    tox = _tox()
    testenv = tox["testenv"]
    deps, set_env = _factor_lines(testenv["deps"]), _factor_lines(testenv["set_env"])
    described = _factor_lines(testenv["description"])
    for env in table.all_envs():
        pins = table.env_pins(env)
        assert deps.get(env) == f"{{env:TORCH_SPEC_{env.upper()}:torch=={pins['torch']}}}", env
        assert set_env.get(env) == (f"TORCH_NPU_TESTING_TORCH_NPU_SPEC = "
                                    f"{{env:TORCH_NPU_SPEC_{env.upper()}:torch_npu=={pins['torch_npu']}}}"), env
        assert f"torch {pins['torch']} + torch_npu {pins['torch_npu']}" in described.get(env, ""), env
    branch_factors = {factor for factor in deps if factor in table.all_envs() or re.match(r"v\d|master", factor)}
    assert branch_factors == set(table.all_envs())
    envlist = [name.strip() for name in tox["tox"]["envlist"].split(",")]
    assert [env for env in envlist if env in table.all_envs()] == table.default_envs()
    labels = dict(re.findall(r"^\s*(\w+)\s*=\s*(.+?)\s*$", tox["tox"]["labels"], re.M))
    assert [e.strip() for e in labels["branches"].split(",")] == table.default_envs()
    assert [e.strip() for e in labels["maintenance"].split(",")] == table.maintenance_envs()
    for tool_env in ("unit", "bench"):
        assert f"torch=={table.tool_torch()}" in tox[f"testenv:{tool_env}"]["deps"].split(), tool_env


def test_the_strength_env_runs_mutate_on_every_api_file_under_the_unit_envs_torch():
    """``tox -e strength`` installs no torch of its own: it runs the unit env's interpreter (the table's
    tool torch) after the unit env, on each API file of the table, with the floor."""
    tox = _tox()
    envlist = [name.strip() for name in tox["tox"]["envlist"].split(",")]
    assert envlist.index("unit") < envlist.index("strength")
    section = tox["testenv:strength"]
    assert section["depends"].strip() == "unit" and section["deps"].strip() == ""
    python = "{toxworkdir}{/}unit{/}bin{/}python"
    lines = [line.strip() for line in section["commands"].strip().splitlines()]
    assert [line.split()[4] for line in lines] == table.test_files()
    for line in lines:
        assert line.startswith(f"{python} -m torch_npu_testing mutate ") and "--fail-under {env:STRENGTH_FLOOR}" in line


def test_only_branch_envs_prune_their_venv():
    """A branch env's last step is ``prune-env`` (acts only under $TORCH_NPU_TESTING_PRUNE_ENVS), never
    the ``installed`` env's: the tool envs override it with nothing, or CI would delete the unit env."""
    tox = _tox()
    assert _factor_lines(tox["testenv"]["commands_post"]) == {
        "!installed": "python -m torch_npu_testing prune-env {env_dir}"}
    for section in tox.sections():
        if section.startswith("testenv:"):
            assert tox[section].get("commands_post", None) == "", section


def test_every_api_of_the_table_has_its_test_file():
    for entry in table.apis():
        assert (ROOT / entry["test_file"]).is_file(), entry["name"]
        assert entry["since"] is None or table.api_present_in(entry, entry["since"])


def test_branch_test_files_leaves_out_what_a_branchs_torch_lacks():
    files, left_out = table.branch_test_files("v2.7.1")
    aot = "test/functorch/test_aot_joint_with_descriptors_api.py"
    assert aot not in files and "added in 2.9" in left_out[aot]
    assert table.branch_test_files("master")[1] == {}
    assert table.branch_test_files("v2.12.0", ["torch._functorch.config.patch"]) == (
        ["test/functorch/test_functorch_config_api.py"], {})
    with pytest.raises(KeyError, match="unknown Ascend/pytorch branch 'v9'"):
        table.branch_test_files("v9")
    with pytest.raises(KeyError, match="unknown target API 'torch.nope'"):
        table.api("torch.nope")


# --------------------------------------------------------------------------- each idea once
ONE_DEFINITION = ("parse_version", "find_api", "resolve_device", "device_type", "write_text_atomic",
                  "run_in_thread", "run_git", "test_id")


def _definitions():
    found = {}
    for path in SOURCES:
        for node in ast.walk(_tree(path)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                found.setdefault(node.name, []).append(str(path.relative_to(ROOT)))
    return found


@pytest.mark.parametrize("name", ONE_DEFINITION)
def test_each_idea_is_defined_once(name):
    places = _definitions().get(name, [])
    assert len(places) <= 1, f"{name} is defined in {places}"


def test_no_two_classes_share_a_name():
    """One exception by design: the kit's ``TestCase`` (runtime/testcase.py) is the carried ``TestCase``
    plus the guard, under the public name a test file imports."""
    classes = {"TestCase": ["torch_npu_testing/runtime/carried_testcase.py"]}
    for path in SOURCES:
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.ClassDef) and str(path.relative_to(ROOT)) not in classes.get(node.name, ()):
                if (node.name, path.name) == ("TestCase", "testcase.py") and path.parent.name == "runtime":
                    continue
                classes.setdefault(node.name, []).append(str(path.relative_to(ROOT)))
    assert {name: places for name, places in classes.items() if len(places) > 1} == {}


def _calls(path, dotted):
    owner, attr = dotted.rsplit(".", 1)
    return [node.lineno for node in ast.walk(_tree(path)) if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute) and node.func.attr == attr
            and isinstance(node.func.value, ast.Name) and node.func.value.id == owner]


@pytest.mark.parametrize("call, home", [("os.replace", "common/atomic.py"), ("threading.Thread", "runtime/carried.py"),
                                        ("subprocess.run", None)])
def test_plumbing_calls_live_in_their_one_module(call, home):
    if home is None:  # subprocess is used by several tools; only git goes through one runner
        users = [str(p.relative_to(PACKAGE)) for p in SOURCES
                 if any("git" in line for line in p.read_text().splitlines() if "subprocess.run([\"git\"" in line)]
        assert users == []
        return
    users = [str(path.relative_to(PACKAGE)) for path in SOURCES if _calls(path, call)]
    assert users in ([home], []), f"{call} used in {users}, expected only {home}"


@pytest.mark.parametrize("path", [ROOT / f for f in table.test_files()], ids=lambda p: p.name)
def test_api_test_files_define_no_thread_runner_of_their_own(path):
    assert _calls(path, "threading.Thread") == [], f"{path.name}: use run_in_thread"


# --------------------------------------------------------------------------- sizes
@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_modules_and_functions_stay_small(path):
    lines = path.read_text(encoding="utf-8").count("\n")
    assert lines <= 400, f"{path.relative_to(ROOT)} has {lines} lines"
    long = [f"{node.name} ({node.end_lineno - node.lineno + 1} lines)" for node in ast.walk(_tree(path))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno - node.lineno + 1 > 60]
    assert long == [], f"{path.relative_to(ROOT)}: {long}"
