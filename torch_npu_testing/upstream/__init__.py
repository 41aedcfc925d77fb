# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""test_upstream: patches that adapt upstream PyTorch test files to the resolved test device.

The upstream files never enter this repository. The tooling reads them from a PyTorch checkout the
user names (``--source DIR`` or ``$PYTORCH_SRC``), verifies the base each patch was made against
(the blob id in the patch's ``index`` line, also recorded in ``test_upstream/manifest.json``),
checks every patch before touching anything, applies patches in scratch copies (``git apply``, never
``patch -f``), and reports per-test results against the manifest's expected failures.

Modules: :mod:`.source` (the checkout), :mod:`.patches` (patch files), :mod:`.manifest`,
:mod:`.gitutil` (git, confined), :mod:`.scratch` (check + scratch copies), :mod:`.inplace`
(apply/revert), :mod:`.refresh`, :mod:`.runner` + :mod:`.driver` (running), :mod:`.cli`.
"""
