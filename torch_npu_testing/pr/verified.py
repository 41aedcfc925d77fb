# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""The PR's own files as ``verify`` ran them: the facts 【功能验证】 states, and whether they still hold.

``pr --verify PATH`` (default ``reports/verify-BRANCH.json``) reads the record :mod:`torch_npu_testing.verify`
wrote. The facts are usable only when the record is there, was made in the checkout ``--ascend`` names, and
is of the bytes in it now: the one staleness check (:func:`torch_npu_testing.common.stale.stale_files`)
compares every PR test file in DEST with the SHA-256 verify recorded. The bytes pr describes (export's plan
at the branch's ref) must be DEST's too. Anything else is a ``⚠`` line at the top and exit 1.

The description names DEST's HEAD commit and each file's SHA-256 as verify recorded them; outputs stay in
the record (``output`` is dropped from the facts).
"""
import copy
import os

from ..verify import record as verify_record
from ..common.stale import file_digests, stale_files
from ..verify.standin import label as stand_in_mode_label
from .planfacts import TEST_FILE


def _slim(document, paths, patches=()):
    """The record of the PR's files ``paths`` and its upstream ``patches`` (``pr --api``: not every file verify
    ran; a patch of another task is never listed as this PR's), without the runs' outputs (they stay in the
    record file)."""
    slim = copy.deepcopy(document)
    slim["files"] = [item for item in slim.get("files", []) if item.get("path") in paths]
    slim["patches_skipped"] = [item for item in slim.get("patches_skipped", []) if item.get("path") in patches]
    for env in slim.get("envs", []):
        results = env.get("results", {})
        results["runs"] = [run for run in results.get("runs", []) if run.get("path") in paths]
        results["grad_mode_isolation"] = [item for item in results.get("grad_mode_isolation", [])
                                          if item.get("path") in paths]
        for run in results["runs"]:
            run.get("verify", {}).pop("output", None)
            probe = run.get("verify", {}).get("grad_mode_probe")
            if isinstance(probe, dict):
                probe.pop("output", None)
    return slim


def _checks(document, ascend, files):
    """Why the record cannot back the description: another checkout, other bytes, files it did not run."""
    problems = []
    dest = os.path.realpath(document.get("dest", {}).get("dir") or "")
    if dest != os.path.realpath(ascend):
        problems.append(f"verify ran in {dest}, not in --ascend {os.path.realpath(ascend)}: give the DEST verify ran")
    tests = [item for item in files if item["kind"] == TEST_FILE]
    now = file_digests(ascend, [item["path"] for item in tests])
    recorded = {item["path"]: item["sha256"] for item in document.get("files", [])}
    problems += [f"stale: {path} {why} — run `python -m torch_npu_testing verify {document.get('branch')} {ascend}`"
                 f" again" for path, why in stale_files(recorded, now)]
    planned = {item["path"]: item["sha256"] for item in tests}
    problems += [f"stale: DEST's {path} is not the file export plans at the branch's ref now ({why}) — run export, "
                 "then verify, again" for path, why in stale_files(planned, now) if now.get(path)]
    return problems


def gather(path, ascend, files, branch):
    """``{"path", "state": ok / missing / stale / failed, "problems", "record"}`` for the PR's ``files``."""
    document, why = verify_record.load(path)
    if document is None:
        return {"path": path, "state": "missing", "problems": [f"missing: {why} — run `python -m torch_npu_testing "
                                                               f"verify {branch} {ascend}` first"], "record": None}
    problems = _checks(document, ascend, files)
    paths = {item["path"] for item in files if item["kind"] == TEST_FILE}
    failed = [problem for problem in document.get("problems", []) if any(p in problem for p in paths)]
    state = "stale" if problems else ("failed" if failed else "ok")
    problems += [f"verify: {problem}" for problem in failed]
    patches = {item["path"] for item in files if item["kind"] != TEST_FILE}
    slim = _slim(document, paths, patches)
    slim["gaps"] = verify_record.gaps_summary(slim.get("envs", []), slim.get("stand_in"))  # the PR's files
    return {"path": path, "state": state, "problems": problems, "record": slim, "device_gaps": slim["gaps"]}


def devices(record):
    """``["cpu"]``, ``["npu"]``...: the device types the envs' probes measured."""
    found = [(env["results"].get("probe") or {}).get("device", {}).get("type") or "unknown"
             for env in record["envs"]]
    return list(dict.fromkeys(found))


def not_on_npu_line(record):
    """``not run on an NPU: cpu, stand-in torch_npu`` when no env ran on a real NPU; None when all did."""
    found = devices(record)
    if found == ["npu"] and not record.get("stand_in"):
        return None
    parts = [device for device in found if device != "npu" or not record.get("stand_in")]
    if record.get("stand_in"):
        mode = record["stand_in"]["mode"]
        parts.append("simulated NPU (host memory, CPU kernels)" if mode == "simulated" else
                     "stand-in torch_npu" + (" reporting one NPU" if mode == "available" else ""))
    return "not run on an NPU: " + ", ".join(parts)


def warning_lines(verify):
    """The ``⚠`` lines at the very top for a missing or stale record."""
    if verify["state"] not in ("missing", "stale"):
        return []
    label = "verify 结果缺失 / no verify results: " if verify["state"] == "missing" else "描述已过期 / "
    return [f"> ⚠ {label}" + "; ".join(verify["problems"][:3]) + (" ..." if len(verify["problems"]) > 3 else ""), ""]


def stand_in_label(record):
    return stand_in_mode_label(record["stand_in"]["mode"]) if record.get("stand_in") else None


def _check(text, ticked, why, by_design=False):
    return {"item": text, "ticked": bool(ticked), "why": why, "open_by_design": bool(by_design and not ticked),
            "source": "verify-BRANCH.json (the PR's files in DEST)"}


def files_pass(facts):
    """自检: every kit test passed in the PR's files, run whole in DEST by verify."""
    text = "PR 文件在 DEST 中整文件运行, kit 用例全部通过 (the PR's files run whole in DEST by verify; kit tests pass)"
    verify = facts["verify"]
    if verify["state"] != "ok":
        return _check(text, False, "; ".join(verify["problems"][:3]) or verify["state"])
    record = verify["record"]
    needs = sum(len(run["verify"]["needs"]) for env in record["envs"] for run in env["results"]["runs"]
                if run["verify"]["kind"] == "file")
    not_run = sorted({run["path"] for env in record["envs"] for run in env["results"]["runs"]
                      if run["verify"].get("not_run")})
    why = (f"verify at DEST {record['dest']['head'][:12]} under {', '.join(e['name'] for e in record['envs'])}"
           + (f"; {stand_in_label(record)}" if record.get("stand_in") else "")
           + (f"; {needs} of their test runs need a device this host lacks" if needs else "")
           + (f"; not run here (needs an Ascend host): {', '.join(not_run)}" if not_run else ""))
    return _check(text, True, why)


def grad_probe_on_pr_file(facts):
    """自检: the grad-mode probe ran on the PR's own grad-mode file (loaded from DEST) with the same outcomes."""
    from ..common.layout import GRAD_MODE_FILES

    text = "PR 文件的梯度模式隔离探针通过 (grad-mode probe on the PR's own file, by verify)"
    carried = [item["path"] for item in facts["plan"]["files"] if item["path"] in GRAD_MODE_FILES]
    if not carried:
        return _check(text, True, "不涉及: the PR carries no grad-mode file (export plan)")
    record = facts["verify"]["record"]
    if record is None:
        return _check(text, False, "; ".join(facts["verify"]["problems"][:1]))
    probes = [item for env in record["envs"] for item in env["results"]["grad_mode_isolation"]
              if item.get("path") in carried]
    skipped = [run["verify"]["grad_mode_probe"] for env in record["envs"] for run in env["results"]["runs"]
               if run["path"] in carried and isinstance(run["verify"].get("grad_mode_probe"), str)]
    if not probes:
        return _check(text, False, (skipped[0] if skipped else "the probe did not run")
                      + " (on a CPU box: `verify --stand-in-npu` runs it)")
    bad = [item["path"] for item in probes if not item.get("same")]
    return _check(text, not bad and not skipped, f"outcomes depend on the initial grad mode: {', '.join(bad)}" if bad
                  else "; ".join(skipped) if skipped else
                  f"same outcomes with grad mode enabled and disabled at start ({len(probes)} env(s))")


def verify_checks(facts):
    return [files_pass(facts), grad_probe_on_pr_file(facts)]
