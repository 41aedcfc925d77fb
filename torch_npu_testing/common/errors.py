# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Errors shared by the command-line tools."""


class UsageError(Exception):
    """A problem the user can fix (bad path, unknown name, dirty checkout...).

    The CLI prints it as a single line and exits 2; nothing has been changed when it is raised.
    """
