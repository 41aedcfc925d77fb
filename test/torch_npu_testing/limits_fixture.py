# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""A docs tree in the shape of Ascend's native-API docs, written for the ``limits`` tests: one entry per note
shape (an 'only' list on the colon's line and as bullets, product-scoped lists, exclusions, a product's
extra dtypes, memory formats, conditions and code kept as text), an API marked ✘ and a method entry."""
from ascend_fixture import git, write

DOCS = "docs/zh/api/native_api"

TABLE = """| 硬件 | 是否支持 |
| ---- | :----: |
| <term>Atlas A2 训练系列产品</term> | {a2} |
| <term>Atlas A3 训练系列产品</term> | {a3} |
| <term>Ascend 950DT</term> | {dt} |
"""


def entry(title, note="", a2="✔", a3="✔", dt="✔"):
    name = title.split()[-1].split(">")[-1].replace("()", "")
    text = (f"{title}\n\n<div style=\"margin-left: 2em\">\n\n**原生文档**：[{name}](https://pytorch.org/docs/2.13/"
            f"generated/{name}.html)\n\n**支持情况**：\n\n" + TABLE.format(a2=a2, a3=a3, dt=dt) + "\n")
    if note:
        text += f"**限制与说明**：{note}\n\n"
    return text + "</div>\n\n"


TORCH = "# torch\n\n## Math operations\n\n" + "".join([
    entry("### torch.mul", " `input`仅支持bf16，fp16，fp32，uint8，int8，int16，int32，int64，bool，complex64，complex128"),
    entry("### torch.logaddexp", "\n\n不支持double数据类型"),
    entry("### torch.acos", "\n\n- `input`仅支持fp16，fp32\n- <term>Atlas A3 训练系列产品</term>额外支持bf16"),
    entry("### torch.nansum", "\n\n- `input`仅支持fp16，fp32，int32\n- <term>Ascend 950DT</term>：不支持int32"),
    entry("### torch.dist", "\n\n- <term>Atlas A2 训练系列产品</term>、<term>Atlas A3 训练系列产品</term>：`self`仅支持"
                            "bf16，fp16，fp32，fp64\n- <term>Atlas 训练系列产品</term>：`self`仅支持fp16，fp32，fp64"),
    entry("### torch.pad", "\n\n- 属性`mode`为constant时，`input`仅支持fp16，fp32\n- 可能回退至CPU执行\n\n```python\n"
                           "x = torch.ones(2, device='npu')\n```"),
    entry("### torch.special_op", a2="✘", a3="✔", dt="✘"),
    entry("### torch.add", "\n\n- `input`、`other`仅支持fp16，fp32，不支持fp64数据类型"),
    entry("### <code><i>class</i></code> torch.Tensor"),
    entry('> <font size="3">to()</font>', "\n\n- `self`仅支持fp16，fp32\n- 当前NPU设备仅支持设置`memory_format`为"
                                          "torch.contiguous_format或torch.preserve_format"),
    entry('> <font size="3">copy_()</font>', "\n\n- `self`仅支持fp16，fp32，fp64\n- int16不支持5维以上"),
])

OLD = "# torch\n\n" + entry("### torch.mul", " `input`仅支持fp16，fp32")


def make_docs_repo(root):
    """An Ascend-shaped checkout at ``root``: master with 2.7.1 and 2.13.0 docs folders."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "master")
    write(root, "torch_npu/__init__.py", "")
    write(root, "test/npu/test_x.py", "")
    write(root, f"{DOCS}/pytorch_2-13-0/torch.md", TORCH)
    write(root, f"{DOCS}/pytorch_2-13-0/overview.md", "# overview\n\n> - 说明\n")
    write(root, f"{DOCS}/pytorch_2-7-1/torch.md", OLD)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "docs")
    return root
