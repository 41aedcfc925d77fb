# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Where things are, in the kit and in an Ascend/pytorch checkout: the one place for paths and globs.

- ``TABLE_REL``: the one table, relative to a kit checkout; its APIs' ``test_file`` entries are the API test
  files the suite and bench run by default (a new folder needs no code edit, only a table row);
- ``TEST_ROOT``, ``TEST_FILE_GLOB``, ``TOOL_TEST_DIRS``: where API test files live on disk and which folders
  of it hold the kit's own tests, so a file on disk that the table does not name can be pointed out;
- ``GRAD_MODE_FILES``: files whose contract includes both initial grad modes (the grad-modes runner);
- ``PUBLIC_NAMES``: what a test file may import from the kit, the one import line that export replaces;
- ``KIT_IMPORT_MODULE``: the package a test file imports those names from;
- ``KIT_HEADER``: the license header every kit test file starts with (new writes it, export checks it).
"""
TABLE_REL = "torch_npu_testing/common/table.json"
TEST_ROOT = "test"
TEST_FILE_GLOB = "test_*.py"
TOOL_TEST_DIRS = ("test/torch_npu_testing", "test/in_env")
GRAD_MODE_FILES = ("test/npu/test_locally_disabling_gradient_omputation.py",)
KIT_IMPORT_MODULE = "torch_npu_testing"
KIT_HEADER = ("# Copyright (c) 2026, torch_npu API-consistency kit contributors.\n"
              "# SPDX-License-Identifier: BSD-3-Clause\n")
PUBLIC_NAMES = ("TestCase", "run_tests", "device_type", "requires_api", "torch_version_at_least", "find_api",
                "run_in_thread", "skip_unless_vehicle", "vehicle_refusal", "api_limit")
