# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Where the new tests of an API belong: ``search``'s ``home``, the file ``new`` writes without ``--path``.

A file is a *home* when

- at least :data:`MIN_TESTS` of its tests exercise the API or its family by counted calls
  (:mod:`torch_npu_testing.task.callfinder`: direct, method form, alias, through the file's helpers; or
  the owner, its siblings, its own private module), so a file that calls something related once never is;
- it is about the API: one of those tests, or their class, or the file is named for the API, an alias,
  its owner or a sibling (``test_set_grad_enabled`` for ``set_grad_enabled.clone``); so a file that uses
  the API in passing (``addcmul`` in a custom op's CPU reference, ``movedim`` among DTensor's view ops) is
  not;
- its path has the shape ``new`` and export write (``test/<folder>/.../test_*.py``: the top of ``test/``
  holds PyTorch's own copies).

Homes rank first by whether at least :data:`MIN_TESTS` of their tests call the API itself, then by the
share of their tests that exercise the API or its family (N of its M: a file whose whole class is about
the API beats a large file that uses it in a few tests), then by how many call the API itself, how many
are named for it, how many exercise it, and the path.

With no home, the new tests belong in a file of their own at Ascend's ``*_api.py`` convention
(:func:`convention_path`): ``test/<area>/test_<name>_api.py``, the area from the API's module.
"""
import os
import re

MIN_TESTS = 2
PATH_RE = re.compile(r"^test/[A-Za-z0-9_]+(/[A-Za-z0-9_]+)*/test_[A-Za-z0-9_]+\.py$")
# Defining modules of torch's core (ops, Tensor): their tests go to Ascend's own folder.
CORE_MODULES = frozenset(("", "_C", "_VF", "_tensor", "functional", "_ops", "_refs", "_prims", "_decomp",
                          "overrides", "_jit_internal", "_utils", "_tensor_str", "random", "serialization"))
DEFAULT_AREA = "npu"


def _snake(text):
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", text).lower().strip("_")


def area_of(module):
    """The folder under ``test/`` for an API of ``module`` (``torch._functorch.vmap`` -> functorch); ``npu``
    for torch's core (ops, Tensor)."""
    parts = (module or "torch").split(".")
    first = parts[1] if len(parts) > 1 and parts[0] == "torch" else ""
    return DEFAULT_AREA if first in CORE_MODULES else first.lstrip("_") or DEFAULT_AREA


def convention_path(api, module, has_folder=None):
    """``(path, why)``: Ascend's ``test/<area>/test_<name>_api.py`` for ``api``. The area is that of the
    module the API is spelled in, else of its defining ``module``, the first whose ``test/<area>`` folder
    exists (``has_folder(folder)``; without it, the spelled one), else ``npu``. ``<name>`` is the API's last
    two parts after ``torch`` (one for ``torch.<op>``), in snake case."""
    spelled = api.rsplit(".", 1)[0]
    areas = [area for area in dict.fromkeys((area_of(spelled), area_of(module))) if area != DEFAULT_AREA]
    if has_folder is not None:
        areas = [area for area in areas if has_folder(f"test/{area}")]
    area = (areas or [DEFAULT_AREA])[0]
    name = "_".join(_snake(part) for part in api.split(".")[1:][-2:])
    return f"test/{area}/test_{name}_api.py", (
        f"no file has {MIN_TESTS} or more tests exercising it or its family, named for it: a file of its own at "
        f"Ascend's *_api.py convention, area {area} (from {spelled}" + (f", defined in {module})" if module and
                                                                        module != spelled else ")"))


def _named(hit, leaves):
    text = f"{hit['path'].rsplit('/', 1)[-1]} {hit.get('class') or ''} {hit['test']}".lower().replace("_", "")
    return any(leaf.lower().replace("_", "") in text for leaf in leaves)


def file_rows(hits, counts, owner_leaves, api_leaves, family_leaves=frozenset()):
    """One row per file with hits: ``{"path", "tests", "hits", "direct", "helpers", "body", "family", "owner",
    "named", "exercising", "eligible"}`` (numbers of tests; ``body``: direct in the test's own body)."""
    rows = {}
    for hit in hits:
        row = rows.setdefault(hit["path"], {"path": hit["path"], "tests": counts.get(hit["path"], 0), "hits": 0,
                                            "direct": 0, "helpers": 0, "body": 0, "family": 0, "owner": 0, "named": 0})
        row["hits"] += 1
        direct = hit["kind"] == "direct"
        owner = any(call.split(".")[0] in owner_leaves for call in hit.get("calls", ()))
        row["direct"] += direct
        row["helpers"] += direct and bool(hit.get("via"))
        row["body"] += direct and not hit.get("via")
        row["family"] += hit["kind"] == "related"
        row["owner"] += owner and not direct
        leaves = set(api_leaves) | set(owner_leaves) | set(family_leaves)
        row["named"] += hit["kind"] != "mention" and _named(hit, leaves)
    for row in rows.values():
        row["tests"] = max(row["tests"], row["hits"])
        row["exercising"] = row["direct"] + row["family"]
        row["eligible"] = row["exercising"] >= MIN_TESTS and row["named"] > 0 and bool(PATH_RE.match(row["path"]))
    return list(rows.values())


def rank(rows):
    """Rows best home first (see the module's docstring); ineligible rows after every eligible one."""
    return sorted(rows, key=lambda row: (not row["eligible"], row["direct"] < MIN_TESTS,
                                         -row["exercising"] / row["tests"], -row["direct"], -row["named"],
                                         -row["exercising"], row["path"]))


def why(row):
    """The one line saying why ``row`` was chosen."""
    parts = [f"{row['exercising']} of its {row['tests']} tests exercise it"]
    detail = []
    if row["direct"]:
        helpers = f" ({row['helpers']} through the file's helpers)" if row["helpers"] else ""
        detail.append(f"{row['direct']} call it{helpers}")
    if row["family"]:
        owner = f" ({row['owner']} its owner or own module)" if row["owner"] else ""
        detail.append(f"{row['family']} its family{owner}")
    if row["named"]:
        detail.append(f"{row['named']} named for it or its family")
    return parts[0] + (": " + ", ".join(detail) if detail else "")


def home(ranked, api, module, has_folder=None):
    """``{"path", "why", "source": "tests"|"convention"}``: the first eligible row, else the convention path."""
    if ranked and ranked[0]["eligible"]:
        return {"path": ranked[0]["path"], "why": why(ranked[0]), "source": "tests"}
    path, reason = convention_path(api, module, has_folder)
    return {"path": path, "why": reason, "source": "convention"}


def own_file(api, kit):
    """``(path, line)`` for ``new`` without ``--path`` or ``--ascend``: the API's own file at the convention,
    the area's folder as the kit has it (the defining module from this interpreter's torch, when it has one)."""
    from . import locate
    row = locate.probe_here_if_torch(api) or {}
    module = row.get("module") if row.get("found") else None
    path, why = convention_path(api, module, lambda folder: os.path.isdir(os.path.join(kit, folder)))
    return path, f"no --path and no --ascend to search: {path}, {why}"
