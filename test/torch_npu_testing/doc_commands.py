# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""The docs check: every command line that README.md and docs/ show is one the code accepts.

A renamed option or env would otherwise leave the pages wrong without anyone noticing. What is read:
fenced blocks (any language but Python and JSON) and inline code, a line counting when, after leading
``VAR=value`` prefixes (and ``cd DIR &&``), it starts with ``python -m torch_npu_testing`` (or another
interpreter's ``-m torch_npu_testing``) or ``tox``. ``\\`` continuations are joined, ``#`` comments dropped.

What is checked:
- a kit command line is parsed by the command's real parser (``__main__.command_parser``), its exit
  caught; every ``--option`` must exist in the parser it reaches (``upstream`` subcommands followed);
- placeholders stand for any value: ``UPPER`` words, ``<x>``, ``[...]`` (the brackets are dropped, the
  inside kept), ``...``; a placeholder the parser refuses as a choice or type is not an error;
- ``tox -e``/``-m`` names exist in tox.ini, and what follows ``--`` is parsed by the command the env runs
  with ``{posargs}`` when that is a kit command;
- a backticked path starting with one of the repository's top-level folders or files exists (a glob must
  match); a path in an Ascend checkout is written ``DEST/...`` and is not checked;
- a format name (``torch_npu_testing.results/2``) is one the package writes.
"""
import argparse
import configparser
import contextlib
import glob
import io
import re
import shlex
import subprocess
from pathlib import Path

FENCE = re.compile(r"^\s*```\s*([\w+-]*)")
INLINE = re.compile(r"`([^`\n]+)`")
ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=\S*$")
KIT = re.compile(r"^(?:\S*python[\d.]*|PY)$")
PLACEHOLDER = re.compile(r"^(?:[A-Z][A-Z0-9_.]*|.*<[^>]*>.*|.*\.\.\..*)$")
FORMAT_NAME = re.compile(r"torch_npu_testing\.[a-z_]+/\d+")
NOT_SHELL = {"python", "py", "json", "text", "toml", "ini", "yaml", "diff"}


def doc_files(root):
    root = Path(root)
    return [root / "README.md"] + sorted((root / "docs").rglob("*.md"))


def _snippets(text):
    """``(line number, code)`` of every fenced shell line and every inline code span of a page."""
    found, fence, pending = [], None, None
    for number, line in enumerate(text.splitlines(), 1):
        match = FENCE.match(line)
        if match:
            fence = None if fence is not None else match.group(1).lower()
            continue
        if fence is not None:
            if fence in NOT_SHELL:
                continue
            if pending:
                start, code = pending
                pending = None
                line = code + " " + line.strip()
                number = start
            if line.rstrip().endswith("\\"):
                pending = (number, line.rstrip()[:-1])
                continue
            found.append((number, line.strip().removeprefix("$ ")))
        else:
            found += [(number, code) for code in INLINE.findall(line)]
    return found


def _words(code):
    """The words of a command, or None when ``code`` is not a kit or tox command."""
    code = code.replace("[", " ").replace("]", " ")
    try:
        words = shlex.split(code, comments=True)
    except ValueError:
        return None
    while words and ASSIGN.match(words[0]):
        words = words[1:]
    if "&&" in words:
        words = words[len(words) - words[::-1].index("&&"):]
    if len(words) >= 3 and KIT.match(words[0]) and words[1] == "-m" and words[2] == "torch_npu_testing":
        return ["kit"] + words[3:]
    if words and words[0] == "tox":
        return words
    if len(words) >= 3 and KIT.match(words[0]) and words[1:3] == ["-m", "tox"]:
        return ["tox"] + words[3:]
    return None


def _option_strings(parser):
    return set(parser._option_string_actions)


def _subparsers(parser):
    return [action for action in parser._actions if isinstance(action, argparse._SubParsersAction)]


def _reached_parser(parser, args):
    """The parser the words reach: subcommands (``upstream run``) followed."""
    for action in _subparsers(parser):
        for word in args:
            if word in action.choices:
                return _reached_parser(action.choices[word], args[args.index(word) + 1:])
    return parser


def check_kit_command(args):
    """Problems of ``python -m torch_npu_testing ARGS`` (placeholders allowed), or an empty list."""
    from torch_npu_testing.__main__ import COMMANDS, command_parser

    if not args:
        return []
    if args[0] in ("-h", "--help"):
        return []
    if args[0] not in COMMANDS:
        return [f"unknown command {args[0]!r}"]
    _, parser = command_parser(args[0])
    args = [word for word in args[1:] if word != "..."]
    reached = _reached_parser(parser, args)
    problems = [f"unknown option {word.split('=')[0]!r} of {reached.prog!r}" for word in args
                if word.startswith("--") and word.split("=")[0] not in _option_strings(reached)]
    sentinel = [word if not PLACEHOLDER.match(word) or word.startswith("-") else "PLACEHOLDER" for word in args]
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            parser.parse_args(sentinel)
        except SystemExit as exc:
            message = err.getvalue().strip().splitlines()[-1] if err.getvalue().strip() else ""
            named_only = not args and "arguments are required" in message  # `python -m torch_npu_testing verify`
            if exc.code not in (0, None) and "'PLACEHOLDER'" not in message and not named_only and not problems:
                problems.append(message or f"exit {exc.code}")
    return problems


def tox_facts(root):
    """``(env names, labels, {env: kit words before {posargs}})`` read from tox.ini."""
    config = configparser.ConfigParser(interpolation=None)
    config.read(Path(root) / "tox.ini", encoding="utf-8")
    envs = {name.strip() for name in config["tox"]["envlist"].split(",")}
    labels = {}
    for line in config["tox"].get("labels", "").splitlines():
        if "=" in line:
            name, members = line.split("=", 1)
            labels[name.strip()] = {member.strip() for member in members.split(",")}
            envs |= labels[name.strip()]
    envs |= {section.split(":", 1)[1] for section in config.sections() if section.startswith("testenv:")}
    envs |= set(re.findall(r"^\s*(\w+):", config["testenv"]["description"], re.M))
    posargs = {}
    for env in envs:
        section = config[f"testenv:{env}"] if config.has_section(f"testenv:{env}") else config["testenv"]
        for line in section.get("commands", "").splitlines():
            words = _words(re.sub(r"\{[^}]*\}", "X", line.replace("{posargs}", "POSARGS")))
            if words and words[0] == "kit" and words[-1] == "POSARGS":
                posargs[env] = words[1:-1]
    return envs, labels, posargs


def check_tox_command(args, facts):
    envs, labels, posargs = facts
    problems, names = [], []
    head, rest = (args[:args.index("--")], args[args.index("--") + 1:]) if "--" in args else (args, None)
    for flag, known, what in (("-e", envs, "env"), ("-m", set(labels), "label")):
        for index, word in enumerate(head):
            if word == flag and index + 1 < len(head):
                for name in head[index + 1].split(","):
                    if not PLACEHOLDER.match(name) and name not in known:
                        problems.append(f"tox {what} {name!r} is not in tox.ini")
                    names.append(name)
    if rest is not None and len(names) == 1 and names[0] in posargs:
        problems += check_kit_command(posargs[names[0]] + rest)
    return problems


def check_path(word, root, tracked_tops):
    word = word.rstrip(".,:;")
    if "/" not in word and word not in tracked_tops:
        return []
    if word.split("/")[0] not in tracked_tops or " " in word or "<" in word or "..." in word:
        return []
    if re.search(r"\b[A-Z]{2,}\b", word):
        return []
    if any(char in word for char in "*?["):
        return [] if glob.glob(str(Path(root) / word)) else [f"no file matches {word!r}"]
    return [] if (Path(root) / word).exists() else [f"no such path {word!r}"]


def _tracked_tops(root):
    listed = subprocess.run(["git", "-C", str(root), "ls-files"], capture_output=True, text=True, check=True)
    return {line.split("/")[0] for line in listed.stdout.splitlines()} | {"docs"}


def _package_formats(root):
    text = "\n".join(path.read_text(encoding="utf-8") for path in (Path(root) / "torch_npu_testing").rglob("*")
                     if path.suffix in (".py", ".json"))
    return set(FORMAT_NAME.findall(text))


def check_docs(root, files=None):
    """Every problem as ``"FILE:LINE: code: problem"``; the files are README.md and docs/*.md by default."""
    root = Path(root)
    facts, tops, formats = tox_facts(root), _tracked_tops(root), _package_formats(root)
    problems = []
    for path in files or doc_files(root):
        text = path.read_text(encoding="utf-8")
        for number, code in _snippets(text):
            words = _words(code)
            found = []
            if words and words[0] == "kit":
                found = check_kit_command(words[1:])
            elif words:
                found = check_tox_command(words[1:], facts)
            elif " " not in code.strip():
                found = check_path(code.strip(), root, tops)
            problems += [f"{path.relative_to(root)}:{number}: {code.strip()}: {p}" for p in found]
        for number, line in enumerate(text.splitlines(), 1):
            problems += [f"{path.relative_to(root)}:{number}: format {name!r} is not one the package writes"
                         for name in FORMAT_NAME.findall(line) if name not in formats]
    return problems
