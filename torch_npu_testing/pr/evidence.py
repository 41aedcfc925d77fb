# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""The four evidence sections of one branch, made by :mod:`torch_npu_testing.report` from that branch's envs.

Only the results of the branch's envs (:mod:`torch_npu_testing.common.table`) are read: they are copied into a
temporary folder so that ``report`` sees nothing else (it shows every env it finds), and the upstream
results only when the branch's pull request carries an upstream patch, and then only those whose torch is
one of the branch's envs' torch. The report's own rules decide what is a problem (missing or stale
results, failed tests, grad-mode dependence, an uncalled target API, an upstream failure).
"""
import os
import shutil
import tempfile

from ..common import table as branches
from ..report import collect as report_collect
from ..report.render import commands_section, environment_section, log_section, upstream_section


def upstream_results_for(results_dir, torches):
    """The upstream results files of ``results_dir`` whose torch release is one of ``torches``."""
    if not os.path.isdir(results_dir):
        return []
    chosen = []
    for name in sorted(os.listdir(results_dir)):
        if not report_collect.is_upstream_file(name):
            continue
        if name == report_collect.UPSTREAM_FILE or any(name == f"upstream-{torch}.json"
                                                       or name.startswith(f"upstream-{torch}+") for torch in torches):
            chosen.append(os.path.join(results_dir, name))
    return chosen


def collect_branch(results_dir, branch, manifest, with_upstream, command):
    """The report document for ``branch``'s envs only; paths in it name the real results files."""
    envs = list(branches.envs_for_branch(branch))
    results_dir = os.path.abspath(results_dir)
    torches = [branches.env_torch(env) for env in envs]
    upstream = upstream_results_for(results_dir, torches) if with_upstream else []
    with tempfile.TemporaryDirectory(prefix="pr-results-") as folder:
        real = {}
        for env in envs:
            source = os.path.join(results_dir, f"{env}.json")
            if os.path.exists(source):
                shutil.copyfile(source, os.path.join(folder, f"{env}.json"))
            real[os.path.join(folder, f"{env}.json")] = source
        copies = []
        for path in upstream:
            copy = os.path.join(folder, os.path.basename(path))
            shutil.copyfile(path, copy)
            real[copy] = path
            copies.append(copy)
        doc = report_collect.collect_results(folder, envs, manifest, copies or None, command=command)
    for item in doc["envs"] + doc["upstream"]:
        if item.get("file") in real:
            item["file"] = real[item["file"]]
    doc["results_dir"] = results_dir
    if not with_upstream:
        doc["upstream"] = []
    return doc


def environment_lines(doc):
    return [line for entry in doc["envs"] for line in environment_section(entry)]


def command_lines(doc):
    return commands_section(doc)


def log_lines(doc):
    return [line for entry in doc["envs"] for line in log_section(entry)]


def upstream_lines(doc):
    return [line for upstream in doc["upstream"] for line in upstream_section(upstream)]
