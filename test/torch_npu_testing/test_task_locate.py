# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""``locate``: functions, classes, methods, attributes, C builtins and private names in this torch; one
real ``--python`` subprocess; bad input."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from torch_npu_testing.__main__ import main
from torch_npu_testing.task import where_defined

torch = pytest.importorskip("torch", reason="locate needs torch in this interpreter")
ROOT = Path(__file__).resolve().parents[2]


def test_method_of_a_python_class(tmp_path, capsys):
    out = tmp_path / "locate.json"
    assert main(["locate", "torch.autograd.grad_mode.set_grad_enabled.clone", "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["format"] == "torch_npu_testing.locate/1"
    row, = doc["results"]
    assert (row["found"], row["kind"], row["implementation"], row["module"], row["file"]) == (
        True, "method", "python", "torch.autograd.grad_mode", "autograd/grad_mode.py")
    source = torch.autograd.grad_mode.set_grad_enabled.clone
    import inspect
    lines, first = inspect.getsourcelines(source)
    assert (row["first_line"], row["last_line"]) == (first, first + len(lines) - 1)
    assert row["public"] and row["private_reason"] is None and row["torch"] == torch.__version__.split("+")[0]
    assert "torch.set_grad_enabled.clone" in row["aliases"]
    text = capsys.readouterr().out
    assert f"`autograd/grad_mode.py:{first}-{first + len(lines) - 1}`" in text and "| method | python |" in text


@pytest.mark.parametrize("name, kind, implementation, public", [
    ("torch.Tensor.ndim", "attribute", "c", True),
    ("torch._C._functorch._add_batch_dim", "function", "c", False),
    ("torch.autograd.grad_mode.set_grad_enabled", "class", "python", True),
    ("torch._functorch.config.patch", "function", "python", False),
    ("torch.autograd.grad_mode", "module", "python", True),
])
def test_kinds(name, kind, implementation, public):
    row = where_defined.locate(name)
    assert (row["found"], row["kind"], row["implementation"], row["public"]) == (True, kind, implementation, public)
    if not public:
        assert "starts with an underscore" in row["private_reason"]


def test_a_misspelt_name_is_one_line_exit_2_nothing_written(capsys, tmp_path):
    out = tmp_path / "l.json"
    assert main(["locate", "torch.autograd.grad_mode.no_such_thing", "--json", str(out)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1 and not out.exists()
    assert ("torch.autograd.grad_mode.no_such_thing resolves in no probed torch (" in captured.err
            and "AttributeError: torch.autograd.grad_mode has no attribute no_such_thing (check the name)"
            in captured.err), captured.err


def test_a_name_absent_in_one_torch_is_a_row_of_that_torch(capsys):
    """Found in one interpreter, absent in another: exit 0, the absent one is a row with its error."""
    assert main(["locate", "torch.Tensor.ndim", "--python", sys.executable, "--python", "/bin/false"]) == 0
    assert "Not probed (no importable torch there): `/bin/false`" in capsys.readouterr().out


def test_no_torch_here_names_the_tools_interpreter(tmp_path):
    """Under an interpreter without torch: one line naming the interpreter to use, exit 2."""
    result = subprocess.run(["/usr/bin/env", "-i", "PATH=/usr/bin:/bin", f"PYTHONPATH={ROOT}", sys.executable, "-S",
                             "-m", "torch_npu_testing", "locate", "torch.Tensor.ndim"],
                            capture_output=True, text=True, check=False, cwd=tmp_path)
    assert result.returncode == 2 and result.stdout == "", result.stderr
    assert result.stderr.startswith("torch_npu_testing: error: locate needs torch, which ")
    assert "`.tox/unit/bin/python -m torch_npu_testing locate ...`" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_other_interpreter_runs_the_probe_by_path(tmp_path, capsys, monkeypatch):
    out = tmp_path / "l.json"
    monkeypatch.chdir(tmp_path)
    relative = os.path.relpath(sys.executable)  # a relative --python works too (the probe runs elsewhere)
    assert main(["locate", "torch.Tensor.ndim", "--python", relative, "--json", str(out)]) == 0
    row, = json.loads(out.read_text())["results"]
    assert row["python"] == relative and row["found"] and row["kind"] == "attribute" and row["error"] is None


@pytest.mark.parametrize("argv, message", [
    (["locate", "Tensor.ndim"], "cannot parse API name"),
    (["locate", "torch.Tensor.ndim", "--python", "{tmp}/nope"], "is not an executable file"),
    (["locate", "torch.Tensor.ndim", "--json", "{tmp}/missing/x.json"], "does not exist"),
])
def test_bad_input(tmp_path, capsys, argv, message):
    json_path = tmp_path / "x.json"
    argv = [a.format(tmp=tmp_path) for a in argv] + ([] if "--json" in argv else ["--json", str(json_path)])
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1 and message in captured.err
    assert not json_path.exists()
