# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""test_upstream: patches that adapt upstream PyTorch test files to the resolved test device.

Patches live in ``test_upstream/<base>/<upstream path>.patch``, one per upstream base of a file
(``v2.12``: exported to Ascend's v2.12.0/v2.11.0; ``0099ec9``: the kit's own runs on torch 2.13/2.14).
The upstream files never enter this repository. The tooling reads them from a PyTorch checkout the
user names (``--source DIR`` or ``$PYTORCH_SRC``), derives a base no source holds (:mod:`.derive`),
verifies the base each patch was made against
(the blob id in the patch's ``index`` line, also recorded in ``test_upstream/manifest.json``),
checks every patch before touching anything, applies patches in scratch copies (``git apply``, never
``patch -f``), and reports per-test results against the manifest's expected failures.

Modules: :mod:`.source` (the checkout), :mod:`.patches` (patch files), :mod:`.manifest` (also
``exported_patches`` for export), :mod:`.derive` (bases), :mod:`.scratch` (check + scratch copies),
:mod:`.inplace` (apply/revert), :mod:`.refresh`, :mod:`.superset`, :mod:`.torches` (interpreters per
torch), :mod:`.runner` + :mod:`.driver` (running), :mod:`.cli`.
"""
