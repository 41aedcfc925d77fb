# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Fit the description into a PR body: at most :data:`LIMIT` characters (Python ``len``), never silently.

GitHub-style forges cap a body at 65,536 characters; Ascend's descriptions are 12,000-18,000. The full
evidence is the attachment, so the description may shorten its longest parts, in this order, until it
fits: the test plan's docstrings cut to 60 characters; the log per class, then per file (failures still
one by one); tracebacks cut to 30, then 10 lines; the test plan without docstrings; tracebacks left out;
related-test lists cut to 5 per API; the device gaps table cut to 10 rows; the test plan per class;
finally the log itself is cut at a line, saying so. Every step taken is listed at the top of the
description and in the facts (``shortened``).
"""
LIMIT = 60000
STEPS = (
    ({"plan_level": "short"}, "the test plan's docstrings cut to 60 characters"),
    ({"log_level": "classes"}, "the test log per test class (failures still one by one)"),
    ({"log_level": "files"}, "the test log per file (failures still one by one)"),
    ({"max_trace": 30}, "tracebacks cut to their last 30 lines"),
    ({"max_trace": 10}, "tracebacks cut to their last 10 lines"),
    ({"plan_level": "names"}, "the test plan without docstrings"),
    ({"max_trace": 0}, "tracebacks left out (failures listed with their reason)"),
    ({"max_hits": 5}, "related tests cut to 5 per API"),
    ({"max_gaps": 10}, "the device gaps table cut to 10 rows (every gap is in the attachment)"),
    ({"plan_level": "classes"}, "the test plan per test class"),
)
LOG_START, LOG_END = "<!-- log: start -->", "<!-- log: end -->"
NOTE = ("> ⚠ 日志在此截断 / the log is cut here to fit a PR body ({cut} lines left out): the full log is in the "
        "attached evidence file.")


def hard_cut(text, limit):
    """Cut the log (between :data:`LOG_START` and :data:`LOG_END`) at a line so the text fits, with a line
    saying so; when even no log is too long, cut the end of the text, with a mark."""
    start, end = text.find(LOG_START), text.find(LOG_END)
    if start != -1 and end > start:
        head, log, tail = text[:start], text[start:end].split("\n"), text[end:]
        room = limit - len(head) - len(tail) - len(NOTE) - 20
        kept, size = [], 0
        for line in log:
            if size + len(line) + 1 > room:
                break
            kept.append(line)
            size += len(line) + 1
        if room > 0:
            return head + "\n".join(kept) + "\n\n" + NOTE.format(cut=len(log) - len(kept)) + "\n\n" + tail
    mark = "\n\n> ⚠ 截断 / cut here at the PR body limit: the rest is in the attached evidence file.\n"
    return text[:limit - len(mark)] + mark


def fit(render, limit=None):
    """``(text, shortened)``: ``render(options)`` with as few STEPS applied as make it fit (``limit``: LIMIT)."""
    limit = limit or LIMIT
    options, shortened = {"shortened": []}, []
    text = render(options)
    for change, said in STEPS:
        if len(text) <= limit:
            return text, shortened
        shortened.append(said)
        options = dict(options, **change, shortened=list(shortened))
        text = render(options)
    if len(text) <= limit:
        return text, shortened
    shortened.append("the log cut at a line (see the mark)")
    options["shortened"] = list(shortened)
    return hard_cut(render(options), limit), shortened
