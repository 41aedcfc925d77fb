# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""One command line: ``python -m torch_npu_testing <command> ...`` (also ``torch-npu-testing``).

Each command lives in its own module, imported only when used, which defines
``add_arguments(parser)`` and ``main(args) -> int``. Errors the user can fix are raised as
:class:`torch_npu_testing.common.errors.UsageError` and printed as one line ``torch_npu_testing: error: ...``
with exit status 2.
"""
import argparse
import importlib
import sys

from .common.errors import UsageError

COMMANDS = {
    "probe": ("torch_npu_testing.suite.probe", "describe this environment (python, torch, torch_npu, CANN, device)"),
    "suite": ("torch_npu_testing.suite.run", "run the API-consistency test files in one process, write results"),
    "grad-modes": ("torch_npu_testing.suite.grad_modes", "run test files with initial grad mode disabled and enabled"),
    "ensure-torch-npu": ("torch_npu_testing.suite.torch_npu_install",
                         "install $TORCH_NPU_TESTING_TORCH_NPU_SPEC without dependencies, if not installed"),
    "prune-env": ("torch_npu_testing.suite.prune_env",
                  "remove this tox env's venv after its run, when $TORCH_NPU_TESTING_PRUNE_ENVS=1 (small disks)"),
    "upstream": ("torch_npu_testing.upstream.cli", "check / run / apply / revert / refresh test_upstream patches"),
    "report": ("torch_npu_testing.report", "write the evidence report for an Ascend PR from env results"),
    "export": ("torch_npu_testing.export", "write a branch's contribution into an Ascend/pytorch checkout"),
    "verify": ("torch_npu_testing.verify", "run the files export wrote into DEST whole, as Ascend CI does; record"),
    "pr": ("torch_npu_testing.pr", "write a branch's whole Ascend PR description (pr-BRANCH.md) from facts"),
    "bench": ("torch_npu_testing.suite.bench", "measure suite / direct-run / tox cost as ratios to the import floor"),
    "locate": ("torch_npu_testing.task.locate", "where torch defines an API, here and in other interpreters"),
    "search": ("torch_npu_testing.task.search", "which tests of Ascend/PyTorch refs already call an API"),
    "docs": ("torch_npu_testing.task.docs", "is an API in Ascend's native-API docs per torch version; add it"),
    "new": ("torch_npu_testing.task.scaffold", "start an API task: test-file scaffold and its row in table.json"),
    "mutate": ("torch_npu_testing.mutate.cli", "how strong a test file is against generic port faults of its APIs"),
    "limits": ("torch_npu_testing.task.limits", "Ascend's documented NPU limits per API for a torch version: table"),
    "task-id": ("torch_npu_testing.task.taskid", "set an API's community task (ascend_task_id) in table.json"),
    "adds": ("torch_npu_testing.task.adds", "say once what an API's new tests add over its existing callers"),
}


def build_parser():
    parser = argparse.ArgumentParser(prog="python -m torch_npu_testing", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name, (module_name, help_text) in COMMANDS.items():
        entry = sub.add_parser(name, help=help_text, description=help_text)
        entry.set_defaults(_module=module_name)
    return parser


def command_parser(name):
    """``(module, parser)`` of one command: its module imported, its own argument parser built.

    The one place a command's parser is made: ``main`` parses with it and the docs check of the unit
    tests reads every command line of README.md and docs/ with it.
    """
    module = importlib.import_module(COMMANDS[name][0])
    parser = argparse.ArgumentParser(prog=f"python -m torch_npu_testing {name}", description=COMMANDS[name][1])
    module.add_arguments(parser)
    return module, parser


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser()
    # Only the chosen command's module is imported (the others may need torch).
    if argv and argv[0] in COMMANDS:
        try:
            module, parser = command_parser(argv[0])
        except ModuleNotFoundError as exc:  # a command whose module imports torch, run without torch
            if exc.name != "torch":
                raise
            from .common.toolspython import require_torch
            try:
                require_torch(argv[0])
            except UsageError as error:
                print(f"torch_npu_testing: error: {error}", file=sys.stderr)
            return 2
        args = parser.parse_args(argv[1:])
    else:
        parser.parse_args(argv)  # prints usage / help and exits
        return 2
    try:
        return int(module.main(args) or 0)
    except UsageError as exc:
        print(f"torch_npu_testing: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
