"""One server per vault, whatever its data folder: an exclusive lock on a file keyed by the
vault's real path, in the user's state folder (platformdirs' ``user_state_dir``, under
``XDG_STATE_HOME`` on Linux): ``<state>/obsidian-ai-bridge/locks/<vault key>.lock``.

The operating system holds the lock for the process and drops it when the process ends, however
it ends, so a lock left by a killed server is simply taken over. While held, the file records
the server (pid, URL, data folder, info file), so a second ``serve`` can name it and ``mcp``
finds the info file of the running server whatever ``--data-dir`` or ``--info-file`` it was
given.

The lock file is opened as :mod:`plugin_bridge.vault.locking` opens lock files: never through a
symlink, and only a regular file (anything else is refused in one sentence).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Final, NamedTuple

from llm_service import lazy
from plugin_bridge.vault.datadir import APP_NAME, default_info_file, vault_key
from plugin_bridge.vault.locking import open_lock_file, try_lock, unlock

if TYPE_CHECKING:
    import platformdirs
else:
    platformdirs = lazy.module("platformdirs")

LOCKS_FOLDER: Final = "locks"


class LockRecord(NamedTuple):
    """What the lock file says of the server holding it (each field None when unknown)."""

    pid: int | None = None
    url: str | None = None
    data_dir: str | None = None
    info_file: str | None = None


class ServerRunning(Exception):
    """Another live server holds the vault's lock."""

    def __init__(self, record: LockRecord) -> None:
        self.record = record
        self.pid = record.pid
        self.url = record.url
        who = f"pid {record.pid}" if record.pid else "another process"
        where = f" at {record.url}" if record.url else ""
        data = f", data folder {record.data_dir}" if record.data_dir else ""
        super().__init__(
            f"A server for this vault is already running ({who}{where}{data}): use it, or stop "
            "it before starting another."
        )


class ServerLock:
    """The held lock; :meth:`release` (or process exit) frees it."""

    def __init__(self, fd: int, path: Path) -> None:
        self._fd = fd
        self.path = path

    def announce(self, url: str, data_dir: Path, info_file: Path) -> None:
        """Record this server (pid, URL, data folder, info file) for the next one to read."""
        record = {
            "pid": os.getpid(),
            "url": url,
            "dataDir": str(data_dir),
            "infoFile": str(info_file.resolve()),
        }
        os.ftruncate(self._fd, 0)
        os.pwrite(self._fd, json.dumps(record).encode(), 0)

    def release(self) -> None:
        if self._fd < 0:
            return
        os.ftruncate(self._fd, 0)
        unlock(self._fd)
        os.close(self._fd)
        self._fd = -1


def lock_path(vault: Path) -> Path:
    """The lock file of the vault at ``vault`` (keyed by its real path)."""
    return Path(platformdirs.user_state_dir(APP_NAME)) / LOCKS_FOLDER / f"{vault_key(vault)}.lock"


def acquire(vault: Path) -> ServerLock:
    """Take the vault's lock, or raise :class:`ServerRunning` naming the holder (OSError when
    the state folder cannot hold it)."""
    path = lock_path(vault)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = open_lock_file(path, os.O_RDWR | os.O_CREAT)
    if not try_lock(fd):
        record = _record(fd)
        os.close(fd)
        raise ServerRunning(record)
    return ServerLock(fd, path)


def holder(vault: Path) -> LockRecord | None:
    """The record of the server that holds the vault's lock, read without taking the lock (so
    a server starting now is never refused because of this look); None when the file names no
    live process. A record left by a killed server whose pid was reused may be taken for a live
    one: its info file's token and the connection decide."""
    try:
        fd = open_lock_file(lock_path(vault), os.O_RDONLY)
    except OSError:
        return None
    try:
        record = _record(fd)
    finally:
        os.close(fd)
    if record.pid is None or not process_alive(record.pid):
        return None
    return record


def running_info_file(vault: Path, given: Path | None = None) -> Path:
    """The info file of the server holding the vault's lock (whatever data folder or info file
    it was started with), else ``given``, else the vault's default."""
    record = holder(vault)
    if record is not None and record.info_file is not None:
        return Path(record.info_file)
    return given or default_info_file(vault)


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` runs (on Windows always True: os.kill would end it there, so
    the connection decides)."""
    if sys.platform == "win32":
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # alive, another user's
    return True


def _record(fd: int) -> LockRecord:
    try:
        raw = json.loads(os.pread(fd, 4096, 0) or b"{}")
    except (ValueError, OSError):
        return LockRecord()
    if not isinstance(raw, dict):
        return LockRecord()
    pid = raw.get("pid")
    url, data_dir, info_file = (raw.get(key) for key in ("url", "dataDir", "infoFile"))
    return LockRecord(
        pid if isinstance(pid, int) else None,
        url if isinstance(url, str) else None,
        data_dir if isinstance(data_dir, str) else None,
        info_file if isinstance(info_file, str) else None,
    )
