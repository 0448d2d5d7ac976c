"""What the note store hands back: a note's text, a note's place in a listing, a write worked
out but not made (:class:`PlannedWrite`), and what a write left on disk."""

from __future__ import annotations

from dataclasses import dataclass, field

from plugin_bridge.vault.notes.audit import AuditAction, sha256
from plugin_bridge.vault.notes.encoding import unified_diff


@dataclass(frozen=True)
class NoteContent:
    """A note's text and ``hash``, the sha256 hex of its file's bytes (pass it to ``modify``)."""

    path: str
    content: str
    hash: str
    lossy: bool = False
    """Some bytes were not UTF-8 and read as U+FFFD; only an explicit overwrite may write it."""


@dataclass(frozen=True)
class WriteResult:
    """What a write left on disk; ``hash`` is "" when an undo deleted the note."""

    path: str
    hash: str
    previous_hash: str | None
    created: bool


@dataclass(frozen=True)
class PlannedWrite:
    """A write worked out but not made: the note's text now (None for a new note) and after
    (both with LF line breaks, as editors hold them), and the exact bytes the store would write."""

    path: str
    before: str | None
    after: str
    action: AuditAction
    old: bytes | None = field(repr=False)
    data: bytes = field(repr=False)

    @property
    def old_hash(self) -> str | None:
        return None if self.old is None else sha256(self.old)

    @property
    def diff(self) -> str:
        return unified_diff(self.path, self.before, self.after)


@dataclass(frozen=True)
class NoteInfo:
    """A note found by ``list_notes``: its path, size in bytes and modification time."""

    path: str
    size: int
    mtime: float
