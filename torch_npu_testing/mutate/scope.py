# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Which calls of the target a fault acts on: the test's own calls, never the calls torch makes for itself.

A call is the test's when its nearest caller outside torch is the test file or one of its helpers (the
kit's runtime, unittest calling a callable the test passed). Walking out from the caller:

- a torch frame of :data:`LOOKED_THROUGH` for the target's kind only forwards the test's own call
  (``torch.vmap`` reaching ``_add_batch_dim`` for the test's inputs; a ``@set_grad_enabled(...)``
  decorator calling ``clone`` before each call of the test's function): the walk goes on past it;
- any other torch frame (``torch``, ``functorch``, ``torch_npu``, ``torchgen``: the same packages
  :mod:`torch_npu_testing.suite.api_calls` calls internal) means torch called it for its own purposes:
  the real behaviour, so a fault in one API cannot break another API's machinery;
- standard-library frames (``contextlib``, ``functools``, ``unittest``, ``threading``) are plumbing, passed;
- the kit's tools (this package, the suite runner) are not a test: the real behaviour;
- anything else is the test file or a helper of it: the fault acts.

Objects the API returned (a ``ConfigPatch``, a ``set_grad_enabled`` made by ``clone``, a compiled callable)
are faulted whoever calls them, since decorator plumbing calls their ``__enter__`` / ``__exit__``.
"""
import os
import sys
import sysconfig

from ..suite.api_calls import _internal_prefixes

_VMAP = {
    "torch/_functorch/apis.py": ("vmap", "wrapped"),
    "torch/_functorch/vmap.py": "*",
    "torch/_functorch/predispatch.py": ("_add_batch_dim", "_remove_batch_dim"),
    "functorch/_src/vmap/__init__.py": "*",
}
_DECORATORS = {
    "torch/utils/_contextlib.py": "*",
    "torch/autograd/grad_mode.py": ("__call__", "__new__"),
    "torch/utils/_config_module.py": ("__call__", "setUpClass", "tearDownClass"),
}
# Per API kind: torch frames (file relative to the torch package's parent, function names or "*") that only
# forward the test's own call. docs/strength.md lists them.
LOOKED_THROUGH = {
    "python function": {**_VMAP, **_DECORATORS},
    "C builtin": {**_VMAP, **_DECORATORS},
    "method": dict(_DECORATORS),
    "shared method": dict(_DECORATORS),
    "C method": dict(_DECORATORS),
}
_KIT = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_KIT_HELPERS = os.path.join(_KIT, "runtime") + os.sep


def _stdlib_prefixes():
    paths = sysconfig.get_paths()
    stdlib = [os.path.abspath(paths[key]) + os.sep for key in ("stdlib", "platstdlib") if paths.get(key)]
    site = [os.path.abspath(paths[key]) + os.sep for key in ("purelib", "platlib") if paths.get(key)]
    return tuple(stdlib), tuple(site)


def _package_prefixes(names):
    """Directories of the packages named (``--internal-package``), for an API that lives outside torch."""
    prefixes = []
    for name in names:
        location = getattr(sys.modules.get(name), "__file__", None)
        if location:
            prefixes.append(os.path.dirname(os.path.abspath(location)) + os.sep)
    return tuple(prefixes)


class Scope:
    """``acts(frame)``: does a call whose caller is ``frame`` belong to the test (see the module docstring)?"""

    def __init__(self, kind, extra_packages=()):
        self.internal = _internal_prefixes() + _package_prefixes(extra_packages)
        self.roots = {prefix: os.path.dirname(prefix.rstrip(os.sep)) + os.sep for prefix in self.internal}
        self.looked_through = LOOKED_THROUGH[kind]
        self.stdlib, self.site = _stdlib_prefixes()

    def _relative(self, filename):
        for prefix, root in self.roots.items():
            if filename.startswith(prefix):
                return filename[len(root):].replace(os.sep, "/")
        return None

    def forwards(self, frame, relative):
        names = self.looked_through.get(relative)
        return names == "*" or (names is not None and frame.f_code.co_name in names)

    def _is_plumbing(self, filename):
        if filename.startswith("<frozen"):
            return True
        return filename.startswith(self.stdlib) and not filename.startswith(self.site)

    def acts(self, frame):
        while frame is not None:
            filename = frame.f_code.co_filename
            relative = self._relative(filename) if filename.startswith(self.internal) else None
            if relative is not None:
                if not self.forwards(frame, relative):
                    return False
            elif filename.startswith(_KIT) and not filename.startswith(_KIT_HELPERS):
                return False
            elif not self._is_plumbing(filename):
                return True
            frame = frame.f_back
        return False
