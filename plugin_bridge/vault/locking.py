"""Lock files, the vault's (:mod:`plugin_bridge.cli.lock`) and the client keys'
(:mod:`plugin_bridge.app.clients`): opened without following a symlink (``O_NOFOLLOW``; on
Windows, where there is none, the path is checked before and the opened file compared after),
and only a regular file is used: a symlink, FIFO or device planted at the path is refused
with :class:`UnsafeLockFile`, and its target is never written.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Final


class UnsafeLockFile(OSError):
    """Something other than a regular file (a symlink, FIFO, device, folder) is at the lock
    path."""

    def __init__(self, path: Path) -> None:
        super().__init__(
            f"The vault's lock path {path} is not a regular file (a symlink, FIFO or folder is "
            "there): remove it, then start again."
        )


_OPEN_FLAGS: Final = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
"""No symlink followed, and a FIFO never blocks the open (it is refused right after)."""


def open_lock_file(path: Path, flags: int) -> int:
    """``path`` opened with ``flags`` if it is (or becomes) a regular file, never through a
    symlink; :class:`UnsafeLockFile` otherwise (other OSErrors as they come)."""
    try:
        before = os.lstat(path)
    except FileNotFoundError:
        before = None
    if before is not None and not stat.S_ISREG(before.st_mode):
        raise UnsafeLockFile(path)
    try:
        fd = os.open(path, flags | _OPEN_FLAGS | getattr(os, "O_BINARY", 0), 0o600)
    except OSError as exc:
        if _not_regular(path):  # ELOOP from O_NOFOLLOW: planted between the check and the open
            raise UnsafeLockFile(path) from exc
        raise
    opened = os.fstat(fd)
    swapped = before is not None and (opened.st_dev, opened.st_ino) != (
        before.st_dev,
        before.st_ino,
    )
    if not stat.S_ISREG(opened.st_mode) or swapped or _not_regular(path):
        os.close(fd)
        raise UnsafeLockFile(path)
    return fd


def _not_regular(path: Path) -> bool:
    try:
        return not stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


@contextlib.contextmanager
def held(path: Path) -> Iterator[None]:
    """The exclusive lock on the lock file ``path`` (created 0600), waited for; the file stays
    (removing it would let two holders lock two files)."""
    fd = open_lock_file(path, os.O_RDWR | os.O_CREAT)
    try:
        lock(fd)
        try:
            yield
        finally:
            unlock(fd)
    finally:
        os.close(fd)


if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
    import msvcrt

    def try_lock(fd: int) -> bool:
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True

    def lock(fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_LOCK, 1)

    def unlock(fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    def try_lock(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def lock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_EX)

    def unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)
