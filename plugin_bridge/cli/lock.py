"""One server per vault: an exclusive lock on ``server.lock`` in the vault's data dir.

The operating system holds the lock for the process and drops it when the process ends, however
it ends, so a lock left by a killed server is simply taken over. While held, the file says which
server holds it (pid and URL), so a second ``serve`` can name it.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Final

LOCK_FILE: Final = "server.lock"


class ServerRunning(Exception):
    """Another live server holds the vault's lock."""

    def __init__(self, pid: int | None, url: str | None) -> None:
        self.pid = pid
        self.url = url
        who = f"pid {pid}" if pid else "another process"
        where = f" at {url}" if url else ""
        super().__init__(
            f"A server for this vault is already running ({who}{where}): use it, or stop it "
            "before starting another."
        )


class ServerLock:
    """The held lock; :meth:`release` (or process exit) frees it."""

    def __init__(self, fd: int, path: Path) -> None:
        self._fd = fd
        self.path = path

    def announce(self, url: str) -> None:
        """Record this server's pid and URL for the next ``serve`` to name."""
        os.ftruncate(self._fd, 0)
        os.pwrite(self._fd, json.dumps({"pid": os.getpid(), "url": url}).encode(), 0)

    def release(self) -> None:
        if self._fd < 0:
            return
        os.ftruncate(self._fd, 0)
        _unlock(self._fd)
        os.close(self._fd)
        self._fd = -1


def acquire(data_dir: Path) -> ServerLock:
    """Take the vault's lock, or raise :class:`ServerRunning` naming the holder."""
    data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = data_dir / LOCK_FILE
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    if not _try_lock(fd):
        holder = _holder(fd)
        os.close(fd)
        raise ServerRunning(*holder)
    return ServerLock(fd, path)


def _holder(fd: int) -> tuple[int | None, str | None]:
    try:
        raw = json.loads(os.pread(fd, 4096, 0) or b"{}")
    except ValueError:
        return None, None
    pid, url = raw.get("pid"), raw.get("url")
    return (pid if isinstance(pid, int) else None), (url if isinstance(url, str) else None)


if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
    import msvcrt

    def _try_lock(fd: int) -> bool:
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True

    def _unlock(fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    def _try_lock(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)
