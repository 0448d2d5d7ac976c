"""Writes handed to Obsidian (``note/apply``) and not yet recorded: kept durably in the data dir
from before the plugin is asked until the server has recorded its answer.

A kill -9 between the plugin's answer and the audit line would otherwise lose both the undo
snapshot and the audit entry of a write Obsidian made. Each write asked about is one file,
``snapshots/asked/<sequence>.asked``: one JSON line (path, action, old hash, origin), then the
note's bytes as they were (nothing when the note did not exist). It is removed once the
answer is recorded (or the server writes itself). At the next start (:meth:`AskedWrites.recover`)
a leftover whose note no longer has its old hash was applied: its snapshot is committed and
its audit line written, as if the answer had been recorded; one whose note is unchanged was
not, and is dropped.
"""

from __future__ import annotations

import contextlib
import json
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Final

from plugin_bridge.vault.datadir import PRIVATE_FILE
from plugin_bridge.vault.notes.atomic import remove_durably, write_atomic
from plugin_bridge.vault.notes.audit import AuditAction, AuditLog, SnapshotStore

logger = logging.getLogger(__name__)

SUFFIX: Final = ".asked"


class AskedWrites:
    """The writes under way through Obsidian, in ``folder``."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def begin(
        self, path: str, action: AuditAction, old: bytes | None, old_hash: str | None, origin: str
    ) -> Path:
        """Keep, durably, what recording the write of ``path`` will need; the file to
        :meth:`end` once it is recorded."""
        head: dict[str, object] = {
            "path": path,
            "action": action,
            "oldHash": old_hash,
            "origin": origin,
            "absent": old is None,
        }
        file = self.folder / f"{time.time_ns():020d}{SUFFIX}"
        data = json.dumps(head).encode() + b"\n" + (old or b"")
        write_atomic(file, data, mode=PRIVATE_FILE, private=True)
        return file

    def end(self, file: Path) -> None:
        """The write ``file`` was kept for is recorded (or was not made)."""
        remove_durably(file)

    def recover(
        self,
        snapshots: SnapshotStore,
        audit: AuditLog,
        file_hash: Callable[[str], str | None],
    ) -> int:
        """Record the writes Obsidian made before a crash cut their recording short (see the
        module docstring); how many. Call before any write (at start)."""
        recovered = 0
        for file in sorted(self.folder.glob(f"*{SUFFIX}")) if self.folder.is_dir() else []:
            try:
                head_line, _, old = file.read_bytes().partition(b"\n")
                head = json.loads(head_line)
                path, old_hash = str(head["path"]), head["oldHash"]
                now = file_hash(path)
            except Exception as exc:  # an unreadable leftover, a note now out of bounds
                logger.warning("A write asked of Obsidian could not be checked (%s).", exc)
                now = old_hash = None
            if now is not None and now != old_hash:
                snapshot = snapshots.save(path, None if head["absent"] else old, now)
                snapshots.commit(snapshot)
                audit.record(path, head["action"], old_hash, now, str(head["origin"]))
                recovered += 1
            with contextlib.suppress(FileNotFoundError):
                file.unlink()
        return recovered
