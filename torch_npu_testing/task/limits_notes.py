# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Reading one ``**限制与说明**`` note of Ascend's native-API docs into limits, one line at a time.

Each line of a note either matches one of the :data:`SHAPES` (the parser's rule for that shape is kept
beside every limit it read) or is kept as text, whole. Nothing is guessed from a line that matches no shape:
a condition (``属性`mode`为constant时，...``), a precision remark or a code sample stays text and is counted.

Words of the docs mapped to torch (one table each): :data:`DTYPE_WORDS` (``fp32`` -> ``float32``, ``double`` ->
``float64``), :data:`FORMAT_WORDS` (``torch.channels_last`` -> ``channels_last``). A product is the text of a
``<term>...</term>`` (``Atlas A2 训练系列产品``), as in the support table's first column.
"""
import re

DTYPE_WORDS = {
    "bf16": "bfloat16", "fp16": "float16", "fp32": "float32", "fp64": "float64", "double": "float64",
    "bool": "bool", "uint8": "uint8", "uint16": "uint16", "int8": "int8", "int16": "int16", "int32": "int32",
    "int64": "int64", "complex64": "complex64", "complex128": "complex128",
}
FORMAT_WORDS = {
    "torch.contiguous_format": "contiguous_format", "torch.preserve_format": "preserve_format",
    "torch.channels_last": "channels_last", "torch.channels_last_3d": "channels_last_3d",
}


def _alternation(words):
    return "|".join(re.escape(word) for word in sorted(words, key=len, reverse=True))


_SEP = r"\s*(?:，|,|、|和|或)\s*"
_DT = rf"(?:{_alternation(DTYPE_WORDS)})(?![A-Za-z0-9_])"
DTLIST = rf"(?:{_DT})(?:{_SEP}{_DT})*"
FMT = rf"(?:{_alternation(FORMAT_WORDS)})(?![A-Za-z0-9_])"
FMTLIST = rf"(?:{FMT})(?:{_SEP}{FMT})*"
ARGS = r"`[A-Za-z_][A-Za-z0-9_]*`(?:\s*(?:、|，|,|和)\s*`[A-Za-z_][A-Za-z0-9_]*`)*"
PRODUCTS = r"<term>[^<]+</term>(?:\s*(?:、|/|和)\s*<term>[^<]+</term>)*"
_BULLET = r"^(?:[-*]\s*)?"
_END = r"\s*(?:的?数据类型|类型)?\s*[。.;；]?\s*$"

# name -> (the parser's rule, as a regular expression over one note line; what a match means)
SHAPES = {
    "allow": (
        _BULLET + rf"(?:(?:针对)?(?P<products>{PRODUCTS})\s*[：:，,]\s*)?(?P<args>{ARGS})\s*(?:参数)?\s*仅支持\s*"
        rf"(?P<allow>{DTLIST})(?:\s*[，,]\s*不支持\s*(?P<exclude>{DTLIST}))?" + _END,
        "the named arguments take only these dtypes (for the named products, else for all)"),
    "exclude": (
        _BULLET + rf"(?:(?:针对)?(?P<products>{PRODUCTS})\s*[：:，,]\s*)?(?:(?P<args>{ARGS})\s*)?不支持\s*"
        rf"(?P<exclude>{DTLIST})" + _END,
        "these dtypes are refused (by the named arguments, else by every tensor argument; for the named products, "
        "else for all)"),
    "product-adds": (
        _BULLET + rf"(?P<products>{PRODUCTS})\s*(?:上)?\s*额外支持\s*(?P<allow>{DTLIST})" + _END,
        "the named products take these dtypes beyond the note's 'only' lists"),
    "formats": (
        _BULLET + rf"(?:当前NPU设备)?\s*(?:仅支持设置\s*`memory_format`\s*为|`memory_format`\s*(?:参数)?\s*仅支持"
        rf"(?:传入|设置为)?)\s*(?P<formats>{FMTLIST})" + _END,
        "the memory_format argument takes only these memory formats"),
}
_COMPILED = {name: re.compile(rule) for name, (rule, _) in SHAPES.items()}


def _words(text, table):
    return sorted({table[word] for word in re.findall(r"[A-Za-z0-9_.]+", text or "") if word in table})


def _names(text, pattern):
    return re.findall(pattern, text) if text else None


def read_line(text):
    """``(shape, limit)`` for one note line, or ``(None, None)`` when it matches no shape (kept as text)."""
    for name, pattern in _COMPILED.items():
        match = pattern.match(text)
        if not match:
            continue
        found = match.groupdict()
        limit = {"shape": name, "args": _names(found.get("args"), r"`([^`]+)`") or ["*"],
                 "products": _names(found.get("products"), r"<term>([^<]+)</term>")}
        if found.get("allow"):
            limit["allow"] = _words(found["allow"], DTYPE_WORDS)
        if found.get("exclude"):
            limit["exclude"] = _words(found["exclude"], DTYPE_WORDS)
        if found.get("formats"):
            limit["args"] = ["memory_format"]
            limit["formats"] = _words(found["formats"], FORMAT_WORDS)
        return name, limit
    return None, None


def read_note(lines):
    """``(limits, text)`` of a note given as ``[(line_number, text)]``: the lines read, each limit with its
    ``line`` and ``source``, and the lines kept as text ``[{"line", "text"}]`` (a fenced code block whole)."""
    limits, kept, fenced = [], [], False
    for number, text in lines:
        if text.startswith("```"):
            fenced = not fenced
        shape, limit = (None, None) if fenced or text.startswith("```") else read_line(text)
        if limit is None:
            kept.append({"line": number, "text": text})
        else:
            limits.append(dict(limit, line=number, source=text))
    return limits, kept


def _applies(limit, product):
    return limit["products"] is None or product in limit["products"]


def resolve(limits, product):
    """What the note leaves to ``product``: ``{"dtypes": {arg: allowed}, "excluded": {arg or "*": dtypes},
    "formats": {"memory_format": formats}}`` (keys present only when the note says something).

    An 'only' list that names the product replaces the general one for its arguments; the product's
    'beyond' dtypes join every 'only' list; excluded dtypes leave the lists and are kept apart for arguments
    without a list ("*": every tensor argument)."""
    dtypes, named, excluded, formats = {}, set(), {}, {}
    for limit in limits:
        if not _applies(limit, product):
            continue
        if limit["shape"] == "allow":
            for arg in limit["args"]:
                if limit["products"] and arg not in named:
                    named.add(arg)
                    dtypes[arg] = set()
                if limit["products"] or arg not in named:
                    dtypes.setdefault(arg, set()).update(limit["allow"])
        if limit.get("exclude"):
            for arg in limit["args"]:
                excluded.setdefault(arg, set()).update(limit["exclude"])
        if limit["shape"] == "formats":
            formats.setdefault("memory_format", set()).update(limit["formats"])
    for limit in limits:
        if limit["shape"] == "product-adds" and _applies(limit, product):
            for allowed in dtypes.values():
                allowed.update(limit["allow"])
    for arg, allowed in dtypes.items():
        allowed -= excluded.get(arg, set()) | excluded.get("*", set())
    result = {}
    if dtypes:
        result["dtypes"] = {arg: sorted(allowed) for arg, allowed in dtypes.items()}
    if excluded:
        result["excluded"] = {arg: sorted(words) for arg, words in excluded.items()}
    if formats:
        result["formats"] = {arg: sorted(words) for arg, words in formats.items()}
    return result
