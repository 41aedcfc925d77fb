# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""The one table: branches, envs, torch / torch_npu pins, maintenance releases, APIs and their files.

Everything reads :file:`table.json` through this module: suite and report (which envs exist, which are
required), pr and export (what a branch gets), task (where a new API goes), bench and the tool envs
(``tool_torch``). ``tox.ini`` repeats the envs and pins in its own syntax; a unit test checks that it
agrees with this table. Names keep the vocabulary of the Ascend side: a *branch* is an Ascend/pytorch
branch (``master``, ``v2.12.0``), an *env* a tox env that tests one torch of it (``master_213``).

Loading validates each API's ``ascend_task_id`` (:func:`task_problem`): ``null`` while the task is unknown
(a new API; never invented), else the community task with its campaign and its issues on Ascend's tracker;
and its optional ``adds_over_callers`` (:func:`adds_problem`): what the new tests add over existing callers.
:func:`edit_api` makes the checked text of one row's change (the ``task-id`` and ``adds`` commands).
"""
import functools
import json
import os

from ..runtime.carried import parse_version


TABLE_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "table.json")
TABLE_FORMAT = "torch_npu_testing.table/1"


@functools.lru_cache(maxsize=None)
def _load(path):
    """Read and check a table; ValueError naming the file when it is not one."""
    with open(path, encoding="utf-8") as handle:
        try:
            table = json.load(handle)
        except ValueError as exc:
            raise ValueError(f"{path}: not valid JSON ({exc})") from None
    if not isinstance(table, dict) or table.get("format") != TABLE_FORMAT:
        found = table.get("format") if isinstance(table, dict) else type(table).__name__
        raise ValueError(f"{path}: format is {found!r}, expected {TABLE_FORMAT!r}")
    entries = table.get("apis")
    if not isinstance(entries, list) or not all(isinstance(a, dict) and a.get("name") for a in entries):
        raise ValueError(f"{path}: 'apis' must be a list of objects with a 'name'")
    names = [entry["name"] for entry in entries]
    if len(set(names)) != len(names):
        raise ValueError(f"{path}: an API is listed twice")
    for entry in entries:
        problem = task_problem(entry.get("ascend_task_id"))
        if problem:
            raise ValueError(f"{path}: {entry['name']}: ascend_task_id {problem}")
        problem = adds_problem(entry.get("adds_over_callers"))
        if problem:
            raise ValueError(f"{path}: {entry['name']}: adds_over_callers {problem}")
    return table


def adds_problem(text):
    """Why ``text`` (an API's ``adds_over_callers``: what its new tests add over the tests that already call it,
    written once by the contributor) is malformed, or None. ``null`` while not written."""
    if text is None:
        return None
    if not isinstance(text, str) or not text.strip():
        return "must be a non-empty string (or null)"
    if len(text) > ADDS_LIMIT:
        return f"is {len(text)} characters; at most {ADDS_LIMIT}"
    return None


ADDS_LIMIT = 2000


def edit_api(path, name, changes):
    """The text of the table at ``path`` with ``changes`` (``{field: value}``) made to API ``name``'s row, checked
    as :func:`_load` checks a table (ValueError naming the problem; KeyError for an unknown API). Nothing is
    written here: the caller writes the text atomically."""
    with open(path, encoding="utf-8") as handle:
        doc = json.load(handle)
    rows = [entry for entry in doc.get("apis", []) if isinstance(entry, dict) and entry.get("name") == name]
    if not rows:
        known = ", ".join(entry.get("name", "?") for entry in doc.get("apis", []))
        raise KeyError(f"unknown target API {name!r} in {path} (known: {known})")
    rows[0].update(changes)
    for field, value in changes.items():
        problem = {"ascend_task_id": task_problem, "adds_over_callers": adds_problem}[field](value)
        if problem:
            raise ValueError(f"{name}: {field} {problem}")
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


# ------------------------------------------------------------------------------------ community tasks
TASK_ROLES = {"issue": "关联 issue", "来源任务": "来源任务 Issue", "结果": "结果 Issue"}   # role: the seed PRs' label
_TASK_KEYS = {"task": str, "campaign": str, "campaign_issue": int, "campaign_note": str, "issues": list}
_ISSUE_KEYS = {"role": str, "number": int, "title": str}


def _fields_problem(value, kinds, required):
    if not isinstance(value, dict):
        return f"must be an object, not {type(value).__name__}"
    unknown = sorted(set(value) - set(kinds))
    if unknown:
        return f"has unknown key(s) {', '.join(unknown)} (known: {', '.join(kinds)})"
    for key, kind in kinds.items():
        if key in required and key not in value:
            return f"lacks {key!r}"
        got = value.get(key, kind())
        empty = key in value and not (got > 0 if isinstance(got, int) else got)
        if not isinstance(got, kind) or isinstance(got, bool) or empty:
            return f"{key!r} must be a {'positive' if kind is int else 'non-empty'} {kind.__name__}"
    return None


def task_problem(task):
    """Why ``task`` (an API's ``ascend_task_id``) is malformed, or None. The shape: ``null`` while unknown,
    else ``{"task": "任务61", "campaign": "...", "campaign_issue": 2683 (optional), "campaign_note": "..."
    (optional), "issues": [{"role": one of TASK_ROLES, "number": 2684, "title": "..." (optional)}, ...]}``."""
    if task is None:
        return None
    problem = _fields_problem(task, _TASK_KEYS, ("task", "campaign", "issues"))
    for number, issue in enumerate([] if problem else task["issues"], 1):
        problem = _fields_problem(issue, _ISSUE_KEYS, ("role", "number"))
        if not problem and issue["role"] not in TASK_ROLES:
            problem = f"role {issue['role']!r} is not one of {', '.join(TASK_ROLES)}"
        if problem:
            return f"issue {number}: {problem}"
    return problem


def task_label(task):
    """Short text of an ``ascend_task_id``: ``任务61 (issue #2684)``, ``31 (来源任务 #2954, 结果 #3102)``; a
    recorded plain string (results written before the shape) as it is; None for None."""
    if not isinstance(task, dict):
        return task
    return f"{task['task']} (" + ", ".join(f"{issue['role']} #{issue['number']}" for issue in task["issues"]) + ")"


def load(path=None):
    """The table as a dict (cached per path); a copy-free view: do not mutate it."""
    return _load(path or TABLE_PATH)


def load_apis(path=None):
    """The target APIs of the table at ``path`` (default: the kit's), each with ``task`` (default: its name),
    ``ascend_task_id``, ``since`` and ``test_file`` present: what the call recorder, report and pr read."""
    return [dict({"task": entry["name"], "ascend_task_id": None, "since": None, "test_file": None}, **entry)
            for entry in load(path)["apis"]]


# ----------------------------------------------------------------------------------------- branches
def branches(include_maintenance=True):
    """Branch names in table order (supported first, as written)."""
    return [name for name, entry in load()["branches"].items()
            if include_maintenance or not entry["maintenance"]]


def branch(name):
    """The table entry of branch ``name``; KeyError with the known names if unknown."""
    known = load()["branches"]
    if name not in known:
        raise KeyError(f"unknown Ascend/pytorch branch {name!r} (known: {', '.join(known)})")
    return known[name]


def envs_for_branch(name):
    """The envs that test ``name`` (``master`` -> ``("master_213", "master_214")``)."""
    return tuple(branch(name)["envs"])


def default_envs():
    """The envs every report expects: all envs of the supported (not maintenance) branches."""
    return [env for name in branches(include_maintenance=False) for env in envs_for_branch(name)]


def maintenance_envs():
    return [env for name, entry in load()["branches"].items() if entry["maintenance"] for env in entry["envs"]]


def all_envs():
    return [env for name in branches() for env in envs_for_branch(name)]


def branch_of_env(env):
    """The branch an env tests, or None for an env of no branch (``installed``)."""
    for name, entry in load()["branches"].items():
        if env in entry["envs"]:
            return name
    return None


def is_maintenance_env(env):
    return env in maintenance_envs()


def env_pins(env):
    """``{"torch": ..., "torch_npu": ...}`` of a branch env; KeyError if unknown."""
    name = branch_of_env(env)
    if name is None:
        raise KeyError(f"unknown env {env!r} (known: {', '.join(all_envs())})")
    return dict(branch(name)["envs"][env])


def env_torch(env):
    return env_pins(env)["torch"]


def branch_torches(name):
    """The torch releases a branch is tested against, in env order."""
    return [pins["torch"] for pins in branch(name)["envs"].values()]


def tool_torch():
    """The torch of the kit's own tool envs (unit, bench): a CPU build on this machine."""
    return load()["tool_torch"]


def tool_env():
    """The branch env whose torch is ``tool_torch`` (the first, supported branches before maintenance)."""
    for env in default_envs() + maintenance_envs():
        if env_torch(env) == tool_torch():
            return env
    raise ValueError(f"no env of the table pins tool_torch {tool_torch()}")


# --------------------------------------------------------------------------------------------- APIs
def apis():
    """The target APIs (dicts with name, title, ascend_task_id, since, test_file, coverage)."""
    return list(load()["apis"])


def api(name):
    for entry in load()["apis"]:
        if entry["name"] == name:
            return entry
    raise KeyError(f"unknown target API {name!r} (known: {', '.join(a['name'] for a in load()['apis'])})")


def test_files():
    """Every API test file, in table order, once."""
    return list(dict.fromkeys(entry["test_file"] for entry in load()["apis"]))


def apis_of_file(path):
    return [entry for entry in load()["apis"] if entry["test_file"] == path]


def api_present_in(entry, torch_release):
    """True when the API exists in ``torch_release`` by the table's ``since``."""
    return not entry["since"] or parse_version(torch_release) >= parse_version(entry["since"])


def branch_test_files(name, api_names=None):
    """``(files, left_out)`` for a branch: the test files of ``api_names`` (default: all) that its oldest
    torch has, and ``{file: reason}`` for those it lacks."""
    oldest = min(branch_torches(name), key=parse_version)
    chosen = [api(n) for n in api_names] if api_names else apis()
    files, left_out = [], {}
    for entry in chosen:
        path = entry["test_file"]
        if api_present_in(entry, oldest):
            files.append(path)
        else:
            left_out[path] = f"{entry['name']} does not exist in torch {oldest} (added in {entry['since']})"
    files = list(dict.fromkeys(files))
    return files, {path: why for path, why in left_out.items() if path not in files}
