# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""``test_upstream/manifest.json``: what each patch was made against and which of its tests are known
to fail where, and why.

Shape (JSON, read with the standard library); keys are patch names, the patch's path under
``test_upstream/`` (``<base>/<upstream path>.patch``)::

    {
      "format": 1,
      "patches": {
        "v2.12/test/functorch/test_x.py.patch": {
          "upstream": {"repo": "pytorch/pytorch", "tag": "v2.12.0" | null, "commit": "<sha>" | null,
                       "real": true,                  # the base blob is the real file's (false: derived)
                       "blob_verified": true,         # optional: base_blob is the full 40-hex id of a
                                                      # file whose git hash-object was seen to give it
                       "obtained": "how the base file was obtained", "note": "..."},
          "base_blob": "<git blob id of the base file (full, or abbreviated as in the patch's index line)>",
          "derived_base": {...},            # optional: how to derive the base from a newer file: later
                                            # tests dropped by name, then "edits" (:mod:`.derive`,
                                            # :mod:`.edits`: drop_decorator, replace, comment_expected)
          "export": true,                   # optional: export writes it to the Ascend branches whose
                                            # table entry has "upstream_patches": "<base>"
          "run_under": ["2.12.0", "2.11.0"],  # torch releases `upstream run --each-torch` runs it under
          "hunks": {"unconfirmed": [...]},  # optional: hunks relying on lines no other patch confirms
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
from ..runtime.carried import parse_version
from . import edits
from .patches import PATCH_SUFFIX, default_patches_dir, discover, split_name

MANIFEST_NAME = "manifest.json"
ASCEND_PATCHES_DIR = "test_upstream"
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
            release = release_tuple(torch_version)
            if release is None or not any(release[:len(prefix)] == prefix for prefix in map(release_tuple, self.torch)):
                return False
        return True


def release_tuple(text):
    """``"2.14.1+cu128"`` -> ``(2, 14, 1)`` and ``"2.13"`` -> ``(2, 13)``: as many numbers as the text gives
    (a manifest's ``torch`` prefix matches every release it starts), parsed by the runtime's
    ``parse_version``; None when not a version."""
    text = str(text or "").strip().lstrip("v")
    try:
        return parse_version(text)[:max(1, min(3, len(re.match(r"[\d.]*", text).group().strip(".").split("."))))]
    except ValueError:
        return None


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
        _check_base(entry, f"manifest {path}: entry {name!r}")
    return data


def _check_base(item, where):
    """A verified base names its full blob; a derived base's edits have a known shape."""
    upstream = item.get("upstream") or {}
    if upstream.get("blob_verified") and not re.fullmatch(r"[0-9a-f]{40}", str(item.get("base_blob") or "")):
        raise UsageError(f"{where}: blob_verified needs base_blob as a full 40-hex git blob id")
    spec = item.get("derived_base")
    if spec is not None:
        if not isinstance(spec, dict):
            raise UsageError(f"{where}: derived_base is not an object")
        if not isinstance(spec.get("drop_tests", []), list):
            raise UsageError(f"{where}: derived_base.drop_tests must be a list of test names")
        edits.validate(spec.get("edits", []), where)


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


def exported_patches(base_key, patches_dir=None):
    """What export writes for an Ascend branch whose table entry has ``"upstream_patches": base_key``.

    Returns ``[(kit_path, ascend_path)]``: ``kit_path`` the patch file in this kit (an absolute
    :class:`~pathlib.Path`, ``<patches_dir>/<base_key>/<upstream path>.patch``), ``ascend_path`` where it
    goes in an Ascend/pytorch checkout (posix, relative to its root:
    ``test_upstream/<upstream path>.patch``, the base dir dropped), for every patch of that base whose
    manifest entry says ``"export": true``. ``base_key`` None (master, v2.7.1) -> ``[]``. A base with no
    exported patch -> UsageError (the table and test_upstream/ disagree). ``patches_dir``: default
    ``test_upstream/`` of this kit (or ``$TORCH_NPU_TESTING_UPSTREAM_PATCHES``).
    """
    if base_key is None:
        return []
    patches_dir = Path(patches_dir) if patches_dir else default_patches_dir()
    data = load(default_manifest_path(patches_dir))
    names = [name for name in discover(patches_dir)
             if split_name(name)[0] == base_key and entry(data, name).get("export") is True]
    if not names:
        raise UsageError(f"no exported patch for upstream base {base_key!r} in {patches_dir} "
                         "(a patch under <base>/ with \"export\": true in manifest.json)")
    return [((patches_dir / name).resolve(), f"{ASCEND_PATCHES_DIR}/{split_name(name)[1]}{PATCH_SUFFIX}")
            for name in names]
