# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""The one results model: a record per test case, one outcome vocabulary, one way to record and count.

Every tool of the kit that runs tests (``suite``, ``grad-modes``, the upstream driver) records with
:class:`CaseRecorder`, and everything that reads results (``report``, the upstream runner) reads
:class:`Case` records, so an outcome means the same thing everywhere.

- A *test* is one test method; a *case* is what gets an outcome. A test without subtests is one case;
  a test that uses ``self.subTest(...)`` has one case per subtest, passing ones included (unittest
  reports passing subtests to ``addSubTest`` with ``err=None``), plus one case without a subtest label
  when something outside the subtests fails (a failing cleanup, such as the kit's state guard).
- :class:`Outcome` is the only outcome vocabulary. ``Outcome.fails`` says which outcomes fail a run.
- :data:`FORMAT` names the layout of every results file the kit writes; a reader accepts only it.

This module is loaded *by file path* by :mod:`torch_npu_testing.upstream.driver` inside interpreters
where the kit may not be installed: it must stay standard library only, with no relative imports and
no torch.
"""
import enum
import hashlib
import time
import traceback
import unittest
from dataclasses import dataclass, replace
from typing import Optional

FORMAT = "torch_npu_testing.results/2"
MAX_REASON_CHARS = 400
UNEXPECTED_SUCCESS_REASON = "marked @expectedFailure, but passed"


class Outcome(str, enum.Enum):
    """What happened to one case. The value is what results files store."""

    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"
    SKIPPED = "skipped"
    EXPECTED_FAILURE = "expected_failure"
    UNEXPECTED_SUCCESS = "unexpected_success"

    @property
    def fails(self):
        """Whether this outcome fails a run (``N failed`` in the closing line, exit status 1)."""
        return self in (Outcome.FAILED, Outcome.ERROR, Outcome.UNEXPECTED_SUCCESS)

    @property
    def label(self):
        """``expected failure``: the value as words, for people."""
        return self.value.replace("_", " ")

    def __str__(self):
        return self.value


@dataclass(frozen=True)
class Case:
    """One test case: the file it is in, the test id (``Class.test``), the subtest label, the outcome,
    a one-line reason (skip reason, error summary, manifest reason), the traceback and the seconds."""

    file: str
    id: str
    outcome: Outcome
    subtest: Optional[str] = None
    reason: Optional[str] = None
    details: Optional[str] = None
    duration_s: Optional[float] = None

    @property
    def name(self):
        """``Class.test`` or, for a subtest, ``Class.test (x=1)`` (unittest's own label)."""
        return f"{self.id} {self.subtest}" if self.subtest else self.id

    def to_dict(self):
        data = {"file": self.file, "id": self.id, "outcome": self.outcome.value}
        for key in ("subtest", "reason", "details", "duration_s"):
            value = getattr(self, key)
            if value is not None:
                data[key] = value
        return data

    @classmethod
    def from_dict(cls, data):
        """The record of a results file's case entry; ValueError naming what is wrong with it."""
        if not isinstance(data, dict):
            raise ValueError(f"a case is {type(data).__name__}, not an object")
        for key in ("file", "id"):
            if not isinstance(data.get(key), str):
                raise ValueError(f"a case lacks '{key}'")
        try:
            outcome = Outcome(data.get("outcome"))
        except ValueError:
            raise ValueError(f"case {data['id']}: unknown outcome {data.get('outcome')!r}") from None
        optional = {key: data.get(key) for key in ("subtest", "reason", "details")}
        for key, value in optional.items():
            if value is not None and not isinstance(value, str):
                raise ValueError(f"case {data['id']}: '{key}' is {type(value).__name__}")
        duration = data.get("duration_s")
        if duration is not None and not isinstance(duration, (int, float)):
            raise ValueError(f"case {data['id']}: 'duration_s' is {type(duration).__name__}")
        return cls(file=data["file"], id=data["id"], outcome=outcome, duration_s=duration, **optional)


def cases_to_dicts(cases):
    return [case.to_dict() for case in cases]


def cases_from_dicts(items):
    """Case records from a results file's list; ValueError for the first bad entry."""
    if not isinstance(items, list):
        raise ValueError(f"'cases' is {type(items).__name__}, not a list")
    return [Case.from_dict(item) for item in items]


# --------------------------------------------------------------------------- counting
def tally(cases):
    """``{outcome value: n for every outcome, "tests": distinct test ids, "cases": n}``."""
    counts = {outcome.value: 0 for outcome in Outcome}
    for case in cases:
        counts[case.outcome.value] += 1
    counts["tests"] = len({case.id for case in cases})
    counts["cases"] = len(cases)
    return counts


def add_counts(counts_list):
    """The sum of several :func:`tally` results (``tests`` and ``cases`` add up too)."""
    total = tally([])
    for counts in counts_list:
        for key in total:
            total[key] += counts.get(key, 0)
    return total


def failed_count(counts):
    """Cases that fail a run: failed, errors and unexpected successes."""
    return sum(counts.get(outcome.value, 0) for outcome in Outcome if outcome.fails)


def closing_line(counts):
    """``120 passed, 0 failed, 3 skipped (45 tests, 123 cases)``: cases counted, tests and cases said."""
    return (f"{counts['passed']} passed, {failed_count(counts)} failed, {counts['skipped']} skipped "
            f"({counts['tests']} tests, {counts['cases']} cases)")


def counts_fields(counts, nonzero=False):
    """``tests=3 cases=5 passed=4 ... skipped=1``; with ``nonzero``, zero counts left out."""
    keys = ["tests", "cases"] + [outcome.value for outcome in Outcome]
    return " ".join(f"{key}={counts.get(key, 0)}" for key in keys if counts.get(key) or not nonzero)


def by_test(cases):
    """``[(test id, [its cases])]`` in the order the tests first appear."""
    groups = {}
    for case in cases:
        groups.setdefault(case.id, []).append(case)
    return list(groups.items())


def outcome_map(cases):
    """``{case name: outcome}``: what two runs of the same file are compared by."""
    return {case.name: case.outcome for case in cases}


# --------------------------------------------------------------------------- recording
def test_id(test):
    """``Class.test`` for a test; unittest's description (``setUpClass (module.Class)``) for the stand-in
    unittest reports a failing class or module fixture under."""
    method = getattr(test, "_testMethodName", None)
    if method is None:
        return str(getattr(test, "description", test))
    return f"{type(test).__name__}.{method}"


def summary(err):
    """``Type: message``, its first line, at most MAX_REASON_CHARS characters: a failure's one-line reason.

    (A SyntaxError's text starts with indented lines quoting the code: they are passed over.)
    """
    exc_type, value, _ = err
    lines = "".join(traceback.format_exception_only(exc_type, value)).splitlines()
    first = next((line for line in lines if line.strip() and not line[0].isspace()), exc_type.__name__)
    return first if len(first) <= MAX_REASON_CHARS else first[:MAX_REASON_CHARS - 3] + "..."


class CaseRecorder(unittest.TextTestResult):
    """A (verbose) TextTestResult that also keeps one :class:`Case` per test case, in ``cases``.

    ``file`` is stored in every case. ``listener``, when given, is told ``start_test(test id)`` and
    ``stop_test(test id)`` around each test (the suite's API-call recorder). Build it for a runner
    with :func:`recorder_class`.
    """

    def __init__(self, stream, descriptions, verbosity, *, file="", listener=None, **kwargs):
        super().__init__(stream, descriptions, verbosity, **kwargs)
        self.file = file
        self.listener = listener
        self.cases = []
        self._marks = {}

    def startTest(self, test):  # noqa: N802 - unittest naming
        self._marks[test_id(test)] = time.perf_counter()
        if self.listener is not None:
            self.listener.start_test(test_id(test))
        super().startTest(test)

    def stopTest(self, test):  # noqa: N802 - unittest naming
        super().stopTest(test)
        if self.listener is not None:
            self.listener.stop_test(test_id(test))

    def _seconds(self, key):
        """Seconds since the test started or since its previous subtest ended."""
        now = time.perf_counter()
        mark = self._marks.get(key)
        self._marks[key] = now
        return None if mark is None else round(now - mark, 4)

    def _record(self, test, outcome, detail=None):
        """Keep ``test``'s case; ``detail`` is what unittest passed with the outcome (err or skip reason)."""
        parent = getattr(test, "test_case", None)  # a unittest _SubTest
        key = test_id(parent if parent is not None else test)
        err = detail if outcome in (Outcome.FAILED, Outcome.ERROR, Outcome.EXPECTED_FAILURE) else None
        reason = {Outcome.SKIPPED: detail, Outcome.UNEXPECTED_SUCCESS: UNEXPECTED_SUCCESS_REASON}.get(outcome)
        case = Case(file=self.file, id=key, outcome=outcome,
                    subtest=test._subDescription() if parent is not None else None,
                    reason=str(reason) if reason else (summary(err) if err is not None else None),
                    details=self._exc_info_to_string(err, parent or test) if err is not None else None,
                    duration_s=self._seconds(key))
        if parent is None and outcome is Outcome.PASSED and any(c.id == key for c in self.cases):
            return  # a test whose subtests all passed: its cases say so already
        for index, existing in enumerate(self.cases):
            # a failing cleanup (the state guard) reported after "passed": the later outcome wins
            if parent is None and existing.name == key and existing.outcome is Outcome.PASSED:
                self.cases[index] = replace(case, duration_s=existing.duration_s)
                return
        self.cases.append(case)

    def addSubTest(self, test, subtest, err):  # noqa: N802 - unittest naming
        super().addSubTest(test, subtest, err)
        if err is None:
            self._record(subtest, Outcome.PASSED)
        else:
            self._record(subtest, Outcome.FAILED if issubclass(err[0], test.failureException) else Outcome.ERROR, err)


def _recording_hook(name, outcome):
    """``CaseRecorder.<name>``: unittest's own handling of the outcome, then the case recorded."""
    def hook(self, test, *detail):
        getattr(super(CaseRecorder, self), name)(test, *detail)
        self._record(test, outcome, *detail)
    hook.__name__ = hook.__qualname__ = name
    return hook


# unittest's hook per outcome (addSubTest, above, reports subtests of every outcome)
UNITTEST_HOOKS = {"addSuccess": Outcome.PASSED, "addFailure": Outcome.FAILED, "addError": Outcome.ERROR,
                  "addSkip": Outcome.SKIPPED, "addExpectedFailure": Outcome.EXPECTED_FAILURE,
                  "addUnexpectedSuccess": Outcome.UNEXPECTED_SUCCESS}
for _name, _outcome in UNITTEST_HOOKS.items():
    setattr(CaseRecorder, _name, _recording_hook(_name, _outcome))


def recorder_class(file="", listener=None):
    """A ``resultclass`` for ``unittest.TextTestRunner`` that records into a :class:`CaseRecorder`."""
    def make(stream, descriptions, verbosity, **kwargs):
        return CaseRecorder(stream, descriptions, verbosity, file=file, listener=listener, **kwargs)
    return make


def import_error_case(file, err):
    """The one case of a file that could not be imported: ``<import>``, an error with the traceback."""
    details = "".join(traceback.format_exception(*err))
    return Case(file=file, id="<import>", outcome=Outcome.ERROR, reason=summary(err), details=details)


def run_tests(tests, file, stream, listener=None):
    """Run a loaded unittest suite verbosely into ``stream``; return its cases."""
    runner = unittest.TextTestRunner(stream=stream, verbosity=2, resultclass=recorder_class(file, listener))
    return runner.run(tests).cases


def sha256_of_bytes(data):
    """The SHA-256 of bytes about to be written (export's plan): the same digest :func:`sha256_of` gives the file."""
    return hashlib.sha256(data).hexdigest()


def sha256_of(path):
    """The SHA-256 of a test file's bytes (as ``sha256sum`` prints it): recorded with its results, so a
    reader can tell results of other bytes (stale results)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 16), b""):
            digest.update(block)
    return digest.hexdigest()
