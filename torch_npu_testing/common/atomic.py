# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""Writing a file atomically: every tool of the kit that writes a user's file goes through here.

The text goes to a temporary file in the target's own folder and is moved into place with
``os.replace``, so a reader sees the old content or the new one, never half a file, and an interrupted
write leaves no temporary file behind. An existing file keeps its permission bits; a new one gets 0644.
(``upstream/driver.py``, which runs without this package installed, loads this file by path.)
"""
import os
import tempfile


def write_text_atomic(path, text):
    """Write ``text`` (UTF-8, newlines as given) to ``path`` through a temp file and a rename."""
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    handle, temp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(handle, "w", encoding="utf-8", errors="surrogateescape", newline="") as stream:
            stream.write(text)
        os.chmod(temp, os.stat(path).st_mode & 0o777 if os.path.exists(path) else 0o644)
        os.replace(temp, path)
    except BaseException:
        if os.path.exists(temp):
            os.unlink(temp)
        raise
