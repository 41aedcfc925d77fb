# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Record, while the tests run, which test called each target API (``suite --api-calls``).

The evidence report must prove that every target API of the one table (:file:`common/table.json`) is
exercised by a test, and grepping the test text proves nothing (a name can appear in a comment or a
skipped branch). So the suite
measures it: while a test runs, a profile hook (``sys.setprofile`` for the test's thread and
``threading.setprofile`` for threads the test starts) watches for calls of exactly the target functions.

- A Python function (``aot_export_joint_with_descriptors``, ``set_grad_enabled.clone``, the 2.9+ wrapper
  ``_add_batch_dim``) is matched by its code object on ``call`` events, after unwrapping ``__wrapped__``.
- A bound method (``torch._functorch.config.patch`` is ``ConfigModule.patch`` bound to the
  ``torch._functorch.config`` module) also requires that ``self`` is that object, so
  ``torch._dynamo.config.patch`` (the same function, another module) does not count.
- A C builtin (``_add_batch_dim`` on torch 2.7.1) is matched by identity on ``c_call`` events.

Each call is classified by its caller. *Direct*: the frame that called the API is outside torch (the test
file, or unittest calling a callable the test passed). *Indirect*: torch called it on the test's behalf
(``torch.vmap`` calls ``_add_batch_dim``, a ``@set_grad_enabled`` decorator calls ``clone``); for those the
nearest frame outside torch is kept too. The report counts an API as exercised only when some test calls
it directly.

The hook is installed only between ``start_test`` and ``stop_test``: imports and class set-up run at full
speed. Threads started during a test are watched from their start (on Python >= 3.12 already-running
threads too); a call in another thread counts for the test running at that moment.
"""
import inspect
import os
import sys
import threading
import types

from ..common.table import load_apis

OUTSIDE_TESTS = "<outside a test>"
MAX_SITES = 3  # call sites kept per (API, test, kind): enough to show where, small in the JSON
INTERNAL_PACKAGES = ("torch", "functorch", "torch_npu", "torchgen")


# --------------------------------------------------------------------------- resolution
def resolve(dotted_name):
    """``(object, None)`` for an existing dotted name, ``(None, reason)`` when it does not exist.

    The lookup is :func:`torch_npu_testing.runtime.carried.find_api` (an import that fails for another
    reason than the module not existing propagates: that is a broken install, not an absent API); the
    reason names the longest prefix that exists and the attribute it lacks.
    """
    from ..runtime.carried import find_api

    missing = object()
    found = find_api(dotted_name, missing)
    if found is not missing:
        return found, None
    parts = dotted_name.split(".")
    for index in range(len(parts) - 1, 0, -1):
        owner = ".".join(parts[:index])
        if find_api(owner, missing) is not missing:
            return None, f"{owner} has no attribute {parts[index]!r}"
    return None, f"no module {parts[0]!r}"


class ApiTarget:
    """One target API, resolved in this process: what a call of it looks like to the profile hook."""

    def __init__(self, entry):
        self.name = entry["name"]
        self.entry = entry
        self.status = "present"
        self.reason = None
        self.kind = None
        self.code = None         # matched on "call" events
        self.builtin = None      # matched on "c_call" events
        self.bound_self = None   # for a bound method: the object ``self`` must be
        self.wrapper_codes = ()  # decorator frames between the caller and ``code``
        self.defined_at = None
        self.expected_absent = False  # set by the recorder: absent, and this torch predates ``since``
        try:
            obj, absent = resolve(self.name)
        except Exception as exc:  # noqa: BLE001 - a broken import is an error of this env, reported as such
            self.status, self.reason = "error", f"importing it raised {type(exc).__name__}: {exc}"
            return
        if absent:
            self.status, self.reason = "absent", absent
            return
        self._classify(obj)

    def _classify(self, obj):
        if inspect.ismethod(obj):
            self.bound_self, obj = obj.__self__, obj.__func__
        wrappers = []
        while isinstance(obj, types.FunctionType) and getattr(obj, "__wrapped__", None) is not None:
            wrappers.append(obj.__code__)
            obj = obj.__wrapped__
        self.wrapper_codes = tuple(wrappers)
        if isinstance(obj, types.FunctionType):
            self.code = obj.__code__
            self.kind = "python method" if self.bound_self is not None else "python function"
            self.defined_at = f"{_short_path(self.code.co_filename)}:{self.code.co_firstlineno}"
        elif isinstance(obj, types.BuiltinFunctionType) and self.bound_self is None:
            self.builtin = obj
            self.kind = "C builtin"
            self.defined_at = f"{getattr(obj, '__module__', None) or '?'}.{obj.__name__}"
        else:
            self.status = "error"
            self.reason = f"cannot watch calls of a {type(obj).__name__} (not a function or C builtin)"

    def accepts(self, frame):
        """For a bound method: is the call's ``self`` the object the API is bound to?"""
        if self.bound_self is None:
            return True
        names = frame.f_code.co_varnames
        return bool(names) and frame.f_locals.get(names[0]) is self.bound_self


# --------------------------------------------------------------------------- paths
def _internal_prefixes():
    prefixes = []
    for name in INTERNAL_PACKAGES:
        module = sys.modules.get(name)
        location = getattr(module, "__file__", None)
        if location:
            prefixes.append(os.path.dirname(os.path.abspath(location)) + os.sep)
    return tuple(prefixes)


def _short_path(filename, prefixes=None):
    """A path relative to the working directory, or to site-packages for installed packages."""
    absolute = os.path.abspath(filename)
    for prefix in _internal_prefixes() if prefixes is None else prefixes:
        if absolute.startswith(prefix):
            return os.path.relpath(absolute, os.path.dirname(prefix.rstrip(os.sep)))
    cwd = os.getcwd() + os.sep
    return absolute[len(cwd):] if absolute.startswith(cwd) else filename


def _site(frame, prefixes=None):
    return f"{_short_path(frame.f_code.co_filename, prefixes)}:{frame.f_lineno}"


# --------------------------------------------------------------------------- recorder
class ApiCallRecorder:
    """Which test called which target API; the suite drives it (``start_test`` / ``stop_test`` / ``finish``).

    ``finish()`` returns ``{api name: [ids of tests that called it, directly or through torch]}`` in the
    order the tests first called it (every manifest API is a key, absent ones with ``[]``);
    ``details()`` returns per API its status in this torch (present / absent / error), how it was
    watched, and per test the direct and indirect call counts with their call sites.
    """

    def __init__(self, manifest=None):
        import torch

        from ..runtime.carried import parse_version

        entries = load_apis() if manifest is None else manifest
        self.torch_version = torch.__version__
        self.targets = [ApiTarget(entry) for entry in entries]
        installed = parse_version(self.torch_version)
        for target in self.targets:
            since = target.entry.get("since")
            target.expected_absent = bool(
                target.status == "absent" and since and installed < parse_version(since))
        self._by_code = {id(t.code): t for t in self.targets if t.code is not None}
        self._by_builtin = {id(t.builtin): t for t in self.targets if t.builtin is not None}
        self._internal = _internal_prefixes()
        self._calls = {t.name: {} for t in self.targets}
        self._outside = dict.fromkeys(self._calls, 0)
        self._seen_sites = {}
        self._lock = threading.Lock()
        self._main_thread = threading.get_ident()
        self._current = None
        self._installed = False
        self._unmeasured = []
        self._errors = []
        self._profile = self._make_profile_hook()

    # The hook runs on every Python call/return and C call/return while a test runs: keep it tiny.
    def _make_profile_hook(self):
        code_target, builtin_target, hit, ident = self._by_code.get, self._by_builtin.get, self._hit, id

        if self._by_builtin:
            def profile(frame, event, arg):
                if event == "call":
                    target = code_target(ident(frame.f_code))
                    if target is not None:
                        hit(target, frame, frame.f_back)
                elif event == "c_call":
                    target = builtin_target(ident(arg))
                    if target is not None:
                        hit(target, None, frame)
        else:
            def profile(frame, event, arg):
                if event == "call":
                    target = code_target(ident(frame.f_code))
                    if target is not None:
                        hit(target, frame, frame.f_back)
        return profile

    def _is_internal(self, frame):
        return frame.f_code.co_filename.startswith(self._internal)

    def _hit(self, target, frame, caller):
        """One call of ``target``; ``frame`` is its own frame (``None`` for a builtin), ``caller`` the caller's.

        Never raises: an exception in a profile hook would surface inside the test and remove the hook.
        """
        try:
            self._record(target, frame, caller)
        except Exception as exc:  # noqa: BLE001 - kept and reported, never raised into the test
            with self._lock:
                if len(self._errors) < MAX_SITES:
                    self._errors.append(f"{target.name}: {type(exc).__name__}: {exc}")

    def _record(self, target, frame, caller):
        if frame is not None and not target.accepts(frame):
            return
        while caller is not None and caller.f_code in target.wrapper_codes:
            caller = caller.f_back
        if caller is None:
            return
        kind = "indirect" if self._is_internal(caller) else "direct"
        thread = threading.current_thread()
        with self._lock:
            test_id = self._current
            if test_id is None:
                self._outside[target.name] += 1
                return
            record = self._calls[target.name].get(test_id)
            if record is None:
                record = self._calls[target.name][test_id] = {
                    "direct": 0, "indirect": 0, "direct_sites": [], "indirect_sites": [], "threads": []}
                self._seen_sites[(target.name, test_id)] = set()
            record[kind] += 1
            seen = self._seen_sites[(target.name, test_id)]
            key = (kind, id(caller.f_code), caller.f_lineno)
            sites = record[kind + "_sites"]
            if key not in seen and len(sites) < MAX_SITES:
                seen.add(key)
                sites.append(self._describe_site(caller, kind))
            if thread.ident != self._main_thread and thread.name not in record["threads"]:
                record["threads"].append(thread.name)

    def _describe_site(self, caller, kind):
        """``file:line`` of a direct caller; for an indirect call, torch's caller and the test line behind it."""
        if kind == "direct":
            return _site(caller, self._internal)
        outer = caller
        while outer is not None and self._is_internal(outer):
            outer = outer.f_back
        text = f"{_site(caller, self._internal)} ({caller.f_code.co_name})"
        return text + (f" from {_site(outer, self._internal)}" if outer is not None else "")

    # ------------------------------------------------------------------ suite interface
    def start_test(self, test_id):
        with self._lock:
            self._current = test_id
        if self._installed:
            return
        self._internal = _internal_prefixes()  # torch_npu may have been imported since the last test
        other = sys.getprofile()
        if other is not None and other is not self._profile:
            # Another profiler (cProfile, a debugger) owns the hook: do not break it; say so instead.
            self._unmeasured.append(test_id)
            return
        sys.setprofile(self._profile)
        if hasattr(threading, "setprofile_all_threads"):  # Python >= 3.12: running threads too
            threading.setprofile_all_threads(self._profile)
        else:
            threading.setprofile(self._profile)
        self._installed = True

    def stop_test(self, test_id):
        if self._installed:
            if hasattr(threading, "setprofile_all_threads"):
                threading.setprofile_all_threads(None)
            else:
                threading.setprofile(None)
            sys.setprofile(None)
            self._installed = False
        with self._lock:
            self._current = None

    def finish(self):
        """Stop recording; ``{api name: [test ids that called it]}`` for every target API."""
        if self._installed:
            self.stop_test(self._current)
        return {name: list(tests) for name, tests in self._calls.items()}

    def details(self):
        """Per API: its status in this torch and, per test, how it was called (see the class docstring)."""
        out = {}
        for target in self.targets:
            out[target.name] = {
                "task": target.entry.get("task"),
                "ascend_task_id": target.entry.get("ascend_task_id"),
                "since": target.entry.get("since"),
                "test_file": target.entry.get("test_file"),
                "status": target.status,
                "reason": target.reason,
                "expected_absent": target.expected_absent,
                "kind": target.kind,
                "defined_at": target.defined_at,
                "tests": self._calls[target.name],
                "calls_outside_tests": self._outside[target.name],
            }
        return {
            "torch_version": self.torch_version,
            "mechanism": "sys.setprofile + threading.setprofile"
                         + (" (all threads)" if hasattr(threading, "setprofile_all_threads") else ""),
            "unmeasured_tests": list(self._unmeasured),
            "recorder_errors": list(self._errors),
            "apis": out,
        }
