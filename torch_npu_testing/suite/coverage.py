# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Implementation coverage: which lines and branches of each target API's torch code its tests reach.

The regions are the ``coverage`` column of the one table (:mod:`torch_npu_testing.common.table`): per API,
files of the installed torch (relative to the torch package's parent) and qualified names of functions
and classes in them (``ConfigModule.patch``, ``ConfigPatch``; ``*`` is every function of the file), never
line numbers. They are resolved with :mod:`ast` against the installed release: a name this release lacks
is listed as missing, not guessed. A region counts the *bodies* of its functions (of every method of a
class), not the ``def`` lines and decorators, which run at import.

Measurement uses coverage.py in this process (lines and branches), C tracer (``sys.monitoring`` from
Python 3.14, where it measures branches), ``include`` restricted to the region files so nothing else is
recorded. Each API test file gets its own measurement session, so an API's figures are what *its own*
test file reached (torch calls ``no_grad`` everywhere; another file's tests must not count for it).

An API that resolves to a C function on this release (``_add_batch_dim`` on 2.7.1) is reported as
"C implementation, not measured"; one the release lacks (aot on 2.7.1) as "absent". The results block
is documented in ``/work/scratch/briefs/interfaces.md`` and :func:`CoverageMeter.finish`.
"""
import ast
import contextlib
import inspect
import os
import sys
import types

FORMAT = "torch_npu_testing.coverage/1"
C_IMPLEMENTATION = "C implementation, not measured"
NO_REGIONS = "no regions declared (its table row's coverage is [])"
ABSENT = "absent"
WHOLE_MODULE = "*"
C_CALLABLES = (types.BuiltinFunctionType, types.BuiltinMethodType, types.WrapperDescriptorType,
               types.MethodDescriptorType, types.MethodWrapperType, types.ClassMethodDescriptorType)
QUIET_WARNINGS = ["no-data-collected", "module-not-measured", "module-not-imported", "couldnt-parse",
                  "already-imported", "no-ctracer", "no-sysmon"]


# --------------------------------------------------------------------------------------- regions
def torch_parent():
    """The folder that holds the installed ``torch`` package (region files are relative to it)."""
    import torch
    return os.path.dirname(os.path.dirname(os.path.abspath(torch.__file__)))


def _defs(node, prefix=""):
    """``(qualified name, node)`` of every function and class under ``node``, outer before inner."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            name = prefix + child.name
            yield name, child
            yield from _defs(child, name + ".")
        else:  # definitions inside if / try blocks
            yield from _defs(child, prefix)


def _functions(name, node):
    """The functions a matched definition stands for: itself if a function, and every one inside it."""
    if not isinstance(node, ast.ClassDef):
        yield name, node
    for inner, child in _defs(node, name + "."):
        if not isinstance(child, ast.ClassDef):
            yield inner, child


def resolve_names(source, names):
    """``(owner, found, missing)`` for ``names`` in Python ``source``.

    ``owner`` maps each line of the matched function bodies to the innermost function's qualified name.
    A name defined several times (version branches, overloads) takes every definition.
    """
    definitions = list(_defs(ast.parse(source)))
    owner, found, missing = {}, [], []
    for name in names:
        if name == WHOLE_MODULE:
            matched = [(q, n) for q, n in definitions if not isinstance(n, ast.ClassDef)]
        else:
            matched = [(q, n) for q, n in definitions if q == name]
        (found if matched else missing).append(name)
        for qualified, node in matched:
            for function_name, function in _functions(qualified, node):
                for line in range(function.body[0].lineno, function.end_lineno + 1):
                    owner[line] = function_name
    return owner, found, missing


def resolve_regions(regions, root):
    """The table's regions of one API resolved under ``root``: ``(per-file owner maps, region records)``."""
    owners, records = {}, []
    for region in regions:
        path = os.path.join(root, *region["file"].split("/"))
        record = {"file": region["file"], "names": list(region["names"]), "found": [], "missing": []}
        if not os.path.isfile(path):
            record.update(missing=list(region["names"]), note="no such file in this torch")
        else:
            try:
                with open(path, encoding="utf-8") as handle:
                    owner, record["found"], record["missing"] = resolve_names(handle.read(), region["names"])
            except (OSError, SyntaxError, ValueError) as exc:
                record.update(missing=list(region["names"]), note=f"cannot parse it: {type(exc).__name__}: {exc}")
            else:
                owners.setdefault(path, {}).update(owner)
        records.append(record)
    return owners, records


def classify(name):
    """``(status, note)`` of a dotted API name here: measured, c_implementation, absent or error."""
    from ..runtime.carried import find_api

    missing = object()
    try:
        obj = find_api(name, missing)
    except Exception as exc:  # noqa: BLE001 - a broken import is this env's error, reported as such
        return "error", f"importing it raised {type(exc).__name__}: {str(exc).strip()[:200]}"
    if obj is missing:
        return "absent", ABSENT
    obj = inspect.unwrap(obj.__func__ if inspect.ismethod(obj) else obj)
    if isinstance(obj, types.FunctionType):
        return "measured", None
    if isinstance(obj, C_CALLABLES):
        return "c_implementation", C_IMPLEMENTATION
    if inspect.isclass(obj) or inspect.ismodule(obj):
        module = obj if inspect.ismodule(obj) else sys.modules.get(obj.__module__)
        python = str(getattr(module, "__file__", None) or "").endswith(".py")
        return ("measured", None) if python else ("c_implementation", C_IMPLEMENTATION)
    return "error", f"not a function, class or module: a {type(obj).__name__}"


# --------------------------------------------------------------------------------------- figures
def figures_text(entry):
    """``lines 40/52, branches 10/16`` | ``C implementation, not measured`` | ``absent`` | ``not measured: why``."""
    if entry.get("status") == "measured":
        lines, branches = entry["lines"], entry["branches"]
        return (f"lines {lines['covered']}/{lines['total']}, "
                f"branches {branches['covered']}/{branches['total']}")
    if entry.get("status") in ("c_implementation", "absent"):
        return entry.get("note") or (C_IMPLEMENTATION if entry["status"] == "c_implementation" else ABSENT)
    return f"not measured: {entry.get('note') or entry.get('status') or 'no figures recorded'}"


def api_line(entry, torch_version):
    """``lines 40/52, branches 10/16 on torch 2.12.0`` (a local version suffix such as ``+cpu`` dropped)."""
    return f"{figures_text(entry)} on torch {str(torch_version).split('+')[0]}"


def coverage_of(document):
    """The ``coverage`` block of a suite results document, or None when it was not measured."""
    block = document.get("coverage") if isinstance(document, dict) else None
    return block if isinstance(block, dict) else None


def summary_lines(block):
    """One line per API for the suite's output: ``coverage  config.patch: lines 40/52, branches 10/16``."""
    if block.get("unavailable"):
        return [f"coverage: not measured ({block['unavailable']})"]
    width = max([len(entry.get("title") or name) for name, entry in block["apis"].items()] + [0])
    return [f"coverage  {(entry.get('title') or name) + ':':<{width + 1}} {figures_text(entry)}"
            for name, entry in block["apis"].items()]


def _source_line(path, number, cache):
    if path not in cache:
        with open(path, encoding="utf-8", errors="replace") as handle:
            cache[path] = handle.read().splitlines()
    lines = cache[path]
    return lines[number - 1].strip() if 0 < number <= len(lines) else ""


def _unreached(statements, missing, owner):
    """``[(start, end, name)]``: runs of missing statements, broken by a reached one or another function."""
    ranges, current = [], None
    for line in sorted(statements):
        if line not in missing:
            current = None
        elif current is not None and current[2] == owner[line]:
            current[1] = line
        else:
            current = [line, line, owner[line]]
            ranges.append(current)
    return [tuple(item) for item in ranges]


def file_figures(analysis, owner, relative, cache):
    """Counts, unreached ranges and partly taken branches of one file's region lines in ``analysis``."""
    region = set(owner)
    statements = analysis.statements & region
    missing = analysis.missing & region
    counts = {"lines": [len(statements) - len(missing), len(statements)], "branches": [0, 0]}
    not_taken = analysis.missing_branch_arcs() if analysis.has_arcs else {}
    partial = []
    for line, exits in sorted(analysis.exit_counts.items()):
        if line not in statements or exits < 2 or line in analysis.no_branch:
            continue
        untaken = not_taken.get(line, [])
        counts["branches"][0] += exits - len(untaken)
        counts["branches"][1] += exits
        if untaken and line not in missing:
            partial.append({"file": relative, "name": owner[line], "line": line,
                            "missing_to": ["exit" if to < 0 else to for to in untaken],
                            "source": _source_line(analysis.filename, line, cache)})
    unreached = [{"file": relative, "name": name, "start": start, "end": end,
                  "source": _source_line(analysis.filename, start, cache)}
                 for start, end, name in _unreached(statements, missing, owner)]
    return counts, unreached, partial


# --------------------------------------------------------------------------------------- the meter
class ApiRegions:
    """One target API in this torch: its status and, when measured, its resolved region lines."""

    def __init__(self, entry, root):
        self.name, self.entry = entry["name"], entry
        self.status, self.note = classify(self.name)
        self.owners, self.records = ({}, []) if self.status != "measured" else resolve_regions(
            entry.get("coverage") or [], root)
        if self.status == "measured" and not entry.get("coverage"):
            self.status, self.note = "not_measured", NO_REGIONS
        elif self.status == "measured" and not self.owners:
            self.status, self.note = "error", "none of its regions exists in this torch"

    def base(self):
        return {"title": self.entry.get("title"), "test_file": self.entry.get("test_file"),
                "status": self.status, "note": self.note, "regions": self.records}


def _tracer_core():
    """The core coverage.py should use: sys.monitoring where it measures branches (3.14+), else the C tracer."""
    return "sysmon" if sys.version_info >= (3, 14) else "ctrace"


class CoverageMeter:
    """Measure the target APIs' regions per test file; the suite drives it (``measuring`` / ``finish``).

    ``apis`` are table entries (default: every API of the table); ``cwd`` is what test paths are
    relative to (default: the current directory); ``root`` is what region files are relative to (default:
    the installed torch's parent folder). Raises ImportError when coverage.py is not installed.
    """

    def __init__(self, apis=None, cwd=None, root=None):
        import coverage

        from ..common import table

        self.coverage = coverage
        self.cwd = os.path.abspath(cwd or os.getcwd())
        self.root = os.path.abspath(root or torch_parent())
        self.apis = [ApiRegions(entry, self.root) for entry in (table.apis() if apis is None else apis)]
        self.by_file = {}
        for api in self.apis:
            if api.status == "measured":
                self.by_file.setdefault(os.path.normpath(api.entry["test_file"]), []).append(api)
        self.sessions = {}
        self.tracer = None

    def _key(self, path):
        return os.path.normpath(os.path.relpath(os.path.abspath(path), self.cwd))

    def _session(self, key):
        if key not in self.sessions:
            files = sorted({path for api in self.by_file[key] for path in api.owners})
            cov = self.coverage.Coverage(data_file=None, branch=True, include=files, config_file=False)
            for option, value in (("run:core", _tracer_core()), ("run:disable_warnings", QUIET_WARNINGS)):
                with contextlib.suppress(Exception):  # an older coverage.py without the option
                    cov.set_option(option, value)
            self.sessions[key] = cov
        return self.sessions[key]

    @contextlib.contextmanager
    def measuring(self, path):
        """Measure while the body runs ``path``'s tests (nothing is measured for a file of no API)."""
        key = self._key(path)
        if key not in self.by_file:
            yield
            return
        cov = self._session(key)
        cov.start()
        try:
            yield
        finally:
            cov.stop()
            if self.tracer is None:
                with contextlib.suppress(Exception):
                    self.tracer = cov._collector.tracer_name()

    def _measure(self, api, cache, analyses):
        cov = self.sessions[os.path.normpath(api.entry["test_file"])]
        totals = {"lines": [0, 0], "branches": [0, 0]}
        unreached, partial = [], []
        for path, owner in sorted(api.owners.items()):
            if (cov, path) not in analyses:
                analyses[(cov, path)] = cov._analyze(path)
            relative = os.path.relpath(path, self.root).replace(os.sep, "/")
            counts, missing, branches = file_figures(analyses[(cov, path)], owner, relative, cache)
            for key in totals:
                totals[key] = [a + b for a, b in zip(totals[key], counts[key])]
            unreached += missing
            partial += branches
        return {"lines": dict(zip(("covered", "total"), totals["lines"])),
                "branches": dict(zip(("covered", "total"), totals["branches"])),
                "unreached": unreached, "partial_branches": partial}

    def finish(self):
        """The results block: ``{"format", "torch_version", "tool", "apis": {name: entry}}``."""
        import torch

        cache, analyses, apis = {}, {}, {}
        for api in self.apis:
            entry = api.base()
            if api.status == "measured":
                if os.path.normpath(api.entry["test_file"]) not in self.sessions:
                    entry.update(status="not_run", note=f"its test file {api.entry['test_file']} did not run")
                else:
                    entry.update(self._measure(api, cache, analyses))
            apis[api.name] = entry
        tool = f"coverage.py {self.coverage.__version__}, {self.tracer or _tracer_core()}, lines and branches"
        return {"format": FORMAT, "torch_version": torch.__version__, "tool": tool, "apis": apis}


def unavailable_block(reason):
    """The block written when nothing could be measured (coverage.py missing): says why."""
    import torch
    return {"format": FORMAT, "torch_version": torch.__version__, "tool": None, "unavailable": reason, "apis": {}}
