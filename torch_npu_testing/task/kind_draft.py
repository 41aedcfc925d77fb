# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""The draft ``new`` writes for an API outside OpInfo: real tests of the generic contract of its kind, with
expectations probed per torch release, and the API's own semantics as named placeholders.

:func:`draft` asks each interpreter (``kind_probe.py info``) what the API is, builds the areas
(:mod:`kind_spec`), writes a probe text (the helpers of :mod:`kind_observe` and every observation), runs it in
each interpreter (``kind_probe.py observe``), and renders the file: the helpers, ``PROBED`` (the observations
common to every release probed, and each release's own), one class per area whose tests assert an
observation equals the probed one of the running release (a release not probed skips, saying so), and a
placeholder class whose tests fail with their label.
"""
import inspect
import json
import os
import pprint
import re
import tempfile
import textwrap
from concurrent.futures import ThreadPoolExecutor

from . import by_path, jsonfile, kind_spec
from .scaffold_text import KIT_HEADER, class_prefix, test_name

PROBE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kind_probe.py")
OBSERVE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kind_observe.py")
PROBE_TIMEOUT_S = 240
IMPORT_NAMES = ("TestCase", "run_tests", "device_type", "requires_api")
WIDTH = 120
ALIAS_CHARS = 200
SETUP = '''

def check(test, observed, key):
    """``observed`` is what the probe saw for ``key`` on this torch release (floats within 1e-5); a release
    ``new`` did not probe skips."""
    if RELEASE not in PROBED:
        test.skipTest(f"new probed torch {', '.join(PROBED)}, not {RELEASE}: run new again to probe it")
    test.assertIsNone(first_difference(flat(plain(observed)), PROBED[RELEASE][key]), key)


def check_device(test, on_device, on_cpu):
    """The device's observation against the CPU's at run time (floats within 1e-4)."""
    test.assertIsNone(first_difference(on_device, on_cpu, rel=1e-4))
'''


def _imports(modules):
    return "".join(f"import {module}  # noqa: F401\n" for module in modules)


def helpers_text(uses):
    """The source of the helpers ``uses`` (text) calls, and of those they call, in :data:`HELPERS` order."""
    from . import kind_observe
    sources = {function.__name__: textwrap.dedent(inspect.getsource(function)).rstrip() + "\n"
               for function in kind_observe.HELPERS}
    needed, text = set(), uses + SETUP
    while True:
        found = {name for name in sources if re.search(rf"\b{name}\(", text)} - needed
        if not found:
            break
        needed |= found
        text += "".join(sources[name] for name in found)
    return "\n\n" + "\n\n".join(source for name, source in sources.items() if name in needed)


def observations(areas):
    return {key: text for _, _, tests in areas for _, _, pairs in tests for key, text in pairs if key}


def probe_text(modules, areas, setup):
    return ("import functools\nimport json\nimport re\n\nimport torch\n" + _imports(modules)
            + "\nDEVICE = 'cpu'\nPROBED = {}\nRELEASE = None\n" + helpers_text(repr(observations(areas)))
            + (setup or "") + SETUP
            + f"\nOBSERVATIONS = {observations(areas)!r}\n")


def _run_all(pythons, args):
    with ThreadPoolExecutor(max_workers=min(4, len(pythons))) as pool:
        return list(pool.map(lambda python: (python,) + by_path.run_json(python, PROBE, args, PROBE_TIMEOUT_S),
                             pythons))


def probe_infos(api, pythons):
    """``(infos, problems)``: ``info`` per interpreter (sorted by torch), and one line per one that failed."""
    infos, problems = [], []
    for python, answer, why in _run_all(pythons, ["info", api]):
        if why:
            problems.append(f"kind probe in {python}: {why}")
        else:
            infos.append(answer)
    return sorted(infos, key=lambda info: jsonfile.version_key(info["torch"])), problems


def probe_observations(modules, areas, setup, pythons):
    """``({release: {key: observation}}, problems)``."""
    with tempfile.TemporaryDirectory(prefix="torch_npu_testing-kind-") as folder:
        path = os.path.join(folder, "probe_text.py")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(probe_text(modules, areas, setup))
        found, problems = {}, []
        for python, answer, why in _run_all(pythons, ["observe", path]):
            if why:
                problems.append(f"observation probe in {python}: {why}")
            else:
                found[answer["torch"]] = answer["observed"]
    return dict(sorted(found.items(), key=lambda item: jsonfile.version_key(item[0]))), problems


def _literal(name, value):
    """``name = value`` as flake8 (max line 120) takes it: pprint's continuation lines under the bracket."""
    prefix = f"{name} = "
    lines = pprint.pformat(value, width=WIDTH - len(prefix), sort_dicts=True, compact=True).splitlines()
    return prefix + lines[0] + "".join("\n" + " " * len(prefix) + line for line in lines[1:]) + "\n"


def _split_arguments(text):
    """``(head, [arguments], tail)`` of the first call in ``text`` (``f(a, b)[k]`` -> ``f(``, a/b, ``)[k]``)."""
    start = text.index("(")
    depth, parts, current = 0, [], ""
    for index in range(start + 1, len(text)):
        char = text[index]
        if char in "([{":
            depth += 1
        elif char in ")]}":
            if depth == 0:
                return text[:start + 1], parts + [current.strip()], text[index:]
            depth -= 1
        if char == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += char
    return text, [], ""


def wrapped(text, column):
    """``text`` starting at ``column``, its first call's arguments one per line under the bracket when the
    line would pass :data:`WIDTH` (nested calls wrapped the same way)."""
    if column + len(text) + 2 <= WIDTH or "(" not in text:
        return text
    head, arguments, tail = _split_arguments(text)
    if not arguments:
        return text
    inner = column + len(head)
    lines = [wrapped(argument, inner) for argument in arguments]
    return head + (",\n" + " " * inner).join(lines) + tail


def aliases(probed):
    """``{key: earlier key}`` for each large observation (over :data:`ALIAS_CHARS` as JSON) equal to an
    earlier one on every release probed: a test then compares with the earlier one, and the draft states
    the value once (a small one is clearer written out)."""
    found, releases = {}, list(probed)
    keys = [key for key in probed[releases[0]] if len(json.dumps(probed[releases[0]][key])) > ALIAS_CHARS]
    for index, key in enumerate(keys):
        same = next((other for other in keys[:index] if other not in found and all(
            probed[r].get(key) == probed[r].get(other) for r in releases)), None)
        if same is not None:
            found[key] = same
    return found


def probed_text(probed):
    """``COMMON`` (what every release probed observed alike) and ``PROBED`` per release."""
    releases = list(probed)
    keys = sorted(set().union(*(set(observed) for observed in probed.values())))
    common = {key: probed[releases[0]][key] for key in keys
              if all(key in probed[r] and probed[r][key] == probed[releases[0]][key] for r in releases)}
    own = {release: {k: v for k, v in observed.items() if k not in common} for release, observed in probed.items()}
    text = f"# Probed by `new` on torch {', '.join(releases)}: what each observation gave there.\n"
    text += _literal("COMMON", common)
    for index, release in enumerate(releases):
        text += _literal(f"OWN_{index}", own[release])
    entries = ", ".join(f"{release!r}: {{**COMMON, **OWN_{index}}}" for index, release in enumerate(releases))
    return text + f"PROBED = {{{entries}}}\n"


def _call(function, first, second):
    """``function(self, first,\n second)`` at a test body's indent, under the bracket as flake8 wants."""
    column = 8 + len(function) + 1
    return (f"        {function}(self, {wrapped(first, column + 6)},\n"
            f"{' ' * column}{wrapped(second, column)})\n")


def _test_text(name, doc, pairs, same):
    if pairs[0][0] is None:
        body = _call("check_device", pairs[0][1], pairs[1][1])
    else:
        body = "".join(_call("check", text, repr(same.get(key, key))) for key, text in pairs)
    doc = "\n        ".join(textwrap.wrap(doc, WIDTH - 14))
    return f"\n    def {name}(self):\n        \"\"\"{doc}\"\"\"\n{body}"


def classes_text(api, since, areas, same):
    prefix, gate, out = class_prefix(api), f"@requires_api(API, since={since!r})\n", []
    for area, about, tests in areas:
        doc = "\n    ".join(textwrap.wrap(f"Contract area: {about}.", 110))
        out.append(f"\n\n{gate}class Test{prefix}{area}(TestCase):\n    \"\"\"{doc}\"\"\"\n"
                   + "".join(_test_text(*test, same) for test in tests))
    cases = "".join(f"\n    def {test_name(label)}(self):\n        \"\"\"Placeholder: {label}.\"\"\"\n"
                    f"        self.fail(f\"not written yet: {{API}}: {label}\")\n" for label in kind_spec.PLACEHOLDERS)
    out.append(f"\n\n{gate}class Test{prefix}Semantics(TestCase):\n    \"\"\"The API's own semantics: named "
               f"placeholders that fail with their label until written.\"\"\"\n{cases}")
    return "".join(out)


def render(api, since, info, spec, probed):
    areas, setup = spec
    same = aliases(probed)
    classes = classes_text(api, since, areas, same)
    kept = {release: {k: v for k, v in observed.items() if k not in same} for release, observed in probed.items()}
    releases = ", ".join(probed)
    doc = ('"""API consistency on the test device of\n\n'
           f"    ``{api}`` (kind: {info['contract']})\n\n"
           "Drafted by ``python -m torch_npu_testing new`` from the generic contract of its kind: each real test\n"
           "observes the API through a helper below and compares with what the probe saw on the same torch\n"
           f"release ({releases}); on a device, the CPU at run time is the reference. The API's own semantics\n"
           "are the placeholders of the last class, which fail with their label until written. Say here which\n"
           "contract areas do not apply and why. Not drafted: forward-mode and second-order autograd.\n"
           '"""\n')
    helpers = helpers_text(classes)
    standard = "".join(f"import {name}\n" for name in ("functools", "json", "re")
                       if name == "json" or f"{name}." in helpers)
    names = IMPORT_NAMES + (("run_in_thread",) if "run_in_thread(" in helpers else ())
    return (KIT_HEADER + doc + standard + f"\nfrom torch_npu_testing import {', '.join(names)}\n\nimport torch\n"
            + _imports(info["modules"]) + f"\nAPI = {json.dumps(api)}\nDEVICE = device_type()\n"
            + "RELEASE = torch.__version__.split(\"+\")[0]\n" + helpers + (setup or "") + SETUP + "\n\n"
            + probed_text(kept) + classes
            + '\n\nif __name__ == "__main__":\n    run_tests()\n')


def draft(api, since, pythons, infos=None):
    """``(text, kind, problems)``: the draft by kind, or ``(None, why, problems)`` when there is none
    (``infos``: :func:`probe_infos`'s, when already asked)."""
    infos, problems = (infos, []) if infos is not None else probe_infos(api, pythons)
    if not infos:
        return None, "the kind probe failed everywhere", problems
    areas, setup = kind_spec.spec(api, infos)
    if areas is None:
        return None, setup, problems
    probed, more = probe_observations(infos[-1]["modules"], areas, setup, pythons)
    if not probed:
        return None, "the observation probe failed everywhere", problems + more
    return render(api, since, infos[-1], (areas, setup), probed), infos[-1]["contract"], problems + more
