# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Records keyed by branch and task: one task's description is never another's (export's stale check included)."""
from torch_npu_testing.common import recordnames
from torch_npu_testing.export.describe import description_name, find_description
from torch_npu_testing.pr.evidence import evidence_name
from torch_npu_testing.verify.record import record_name


def test_names_are_keyed_by_branch_and_sorted_api_selection():
    assert record_name("v2.12.0") == "verify-v2.12.0.json"  # every API: the name before tasks were keyed
    assert record_name("v2.12.0", ["torch.b", "torch.a", "torch.b"]) == "verify-v2.12.0--torch.a+torch.b.json"
    assert description_name("master", ["torch.nn.functional.pad"]) == "pr-master--torch.nn.functional.pad.md"
    assert evidence_name("v2.7.1", ["torch.x"]) == "evidence-v2.7.1--torch.x.md"
    assert recordnames.name("export", "feature/x", ["a b"]) == "export-feature_x--a_b.json"


def test_export_finds_only_its_own_tasks_description(tmp_path):
    """A second task's export never reads the first task's description (whose gaps made export exit 1)."""
    reports = tmp_path / "reports"
    reports.mkdir()
    (reports / "pr-v2.12.0--torch.first.md").write_text("first task\n")
    assert find_description(str(tmp_path), "v2.12.0", api_names=["torch.second"]) is None
    assert find_description(str(tmp_path), "v2.12.0", api_names=["torch.first"]) == str(
        reports / "pr-v2.12.0--torch.first.md")
    assert find_description(str(tmp_path), "v2.12.0") is None
