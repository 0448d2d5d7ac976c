"""Crash-safe file replacement: a reader sees the old bytes or the new, never a torn file.

The temp file is ``TEMP_PREFIX`` + random hex in the target's own folder (``os.replace`` is only
atomic within one file system), so the watcher and the indexer skip it if a crash leaves it behind.
"""

from __future__ import annotations

import contextlib
import math
import os
import secrets
import time
from collections.abc import Callable
from pathlib import Path

from plugin_bridge.vault.datadir import private_folder
from plugin_bridge.vault.paths import TEMP_PREFIX

NEW_FILE_MODE = 0o666
"""Mode of new files before the umask, as any editor would create them."""


def write_atomic(
    path: Path,
    data: bytes,
    *,
    mode: int | None = None,
    before_replace: Callable[[], None] | None = None,
    private: bool = False,
) -> None:
    """Replace ``path`` with ``data`` (creating missing folders) so that a crash leaves either.

    Writes a temp file beside ``path``, fsyncs it, calls ``before_replace`` (which may raise to
    call the write off: the temp file is removed and ``path`` left as it is), renames the temp
    file over ``path`` and fsyncs the folder. ``mode`` (permission bits) is set exactly; None
    gives a new file's default mode. ``private``: the server's own file (never a note), whose
    missing folders are made 0700.
    """
    if private:
        private_folder(path.parent)
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f"{TEMP_PREFIX}{secrets.token_hex(8)}")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    fd = os.open(temp, flags, NEW_FILE_MODE)
    try:
        with os.fdopen(fd, "wb") as handle:
            if mode is not None:
                os.chmod(temp, mode)
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if before_replace is not None:
            before_replace()
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    fsync_dir(path.parent)


def remove_durably(path: Path) -> None:
    """Delete ``path`` (if present) and make the removal survive a crash."""
    path.unlink(missing_ok=True)
    fsync_dir(path.parent)


def fsync_dir(folder: Path) -> None:
    """Flush a folder's entries to disk; a no-op where folders cannot be opened (Windows)."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


ORPHAN_AGE_SECONDS = 60.0
"""A temp file older than this was left by a killed writer (a live write takes milliseconds)."""


def remove_orphans(
    root: Path, ignored: Callable[[str], bool], max_age: float = ORPHAN_AGE_SECONDS
) -> int:
    """Delete our temp files older than ``max_age`` seconds under ``root``, outside the
    folders ``ignored(rel)`` names; how many were removed."""
    cutoff = time.time() - max_age if max_age > 0 else math.inf
    removed = 0
    for folder, dirs, names in os.walk(root):
        rel = os.path.relpath(folder, root)
        dirs[:] = [d for d in dirs if not ignored(d if rel == "." else f"{rel}/{d}")]
        for name in names:
            if not name.startswith(TEMP_PREFIX):
                continue
            path = os.path.join(folder, name)
            with contextlib.suppress(FileNotFoundError):
                if os.lstat(path).st_mtime < cutoff:
                    os.unlink(path)
                    removed += 1
    return removed
