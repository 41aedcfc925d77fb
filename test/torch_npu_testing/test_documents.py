# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""The one reader of the kit's format-named JSON records, and the messages its two callers word from it."""
import json

import pytest

from torch_npu_testing.common.documents import WrongFormat, read_document
from torch_npu_testing.mutate.output import READABLE_FORMATS
from torch_npu_testing.report import strength
from torch_npu_testing.verify import record


def test_a_document_of_the_expected_format_is_returned_whole(tmp_path):
    path = tmp_path / "doc.json"
    path.write_text(json.dumps({"format": "torch_npu_testing.x/1", "value": [1, 2]}))
    assert read_document(path, "torch_npu_testing.x/1") == {"format": "torch_npu_testing.x/1", "value": [1, 2]}


def test_a_reader_may_accept_several_formats(tmp_path):
    path = tmp_path / "doc.json"
    for name in ("torch_npu_testing.x/1", "torch_npu_testing.x/2"):
        path.write_text(json.dumps({"format": name}))
        assert read_document(path, ("torch_npu_testing.x/1", "torch_npu_testing.x/2")) == {"format": name}
    path.write_text(json.dumps({"format": "torch_npu_testing.x/3"}))
    with pytest.raises(WrongFormat):
        read_document(path, ("torch_npu_testing.x/1", "torch_npu_testing.x/2"))


@pytest.mark.parametrize("text, found", [('{"format": "torch_npu_testing.x/2"}', "torch_npu_testing.x/2"),
                                         ('{"other": 1}', None), ("[1, 2]", "list")])
def test_another_format_names_what_it_found(tmp_path, text, found):
    path = tmp_path / "doc.json"
    path.write_text(text)
    with pytest.raises(WrongFormat) as raised:
        read_document(path, "torch_npu_testing.x/1")
    assert raised.value.found == found


def test_missing_and_unreadable_files_raise_what_open_and_json_raise(tmp_path):
    with pytest.raises(FileNotFoundError):
        read_document(tmp_path / "nowhere.json", "torch_npu_testing.x/1")
    (tmp_path / "broken.json").write_text("{")
    with pytest.raises(ValueError):
        read_document(tmp_path / "broken.json", "torch_npu_testing.x/1")


def test_strength_rows_and_verify_records_word_their_own_messages(tmp_path):
    folder = tmp_path / "strength"
    folder.mkdir()
    (folder / "other.json").write_text('{"format": "torch_npu_testing.results/2"}')
    rows = strength.rows(str(tmp_path))
    assert len(rows) == 1 and "format 'torch_npu_testing.results/2', expected one of " + ", ".join(
        map(repr, READABLE_FORMATS)) in rows[0]["problem"], rows
    document, why = record.load(str(folder / "other.json"))
    assert document is None and f"is not a {record.FORMAT} record (format 'torch_npu_testing.results/2')" in why
    assert record.load(str(tmp_path / "none.json"))[1] == f"no verify results at {tmp_path / 'none.json'}"
