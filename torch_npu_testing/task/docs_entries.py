# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""The entries ``docs`` proposes for a missing API, in the form of their neighbours on the page.

A method entry goes at the end of its class's block, a heading after the block of the closest heading, a
private API as a row of the private table; links and hardware rows are copied from the neighbour, the
support values left as ``TODO(✔/✘)`` (see :mod:`torch_npu_testing.task.docs`).
"""
import re

from ..common.errors import UsageError

CLASS_TAG = "<code><i>class</i></code> "
TODO_MARK = "TODO(✔/✘)"


def escape_name(name):
    return name.replace("_", "\\_") if name.startswith("_") else name


# --------------------------------------------------------------------------- building entries
def support_block(link_text, url, rows):
    lines = ["<div style=\"margin-left: 2em\">", "", f"**原生文档**：[{link_text}]({url})", "", "**支持情况**：", "",
             "| 硬件 | 是否支持 |", "| ---- | :----: |"]
    lines += [f"| {row} | {TODO_MARK} |" for row in rows] + [""]
    return lines


def replace_name(link, old, new):
    text, url = link
    old_last, new_last = old.rsplit(".", 1)[-1], new.rsplit(".", 1)[-1]
    pattern = re.compile(r"(?<![A-Za-z0-9_])" + re.escape(old) + r"(?![A-Za-z0-9_])")
    if pattern.search(url):
        return pattern.sub(new, text), pattern.sub(new, url)
    pattern = re.compile(r"(?<=\.)" + re.escape(old_last) + r"(?![A-Za-z0-9_])")
    if pattern.search(url):
        return pattern.sub(new_last, text), pattern.sub(new_last, url)
    return None


def method_entry(page, class_index, api, kind):
    """(insert_before_index, lines) for a method/attribute entry at the end of the class block."""
    end = page.block_end(class_index)
    closing = max([i for i in range(class_index, end) if page.lines[i].strip() == "</div>"], default=end)
    parent = api.rsplit(".", 1)[0]
    siblings = [(index, name) for name, index in page.entries.items()
                if name.startswith(parent + ".") and class_index < index < end]
    link = None
    rows = page.hardware_rows(class_index)
    if siblings:
        index, name = siblings[-1]
        found = page.link_after(index)
        link = found and replace_name(found, name, api)
        rows = page.hardware_rows(index) or rows
    if not link:
        text, url = page.link_after(class_index) or (parent, "")
        link = (api, f"{url.split('#')[0]}#{api}")
    last = escape_name(api.rsplit(".", 1)[-1])
    label = last if kind == "attribute" else f"{last}()"
    lines = [f'> <font size="3">{label}</font>', ""] + support_block(link[0], link[1], rows) + ["</div>", ""]
    return closing, lines


def heading_entry(page, anchor_index, anchor_name, api, kind, version):
    level = page.level(anchor_index)
    found = page.link_after(anchor_index)
    link = found and replace_name(found, anchor_name, api)
    if not link:
        site = found and re.match(r"https?://[^/]+/docs/[^/]+/", found[1])
        base = site.group(0) if site else f"https://pytorch.org/docs/{'.'.join(version.split('.')[:2])}/"
        link = (api, f"{base}generated/{api}.html")
    tag = CLASS_TAG if kind == "class" and any(is_class for _, _, _, is_class in page.headings) else ""
    lines = [f"{'#' * level} {tag}{api}", ""] + support_block(link[0], link[1], page.hardware_rows(anchor_index))
    lines += ["</div>", ""]
    return page.block_end(anchor_index), lines


def private_entry(page, api):
    """(insert_before_index, lines) for a row of the private table section with the longest prefix."""
    best = None
    for index, level, name, _ in page.headings:
        if level == 2 and (api == name or api.startswith(name + ".")):
            if best is None or len(name) > len(best[1]):
                best = (index, name)
    if best is None:
        raise UsageError(f"{page.rel}: no '## torch...' section to hold {api}")
    end = page.block_end(best[0])
    rows = [i for i in range(best[0], end) if page.lines[i].startswith("|")]
    if not rows:
        raise UsageError(f"{page.rel}: section '## {best[1]}' has no table to add {api} to")
    header, last_row = rows[0], rows[-1]
    columns = [cell for cell in page.lines[header].strip().strip("|").split("|")]
    cells = [api] + [f"TODO({column.strip()})" for column in columns[1:]]
    return last_row + 1, ["|" + "|".join(cells) + "|"]
