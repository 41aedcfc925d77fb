# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Tools that run the API test files in an env and record what happened.

- :mod:`.run`: ``suite``, every test file in one process, results JSON (+ JUnit XML);
- :mod:`.api_calls`: which target API each test really calls (``--api-calls``);
- :mod:`.coverage`: which lines and branches of each API's torch code its tests reach (on by default);
- :mod:`.probe`: the environment (python, torch, torch_npu, CANN, device);
- :mod:`.grad_modes`: rerun files under both initial grad modes;
- :mod:`.torch_npu_install`: ``ensure-torch-npu`` for the branch envs;
- :mod:`.bench`: suite / direct / tox cost as ratios to the import floor.
"""
