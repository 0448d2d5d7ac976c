"""Live updates: watchfiles ``awatch`` on the vault folder, reporting changed paths.

Each (re)start of the OS watch is reported with ``ready()`` once it is in place, so the index can
rescan then without missing a change. When the vault folder is deleted, moved away or replaced
by a new folder of the same name, the watch stops; while the folder is gone ``missing()`` is
called and the folder is polled for until it is back; then the watch restarts. If the OS refuses
a watch (e.g. the inotify limit), watching falls back to polling.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Final, Literal

from llm_service import lazy
from plugin_bridge.vault.door import FILES
from plugin_bridge.vault.paths import to_posix

if TYPE_CHECKING:
    import watchfiles
else:
    watchfiles = lazy.module("watchfiles")

logger = logging.getLogger(__name__)

STEP_MS: Final = 10
"""How often watchfiles checks for the end of a debounce window and for ``stop``."""
IDLE_WAKE_MS: Final = 100
"""How often an idle watch wakes to check the vault folder: bounds how late a vanished vault
(and the first ``ready()``) is seen."""
MISSING_POLL_SECONDS: Final = 0.5
WATCH_RETRY_SECONDS: Final = 1.0


@dataclass(frozen=True)
class WatchCallbacks:
    """What the watcher reports; all are called on the event loop thread."""

    changed: Callable[[set[str]], None]
    """Vault-relative paths (files or folders) created, modified, deleted or moved."""
    ready: Callable[[], None]
    missing: Callable[[], None]


async def watch_vault(
    root: Path,
    callbacks: WatchCallbacks,
    stop: asyncio.Event,
    *,
    ignored: Callable[[str], bool],
    debounce_ms: int = 30,
) -> None:
    """Watch ``root`` until ``stop`` is set, skipping paths for which ``ignored(rel)`` is true."""

    def wanted(change: watchfiles.Change, path: str) -> bool:
        rel = _relative(root, path)
        if rel is None:  # the vault folder itself: only its deletion matters
            return change == watchfiles.Change.deleted and path == str(root)
        return not ignored(rel)

    polling = False
    while not stop.is_set():
        identity = await FILES.run(_identity, root)
        if identity is None:
            callbacks.missing()
            if not await _wait_for_folder(root, stop):
                return
            continue
        announced = False
        changes_stream = watchfiles.awatch(
            root,
            watch_filter=wanted,
            debounce=debounce_ms,
            step=STEP_MS,
            stop_event=stop,
            rust_timeout=IDLE_WAKE_MS,
            yield_on_timeout=True,
            force_polling=polling or None,
        )
        try:
            async with contextlib.aclosing(changes_stream):  # releases the OS watch on break
                async for changes in changes_stream:
                    if not announced:
                        callbacks.ready()
                        announced = True
                    root_deleted = any(_relative(root, path) is None for _, path in changes)
                    if root_deleted or await FILES.run(_identity, root) != identity:
                        break  # gone, or replaced by another folder: watch it afresh
                    paths = {rel for _, path in changes if (rel := _relative(root, path))}
                    if paths:
                        callbacks.changed(paths)
        except (OSError, RuntimeError) as exc:
            then = await _after_failure(root, exc, announced=announced, polling=polling)
            if then == "poll":
                polling = True
                continue
            if then == "give up":
                callbacks.ready()
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), WATCH_RETRY_SECONDS)


async def _after_failure(
    root: Path, exc: Exception, *, announced: bool, polling: bool
) -> Literal["retry", "poll", "give up"]:
    """What follows a failed watch (logged): a watch that ran, or a vault folder that went, is
    retried; a watch the OS refused becomes polling; failed polling turns live updates off."""
    if announced or await FILES.run(_identity, root) is None:
        logger.debug("The vault watch stopped (%s); restarting it.", exc)
        return "retry"
    if not polling:
        logger.warning(
            "Cannot watch the vault folder %s (%s); checking it for changes by polling.",
            root,
            exc,
        )
        return "poll"
    logger.warning(
        "Live updates of the vault folder %s are off (%s); restart to see changes.",
        root,
        exc,
    )
    return "give up"


async def _wait_for_folder(root: Path, stop: asyncio.Event) -> bool:
    """Poll until ``root`` exists again (True) or ``stop`` is set (False)."""
    while not stop.is_set():
        if await FILES.run(root.is_dir):
            return True
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), MISSING_POLL_SECONDS)
    return False


def _identity(root: Path) -> tuple[int, int] | None:
    """(device, inode) of the vault folder, or None when it is not there."""
    try:
        info = os.stat(root)
    except OSError:
        return None
    return (info.st_dev, info.st_ino) if stat.S_ISDIR(info.st_mode) else None


def _relative(root: Path, path: str) -> str | None:
    """``path`` relative to ``root`` in POSIX form; None for the root itself or outside it."""
    try:
        rel = to_posix(str(PurePath(path).relative_to(root)))
    except ValueError:
        return None
    return None if rel in ("", ".") else rel
