# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""``limits``: what Ascend's NPU documents it allows, per API, for one torch version and one product.

    python -m torch_npu_testing limits --ascend DIR [--ref REF] [--torch X.Y[.Z]] [--product NAME] [--out PATH]

The native-API docs (read through git at ``--ref``, default master, by :mod:`.docs_reader`) have one folder per
documented torch version (2.7.1, 2.11.0, 2.12.0, 2.13.0 on master today). A torch without its own folder takes
the nearest documented one (same ``X.Y`` first, else the closest minor; a tie takes the older folder, whose
limits a build between the two has not outgrown), and the table says which. ``--torch`` defaults to this
interpreter's installed torch.

Per entry (a heading or a method entry): the support table's marks per product (✔/✘), ``supported`` for the
chosen product, the note's lines read into limits by :mod:`.limits_notes` (each with the shape that read it)
and the lines kept as text, and ``limits``: what the note leaves to the chosen product (dtypes per argument,
excluded dtypes, memory formats). The product defaults to the first column of the support tables, Atlas A2:
Ascend lists it first, and its notes describe the other products against it ("Atlas A3 额外支持 bf16",
"Ascend 950DT：不支持 fp64").

Prints the counts and the entries that carry a limit for the product; writes the whole table as JSON
(``--out``, default ``limits-<docs version>-<product>.json`` in the current directory)::

    {"format": "torch_npu_testing.limits/1", "torch_version", "docs_version", "folder", "nearest", "docs_from",
     "docs_commit", "product", "products", "shapes": {name: {"rule", "means"}}, "counts": {...},
     "entries": {api: {"kind", "file", "line", "marks", "supported", "limits", "read", "text"}}}
"""
import importlib.metadata
import json
import os
import re

from ..common.errors import UsageError
from . import gitrefs, jsonfile
from .docs_reader import DOCS, product_name, tree_at, version_folder
from .limits_notes import SHAPES, read_note, resolve

FORMAT = "torch_npu_testing.limits/1"


def parse_minor(text):
    match = re.match(r"^(\d+)\.(\d+)(?:\.(\d+))?", text or "")
    if not match:
        raise UsageError(f"--torch {text!r}: not a torch version (X.Y or X.Y.Z)")
    return int(match.group(1)), int(match.group(2)), match.group(3)


def installed_torch():
    try:
        return importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        raise UsageError("this interpreter has no torch installed: give --torch X.Y") from None


def choose_folder(documented, asked):
    """``(docs version, note)``: the folder for torch ``asked``; the note says when it is not its own."""
    major, minor, patch = parse_minor(asked)
    if not documented:
        raise UsageError(f"no {DOCS}/pytorch_<X-Y-Z>/ folder in the docs")
    exact = f"{major}.{minor}.{patch}"
    if exact in documented:
        return exact, None
    keyed = sorted((parse_minor(version)[:2], version) for version in documented)
    same = [version for key, version in keyed if key == (major, minor)]
    if same and patch is None:
        return same[-1], None
    if same:
        return same[-1], f"torch {asked} has no folder of its own: {same[-1]} documents the same minor"

    def distance(item):
        (other_major, other_minor), _ = item
        return abs((other_major * 1000 + other_minor) - (major * 1000 + minor)), other_major * 1000 + other_minor
    version = min(keyed, key=distance)[1]
    return version, f"torch {asked} has no folder of its own: nearest documented is {version}"


def choose_product(columns, asked):
    if not columns:
        raise UsageError("the docs' support tables name no product")
    if asked is None:
        return columns[0]
    found = [column for column in columns if asked.lower() in column.lower()]
    exact = [column for column in columns if asked.lower() == column.lower()]
    if len(exact) == 1 or len(found) == 1:
        return (exact or found)[0]
    known = ", ".join(columns)
    why = "matches several" if found else "matches none"
    raise UsageError(f"--product {asked!r} {why} of the documented products: {known}")


def read_entries(pages):
    """``(entries, duplicates)``: ``{api: entry}`` in page order, the first listing of an API kept."""
    entries, duplicates = {}, 0
    for page in pages:
        for name, kind, start, end in page.own_blocks():
            if name in entries:
                duplicates += 1
                continue
            marks = {product_name(row[0]): (row[1] if len(row) > 1 else "") for row in page.support_rows(start, end)}
            read, text = read_note([(index + 1, line) for index, line in page.note_lines(start, end)])
            entries[name] = {"kind": kind, "file": page.rel, "line": start + 1, "marks": marks, "read": read,
                             "text": text, "has_note": bool(read or text)}
    return entries, duplicates


def columns_of(entries):
    columns = []
    for entry in entries.values():
        for product in entry["marks"]:
            if product not in columns:
                columns.append(product)
    return columns


def apply_product(entries, product):
    for entry in entries.values():
        mark = entry["marks"].get(product)
        entry["supported"] = {"✔": True, "✘": False}.get(mark)
        entry["limits"] = resolve(entry["read"], product)


def count(entries, duplicates):
    notes = [entry for entry in entries.values() if entry.pop("has_note")]
    shapes = {name: 0 for name in SHAPES}
    for entry in notes:
        for limit in entry["read"]:
            shapes[limit["shape"]] += 1
    return {"apis": len(entries), "headings": sum(e["kind"] == "heading" for e in entries.values()),
            "methods": sum(e["kind"] == "method" for e in entries.values()), "duplicates": duplicates,
            "notes": len(notes), "notes_read": sum(not e["text"] for e in notes),
            "notes_partly_read": sum(bool(e["read"] and e["text"]) for e in notes),
            "notes_kept_as_text": sum(not e["read"] for e in notes),
            "lines_read": sum(len(e["read"]) for e in notes), "lines_kept_as_text": sum(len(e["text"]) for e in notes),
            "refused_for_product": sum(e["supported"] is False for e in entries.values()),
            "limited_for_product": sum(bool(e["limits"]) for e in entries.values()), "shapes": shapes}


def build(root, ref, commit, asked, product):
    tree = tree_at(root, commit)
    version, nearest = choose_folder(tree.folders(), asked)
    folder = version_folder(version)
    entries, duplicates = read_entries(tree.pages(folder))
    chosen = choose_product(columns_of(entries), product)
    apply_product(entries, chosen)
    return {"format": FORMAT, "torch_version": asked, "docs_version": version, "folder": folder, "nearest": nearest,
            "docs_from": f"{ref} ({commit[:7]})", "docs_commit": commit, "product": chosen,
            "products": columns_of(entries), "shapes": {name: {"rule": rule, "means": means}
                                                        for name, (rule, means) in SHAPES.items()},
            "counts": count(entries, duplicates), "entries": entries}


def describe(limits):
    parts = [f"{arg}: {', '.join(words)}" for arg, words in limits.get("dtypes", {}).items()]
    parts += [f"{arg}: not {', '.join(words)}" for arg, words in limits.get("excluded", {}).items()]
    parts += [f"{arg}: {', '.join(words)}" for arg, words in limits.get("formats", {}).items()]
    return "; ".join(parts)


def render(table, out):
    counts = table["counts"]
    lines = [f"### limits: torch {table['torch_version']}, {table['product']}", "",
             f"Docs `{table['folder']}` read from `{table['docs_from']}` through git."]
    if table["nearest"]:
        lines.append(table["nearest"] + ".")
    lines += ["", f"{counts['apis']} APIs ({counts['headings']} headings, {counts['methods']} methods), "
              f"{counts['notes']} notes: {counts['notes_read']} read whole, {counts['notes_partly_read']} partly, "
              f"{counts['notes_kept_as_text']} kept as text ({counts['lines_read']} lines read, "
              f"{counts['lines_kept_as_text']} kept as text); {counts['refused_for_product']} APIs marked ✘ and "
              f"{counts['limited_for_product']} with a limit for {table['product']}.", "",
              "| API | supported | limits | kept as text |", "| --- | --- | --- | --- |"]
    for api, entry in table["entries"].items():
        if entry["limits"] or entry["supported"] is False:
            mark = {True: "✔", False: "✘", None: "?"}[entry["supported"]]
            lines.append(f"| `{api}` | {mark} | {describe(entry['limits']) or '-'} | {len(entry['text'])} |")
    lines += ["", f"Wrote {out}"]
    return "\n".join(lines)


def documented_dtypes(path, api):
    """``({name: (allowed or None, excluded)}, source)`` for ``api`` and its Tensor method and in-place forms in
    the table at ``path`` (the union of a note's 'only' lists; its exclusions for every argument); UsageError
    when ``path`` is no limits table."""
    try:
        with open(path, encoding="utf-8") as handle:
            table = json.load(handle)
    except (OSError, ValueError) as exc:
        raise UsageError(f"--limits {path}: cannot read it ({exc})") from None
    if not isinstance(table, dict) or table.get("format") != FORMAT:
        raise UsageError(f"--limits {path}: not a {FORMAT} table (write one with `limits`)")
    last = api.rsplit(".", 1)[-1]
    found = {}
    for name in dict.fromkeys((api, f"torch.Tensor.{last}", f"torch.Tensor.{last}_")):
        limits = (table["entries"].get(name) or {}).get("limits") or {}
        allow = sorted({d for words in limits.get("dtypes", {}).values() for d in words}) or None
        exclude = sorted(limits.get("excluded", {}).get("*", ()))
        if allow or exclude:
            found[name] = (tuple(allow) if allow else None, tuple(exclude))
    return found, f"{table['folder']} of {table['docs_from']}, {table['product']}"


def slug(product):
    return "-".join(re.findall(r"[a-z0-9]+", product.lower())) or "product"


def add_arguments(parser):
    parser.add_argument("--ascend", metavar="DIR", required=True, help="an Ascend/pytorch git checkout")
    parser.add_argument("--ref", default="master", help="the ref whose docs to read (default: master)")
    parser.add_argument("--torch", metavar="X.Y[.Z]", help="torch version (default: this interpreter's torch)")
    parser.add_argument("--product", metavar="NAME",
                        help="a product of the support tables, or a unique part of it, e.g. A3 (default: Atlas A2)")
    parser.add_argument("--out", metavar="PATH",
                        help="where to write the table (default: limits-<docs version>-<product>.json here)")


def main(args):
    asked = args.torch or installed_torch()
    parse_minor(asked)
    if args.out is not None:
        jsonfile.check_json_target(args.out, "--out")
    root = gitrefs.check_ascend(args.ascend)
    ref, commit = gitrefs.resolve_branch(root, args.ref)
    if not tree_at(root, commit).files:
        raise UsageError(f"{ref} ({commit[:7]}) of {root} has no {DOCS}/ (Ascend keeps these docs on master)")
    table = build(root, ref, commit, asked, args.product)
    out = args.out or os.path.join(os.getcwd(), f"limits-{table['docs_version']}-{slug(table['product'])}.json")
    jsonfile.write_json(out, table)
    print(render(table, out))
    return 0
