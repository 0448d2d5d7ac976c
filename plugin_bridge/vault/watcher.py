"""Live updates: watchfiles ``awatch`` on the vault, debounced, reporting changed note paths.

Ignores system folders, editors' temp files and our own atomic-write temp files. When the vault
folder disappears it reports that, polls for its return, and reports that too.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Callable
from pathlib import Path, PurePath, PurePosixPath

from plugin_bridge.vault.paths import READABLE_SUFFIXES, is_ignored, to_posix

logger = logging.getLogger("plugin_bridge.vault.watcher")

MISSING_POLL_SECONDS = 0.5
READY_TIMEOUT_MS = 100
"""How often an idle watcher wakes: bounds how late readiness and a vanished vault are seen."""


async def watch_vault(
    root: Path,
    on_change: Callable[[set[str]], None],
    on_state: Callable[[bool], None],
    stop: asyncio.Event,
    *,
    on_ready: Callable[[], None] = lambda: None,
    debounce_ms: int = 30,
) -> None:
    """Call ``on_change`` with vault-relative note paths as they change, until ``stop``.

    ``on_ready`` is called once the OS watch is in place (the first, possibly empty, batch), so
    a scan started after it cannot miss a change.
    """
    from watchfiles import awatch

    def wanted(_change: object, path: str) -> bool:
        rel = _relative(root, path)
        if rel == "." or is_ignored(rel):
            return False
        suffix = PurePosixPath(rel).suffix.lower()
        return suffix in READABLE_SUFFIXES or suffix == ""  # "" : a folder moved or deleted

    while not stop.is_set():
        if not await asyncio.to_thread(root.is_dir):
            on_state(False)
            if not await _wait_for_folder(root, stop):
                return
        on_state(True)
        try:
            async for changes in awatch(
                root,
                watch_filter=wanted,
                debounce=debounce_ms,
                step=10,
                stop_event=stop,
                rust_timeout=READY_TIMEOUT_MS,
                yield_on_timeout=True,
            ):
                on_ready()
                if not await asyncio.to_thread(root.is_dir):
                    break
                paths = {_relative(root, p) for _, p in changes}
                notes = {p for p in paths if PurePosixPath(p).suffix.lower() in READABLE_SUFFIXES}
                folders = paths - notes
                if folders:
                    notes |= _notes_under(root, folders)
                if notes:
                    on_change(notes)
        except (FileNotFoundError, RuntimeError) as exc:
            logger.debug("watcher restarting after %s", exc)


async def _wait_for_folder(root: Path, stop: asyncio.Event) -> bool:
    """Poll until ``root`` exists again (True) or ``stop`` is set (False)."""
    while not await asyncio.to_thread(root.is_dir):
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), MISSING_POLL_SECONDS)
        if stop.is_set():
            return False
    return True


def _relative(root: Path, path: str) -> str:
    return to_posix(str(PurePath(path).relative_to(root)))


def _notes_under(root: Path, folders: set[str]) -> set[str]:
    """Notes inside folders that moved in (an added folder arrives as one event)."""
    found: set[str] = set()
    for folder in folders:
        base = root / folder
        if base.is_dir():
            for dirpath, _dirs, files in os.walk(base):
                for name in files:
                    rel = to_posix(os.path.relpath(os.path.join(dirpath, name), root))
                    if PurePosixPath(rel).suffix.lower() in READABLE_SUFFIXES:
                        found.add(rel)
    return found
