"""The vault's notes a page at a time, from the index: path, title and size, in path order,
each page starting after the last path of the one before (a keyset on the notes table's unique
path index, so every page costs the same however deep it is).

The cursor is opaque to clients: the last path of the page, base64url-encoded. The list is the
index's: notes the first scan has not reached yet, excluded folders and skipped files (too
large, not text) are not in it.
"""

from __future__ import annotations

import base64
import binascii
from typing import TYPE_CHECKING, Final, NamedTuple

if TYPE_CHECKING:
    from plugin_bridge.vault.lexical.reader import IndexReader

DEFAULT_PAGE: Final = 500
MAX_PAGE: Final = 1000


class ListedNote(NamedTuple):
    path: str
    title: str
    size: int


class NotesPage(NamedTuple):
    notes: list[ListedNote]
    next_cursor: str | None
    """None on the last page."""


class InvalidCursor(ValueError):
    """A cursor this server did not give; ``str(error)`` says what to do."""


def notes_page(reader: IndexReader, cursor: str | None, limit: int = DEFAULT_PAGE) -> NotesPage:
    """Up to ``limit`` notes after ``cursor`` (from the start without one), read on the index's
    door (``await index.execute(lambda reader: notes_page(reader, cursor, limit))``). Raises
    :class:`InvalidCursor`, and sqlite3.Error while a damaged index is rebuilt."""
    after = _decode(cursor) if cursor else ""
    limit = max(1, min(limit, MAX_PAGE))
    rows = reader.page(after, limit + 1)
    notes = [ListedNote(path, title, size) for path, title, size in rows[:limit]]
    more = len(rows) > limit
    return NotesPage(notes, _encode(notes[-1].path) if more else None)


def _encode(path: str) -> str:
    return base64.urlsafe_b64encode(path.encode("utf-8")).decode("ascii")


def _decode(cursor: str) -> str:
    try:
        raw = base64.b64decode(cursor.encode("ascii"), altchars=b"-_", validate=True)
        return raw.decode("utf-8")
    except (UnicodeError, binascii.Error, ValueError) as exc:
        raise InvalidCursor(
            "The cursor is not one this server gave: list again from the start."
        ) from exc
