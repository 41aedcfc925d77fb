# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""test_upstream: patches that adapt upstream PyTorch test files to the resolved test device.

Patches live in ``test_upstream/<base>/<upstream path>.patch``, one per upstream base of a file
(``v2.12``: exported to Ascend's v2.12.0/v2.11.0; ``0099ec9``: the kit's own runs on torch 2.13/2.14).
The upstream files never enter this repository. The tooling reads them from a PyTorch checkout the
user names (``--source DIR`` or ``$PYTORCH_SRC``), derives a base no source holds (:mod:`.derive`: the
real v2.12.0 file from a 0099ec9 one, by dropped tests and :mod:`.edits`), verifies the base each patch
was made against by its git blob (the full id recorded in ``test_upstream/manifest.json``, or its prefix
in the patch's ``index`` line),
checks every patch before touching anything, applies patches in scratch copies (``git apply``, never
``patch -f``), and reports per-test results against the manifest's expected failures.

Modules: :mod:`.source` (the checkout), :mod:`.patches` (patch files), :mod:`.manifest` (also
``exported_patches`` for export), :mod:`.derive` (bases), :mod:`.scratch` (check + scratch copies),
:mod:`.inplace` (apply/revert), :mod:`.refresh`, :mod:`.superset`, :mod:`.torches` (interpreters per
torch), :mod:`.runner` + :mod:`.driver` (running), :mod:`.basefacts` (the base line of a PR's upstream
log), :mod:`.cli`. The user-facing page is ``docs/upstream.md``.
"""
