# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""``python -m torch_npu._device``: build (or find) the simulated NPU for this torch; print its path."""
import sys

from . import main

sys.exit(main())
