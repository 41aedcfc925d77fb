# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""The base line of 【upstream patch 实跑日志】: which upstream file each patch ran on, and whether its blob
was verified (a full recorded blob that every run's file hashed to), from real ``upstream run`` results.

A fake PyTorch checkout and patches in temp dirs (test_upstream_support), the real ``upstream run`` writing
its results file, the evidence report's reader, and pr's section writer.
"""
from test_upstream_support import TINY, TINY_PATCH, cli, make_kit
from torch_npu_testing.pr import sections
from torch_npu_testing.report import collect
from torch_npu_testing.upstream import basefacts


def ran(kit, tmp_path, capsys, name="upstream.json"):
    """Run the kit's patches with this interpreter; the results file as the evidence report reads it."""
    results = tmp_path / name
    code, _, _ = cli(kit.cli("run", "--results", results), capsys)
    assert code == 0
    return collect.read_upstream(str(results))


def test_a_full_recorded_blob_that_every_run_hashed_to_is_verified(tmp_path, capsys):
    kit = make_kit(tmp_path)
    upstream = ran(kit, tmp_path, capsys)
    blob = kit.manifest_data()["patches"][TINY_PATCH]["base_blob"]
    assert len(blob) == 40
    [line, blank] = basefacts.base_lines([upstream, dict(upstream, file="again.json")])
    torch = upstream["patches"][0]["torch_version"]
    assert line == (f"- 基线 / base of `{TINY_PATCH}`: pytorch/pytorch `v2.99.0` `{TINY}`, blob `{blob}`: blob "
                    f"verified (git hash-object of the file each run patched gives exactly it; torch {torch}, {torch})")
    assert blank == ""


def test_an_abbreviated_record_or_another_file_is_not_called_verified(tmp_path, capsys):
    kit = make_kit(tmp_path)
    data = kit.manifest_data()
    blob = data["patches"][TINY_PATCH]["base_blob"]
    data["patches"][TINY_PATCH]["base_blob"] = blob[:7]
    kit.write_manifest(data)
    kit.patch_path().write_text(kit.patch_path().read_text().replace(f"index {blob}", f"index {blob[:7]}"))
    short = ran(kit, tmp_path, capsys)
    assert "matched by an abbreviated id only, not verified" in basefacts.base_lines([short])[0]
    kit.base().write_text(kit.base().read_text().replace("needs a GPU", "needs a GPU (changed)"))
    other = ran(kit, tmp_path, capsys, "other.json")
    found = other["patches"][0]["base_blob"]
    assert found != blob and other["patches"][0]["base_matches"] is False
    assert f"**⚠ not verified**: runs patched other files, blob(s) `{found}`" in basefacts.base_lines([other])[0]


def test_runs_that_did_not_happen_give_no_base_line():
    assert basefacts.base_lines([]) == []
    assert basefacts.base_lines([{"state": "skipped", "patches": []}, {"state": "absent"}]) == []


def test_pr_upstream_section_names_the_base_before_the_log(tmp_path, capsys):
    kit = make_kit(tmp_path)
    upstream = ran(kit, tmp_path, capsys)
    facts = {"plan": {"patches": ["test_upstream/x.patch"], "left_out": {}}, "report": {"upstream": [upstream]}}
    lines = sections.upstream_section(facts, {})
    assert lines[0].startswith(f"- 基线 / base of `{TINY_PATCH}`") and "blob verified" in lines[0]
    assert lines[1] == "" and any(line.startswith("### torch ") for line in lines[2:])
    missing = sections.upstream_section(dict(facts, report={"upstream": []}), {})
    assert missing == ["> ⚠ 缺少 / missing: no upstream results", ""]
