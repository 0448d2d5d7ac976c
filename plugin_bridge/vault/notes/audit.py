"""Write history kept in the data dir, never in the vault: undo snapshots and the audit log.

Snapshots: ``snapshots/<sha256 of the note path>/<sequence>-<hash written>.snap`` holds a note's
bytes from before one write (``.absent`` when that write created the note); the newest
``SNAPSHOTS_KEPT`` per note are kept. A snapshot is saved ``.pending`` and committed only once its
write has happened, so a crash in between leaves nothing that undo could mistake for a write.

The audit log ``audit.jsonl`` has one JSON object per write: time (ISO 8601 UTC), path, action,
oldHash, newHash, origin — hashes, never note contents.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
import time
from collections import deque
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final, Literal

from plugin_bridge.vault.datadir import PRIVATE_FILE, private_folder
from plugin_bridge.vault.notes.atomic import remove_durably, write_atomic

SNAPSHOTS_KEPT: Final = 20
AuditAction = Literal["create", "overwrite", "modify", "append", "edit", "undo", "unconfirmed"]
"""``unconfirmed``: Obsidian said it wrote (oldHash: the hash it gave) and the file never got
there (newHash: what it held)."""

_CONTENT_SUFFIX: Final = ".snap"
_ABSENT_SUFFIX: Final = ".absent"
_PENDING_SUFFIX: Final = ".pending"


def sha256(data: bytes) -> str:
    """Hex SHA-256 of ``data``: the ``hash`` of a note is this of its file's bytes."""
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class Snapshot:
    """A note as it was before one write: ``content`` None means the write created it."""

    file: Path
    content: bytes | None
    written_hash: str
    """sha256 of what that write produced; undo is safe only while the note still has it."""


class SnapshotStore:
    """Per-note stacks of pre-write snapshots under ``folder``; callers serialise per path."""

    def __init__(self, folder: Path, *, keep: int = SNAPSHOTS_KEPT) -> None:
        self.folder = folder
        self.keep = keep

    def save(self, rel_path: str, before: bytes | None, written_hash: str) -> Snapshot:
        """Record ``before`` as the state to restore if the write producing ``written_hash``
        is undone; drops the oldest snapshots beyond ``keep``."""
        folder = self._folder(rel_path)
        existing = self._files(folder)
        sequence = time.time_ns()
        if existing:
            sequence = max(sequence, int(existing[-1].name.split("-", 1)[0]) + 1)
        suffix = _ABSENT_SUFFIX if before is None else _CONTENT_SUFFIX
        file = folder / f"{sequence:020d}-{written_hash}{suffix}{_PENDING_SUFFIX}"
        write_atomic(file, before or b"", mode=PRIVATE_FILE, private=True)
        return Snapshot(file, before, written_hash)

    def commit(self, snapshot: Snapshot) -> None:
        """The write ``snapshot`` was taken for has happened: make it undoable, drop the oldest
        snapshots beyond ``keep``."""
        final = snapshot.file.with_suffix("")
        snapshot.file.replace(final)
        existing = self._files(final.parent)
        for stale in existing[: max(0, len(existing) - self.keep)]:
            stale.unlink(missing_ok=True)

    def latest(self, rel_path: str) -> Snapshot | None:
        """The snapshot taken before the last write of ``rel_path``, if any is left (pending
        ones, left by a crash before their write, are removed)."""
        folder = self._folder(rel_path)
        if folder.is_dir():
            for leftover in folder.glob(f"*{_PENDING_SUFFIX}"):
                leftover.unlink(missing_ok=True)
        files = self._files(folder)
        if not files:
            return None
        file = files[-1]
        written_hash = file.stem.split("-", 1)[1]
        content = None if file.suffix == _ABSENT_SUFFIX else file.read_bytes()
        return Snapshot(file, content, written_hash)

    def discard(self, snapshot: Snapshot) -> None:
        """Forget ``snapshot`` (once restored, or when its write failed)."""
        remove_durably(snapshot.file)

    def _folder(self, rel_path: str) -> Path:
        return self.folder / sha256(rel_path.encode("utf-8"))[:32]

    @staticmethod
    def _files(folder: Path) -> list[Path]:
        if not folder.is_dir():
            return []
        return sorted(p for p in folder.iterdir() if p.suffix in (_CONTENT_SUFFIX, _ABSENT_SUFFIX))


class AuditLog:
    """Appends one JSON line per write to ``path``; safe to call from several threads."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()

    def record(
        self,
        rel_path: str,
        action: AuditAction,
        old_hash: str | None,
        new_hash: str | None,
        origin: str,
    ) -> None:
        """Log that ``origin`` (model, user, ...) did ``action`` to ``rel_path``."""
        entry = {
            "time": datetime.now(UTC).isoformat(timespec="milliseconds"),
            "path": rel_path,
            "action": action,
            "oldHash": old_hash,
            "newHash": new_hash,
            "origin": origin,
        }
        line = json.dumps(entry, ensure_ascii=False) + "\n"
        with self._lock:
            private_folder(self.path.parent)
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, PRIVATE_FILE)
            with os.fdopen(fd, "a", encoding="utf-8") as log:
                log.write(line)

    def entries(self, limit: int) -> list[dict[str, Any]]:
        """The last ``limit`` entries, newest first (lines that are not JSON are skipped)."""
        try:
            with self.path.open(encoding="utf-8") as log:
                lines = deque(log, maxlen=limit)
        except FileNotFoundError:
            return []
        found: list[dict[str, Any]] = []
        for line in reversed(lines):
            with contextlib.suppress(ValueError):
                entry = json.loads(line)
                if isinstance(entry, dict):
                    found.append(entry)
        return found
