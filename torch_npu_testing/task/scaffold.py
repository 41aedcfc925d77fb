# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""``new``: start an API task: the test-file scaffold and the API's row in the one table.

    python -m torch_npu_testing new API [--path test/<area>/test_<name>.py] [--ascend DIR [--branch REF]]
                                    [--kit DIR] [--python PY ...] [--json PATH]

Without ``--path``, ``--ascend DIR`` suggests it: ``search`` on the branch (default master) ranks the files
whose tests call the API's owner or siblings, and the first is where the new tests belong (the same path
in the kit, since export writes kit paths as they are). When that path is already one of the table's
test files, no scaffold is written: the API joins that file.

Writes ``<kit>/<path>`` with the kit's license header, a module docstring naming the API and why the file
exists, the kit's import line and one TestCase class per contract area (call forms and every parameter,
dtypes, layouts, sizes, side effects, bad input, threads, errors). Every test is a
``self.fail("not written yet: ...")`` placeholder, so a scaffold never merges green.

``since`` comes from ``locate`` over the interpreters: ``--python`` ones, else every
``<kit>/.tox/*/bin/python``, else this interpreter. It is the first torch version (``X.Y``) where the
API is found when an older one lacks it, null when all have it. The API is appended to the ``apis`` of
``<kit>/torch_npu_testing/common/table.json`` (``ascend_task_id`` null, ``coverage`` regions empty: fill
both in); export then sends the file to every branch whose oldest torch has it and leaves it out of the
others with the reason (printed). An API already there, or a path that exists and is not a table test
file, refuses with nothing changed; the files are built first and written atomically.

JSON (``--json PATH``)::

    {"format": "torch_npu_testing.new/1", "api": NAME, "path": PATH, "suggested_by": TEXT|null, "since": "2.9"|null,
     "branches": [BRANCH...], "left_out": {BRANCH: REASON}, "locate": [locate rows], "written": [PATH...]}
"""
import json
import os
import re
import sys

from ..common.errors import UsageError
from ..common.layout import TABLE_REL
from ..export.kitfile import KIT_HEADER
from ..runtime.carried import parse_version
from . import apiname, gitrefs, jsonfile, locate

FORMAT = "torch_npu_testing.new/1"
PATH_RE = re.compile(r"^test/[A-Za-z0-9_]+(/[A-Za-z0-9_]+)*/test_[A-Za-z0-9_]+\.py$")
# The header and import line that ``export`` recognises and rewrites (export/convert.py).
SCAFFOLD_NAMES = ("TestCase", "run_tests", "device_type", "requires_api", "torch_version_at_least")
IMPORTS = f"from torch_npu_testing import {', '.join(SCAFFOLD_NAMES)}\n"
AREAS = (
    ("CallForms", "every call form and every parameter on the installed torch, each shown to take effect",
     ["positional and keyword call forms"]),
    ("Dtypes", "float32, float64, float16, bfloat16, integer and bool where accepted; the result dtype",
     ["float32", "float64", "float16", "bfloat16", "integer and bool inputs"]),
    ("Layouts", "transposed, sliced, expanded (stride 0), channels_last, each vs the contiguous copy",
     ["transposed input", "sliced input with a step", "expanded input", "channels_last input"]),
    ("Sizes", "zero-size dims, 0-d tensors, size-1 dims", ["zero-size dims", "0-d tensor", "size-1 dims"]),
    ("SideEffects", "in-place mutation, aliasing of outputs, state across repeated calls",
     ["inputs are not mutated (or are, as upstream)", "output aliasing", "repeated calls"]),
    ("BadInput", "wrong types and out-of-range values raise the same exception type as upstream",
     ["wrong argument types", "out-of-range values"]),
    ("Threads", "thread-local state, if any (else delete this class and say why in the module docstring)",
     ["state seen by another thread"]),
    ("Errors", "error messages and exception types match upstream on every supported torch version",
     ["exception type and message"]),
)


def class_prefix(api):
    last = api.rsplit(".", 1)[-1].strip("_") or "Api"
    return "".join(piece[:1].upper() + piece[1:] for piece in last.split("_") if piece)


def test_name(text):
    return "test_" + re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def parameters(signature):
    """Parameter names of a signature string such as ``(self, mode: bool) -> None``."""
    if not signature:
        return []
    inner = signature[signature.index("(") + 1:]
    depth, current, names = 0, "", []
    for char in inner:
        if char in "([{":
            depth += 1
        elif char in ")]}":
            if depth == 0:
                break
            depth -= 1
        if char == "," and depth == 0:
            names.append(current)
            current = ""
        else:
            current += char
    names.append(current)
    result = []
    for name in names:
        name = name.split(":")[0].split("=")[0].strip().lstrip("*")
        if name and name not in ("self", "cls", "/") and re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", name):
            result.append(name)
    return result


def render_file(api, rel, since, signature):
    prefix = class_prefix(api)
    gate = f"@requires_api(API, since={since!r})\n"
    doc = ('"""API consistency on the test device of\n\n'
           f"    ``{api}``\n\n"
           "Why it exists: the NPU port must behave exactly as upstream PyTorch for this API; the file checks\n"
           "its contract on every supported torch (a torch without it skips, saying so).\n\n"
           "Scaffold written by ``python -m torch_npu_testing new``: every test below is a placeholder that\n"
           "fails until it is written. Say here which contract areas do not apply to this API and why.\n"
           '"""\n')
    out = [KIT_HEADER + doc + IMPORTS + f"\nimport torch\n\nAPI = {json.dumps(api)}\nDEVICE = device_type()\n"]
    for area, about, cases in AREAS:
        if area == "CallForms":
            cases = cases + [f"parameter {name}" for name in parameters(signature)]
        body = [f"\n\n{gate}class Test{prefix}{area}(TestCase):\n", f'    """Contract area: {about}."""\n']
        for case in cases:
            body.append(f"\n    def {test_name(case)}(self):\n"
                        f'        self.fail(f"not written yet: {{API}}: {case}")\n')
        if area == "Errors":
            body.append("\n    def test_version_differences(self):\n"
                        "        # Assert the installed version's behaviour where versions differ.\n"
                        '        self.fail(f"not written yet: {API}: behaviour on torch {torch.__version__} "\n'
                        '                  f"(at least 2.11: {torch_version_at_least(\'2.11\')})")\n')
        out.append("".join(body))
    out.append('\n\nif __name__ == "__main__":\n    run_tests()\n')
    return "".join(out)


def since_from(rows):
    """``(since, found_versions)``: first X.Y found after an older torch lacked it; None when all have it."""
    rows = [row for row in rows if row.get("torch")]
    if not rows:
        raise UsageError("no interpreter with torch to locate the API in (give --python PY)")
    rows.sort(key=lambda row: jsonfile.version_key(row["torch"]))
    found = [row for row in rows if row.get("found")]
    if not found:
        versions = ", ".join(row["torch"] for row in rows)
        raise UsageError(f"the API is not found in any torch probed ({versions}): check the name")
    if found[0] is rows[0]:
        return None, [row["torch"] for row in found]
    return ".".join(found[0]["torch"].split(".")[:2]), [row["torch"] for row in found]


def branch_scope(doc, api, since):
    """``(chosen, left_out)``: the table's supported branches whose oldest torch has the API, and why not."""
    chosen, left_out = [], {}
    for name, entry in doc["branches"].items():
        if entry.get("maintenance"):
            continue
        oldest = min((pins["torch"] for pins in entry["envs"].values()), key=parse_version)
        if since is None or parse_version(oldest) >= parse_version(since):
            chosen.append(name)
        else:
            left_out[name] = f"{api.rsplit('.', 1)[-1]} does not exist in torch {oldest} (added in {since})"
    return chosen, left_out


def plan(kit, api, rel, since, signature):
    """``(files, chosen, left_out, existing)``: the texts to write (table, and the scaffold unless ``rel`` is
    already one of the table's test files, which the API then joins), the branches and what is left out."""
    table_path = os.path.join(kit, TABLE_REL)
    target_path = os.path.join(kit, rel)
    with open(table_path, encoding="utf-8") as handle:
        doc = json.load(handle)
    if any(entry.get("name") == api for entry in doc.get("apis", [])):
        raise UsageError(f"{api} is already in {table_path}: nothing changed")
    existing = any(entry.get("test_file") == rel for entry in doc.get("apis", []))
    if os.path.exists(target_path) and not existing:
        raise UsageError(f"{rel} already exists in {kit} and is no test file of the table: nothing changed")
    title = api.rsplit(".", 1)[-1] if api.count(".") < 2 else ".".join(api.rsplit(".", 2)[-2:])
    doc["apis"].append({"name": api, "title": title, "ascend_task_id": None, "since": since, "test_file": rel,
                        "coverage": []})
    chosen, left_out = branch_scope(doc, api, since)
    files = {table_path: json.dumps(doc, indent=2, ensure_ascii=False) + "\n"}
    if not existing:
        files[target_path] = render_file(api, rel, since, signature)
    return files, chosen, left_out, existing


def suggested_path(api, ascend, ref):
    """``(path, line)``: where ``search`` says the new tests belong on ``ref`` of ``ascend`` (None: nowhere)."""
    from . import family, search
    directory = gitrefs.check_ascend(ascend)
    ref, commit = gitrefs.resolve_branch(directory, ref)
    aliases, _ = search.resolve_aliases(api)
    branch = search.search_ref(directory, ref, commit, api, [api] + aliases, ["test"], family.family(api))
    home = branch["home"]
    if home is None:
        return None, f"search on {ref} ({commit[:7]}) found no file where tests of {api} or its owner live"
    return home["path"], f"search on {ref} ({commit[:7]}): new tests belong in {home['path']} ({home['why']})"


def add_arguments(parser):
    parser.add_argument("api", help="dotted API name, e.g. torch.autograd.grad_mode.set_grad_enabled.clone")
    parser.add_argument("--path", help="test file to create, test/<area>/test_<name>.py (default: where `search` "
                                       "on --ascend says the new tests belong)")
    parser.add_argument("--ascend", metavar="DIR", help="an Ascend/pytorch checkout: suggests --path by `search`")
    parser.add_argument("--branch", default="master", help="the branch of --ascend to search (default: master)")
    parser.add_argument("--mkdir", action="store_true",
                        help="create the --path folder under test/ when neither the kit nor the --ascend branch has it")
    parser.add_argument("--kit", default=locate.KIT_ROOT, help=f"the kit checkout (default: {locate.KIT_ROOT})")
    parser.add_argument("--python", action="append", default=[], metavar="PY",
                        help="interpreters to locate the API in (default: <kit>/.tox/*/bin/python, else this one)")
    parser.add_argument("--json", metavar="PATH", help=f"also write the {FORMAT} document")


def choose_path(args):
    """``(rel, note)``: ``--path``, else the path ``search`` suggests; UsageError when neither is there."""
    suggestion, note = (None, None)
    if args.ascend:
        suggestion, note = suggested_path(args.api, args.ascend, args.branch)
    rel = (args.path or suggestion or "").replace("\\", "/")
    if not rel:
        raise UsageError("give --path test/<area>/test_<name>.py, or --ascend DIR for search to suggest one"
                         + (f" ({note})" if note else ""))
    if not PATH_RE.match(rel):
        raise UsageError(f"--path {rel}: give test/<area>/test_<name>.py (relative, letters, digits, _)")
    if suggestion and args.path and suggestion != rel:
        note += f"; --path {rel} given instead"
    return rel, note


def check_folder(args, kit, rel):
    """The folder of ``rel`` is made only where the kit has it, the ``--ascend`` branch has it (Ascend's tree
    is where the file goes), or ``--mkdir`` asks: a typo makes no stray folder. UsageError otherwise."""
    folder = os.path.dirname(rel)
    if os.path.isdir(os.path.join(kit, folder)) or args.mkdir:
        return
    where = ""
    if args.ascend:
        directory = gitrefs.check_ascend(args.ascend)
        ref, _ = gitrefs.resolve_branch(directory, args.branch)
        if gitrefs.list_tree(directory, ref, folder):
            return
        where = f" nor on {ref} of {args.ascend}"
    raise UsageError(f"--path {rel}: folder {folder} does not exist in {kit}{where} (give --mkdir to create it)")


def main(args):
    apiname.parse(args.api)
    jsonfile.check_json_target(args.json)
    rel, note = choose_path(args)
    kit = os.path.realpath(args.kit)
    if not os.path.isfile(os.path.join(kit, TABLE_REL)):
        raise UsageError(f"--kit {args.kit}: no {TABLE_REL} (give the kit checkout)")
    check_folder(args, kit, rel)
    locate.check_pythons(args.python)
    pythons = args.python or locate.tox_interpreters(kit)
    rows = locate.locate_all(args.api, pythons)
    since, _ = since_from(rows)
    signature = next((row["signature"] for row in reversed(rows) if row.get("signature")), None)
    files, chosen, left_out, existing = plan(kit, args.api, rel, since, signature)
    for path, text in files.items():
        jsonfile.write_text_atomic(path, text)
    print_outcome(args, rel, note, rows, since, chosen, left_out, existing)
    jsonfile.write_json(args.json, {"format": FORMAT, "api": args.api, "path": rel, "suggested_by": note,
                                    "since": since, "branches": chosen, "left_out": left_out, "locate": rows,
                                    "written": sorted(files)})
    sys.stdout.flush()
    return 0


def print_outcome(args, rel, note, rows, since, chosen, left_out, existing):
    if note:
        print(note)
    found = ", ".join(row["torch"] for row in rows if row.get("torch") and row.get("found")) or "-"
    absent = ", ".join(row["torch"] for row in rows if row.get("torch") and not row.get("found")) or "-"
    kept = "; it is already a test file of the kit: add the new tests there" if existing else ""
    print(f"{'Kept' if existing else 'Wrote'} {rel} (since: {since or 'all supported torch'}; found in torch "
          f"{found}; absent in {absent}){kept}")
    for row in rows:
        if not row.get("torch"):
            print(f"  not probed (ignored for since): {row.get('python')}: {row.get('error')}")
    print(f"Added {args.api} to {TABLE_REL} (test_file {rel}); export sends it to {', '.join(chosen) or 'no branch'}")
    for branch, reason in left_out.items():
        print(f"  left out of {branch}: {reason}")
