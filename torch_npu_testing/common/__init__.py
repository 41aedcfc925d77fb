# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Plumbing the tools share, each idea once: the one table (:mod:`.table`), git (:mod:`.gitutil`), the
results model (:mod:`.results`), atomic writes (:mod:`.atomic`) and the repository layout (:mod:`.layout`:
test globs, folders). Version parsing and dotted-name lookup are the runtime's
(:mod:`torch_npu_testing.runtime.carried`), which the tools import; the runtime imports none of this.
"""
