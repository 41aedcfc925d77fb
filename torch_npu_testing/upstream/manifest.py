# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""``test_upstream/manifest.json``: what each patch was made against and which of its tests are known
to fail where, and why.

Shape (JSON, read with the standard library)::

    {
      "format": 1,
      "patches": {
        "test/functorch/test_x.py.patch": {
          "upstream": {"repo": "pytorch/pytorch", "tag": "v2.13.0" | null, "commit": "<sha>" | null,
                       "note": "..."},
          "base_blob": "<git blob id of the upstream file the patch was made against>",
          "support_files": ["test/functorch/helper.py"],          # optional: copied unpatched
          "expected_failures": [
            {"test": "TestClass.test_name",
             "torch": ["2.11", "2.12"],       # optional: release prefixes it applies to (absent: any)
             "devices": ["npu"],              # optional: device types it applies to (absent: any)
             "reason": "why it fails there (required)",
             "observed": "where it was seen"}  # optional
          ]
        }
      }
    }

A patch with no entry still works: its base is then the one in its ``index`` line and no failure is
expected.
"""
import json
import re
from dataclasses import dataclass
from pathlib import Path

from ..common.atomic import write_text_atomic
from ..common.errors import UsageError

MANIFEST_NAME = "manifest.json"
FORMAT = 1


@dataclass(frozen=True)
class ExpectedFailure:
    test: str
    reason: str
    torch: tuple = ()
    devices: tuple = ()
    observed: str = ""

    def applies(self, torch_version, device):
        if self.devices and device not in self.devices:
            return False
        if self.torch:
            release = _release(torch_version)
            if release is None or not any(release[:len(prefix)] == prefix for prefix in map(_release, self.torch)):
                return False
        return True


def _release(text):
    match = re.match(r"\s*v?(\d+(?:\.\d+)*)", str(text or ""))
    return tuple(int(part) for part in match.group(1).split(".")) if match else None


def default_manifest_path(patches_dir):
    return Path(patches_dir) / MANIFEST_NAME


def load(path):
    """The manifest as a dict (an empty one when the file does not exist); malformed -> UsageError."""
    path = Path(path)
    if not path.exists():
        return {"format": FORMAT, "patches": {}}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UsageError(f"manifest {path} is not valid JSON ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("patches", {}), dict):
        raise UsageError(f"manifest {path}: expected an object with a 'patches' object")
    data.setdefault("patches", {})
    for name, entry in data["patches"].items():
        if not isinstance(entry, dict):
            raise UsageError(f"manifest {path}: entry {name!r} is not an object")
        expected_failures(data, name, path)  # validates
    return data


def entry(data, name):
    return data.get("patches", {}).get(name, {})


def recorded_base(data, name):
    return entry(data, name).get("base_blob")


def upstream_ref(data, name):
    """Human-readable upstream reference of a patch: tag, else commit, else 'unrecorded'."""
    upstream = entry(data, name).get("upstream") or {}
    if upstream.get("tag"):
        return f"{upstream.get('repo', 'pytorch/pytorch')}@{upstream['tag']}"
    if upstream.get("commit"):
        return f"{upstream.get('repo', 'pytorch/pytorch')}@{upstream['commit'][:12]}"
    return "unrecorded upstream ref"


def support_files(data, name):
    return list(entry(data, name).get("support_files", []))


def expected_failures(data, name, path="manifest"):
    result = []
    for item in entry(data, name).get("expected_failures", []):
        if not isinstance(item, dict) or not item.get("test") or not str(item.get("reason", "")).strip():
            raise UsageError(f"{path}: expected failure {item!r} of {name} needs 'test' and a non-empty 'reason'")
        result.append(ExpectedFailure(test=item["test"], reason=item["reason"].strip(),
                                      torch=tuple(item.get("torch") or ()), devices=tuple(item.get("devices") or ()),
                                      observed=item.get("observed", "")))
    return result


def expected_failure_for(failures, test_name, torch_version, device):
    """The first manifest entry that expects ``test_name`` to fail with this torch on this device."""
    for failure in failures:
        if _same_test(failure.test, test_name) and failure.applies(torch_version, device):
            return failure
    return None


def _same_test(recorded, actual):
    # "TestClass.test_x" matches "TestClass.test_x" and "module.TestClass.test_x".
    return actual == recorded or actual.endswith("." + recorded)


def update_base(data, name, base_blob, commit=None, tag=None, repo="pytorch/pytorch"):
    """Record a new base for a patch and its upstream ref; returns the data.

    Without ``commit``/``tag`` the recorded ref is kept only while the base blob is unchanged (a new
    base with an old ref would be a false record): it then becomes unrecorded (null).
    """
    patches = data.setdefault("patches", {})
    item = patches.setdefault(name, {})
    base_changed = item.get("base_blob") != base_blob
    item["base_blob"] = base_blob
    if not (commit or tag) and base_changed and item.get("upstream"):
        item["upstream"] = {"repo": (item.get("upstream") or {}).get("repo", repo), "tag": None, "commit": None}
    if commit or tag:
        upstream = {"repo": repo, "tag": tag, "commit": commit}
        note = (item.get("upstream") or {}).get("note")
        if note and (item.get("upstream") or {}).get("commit") == commit:
            upstream["note"] = note
        item["upstream"] = upstream
    item.setdefault("upstream", {"repo": repo, "tag": None, "commit": None})
    item.setdefault("expected_failures", [])
    return data


def save(data, path):
    """Write the manifest atomically."""
    write_text_atomic(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
