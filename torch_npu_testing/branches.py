# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Which tox env tests which Ascend/pytorch branch: the one place that maps branches to envs.

A branch may be tested by several envs (master builds against more than one torch), and some envs
are maintenance envs: run on request (``tox -e v2_9,v2_10``), never required by the report. The
report (expected envs, maintenance labels) and export / the PR description (which results belong to
a branch) read this module; tox.ini names the same envs.
"""

# Ascend/pytorch branch -> the envs whose results are its evidence, in report order.
BRANCH_ENVS = {
    "v2.7.1": ("v2_7",),
    "v2.11.0": ("v2_11",),
    "v2.12.0": ("v2_12",),
    "master": ("master_213", "master_214"),
}

# Branches in maintenance: their envs are not in tox's default list and the report does not require them.
MAINTENANCE_BRANCH_ENVS = {
    "v2.9.0": ("v2_9",),
    "v2.10.0": ("v2_10",),
}

# The torch release each env installs (tox.ini pins the exact wheels).
ENV_TORCH = {
    "v2_7": "2.7.1",
    "v2_9": "2.9.1",
    "v2_10": "2.10.0",
    "v2_11": "2.11.0",
    "v2_12": "2.12.0",
    "master_213": "2.13.0",
    "master_214": "2.14.1",
}


def default_envs():
    """The envs every report expects: all envs of the supported (not maintenance) branches."""
    return [env for envs in BRANCH_ENVS.values() for env in envs]


def maintenance_envs():
    return [env for envs in MAINTENANCE_BRANCH_ENVS.values() for env in envs]


def envs_for_branch(branch):
    """The envs that test ``branch`` (``master`` -> ``("master_213", "master_214")``); KeyError if unknown."""
    known = {**BRANCH_ENVS, **MAINTENANCE_BRANCH_ENVS}
    if branch not in known:
        raise KeyError(f"unknown Ascend/pytorch branch {branch!r} (known: {', '.join(known)})")
    return known[branch]


def branch_of_env(env):
    """The branch an env tests, or None for an env of no branch (``installed``)."""
    for branch, envs in {**BRANCH_ENVS, **MAINTENANCE_BRANCH_ENVS}.items():
        if env in envs:
            return branch
    return None


def is_maintenance_env(env):
    return env in maintenance_envs()
