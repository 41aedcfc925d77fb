# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Build, cache and load the simulated NPU's C++ (``simnpu.cpp`` and the part it includes, beside this file).

The library is compiled once per torch build, with the flags and paths of torch's ``cpp_extension``
(``include_paths``, ``library_paths``, the C++ ABI torch was built with), straight with the C++ compiler:
no ninja, no pybind11 (the library only registers kernels and ``torch.ops.simnpu`` operators, so it does
not depend on the Python version). The result is cached under ``$TORCH_NPU_TESTING_CACHE`` (default
``~/.cache/torch_npu_testing``) in a folder named for the torch version, torch's git version and the
source's hash; a cached start loads the ``.so`` directly with ``torch.ops.load_library``.

``python -m torch_npu._device`` builds (or finds) the library for the running torch and prints its path,
or prints one line naming the torch and the compiler's first error and exits 2.
"""
import hashlib
import os
import subprocess
import sys
import tempfile

SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "simnpu.cpp")
PARTS = (SOURCE, os.path.join(os.path.dirname(SOURCE), "simnpu_fallback.h"))  # what the library is built from
CACHE_VARIABLE = "TORCH_NPU_TESTING_CACHE"
LIBRARY = "simnpu.so"


class BuildError(RuntimeError):
    """The simulated NPU cannot be built or loaded here; the message is one line."""


def cache_root(environ=None):
    environ = os.environ if environ is None else environ
    root = environ.get(CACHE_VARIABLE, "").strip()
    return root or os.path.join(os.path.expanduser("~"), ".cache", "torch_npu_testing")


def _source_hash():
    digest = hashlib.sha256()
    for part in PARTS:
        with open(part, "rb") as handle:
            digest.update(handle.read())
    return digest.hexdigest()[:16]


def library_path(environ=None):
    """Where the library for the running torch lives (built or not)."""
    import torch
    key = f"simnpu-torch{torch.__version__}-{(torch.version.git_version or 'nogit')[:12]}-{_source_hash()}"
    return os.path.join(cache_root(environ), key.replace("+", "_"), LIBRARY)


def compile_command(output):
    import contextlib
    import io
    import logging

    import torch
    # a CUDA build of torch says "No CUDA runtime is found" when cpp_extension is imported (printed on 2.7.1,
    # logged later); no CUDA is used here, and a build error must stay one line
    logging.getLogger("torch.utils.cpp_extension").setLevel(logging.ERROR)
    with contextlib.redirect_stderr(io.StringIO()):
        from torch.utils import cpp_extension
    compiler = os.environ.get("CXX", "").strip() or "c++"
    abi = int(bool(getattr(torch._C, "_GLIBCXX_USE_CXX11_ABI", True)))
    major, minor = (int(part) for part in torch.__version__.split(".")[:2])
    standard = "-std=c++20" if (major, minor) >= (2, 14) else "-std=c++17"  # ATen requires C++20 from 2.14
    return ([compiler, "-shared", "-fPIC", standard, "-O1", "-w", f"-D_GLIBCXX_USE_CXX11_ABI={abi}"]
            + [f"-I{path}" for path in cpp_extension.include_paths()] + [SOURCE]
            + [f"-L{path}" for path in cpp_extension.library_paths()]
            + ["-lc10", "-ltorch_cpu", "-o", output])


def _first_error(text):
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    errors = [line for line in lines if " error" in line or line.startswith("error") or "fatal" in line]
    return (errors or lines or ["no output"])[0][:400]


def build(path):
    """Compile into ``path`` (atomically: a concurrent process sees the whole library or none)."""
    import torch
    folder = os.path.dirname(path)
    os.makedirs(folder, exist_ok=True)
    handle, partial = tempfile.mkstemp(prefix=".simnpu-", suffix=".so", dir=folder)
    os.close(handle)
    command = compile_command(partial)
    try:
        result = subprocess.run(command, capture_output=True, text=True, check=False)
    except OSError as exc:
        os.unlink(partial)
        raise BuildError(f"simulated NPU: cannot build for torch {torch.__version__}: "
                         f"{command[0]}: {exc.strerror}") from None
    if result.returncode != 0:
        os.unlink(partial)
        raise BuildError(f"simulated NPU: cannot build for torch {torch.__version__} with {command[0]}: "
                         f"{_first_error(result.stderr + result.stdout)}")
    os.replace(partial, path)
    return path


def ensure_built(environ=None):
    path = library_path(environ)
    if not os.path.isfile(path):
        build(path)
    return path


def load(environ=None):
    """Build if needed and load the library into this process; returns its path."""
    import torch
    path = ensure_built(environ)
    try:
        torch.ops.load_library(path)
    except OSError as exc:
        raise BuildError(f"simulated NPU: cannot load {path} into torch {torch.__version__}: "
                         f"{str(exc).splitlines()[0]}") from None
    return path


def main(argv=None):
    try:
        print(ensure_built())
    except BuildError as exc:
        print(exc, file=sys.stderr)
        return 2
    return 0
