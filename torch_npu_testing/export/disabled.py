# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Kit tests that Ascend's CI would skip: entries of ``test/unsupported_test_cases/.pytorch-disabled-tests*.json``.

torch_npu.testing skips a test ("this test is disabled now") when ``DISABLED_TESTS_FILE`` names such a
file and an entry ``"test_name (module.ClassName)": [reason, [platforms]]`` (two items) matches it: the
method name is equal and the test's class name starts with the entry's class name (``NPU`` and
``PRIVATEUSE1`` read as the same). A kit test that matches would pass silently without running, so
export warns about it.
"""
import json
import re

DISABLED_DIR = "test/unsupported_test_cases"
DISABLED_PATTERN = re.compile(r"\.pytorch-disabled-tests.*\.json")


def _entry_parts(key):
    parts = re.split(r" (?=\()", key.strip(), maxsplit=1)
    if len(parts) != 2 or not parts[1].startswith("(") or not parts[1].endswith(")"):
        return None
    return parts[0], parts[1][1:-1].split(".")[-1]


def _class_matches(class_name, target):
    swapped = target.replace("PRIVATEUSE1", "NPU") if "PRIVATEUSE1" in target else target.replace("NPU", "PRIVATEUSE1")
    return bool(target) and (class_name.startswith(target) or class_name.startswith(swapped))


def disabled_warnings(targets, jsons):
    """One line per kit test id of ``targets`` that an entry of ``jsons`` ({path: bytes or None}) disables."""
    warnings = []
    for path, data in sorted(jsons.items()):
        if data is None or not DISABLED_PATTERN.fullmatch(path.rsplit("/", 1)[-1]):
            continue
        try:
            entries = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            warnings.append(f"{path} cannot be read as JSON ({exc}); kit tests not checked against it")
            continue
        by_method = {}
        for key, value in entries.items() if isinstance(entries, dict) else ():
            parts = _entry_parts(key) if isinstance(value, list) and len(value) > 1 else None
            if parts:
                by_method.setdefault(parts[0], []).append((key, parts[1]))
        for target in targets:
            for test in target.kit_ids:
                class_name, method = test.split(".", 1)
                for key, target_class in by_method.get(method, ()):
                    if _class_matches(class_name, target_class):
                        warnings.append(f"{target.rel_path}: kit test {test} matches {key!r} in {path}: Ascend CI "
                                        "skips it there (\"this test is disabled now\"); rename it or drop the entry")
    return warnings
