# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""``upstream superset``: the kit's patch keeps every adaptation of another patch of the same file.

The fixture is written here in the shape of the patch Ascend merged for test_aot_joint_with_descriptors.py
(a module-level ``device_type`` from ``torch.accelerator.current_accelerator()``, ``requires_cuda``
dropped from the imports and from the one CUDA test, models and inputs moved to ``device_type``); the
kit-shaped patch resolves ``device_type`` its own way, skips that test on cpu only and moves one more
tensor. Patches are made with real ``git diff``; the CLI runs in a subprocess.
"""
import os
import subprocess
import sys
import textwrap

import pytest

from test_upstream_support import make_patch_text
from torch_npu_testing.common.errors import UsageError
from torch_npu_testing.upstream import superset

TARGET = "test/functorch/test_shape.py"
BASE = textwrap.dedent('''\
    import torch
    from torch.testing._internal.common_utils import (
        requires_cuda,
        run_tests,
        TestCase,
    )


    class TestShape(TestCase):
        def test_linear(self):
            model = torch.nn.Linear(3, 2)
            inputs = (torch.randn(4, 3),)
            self.assertEqual(model(*inputs).shape, (4, 2))

        def test_kwargs(self):
            scale = torch.tensor(2.0)
            self.assertEqual(scale * 2, torch.tensor(4.0))

        @requires_cuda
        def test_cuda_only(self):
            device = "cuda"
            x = torch.ones(2, device=device)
            self.assertEqual(x.sum().item(), 2.0)

        def test_far(self):
            a, b, c = 1, 2, 3
            d, e, f = 4, 5, 6
            self.assertEqual(a + b + c + d + e + f, 21)
            x = torch.zeros(2)
            self.assertEqual(x.sum().item(), 0.0)


    if __name__ == "__main__":
        run_tests()
    ''')
MERGED_SHAPE = (BASE
                .replace("    requires_cuda,\n", "")
                .replace("    TestCase,\n)\n", "    TestCase,\n)\n\n\ndevice_type = (\n"
                         "    acc.type if (acc := torch.accelerator.current_accelerator()) else \"cpu\"\n)\n")
                .replace("torch.nn.Linear(3, 2)", "torch.nn.Linear(3, 2).to(device_type)")
                .replace("torch.randn(4, 3)", "torch.randn(4, 3, device=device_type)")
                .replace("    @requires_cuda\n", "")
                .replace('device = "cuda"', "device = device_type"))
MERGED_DEVICE = "device_type = (\n    acc.type if (acc := torch.accelerator.current_accelerator()) else \"cpu\"\n)\n"
KIT_SHAPE = (MERGED_SHAPE
             .replace(MERGED_DEVICE, "def _resolve():\n    return \"cpu\"\n\n\ndevice_type = _resolve()\n")
             .replace("    def test_cuda_only", "    @unittest.skipIf(device_type == \"cpu\", \"no cpu backward\")\n"
                      "    def test_cuda_only"))


def patch_of(tmp_path, name, new):
    return make_patch_text(tmp_path / name, TARGET, BASE, new)


def test_kit_shaped_patch_is_a_superset_of_the_merged_shaped_one(tmp_path):
    report = superset.compare(BASE, patch_of(tmp_path, "m", MERGED_SHAPE), patch_of(tmp_path, "k", KIT_SHAPE))
    assert report.ok, report.lines()
    assert report.lines()[-1] == "superset: yes"
    assert any("<module>: " in item for item in report.additions)
    assert any("test_cuda_only: decorator @unittest.skipIf" in item or "test_cuda_only: decorator unittest.skipIf"
               in item for item in report.additions)


def test_a_patch_is_a_superset_of_itself_and_the_merged_one_is_not_of_the_kit_one(tmp_path):
    merged, kit = patch_of(tmp_path, "m", MERGED_SHAPE), patch_of(tmp_path, "k", KIT_SHAPE)
    assert superset.compare(BASE, merged, merged).ok
    assert not superset.compare(BASE, kit, merged).ok  # the merged one lacks the kit's resolver


@pytest.mark.parametrize("broken, expected", [
    (KIT_SHAPE.replace("torch.randn(4, 3, device=device_type)", "torch.randn(4, 3)"),
     "ours keeps it"),
    (KIT_SHAPE.replace('device == "cpu"', "x").replace('skipIf(device_type == "cpu"', 'skipIf(device_type == "npu"'),
     "test_cuda_only: runs on npu with the other patch; ours skips it there"),
    (KIT_SHAPE.replace('@unittest.skipIf(device_type == "cpu", "no cpu backward")', "@unittest.skip(\"flaky\")"),
     "ours skips it there"),
    (KIT_SHAPE.replace('@unittest.skipIf(device_type == "cpu", "no cpu backward")', "@skipIfSomething"),
     "ours skips it there"),
    (KIT_SHAPE.replace("    def test_kwargs(self):", "    def _kwargs(self):"),
     "test_kwargs: in the other patched file, not in ours"),
])
def test_missing_adaptations_and_new_skips_are_reported(tmp_path, broken, expected):
    report = superset.compare(BASE, patch_of(tmp_path, "m", MERGED_SHAPE), patch_of(tmp_path, "k", broken))
    assert not report.ok
    assert any(expected in problem for problem in report.problems), report.problems


def test_hunks_on_lines_the_other_patch_does_not_confirm_are_listed(tmp_path):
    merged = patch_of(tmp_path, "m", MERGED_SHAPE)
    assert superset.compare(BASE, merged, patch_of(tmp_path, "k", KIT_SHAPE)).unconfirmed == []
    wider = KIT_SHAPE.replace("x = torch.zeros(2)", "x = torch.zeros(2, device=device_type)")
    report = superset.compare(BASE, merged, patch_of(tmp_path, "w", wider))
    assert report.ok and len(report.unconfirmed) == 1 and "base lines" in report.unconfirmed[0]


def test_a_patch_that_does_not_fit_the_base_is_an_error(tmp_path):
    other_base = BASE.replace("model = torch.nn.Linear(3, 2)", "model = torch.nn.Linear(3, 5)")
    with pytest.raises(UsageError, match="does not apply to the base"):
        superset.compare(other_base, patch_of(tmp_path, "m", MERGED_SHAPE), patch_of(tmp_path, "k", KIT_SHAPE))
    with pytest.raises(UsageError, match="has no hunks"):
        superset.compare(BASE, "not a patch\n", patch_of(tmp_path, "k", KIT_SHAPE))


def test_superset_command_exit_status(tmp_path):
    import json
    source = tmp_path / "pytorch"
    (source / TARGET).parent.mkdir(parents=True)
    (source / "version.txt").write_text("9.0\n")
    (source / TARGET).write_text(BASE)
    patches_dir = tmp_path / "test_upstream"
    (patches_dir / "v9" / TARGET).parent.mkdir(parents=True)
    (patches_dir / "v9" / (TARGET + ".patch")).write_text(patch_of(tmp_path, "k", KIT_SHAPE))
    (patches_dir / "manifest.json").write_text(json.dumps({"format": 1, "patches": {}}))
    merged = tmp_path / "merged.patch"
    merged.write_text(patch_of(tmp_path, "m", MERGED_SHAPE))
    env = {key: value for key, value in os.environ.items() if key != "PYTORCH_SRC"}

    def run(*extra):
        return subprocess.run([sys.executable, "-m", "torch_npu_testing", "upstream", "superset", "--source",
                               str(source), "--patches", str(patches_dir), *map(str, extra)], capture_output=True,
                              text=True, env=env, timeout=120, check=False)

    ok = run("--other", merged)
    assert ok.returncode == 0 and ok.stdout.rstrip().endswith("superset: yes"), ok.stdout + ok.stderr
    on_cpu = run("--other", merged, "--device", "cpu")  # the kit's patch skips test_cuda_only on cpu
    assert on_cpu.returncode == 1 and "test_cuda_only: runs on cpu with the other patch" in on_cpu.stdout
    missing = run("--other", tmp_path / "nowhere.patch")
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1
