# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""``verify BRANCH DEST``: run every test file export wrote into DEST, whole, the way Ascend CI runs it.

    python -m torch_npu_testing verify BRANCH DEST [--env ENV ...|--python PY ...] [--stand-in-npu[=available]]
                                                   [--out DIR] [--kit DIR]

The evidence of a PR is of the bytes submitted: DEST's files (theirs and the kit's tests together, after
their module-level set-up, under their ``run_tests()``), DEST's HEAD commit, each file's SHA-256. The
stages, one module each:

- :mod:`.targets`: the files export writes (the one table), read from DEST; :mod:`.interpreters`: which
  pythons; :mod:`.standin`: the stand-in torch_npu of ``--stand-in-npu``;
- :mod:`.command`: ``run_test.py -v -i`` where it starts, else the file directly; :mod:`.runfile`: one run,
  outcomes from :mod:`.junit`, judged by :mod:`.classify`; :mod:`.gradprobe`: the grad-mode probe;
  :mod:`.envprobe`: the env probe;
- :mod:`.record`: ``verify-BRANCH[--API].json`` (the staleness check pr and export use is
  :mod:`torch_npu_testing.common.stale`);
  :mod:`.cli`: options and order.
"""
from .cli import add_arguments, main  # noqa: F401
