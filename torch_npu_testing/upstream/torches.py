# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""One interpreter per torch release, for ``upstream run --each-torch``.

An upstream test file is written for the torch of its time; the manifest lists, per patch, the
releases it is run under (``run_under``, e.g. ``["2.13.0", "2.14.1"]``). ``--each-torch`` runs the
patched files once under each of them, each in its own venv ``<venvs>/torch-<release>``, created on
first use (``python -m venv``, then ``pip install torch==<release>`` plus what the upstream tests
import) and reused while its torch is still that release. Nothing is installed before a source is
known: the caller resolves the PyTorch source first, so an env with nothing to run installs nothing.

A release may be replaced by a wheel or any pip requirement through
``TORCH_NPU_TESTING_UPSTREAM_TORCH_<X_Y_Z>`` (``TORCH_NPU_TESTING_UPSTREAM_TORCH_2_14_1=/data/torch.whl``).
With ``reuse_dir`` (tox's work dir) a branch env that pins the same torch (the branch table:
``v2_12`` for 2.12.0, ``master_214`` for 2.14.1, ...) lends its interpreter when it exists, imports
that torch and has the test requirements; it is only read, never installed into.

Each patch runs only under the releases its base fits (:func:`patches_for_release`): one copy of an
upstream file takes one patch, so two patches of one file (two bases) never share a run.
"""
import os
import re
import subprocess
import sys
from pathlib import Path

from ..common import table
from ..common.errors import UsageError
from . import manifest

# What the upstream test files import besides torch (common_utils needs expecttest; numpy and yaml are
# imported by torch's test helpers; xmlrunner for IN_CI=1).
TEST_REQUIREMENTS = ("expecttest", "numpy", "pyyaml", "unittest-xml-reporting")
SPEC_ENV_PREFIX = "TORCH_NPU_TESTING_UPSTREAM_TORCH_"
_RELEASE_RE = re.compile(r"^\d+\.\d+\.\d+$")


def releases_to_run(data, patch_names, requested=None):
    """The releases to run: ``requested`` (``--torch``) or the union of the patches' ``run_under``, in order."""
    releases = list(requested or [])
    if not releases:
        for name in patch_names:
            for release in manifest.entry(data, name).get("run_under") or []:
                if release not in releases:
                    releases.append(release)
    if not releases:
        raise UsageError("--each-torch: the manifest lists no run_under releases for the selected patches "
                         "(add \"run_under\": [\"2.13.0\", ...] to each patch entry, or pass --torch X.Y.Z)")
    for release in releases:
        if not _RELEASE_RE.match(release):
            raise UsageError(f"torch release {release!r} is not of the form X.Y.Z")
    return releases


def spec_for(release, environ=None):
    """The pip requirement (or wheel path) that installs ``release``."""
    environ = os.environ if environ is None else environ
    override = environ.get(SPEC_ENV_PREFIX + release.replace(".", "_"), "").strip()
    return override or f"torch=={release}"


def venv_python(venvs_dir, release):
    return Path(venvs_dir) / f"torch-{release}" / "bin" / "python"


def installed_torch(python, run=subprocess.run):
    """The torch version an interpreter imports, or None (no torch, or it does not import)."""
    result = run([str(python), "-c", "import torch; print(torch.__version__)"], capture_output=True, text=True,
                 env=dict(os.environ, TORCH_DEVICE_BACKEND_AUTOLOAD="0"), check=False)
    lines = result.stdout.strip().splitlines()
    return lines[-1].strip() if result.returncode == 0 and lines else None


def same_release(version, release):
    """``2.14.1+cu128`` is release ``2.14.1``."""
    return version is not None and version.split("+")[0] == release


def shared_targets(patches):
    """Upstream files that more than one of ``patches`` changes."""
    targets = [patch.target for patch in patches]
    return sorted({target for target in targets if targets.count(target) > 1})


def require_unique_targets(patches):
    shared = shared_targets(patches)
    if shared:
        names = [patch.name for patch in patches if patch.target == shared[0]]
        raise UsageError(f"{', '.join(names)} all change {shared[0]}: pick one base with --base KEY")


def patches_for_release(patches, data, release):
    """The patches to run under torch ``release``: those whose ``run_under`` lists it, else those listing
    a release of the same X.Y; one per upstream file (UsageError otherwise, or when none fits)."""
    def listed(patch):
        return manifest.entry(data, patch.name).get("run_under") or []

    chosen = [patch for patch in patches if release in listed(patch)]
    if not chosen and manifest.release_tuple(release):
        minor = manifest.release_tuple(release)[:2]
        chosen = [patch for patch in patches
                  if any(manifest.release_tuple(item)[:2] == minor for item in listed(patch))]
    if not chosen:
        raise UsageError(f"no selected patch is made for torch {release or '(unknown)'} (run_under in the "
                         "manifest); pick one with --base KEY")
    require_unique_targets(chosen)
    return chosen


def has_test_requirements(python, run=subprocess.run):
    """Whether an interpreter imports what the upstream tests need besides torch."""
    result = run([str(python), "-c", "import expecttest, numpy, yaml"], capture_output=True, text=True,
                 check=False)
    return result.returncode == 0


def branch_env_python(release, reuse_dir, run=subprocess.run):
    """The interpreter of a branch env under ``reuse_dir`` pinning torch ``release`` and ready to run the
    upstream tests, or None."""
    for env in table.all_envs():
        if table.env_torch(env) != release:
            continue
        python = Path(os.path.abspath(reuse_dir)) / env / "bin" / "python"  # not resolved: a venv's python
        if python.exists() and same_release(installed_torch(python, run=run), release) \
                and has_test_requirements(python, run=run):
            return python
    return None


def interpreter_for(release, venvs_dir, run=subprocess.run, say=print, environ=None, reuse_dir=None):
    """A branch env's python for ``release`` (with ``reuse_dir``), else the python of
    ``<venvs_dir>/torch-<release>``, created and filled when needed."""
    if reuse_dir:
        borrowed = branch_env_python(release, reuse_dir, run=run)
        if borrowed is not None:
            say(f"upstream: torch {release}: reusing branch env {borrowed}")
            return borrowed
    python = venv_python(venvs_dir, release)
    if python.exists() and same_release(installed_torch(python, run=run), release):
        say(f"upstream: torch {release}: reusing {python}")
        return python
    spec = spec_for(release, environ)
    if not python.exists():
        say(f"upstream: torch {release}: creating {python.parent.parent}")
        if run([sys.executable, "-m", "venv", str(python.parent.parent)], check=False).returncode != 0:
            raise UsageError(f"cannot create a venv in {python.parent.parent}")
    say(f"upstream: torch {release}: pip install {spec} {' '.join(TEST_REQUIREMENTS)}")
    command = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", spec,
               *TEST_REQUIREMENTS]
    if run(command, check=False).returncode != 0:
        raise UsageError(f"torch {release}: `{' '.join(command)}` failed")
    found = installed_torch(python, run=run)
    if not same_release(found, release):
        raise UsageError(f"torch {release}: {python} imports torch {found or 'nothing'} after installing {spec}")
    return python
