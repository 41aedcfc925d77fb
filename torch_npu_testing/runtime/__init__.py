# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""The runtime helper: everything a test file imports when it runs, and nothing of the tools.

- :mod:`.carried` (device choice, version gates, dotted-name lookup, a thread runner; no torch at import)
  and :mod:`.carried_testcase` (the device's TestCase with strict checks, ``run_tests``): the two blocks
  that ``export`` copies into each Ascend file (together under 150 lines);
- :mod:`.guard`: the global-state guard of the kit's own runs;
- :mod:`.testcase`: the kit's TestCase (carried + guard + portable-use checks) and run_tests (JUnit XML
  under ``IN_CI=1``, a chosen initial grad mode, the collector frozen as the tests start);
- :mod:`.collector`: that freeze (``gc.freeze``; the suite calls it too), not carried.

Self-contained: it imports the standard library, torch and torch_npu only, never a tool module
(a unit test checks this). The tools import it, never the reverse.
"""
