# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Unit tests of torch_npu_testing.common.atomic: the one way the kit's tools write a user's file."""
import os
import stat

import pytest

from torch_npu_testing.common.atomic import write_text_atomic


def test_new_file_gets_the_text_and_0644(tmp_path):
    target = tmp_path / "sub" / "new.md"
    write_text_atomic(target, "一行\r\nline\n")
    assert target.read_bytes() == "一行\r\nline\n".encode("utf-8")  # newlines kept as given
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o644
    assert sorted(os.listdir(target.parent)) == ["new.md"]


def test_existing_file_keeps_its_mode(tmp_path):
    target = tmp_path / "run.sh"
    target.write_text("old")
    os.chmod(target, 0o755)
    write_text_atomic(str(target), "new")
    assert target.read_text() == "new" and stat.S_IMODE(os.stat(target).st_mode) == 0o755


def test_failed_write_leaves_the_old_file_and_no_temp_file(tmp_path, monkeypatch):
    target = tmp_path / "data.json"
    target.write_text("old")

    def broken_replace(source, destination):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        write_text_atomic(target, "new")
    assert target.read_text() == "old" and sorted(os.listdir(tmp_path)) == ["data.json"]
