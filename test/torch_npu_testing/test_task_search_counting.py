# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""``search`` counts like a reviewer (issue 37): calls through a test file's own helpers, method and in-place
forms, aliases and defining-module names are counted; a home is a file about the API, else Ascend's *_api.py
path; bad input and an interpreter without torch are one line, exit 2, nothing written.

The fixture files are written here in the shape of Ascend's test files (a licence header, TestCase classes
with helper methods, module-level helpers, ``run_tests()``)."""
import json
import os
import subprocess
import textwrap
from pathlib import Path

import pytest

from ascend_fixture import git, write

from torch_npu_testing.__main__ import main
from torch_npu_testing.task import callfinder, opnames, placement

KIT = Path(__file__).resolve().parents[2]
HEADER = "# Copyright (c) 2026 Fixture Holder\n# BSD-3-Clause\nimport torch\nimport numpy as np\n" \
         "from torch_npu.testing.testcase import TestCase, run_tests\n\n"

# An op's own file: a whole class about movedim, every call form a reviewer counts.
MOVEDIM = HEADER + textwrap.dedent('''\
    def make_moved(x):
        return torch.moveaxis(x, 0, 1)


    def level_one(x):
        return level_two(x)


    def level_two(x):
        return level_three(x)


    def level_three(x):
        return level_four(x)


    def level_four(x):
        return x.movedim(0, 1)


    class MovedimBase(TestCase):
        def base_check(self, x):
            return torch.movedim(x, 1, 0)


    class TestMovedim(MovedimBase):
        def _check(self, x):
            return self._inner(x)

        def _inner(self, x):
            return torch.movedim(x, 0, 1)

        def _run(self, fn):
            return fn(torch.ones(2, 3), 0, 1)

        def test_movedim_direct(self):
            torch.movedim(torch.ones(2, 3), 0, 1)

        def test_movedim_helper_method(self):
            self._check(torch.ones(2, 3))

        def test_movedim_module_helper(self):
            make_moved(torch.ones(2, 3))

        def test_movedim_method_form(self):
            x = torch.ones(2, 3)
            x.movedim(0, 1)

        def test_moveaxis_alias(self):
            torch.moveaxis(torch.ones(2, 3), 0, 1)

        def test_movedim_loop(self):
            for fn in [torch.movedim, torch.moveaxis]:
                fn(torch.ones(2, 3), 0, 1)

        def test_movedim_passed_to_helper(self):
            self._run(torch.movedim)

        def test_movedim_base_helper(self):
            self.base_check(torch.ones(2, 3))

        def test_movedim_three_helper_levels(self):
            level_one(torch.ones(2, 3))

        def test_numpy_moveaxis_is_not_it(self):
            np.moveaxis(np.ones((2, 3)), 0, 1)


    if __name__ == "__main__":
        run_tests()
    ''')

# A large file that calls movedim in one test of many: never a home.
MISC = HEADER + textwrap.dedent('''\
    class TestMisc(TestCase):
        def test_misc_one(self):
            torch.ones(2, 3).movedim(0, 1)

        def test_misc_two(self):
            torch.ones(1).sum()

        def test_misc_three(self):
            torch.ones(1).mean()
    ''')

# A custom op's file whose CPU reference uses addcmul in passing, through a helper: not a home.
BOX = HEADER + textwrap.dedent('''\
    class TestBoxDecode(TestCase):
        def cpu_op_exec(self, a, b, c):
            return torch.addcmul(a, b, c)

        def test_box_decode_fp32(self):
            self.cpu_op_exec(torch.ones(2), torch.ones(2), torch.ones(2))

        def test_box_decode_fp16(self):
            self.cpu_op_exec(torch.ones(2), torch.ones(2), torch.ones(2))
    ''')

INPLACE = HEADER + textwrap.dedent('''\
    class TestAddcmulInplace(TestCase):
        def test_inplace(self):
            x = torch.ones(2)
            x.addcmul_(torch.ones(2), torch.ones(2))
    ''')

JACREV = HEADER + textwrap.dedent('''\
    from functorch import jacrev
    from torch._functorch.eager_transforms import jacrev as impl_jacrev


    class TestJacrev(TestCase):
        def test_functorch_name(self):
            jacrev(torch.sin)(torch.ones(2))

        def test_defining_module_name(self):
            impl_jacrev(torch.sin)(torch.ones(2))
    ''')

# Upstream-style shapes: a module-level parametrize decorator naming the API, a list of ops looped over.
CARRIERS = HEADER + textwrap.dedent('''\
    from functorch import jacrev, jacfwd
    from torch.testing._internal.common_utils import parametrize, subtest

    jac_both = parametrize("jacapi", [subtest(jacrev, name="jacrev"), subtest(jacfwd, name="jacfwd")])


    class TestJac(TestCase):
        @jac_both
        def test_jac_of_sin(self, jacapi):
            jacapi(torch.sin)(torch.ones(2))

        def test_jacfwd_only(self):
            jacfwd(torch.sin)(torch.ones(2))

        def test_ops_list(self):
            ops = [torch.lerp, torch.addcmul]
            for op in ops:
                op(torch.ones(2), torch.ones(2), torch.ones(2))
    ''')

MOVEDIM_PATH = "test/npu/test_movedim_cases.py"


def query(api):
    names = opnames.names(api)
    return names["targets"], (), (), names["methods"]


def hits(text, api, path=MOVEDIM_PATH):
    found, _ = callfinder.scan(text, path, *query(api))
    return {hit["test"]: hit for hit in found}


def test_every_call_form_of_an_op_is_counted_and_says_how():
    found = hits(MOVEDIM, "torch.movedim")
    direct = {name for name, hit in found.items() if hit["kind"] == "direct"}
    assert direct == {"test_movedim_direct", "test_movedim_helper_method", "test_movedim_module_helper",
                      "test_movedim_method_form", "test_moveaxis_alias", "test_movedim_loop",
                      "test_movedim_passed_to_helper", "test_movedim_base_helper"}
    assert "test_numpy_moveaxis_is_not_it" not in found
    helper = found["test_movedim_helper_method"]
    assert helper["via"] == ["TestMovedim._check", "TestMovedim._inner"] and helper["line"] == 46
    assert helper["why"] == "calls it through helpers `TestMovedim._check` -> `TestMovedim._inner` (line 37)"
    assert found["test_movedim_module_helper"]["via"] == ["make_moved"]
    assert found["test_movedim_base_helper"]["via"] == ["MovedimBase.base_check"]
    assert found["test_movedim_method_form"]["why"] == "calls its method form .movedim()"
    assert found["test_movedim_passed_to_helper"]["why"].startswith("passes it to `TestMovedim._run`")
    assert (found["test_movedim_direct"]["via"], found["test_movedim_direct"]["via_line"]) == ([], None)


def test_helpers_are_followed_three_levels_deep_and_no_further():
    assert callfinder.MAX_DEPTH == 3
    found = hits(MOVEDIM, "torch.movedim")
    assert "test_movedim_three_helper_levels" not in found  # test -> one -> two -> three -> four: too deep
    shallower = MOVEDIM.replace("return level_three(x)", "return level_four(x)")
    hit = hits(shallower, "torch.movedim")["test_movedim_three_helper_levels"]
    assert hit["via"] == ["level_one", "level_two", "level_four"]


def test_in_place_form_and_defining_module_names_count():
    assert opnames.names("torch.addcmul")["methods"] == ["addcmul", "addcmul_"]
    assert hits(INPLACE, "torch.addcmul")["test_inplace"]["why"] == "calls its method form .addcmul_()"
    names = opnames.names("torch.func.jacrev")
    assert names["targets"] == ["torch.func.jacrev", "torch._functorch.eager_transforms.jacrev",
                                "functorch.jacrev"]
    assert set(hits(JACREV, "torch.func.jacrev")) == {"test_functorch_name", "test_defining_module_name"}
    # the alias group is the same whichever member is asked for
    assert opnames.names("torch.moveaxis")["targets"][:2] == ["torch.moveaxis", "torch.movedim"]


def test_a_decorator_naming_it_and_a_list_of_ops_count():
    found = hits(CARRIERS, "torch.func.jacrev")
    assert set(found) == {"test_jac_of_sin"}
    assert found["test_jac_of_sin"]["why"] == "calls it through the decorator `jac_both` (line 10)"
    assert found["test_jac_of_sin"]["line"] == 14 and found["test_jac_of_sin"]["via_line"] == 10
    assert hits(CARRIERS, "torch.addcmul")["test_ops_list"]["kind"] == "direct"


def test_convention_path_takes_the_area_from_the_module():
    assert placement.convention_path("torch.movedim", "torch")[0] == "test/npu/test_movedim_api.py"
    path, why = placement.convention_path("torch.func.jacrev", "torch._functorch.eager_transforms",
                                          lambda folder: folder == "test/functorch")
    assert path == "test/functorch/test_func_jacrev_api.py" and "area functorch" in why
    assert placement.convention_path("torch.autograd.grad_mode.inference_mode", "torch.autograd.grad_mode",
                                     lambda folder: False)[0] == "test/npu/test_grad_mode_inference_mode_api.py"
    assert placement.convention_path("torch.nn.utils.rnn.PackedSequence", "torch.nn.utils.rnn")[0] == \
        "test/nn/test_rnn_packed_sequence_api.py"


@pytest.fixture(scope="module")
def ascend(tmp_path_factory):
    root = tmp_path_factory.mktemp("counting") / "ascend"
    root.mkdir()
    git(root, "init", "-q", "-b", "master")
    write(root, "torch_npu/__init__.py", "")
    for rel, text in ((MOVEDIM_PATH, MOVEDIM), ("test/dynamo/test_misc.py", MISC),
                      ("test/custom_ops/test_box_decode.py", BOX), ("test/functorch/test_other.py", INPLACE)):
        write(root, rel, text)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "master")
    return root


def search_doc(ascend, tmp_path, api):
    out = tmp_path / "s.json"
    assert main(["search", api, "--ascend", str(ascend), "--json", str(out)]) == 0
    return json.loads(out.read_text())["repos"][0]["branches"][0]


def test_the_file_about_the_op_is_home_and_a_one_mention_file_is_not(ascend, tmp_path, capsys):
    branch = search_doc(ascend, tmp_path, "torch.movedim")
    text = capsys.readouterr().out
    assert branch["home"] == {"path": MOVEDIM_PATH, "source": "tests", "why": (
        "8 of its 10 tests exercise it: 8 call it (3 through the file's helpers), 8 named for it or its family")}
    misc = next(row for row in branch["files"] if row["path"] == "test/dynamo/test_misc.py")
    assert (misc["direct"], misc["eligible"]) == (1, False)
    assert f"`{MOVEDIM_PATH}::TestMovedim::test_movedim_module_helper` (line 49): direct call (calls it through " \
           "helper `make_moved` (line 8))" in text
    assert "9 tests call torch.movedim directly" in text


def test_without_a_home_the_api_gets_its_own_file_at_the_api_py_path(ascend, tmp_path, capsys):
    """addcmul: one in-place call in one test, and a custom op's helper: no home, Ascend's convention."""
    branch = search_doc(ascend, tmp_path, "torch.addcmul")
    assert branch["direct"] == 3
    box = next(row for row in branch["files"] if row["path"] == "test/custom_ops/test_box_decode.py")
    assert (box["direct"], box["helpers"], box["named"], box["eligible"]) == (2, 2, 0, False)
    assert branch["home"]["path"] == "test/npu/test_addcmul_api.py" and branch["home"]["source"] == "convention"
    assert branch["summary"].endswith("new tests belong in test/npu/test_addcmul_api.py (a new file)")
    assert "New tests belong in `test/npu/test_addcmul_api.py`: no file has 2 or more tests" in capsys.readouterr().out


def test_a_misspelt_name_is_one_line_exit_2_nothing_written(ascend, tmp_path, capsys):
    out = tmp_path / "s.json"
    assert main(["search", "torch.movedimm", "--ascend", str(ascend), "--json", str(out)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    assert "torch.movedimm does not resolve in torch" in captured.err and "check the name" in captured.err
    assert not out.exists()


def test_without_torch_it_says_what_to_run_instead(ascend, tmp_path):
    """Under an interpreter without torch (plain python3 here): one line naming the kit env, exit 2."""
    python = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else "python3"
    probe = subprocess.run([python, "-c", "import importlib.util, sys; "
                            "sys.exit(importlib.util.find_spec('torch') is not None)"], check=False)
    if probe.returncode != 0:
        pytest.skip(f"{python} has torch: no interpreter without torch to run this under")
    out = tmp_path / "s.json"
    env = dict(os.environ, PYTHONPATH=str(KIT))
    done = subprocess.run([python, "-m", "torch_npu_testing", "search", "torch.movedim", "--ascend", str(ascend),
                           "--json", str(out)], capture_output=True, text=True, env=env, cwd=tmp_path, check=False)
    assert done.returncode == 2 and done.stdout == "", (done.stdout, done.stderr)
    assert done.stderr.count("\n") == 1 and "search needs torch" in done.stderr, done.stderr
    assert ".tox/unit/bin/python -m torch_npu_testing search" in done.stderr
    assert not out.exists()


def test_a_pool_of_processes_gives_the_same_answer(ascend, tmp_path, monkeypatch):
    """Files are parsed in spawned processes when there are enough of them: same hits, same home."""
    from torch_npu_testing.task import search
    sequential = search_doc(ascend, tmp_path, "torch.movedim")
    real, calls = search.ProcessPoolExecutor, []

    def counting(**kwargs):
        calls.append(kwargs)
        return real(**kwargs)

    monkeypatch.setattr(search, "PARALLEL_FROM", 1)
    monkeypatch.setattr(search.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(search, "ProcessPoolExecutor", counting)
    assert search_doc(ascend, tmp_path, "torch.movedim") == sequential
    assert len(calls) == 1 and calls[0]["mp_context"].get_start_method() == "spawn"
