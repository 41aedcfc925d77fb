# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""``new``'s OpInfo lookup over the interpreters it probes: :mod:`opinfo_lookup` by path in each.

:func:`lookup_all` gives one result per interpreter (``{"python", "torch", "error", "entries"}``; a probe
that fails is a result with its ``error``), in parallel like ``locate``. :func:`summary_lines` says, one line
each, where ``op_db`` could not be read and, when no interpreter knows the API, that the plain scaffold is
written instead.
"""
import os
from concurrent.futures import ThreadPoolExecutor

from . import by_path

LOOKUP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "opinfo_lookup.py")
LOOKUP_TIMEOUT_S = 300


def lookup_subprocess(python, api):
    result, why = by_path.run_json(python, LOOKUP, [api], LOOKUP_TIMEOUT_S)
    if why is not None:
        result = {"torch": None, "entries": [], "error": f"lookup failed: {why}"}
    result["python"] = python
    return result


def lookup_all(api, pythons):
    """One lookup result per interpreter (this one when ``pythons`` is empty)."""
    if not pythons:
        from . import opinfo_lookup
        return [opinfo_lookup.lookup(api)]
    with ThreadPoolExecutor(max_workers=min(4, len(pythons))) as pool:
        return list(pool.map(lambda python: lookup_subprocess(python, api), pythons))


def summary_lines(api, results, entries):
    lines = [f"OpInfo: {r['python']} (torch {r.get('torch') or '?'}): {r['error']}" for r in results if r.get("error")]
    if entries:
        names = ", ".join(sorted({f"{e['name']}" + (f" ({e['variant_test_name']})" if e["variant_test_name"] else "")
                                  for e in entries}))
        lines.append(f"OpInfo: {api} is {names} in op_db: drafting real tests from it")
    else:
        read = ", ".join(r["torch"] for r in results if r.get("torch") and not r.get("error")) or "no torch"
        lines.append(f"OpInfo: no op_db entry for {api} (read in {read}): writing the plain scaffold")
    return lines
