# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""The helpers every exported test file carries, written here in exactly the form that is exported.

``export`` copies definitions from these modules (and from :mod:`torch_npu_testing.portable`) into each
Ascend/pytorch file it writes, by AST, so the exported code is this code: linted, unit-tested and used
by the kit's own runs (:mod:`torch_npu_testing.device` and :mod:`torch_npu_testing.testcase` build on it).

Rules for these modules, which :mod:`torch_npu_testing.export.inline` relies on:

- only the standard library, ``torch`` and (imported inside a function) ``torch_npu``;
- no mention of this kit's name (an exported file must not name it);
- a relative import names another carried definition: ``from ..portable import X`` is inlined from
  portable.py, and ``from ..device import device_type`` (the kit's twin, which also honours the kit's
  own override variable) is inlined as :func:`torch_npu_testing.carried.device.device_type`.

- :mod:`.device`: which device the tests run on (override variable ``API_CONSISTENCY_DEVICE``, then an
  NPU, then another available accelerator, then the CPU);
- :mod:`.testcase`: ``TestCase`` (the device's base TestCase with the state guard and the portable
  assertions) and ``run_tests``.
"""
