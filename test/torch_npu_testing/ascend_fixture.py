# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Small fake Ascend/pytorch git repositories for the task-command tests (search, docs).

``make_ascend(root)`` builds a repository with two branches: ``master`` (version.txt lists 2.13.0 and
2.14.0, the native-API docs tree with ``pytorch_2-7-1``, ``pytorch_2-13-0`` and ``private_apis.md``) and
``v2.7.1`` (version.txt ``2.7.1.post9``). Its test files call
``torch.autograd.grad_mode.set_grad_enabled.clone`` in every form the search must recognise; the
``v2.7.1`` branch lacks some of them; ``test/npu/test_switches.py`` calls only the owner and a sibling
(``set_grad_enabled``, ``no_grad``) and never names ``clone``; ``test/test_autograd.py`` is an upstream-style
file that uses ``no_grad`` in one of three tests. The work tree is left on master, clean.

``clone_of(root, dest)`` makes a normal ``git clone`` of it: only master is local, ``origin/v2.7.1`` remote.
"""
import subprocess
import textwrap

API = "torch.autograd.grad_mode.set_grad_enabled.clone"

TESTS_V271 = textwrap.dedent('''\
    import torch
    from torch.autograd import grad_mode
    from torch import set_grad_enabled as sge


    class TestGradModeClone:
        def test_chained(self):
            torch.set_grad_enabled(False).clone()

        def test_alias_module(self):
            grad_mode.set_grad_enabled(True).clone()

        def test_owner_only(self):
            with torch.set_grad_enabled(True):
                pass

        def test_unrelated(self):
            torch.ones(2).clone()
    ''')

TESTS_MASTER = TESTS_V271 + textwrap.dedent('''\

        def test_instance(self):
            x = torch.set_grad_enabled(True)
            x.clone()

        def test_as_name(self):
            sge(False).clone()

        def test_named_only(self):
            fn = torch.autograd.grad_mode.set_grad_enabled.clone
            return fn


    def test_module_level():
        torch.autograd.grad_mode.set_grad_enabled.clone(torch.set_grad_enabled(True))
    ''')

# The grad-mode file where new clone tests belong: it never names ``clone``, its tests are about the family.
SWITCHES = textwrap.dedent('''\
    import torch


    class TestSwitches:
        def test_no_grad(self):
            with torch.no_grad():
                pass

        def test_set_grad_enabled(self):
            with torch.set_grad_enabled(False):
                pass
    ''')

# An upstream-style file: many tests, one of them uses no_grad in passing.
UPSTREAM = textwrap.dedent('''\
    import torch


    class TestAutograd:
        def test_sum(self):
            with torch.no_grad():
                torch.ones(1).sum()

        def test_mul(self):
            torch.ones(1).mul(2)

        def test_add(self):
            torch.ones(1).add(2)
    ''')

PAGE = '''\
# torch

## Locally disabling gradient computation

### {tag}torch.autograd.grad_mode.set_grad_enabled

<div style="margin-left: 2em">

**原生文档**：[torch.autograd.grad_mode.set_grad_enabled](https://pytorch.org/docs/{mm}/generated/torch.autograd.grad_mode.set_grad_enabled.html)

**支持情况**：

| 硬件 | 是否支持 |
| ---- | :----: |
| <term>Atlas A2 训练系列产品</term> | ✔ |
| <term>Ascend 950DT</term> | ✘ |
{method}
</div>

### torch.is_grad_enabled

<div style="margin-left: 2em">

**原生文档**：[torch.is_grad_enabled](https://pytorch.org/docs/{mm}/generated/torch.is_grad_enabled.html)

**支持情况**：

| 硬件 | 是否支持 |
| ---- | :----: |
| <term>Atlas A2 训练系列产品</term> | ✔ |
| <term>Ascend 950DT</term> | ✔ |

</div>
'''

METHOD = '''
> <font size="3">clone()</font>

<div style="margin-left: 2em">

**原生文档**：[torch.autograd.grad_mode.set_grad_enabled.clone](https://pytorch.org/docs/{mm}/generated/torch.autograd.grad_mode.set_grad_enabled.html#torch.autograd.grad_mode.set_grad_enabled.clone)

**支持情况**：

| 硬件 | 是否支持 |
| ---- | :----: |
| <term>Atlas A2 训练系列产品</term> | ✔ |
| <term>Ascend 950DT</term> | ✘ |

</div>
'''

PRIVATE = '''\
# Private APIs

## torch

|API名称|是否支持|限制与说明|
|--|--|--|
|torch._foreach_pow|是|支持bf16|
|torch.\\_foreach\\_tanh\\_|是|支持fp32|

## torch.cuda

|API名称|NPU形式名称|是否支持|限制与说明|
|--|--|--|--|
|torch.cuda.host_memory_stats_as_nested_dict|torch_npu.npu.host_memory_stats_as_nested_dict|是|-|
'''


# A PR template in the shape of Ascend's (sections, hints, checkboxes), written for these tests.
TEMPLATE = """<!--
PR描述模板更新日期：20260203
-->

# 【合入来源】
> hint: link the issue

- [ ] 需求
- [ ] issue/工单
- [ ] 资料更新

# 【修改方案】
> hint: what changes

# 【资料变更】
> hint: docs

# 【接口变更】
> hint: interfaces

# 【功能验证】
> hint: how it was tested

# 【CheckList】
> hint: tick what passed or does not apply

- [ ] 代码注释完备，正确记录错误日志
- [ ] 代码实现进行了返回值、空指针等校验
- [ ] PR标题正确使用类型标签，如：feat、fix、refactor、docs、test等
- [ ] PR持续集成流水线（CI）执行通过，代码检查无异常
"""


def git(root, *args):
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root, check=True,
                   capture_output=True)


def write(root, rel, text):
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def make_ascend(root):
    """The fake checkout at ``root`` (created); returns ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "v2.7.1")
    write(root, "setup.py", "name = 'torch_npu'\n")
    write(root, "torch_npu/__init__.py", "")
    write(root, "version.txt", "2.7.1.post9\n")
    write(root, "test/npu/test_grad.py", TESTS_V271)
    write(root, "test/npu/test_broken.py", "def test_x(:\n    set_grad_enabled clone\n")
    write(root, "test/npu/test_switches.py", SWITCHES)
    write(root, "test/test_autograd.py", UPSTREAM)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "v2.7.1")
    git(root, "checkout", "-q", "-b", "master")
    write(root, "version.txt", "# comment 2.0.0\n2.14.0\n2.13.0\n")
    write(root, "test/npu/test_grad.py", TESTS_MASTER)
    docs = "docs/zh/api/native_api"
    write(root, f"{docs}/pytorch_2-7-1/torch.md", PAGE.format(tag="", mm="2.7", method=""))
    write(root, f"{docs}/pytorch_2-13-0/torch.md",
          PAGE.format(tag="<code><i>class</i></code> ", mm="2.13", method=METHOD.format(mm="2.13")))
    write(root, f"{docs}/private_apis.md", PRIVATE)
    write(root, ".gitcode/PULL_REQUEST_TEMPLATE.md", TEMPLATE)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "master")
    return root


def clone_of(root, dest):
    """A normal clone of ``root`` at ``dest`` (master local, the other branches ``origin/*``)."""
    subprocess.run(["git", "clone", "-q", str(root), str(dest)], check=True, capture_output=True)
    return dest
