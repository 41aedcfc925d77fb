# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Per-test outcomes from the JUnit XML a test file's own runner writes (never from its ``-v`` text).

Both runners an Ascend file can end with write it through ``xmlrunner``: torch's
``common_utils.run_tests`` with ``--save-xml DIR``, torch_npu's ``run_tests`` under ``IN_CI=1`` into
``$TEST_REPORT_PATH``. One ``testcase`` element per test; its child says the outcome:

- none: passed; ``failure``: failed; ``error``: error, or an unexpected success (``type="UnexpectedSuccess"``);
- ``skipped``: skipped (``message`` is the reason), or an expected failure (``type="XFAIL"``).

A failing subtest is a ``testcase`` named ``test_x (label)``. The XML has no passing subtests, so
verify counts tests, not the suite's cases (a test with passing subtests is one passed case here).
"""
import os
import xml.etree.ElementTree as ET

from ..common.results import MAX_REASON_CHARS, Case, Outcome

XFAIL_TYPE = "XFAIL"
UNEXPECTED_SUCCESS_TYPE = "UnexpectedSuccess"


def _outcome(element):
    """``(outcome, child element or None)`` of one ``testcase`` element."""
    for tag in ("failure", "error", "skipped"):
        child = element.find(tag)
        if child is None:
            continue
        kind = child.get("type") or ""
        if tag == "failure":
            return Outcome.FAILED, child
        if tag == "error":
            return (Outcome.UNEXPECTED_SUCCESS if kind == UNEXPECTED_SUCCESS_TYPE else Outcome.ERROR), child
        return (Outcome.EXPECTED_FAILURE if kind == XFAIL_TYPE else Outcome.SKIPPED), child
    return Outcome.PASSED, None


def _reason(outcome, child):
    if child is None:
        return None
    # an XML parser turns the newlines of an attribute into spaces: the first paragraph ends at two of them
    message = (child.get("message") or "").strip().split("  ")[0].strip()
    if outcome in (Outcome.FAILED, Outcome.ERROR) and child.get("type"):
        message = f"{child.get('type')}: {message}".rstrip(": ")
    if len(message) > MAX_REASON_CHARS:
        message = message[:MAX_REASON_CHARS - 3] + "..."
    return message or None


def case_of(element, file):
    """The :class:`Case` of one ``testcase`` element; ``file`` is stored in it."""
    classname = (element.get("classname") or "").rpartition(".")[2]
    method, _, label = (element.get("name") or "").partition(" ")
    outcome, child = _outcome(element)
    details = ((child.text or "").strip() or None) if child is not None and outcome is not Outcome.SKIPPED else None
    seconds = element.get("time")
    return Case(file=file, id=f"{classname}.{method}" if classname else method, outcome=outcome,
                subtest=label or None, reason=_reason(outcome, child), details=details,
                duration_s=float(seconds) if seconds else None)


def read_cases(directory, file):
    """Every case of the XML files under ``directory`` (sorted by file name); ``(cases, xml paths)``.
    A file that is not JUnit XML raises ValueError naming it."""
    # (os.walk, not glob: torch_npu's runner names its folder after the file's path, ``.tmp.x...`` for /tmp/x)
    paths = sorted(os.path.join(top, name) for top, _, names in os.walk(directory) for name in names
                   if name.endswith(".xml"))
    cases = []
    for path in paths:
        try:
            root = ET.parse(path).getroot()
        except ET.ParseError as exc:
            raise ValueError(f"{path}: not JUnit XML ({exc})") from None
        cases += [case_of(element, file) for element in root.iter("testcase")]
    return cases, paths
