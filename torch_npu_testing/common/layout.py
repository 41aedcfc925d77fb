# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Where things are, in the kit and in an Ascend/pytorch checkout: the one place for paths and globs.

- ``TEST_GLOBS``: the API test files the suite runs by default (relative to the kit's root);
- ``GRAD_MODE_FILES``: files whose contract includes both initial grad modes (the grad-modes runner);
- ``PUBLIC_NAMES``: what a test file may import from the kit, the one import line that export replaces;
- ``KIT_IMPORT_MODULE``: the package a test file imports those names from.
"""
TEST_GLOBS = ("test/functorch/*_api.py", "test/npu/test_*.py")
GRAD_MODE_FILES = ("test/npu/test_locally_disabling_gradient_omputation.py",)
KIT_IMPORT_MODULE = "torch_npu_testing"
PUBLIC_NAMES = ("TestCase", "run_tests", "device_type", "requires_api", "torch_version_at_least", "find_api",
                "run_in_thread")
