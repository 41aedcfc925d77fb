# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""``mutate``: how strong an API-consistency test file is against generic port faults of its API.

A port breaks an API at its boundary (a parameter ignored, a result in the wrong dtype, a context manager
that does not restore), so each mutant wraps the target API at its boundary, one fault at a time, and the
file's tests run against it in a forked child (:mod:`.runner`). Modules, in the order a run uses them:

- :mod:`.targets`: resolve an API by dotted name, its kind, and replace it wherever a test can reach it;
- :mod:`.scope`: which calls a fault acts on (the test's own, looked through torch's forwarding frames);
- :mod:`.tensors`, :mod:`.faults`, :mod:`.returned`, :mod:`.catalogue`: the generic faults, by API kind;
- :mod:`.child`: one run of the file's tests under one mutant (forked, or in a fresh process);
- :mod:`.runner`: the baseline and the mutants, ``--jobs`` at a time, with timeouts and progress lines;
- :mod:`.score`, :mod:`.output`: honest counting, the strength lines, the table and the JSON;
- :mod:`.cli`: the command line.
"""
