# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""【功能验证】's device gaps: what the device lacked in verify's runs of the PR's files, in one short table.

That is what Ascend tracks (its disabled-tests lists, ``disabled_tests_type.json``'s typed reasons): per gap
the kind (``vehicle``: the test's own helper ops, so the case is not applicable there; ``API``: the API under
test; ``device``: a refusal the simulated NPU logged that no case's reason names), what (the dtype or layout
of the case, or the device's op and dtype), whether Ascend's docs document it for the API, the device's
message and how many cases met it. Beside it, per env and file, the cases skipped for a device limit and
the cases that ran. Facts from :func:`torch_npu_testing.verify.record.gaps_summary` over the PR's part of
the record. Nothing when no run was on a device and no gap was met; one line when a device met none.
"""
from ..common import gaps
from ..verify import record as record_module
from .task_sections import code

HEADING = "### 设备缺口 / device gaps met"
FILE_HEADER = ["| env | file | run | cases that ran | skipped for a device limit | other skips |",
               "| --- | --- | --- | --- | --- | --- |"]


def _file_rows(summary):
    return [f"| {code(item['env'])} | {code(item['path'])} | {item.get('run', '')} | {item['ran']} | "
            f"{item['device_limit']} | {item['other_skips']} |" for item in summary["files"]]


def _limits(summary):
    if not summary["limits"]:
        return "no limits table (`TORCH_NPU_TESTING_LIMITS` unset): the device refused only what it lacks itself"
    return "limits table " + ", ".join(code(path) for path in summary["limits"])


def lines(summary, options=None):
    """The subsection's lines (empty when it has nothing to say)."""
    options = options or {}
    if summary is None or (not summary["on_device"] and not summary["rows"]):
        return []
    head = [HEADING, ""]
    if not summary["rows"]:
        ran = sum(item["ran"] for item in summary["files"] if item.get("run", record_module.WHOLE_FILE)
                  == record_module.WHOLE_FILE)
        return head + [f"{gaps.NONE_MET} ({ran} cases ran; {_limits(summary)})", ""]
    return head + [
        f"Per env and file, the cases skipped for a device limit beside the cases that ran ({_limits(summary)}):",
        ""] + FILE_HEADER + \
        _file_rows(summary) + ["", "Each gap once (`vehicle`: the case's own helper ops, not applicable on the "
                               "device; `API`: the API under test, documented by Ascend or a finding; `device`: a "
                               "refusal the device logged that no case's outcome names):", "",
                               gaps.render(summary["rows"], options.get("max_gaps", 30)), ""]
