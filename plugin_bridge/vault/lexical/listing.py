"""The vault's notes a page at a time, from the index: path, title and size, in path order,
each page starting after the last path of the one before (a keyset on the notes table's unique
path index, so every page costs the same however deep it is).

The cursor is opaque to clients: the last path of the page, base64url-encoded. The list is the
index's: excluded folders and skipped files (too large, not text) are not in it. Until the
first indexing is done, :func:`files_listing` lists the notes from the file system instead
(path and size, no title yet), in the same order and with the same cursors.
"""

from __future__ import annotations

import base64
import binascii
import bisect
from typing import TYPE_CHECKING, Final, NamedTuple

if TYPE_CHECKING:
    from plugin_bridge.vault.files import VaultFiles
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


def files_listing(files: VaultFiles) -> list[ListedNote]:
    """Every note and PDF the index would hold, from the file system, in path order (the
    index's: SQLite compares UTF-8 bytes, Python code points, which sort alike); no titles."""
    listed = [
        ListedNote(rel, "", info.st_size)
        for rel, info in files.walk(pdfs=True)
        if info.st_size <= (files.pdf_max_bytes if rel.endswith(".pdf") else files.max_bytes)
    ]
    return sorted(listed)


def listing_page(listed: list[ListedNote], cursor: str | None, limit: int) -> NotesPage:
    """The page of ``listed`` (sorted by path) after ``cursor``, as :func:`notes_page` gives
    the index's."""
    after = _decode(cursor) if cursor else ""
    limit = max(1, min(limit, MAX_PAGE))
    start = bisect.bisect_right(listed, after, key=lambda note: note.path)
    notes = listed[start : start + limit]
    more = start + limit < len(listed)
    return NotesPage(notes, _encode(notes[-1].path) if more and notes else None)


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
