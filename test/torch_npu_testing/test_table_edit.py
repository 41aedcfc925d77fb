# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""``task-id`` and ``adds``: one API's row of a kit's table set by a command, checked as loading checks the table;
bad input is one line, exit 2, and the table is left byte for byte as it was."""
import json
import shutil
import subprocess
import sys

import pytest

from torch_npu_testing.__main__ import main as cli_main
from torch_npu_testing.common import table

API = "torch._functorch.config.patch"


@pytest.fixture
def kit(tmp_path):
    path = tmp_path / "kit" / "torch_npu_testing" / "common" / "table.json"
    path.parent.mkdir(parents=True)
    shutil.copyfile(table.TABLE_PATH, path)
    return tmp_path / "kit"


def row(kit, name=API):
    doc = json.loads((kit / "torch_npu_testing" / "common" / "table.json").read_text(encoding="utf-8"))
    return next(entry for entry in doc["apis"] if entry["name"] == name)


def test_task_id_sets_the_task_in_the_table_shape(kit, capsys):
    assert cli_main(["task-id", API, "--task", "任务99", "--campaign", "测试活动", "--campaign-issue", "7",
                     "--issue", "2700", "--issue", "结果:2701:the result", "--kit", str(kit)]) == 0
    assert row(kit)["ascend_task_id"] == {"task": "任务99", "campaign": "测试活动", "campaign_issue": 7, "issues": [
        {"role": "issue", "number": 2700}, {"role": "结果", "number": 2701, "title": "the result"}]}
    assert "ascend_task_id set in" in capsys.readouterr().out
    table.load_apis(str(kit / "torch_npu_testing" / "common" / "table.json"))  # loads: the table's own check
    assert cli_main(["task-id", API, "--clear", "--kit", str(kit)]) == 0
    assert row(kit)["ascend_task_id"] is None


def test_adds_sets_the_text_once_and_a_subprocess_sees_it(kit):
    result = subprocess.run([sys.executable, "-m", "torch_npu_testing", "adds", API, "covers the dict form",
                             "--kit", str(kit)], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert row(kit)["adds_over_callers"] == "covers the dict form"


@pytest.mark.parametrize("argv, message", [
    (["task-id", "torch.nope", "--task", "t", "--campaign", "c", "--issue", "1"], "unknown target API 'torch.nope'"),
    (["task-id", API, "--task", "t", "--campaign", "c"], "give --task, --campaign and at least one --issue"),
    (["task-id", API, "--task", "t", "--campaign", "c", "--issue", "owner:1"], "--issue owner:1: give [ROLE:]NUMBER"),
    (["task-id", API, "--task", "t", "--campaign", "c", "--issue", "0"], "--issue 0: give"),
    (["task-id", API, "--task", "", "--campaign", "c", "--issue", "1"], "give --task"),
    (["task-id", API, "--clear", "--task", "t"], "--clear takes no"),
    (["task-id", API, "--task", "t", "--campaign", "c", "--campaign-issue", "0", "--issue", "1"],
     "'campaign_issue' must be a positive int"),
    (["adds", API, "   "], "adds_over_callers must be a non-empty string"),
    (["adds", API, "x" * 2001], "at most 2000"),
    (["adds", "torch.nope", "text"], "unknown target API"),
])
def test_bad_input_is_one_line_exit_2_and_the_table_unchanged(kit, capsys, argv, message):
    path = kit / "torch_npu_testing" / "common" / "table.json"
    before = path.read_bytes()
    assert cli_main(argv + ["--kit", str(kit)]) == 2
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and message in error[0], error
    assert path.read_bytes() == before and sorted(p.name for p in path.parent.iterdir()) == ["table.json"]


def test_no_table_in_the_kit_is_refused(tmp_path, capsys):
    assert cli_main(["adds", API, "text", "--kit", str(tmp_path)]) == 2
    assert "no torch_npu_testing/common/table.json" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_a_malformed_adds_is_refused_at_load(tmp_path):
    doc = json.loads(open(table.TABLE_PATH, encoding="utf-8").read())
    doc["apis"][0]["adds_over_callers"] = ""
    path = tmp_path / "table.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(ValueError, match=f"{API}: adds_over_callers must be a non-empty string"):
        table.load_apis(str(path))
