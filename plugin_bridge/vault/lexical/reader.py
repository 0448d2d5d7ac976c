"""The index's reads, as methods over its read connection: searches and snippets, the chunks
and links of notes, PDF bodies, listing pages. Only the index's read door
(:meth:`SearchIndex.execute` / :meth:`SearchIndex.read`) makes one, on its thread; the modules
above never write SQL against the index's tables.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, NamedTuple

from plugin_bridge.vault.lexical import scoped
from plugin_bridge.vault.lexical import search as search_sql
from plugin_bridge.vault.lexical.parse import link_forms
from plugin_bridge.vault.lexical.query import Query
from plugin_bridge.vault.lexical.typos import Vocabulary

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class SearchHit:
    """One matching note; ``score`` is higher for better matches, ``snippet`` marks the match
    with ``**``, ``heading`` is the heading path it is under (None above the first heading or
    without a snippet)."""

    path: str
    title: str
    score: float
    snippet: str
    heading: str | None = None


class ChunkRow(NamedTuple):
    """A chunk with its note, as the index holds it."""

    hash: str
    note_id: int
    path: str
    title: str
    heading: str
    text: str
    seq: int


class NoteChunks(NamedTuple):
    """A note's id, its chunks' hashes and the link targets it holds."""

    note_id: int
    hashes: list[str]
    links: set[str]


class IndexReader:
    """The reads of one index over ``conn``: its read connection (owned by the read door), or
    the embedding job's own for :meth:`chunk_texts`. ``vocabulary``: typos are looked up in the
    vault's words."""

    def __init__(self, conn: sqlite3.Connection, vocabulary: Vocabulary | None = None) -> None:
        self.conn = conn
        self._vocabulary = vocabulary
        scoped.register(conn)  # line:(…) and section:(…) filters

    def search(
        self, query: Query, limit: int, *, snippets: bool = True, headings: bool = False
    ) -> list[SearchHit]:
        """The best ``limit`` notes for ``query``; ``snippets=False`` leaves them "" (a ranking
        for fusion); ``headings`` finds each snippet's heading path. A failure inside SQLite
        (but damage) is logged and finds nothing."""
        try:
            rows = search_sql.run(
                self.conn,
                query,
                limit,
                snippets=snippets,
                headings=headings,
                vocabulary=self._vocabulary,
            )
        except sqlite3.DatabaseError as exc:
            if is_damage(exc):
                raise
            logger.warning("A search failed inside SQLite (%s); returning no results.", exc)
            return []
        return [SearchHit(*row) for row in rows]

    def snippets(self, query: Query, paths: list[str]) -> dict[str, tuple[str, str | None]]:
        """The search snippets of ``query`` in these notes, each with its heading path (by
        path)."""
        try:
            return search_sql.snippets_for(self.conn, query, paths)
        except sqlite3.DatabaseError as exc:
            if is_damage(exc):
                raise
            logger.warning("Making snippets failed inside SQLite (%s).", exc)
            return {}

    def filtered_chunk_hashes(self, query: Query) -> list[str]:
        """Hashes of the chunks of the notes that pass the query's filters (not its words)."""
        return search_sql.filtered_chunk_hashes(self.conn, query)

    def filtered_chunk_count(self, query: Query, limit: int) -> int:
        """The chunks of the notes that pass the query's filters, counted up to ``limit``."""
        return search_sql.filtered_chunk_count(self.conn, query, limit)

    def filtered_among(self, query: Query, hashes: Sequence[str]) -> set[str]:
        """The hashes among ``hashes`` of chunks whose notes pass the query's filters."""
        return search_sql.filtered_among(self.conn, query, hashes)

    def chunks(self, hashes: Sequence[str]) -> list[ChunkRow]:
        """The chunks with these hashes, with their notes (chunks gone meanwhile are left out)."""
        if not hashes:
            return []
        marks = ", ".join("?" * len(hashes))
        rows = self.conn.execute(
            "SELECT c.hash, c.note, n.path, n.title, c.heading, c.text, c.seq FROM chunks c "
            f"JOIN notes n ON n.id = c.note WHERE c.hash IN ({marks})",
            list(hashes),
        )
        return [ChunkRow(*row) for row in rows]

    def chunk_texts(self, hashes: Sequence[str]) -> list[tuple[str, str, str, str]]:
        """(hash, note title, heading, text) of the chunks with these hashes that still exist,
        one row per hash."""
        marks = ", ".join("?" * len(hashes))
        return self.conn.execute(
            "SELECT c.hash, n.title, c.heading, c.text FROM chunks c "
            f"JOIN notes n ON n.id = c.note WHERE c.hash IN ({marks}) GROUP BY c.hash",
            list(hashes),
        ).fetchall()

    def note_chunks(self, rel: str) -> NoteChunks | None:
        """The note at ``rel``: its id, chunk hashes and link targets; None when not indexed."""
        row = self.conn.execute("SELECT id FROM notes WHERE path = ?", (rel,)).fetchone()
        if row is None:
            return None
        note_id = int(row[0])
        chunks = self.conn.execute("SELECT hash FROM chunks WHERE note = ?", (note_id,))
        links = self.conn.execute("SELECT target FROM links WHERE src = ?", (note_id,))
        return NoteChunks(note_id, [r[0] for r in chunks], {r[0] for r in links})

    def marks(self, note_id: int) -> tuple[set[str], set[str]]:
        """The tags and the link targets (both casefolded) of the note ``note_id``."""
        tags = self.conn.execute("SELECT tag FROM tags WHERE note = ?", (note_id,))
        links = self.conn.execute("SELECT target FROM links WHERE src = ?", (note_id,))
        return {r[0] for r in tags}, {r[0] for r in links}

    def backlinks(self, rel: str) -> list[str]:
        """Notes whose wikilinks resolve to ``rel``: by file name or by (partial) path."""
        targets = sorted(link_forms(rel))
        marks = ", ".join("?" * len(targets))
        sql = (
            "SELECT DISTINCT n.path FROM links l JOIN notes n ON n.id = l.src "
            f"WHERE l.target IN ({marks}) AND n.path != ? ORDER BY n.path"
        )
        return [row[0] for row in self.conn.execute(sql, (*targets, rel))]

    def bodies(self, paths: Sequence[str]) -> dict[str, str]:
        """The indexed text of these notes (a PDF's pages with their markers), by path."""
        marks = ", ".join("?" * len(paths))
        sql = (
            "SELECT n.path, f.body FROM notes n JOIN notes_fts f ON f.rowid = n.id "
            f"WHERE n.path IN ({marks})"
        )
        return dict(self.conn.execute(sql, list(paths)).fetchall())

    def count(self) -> int:
        """The indexed notes."""
        return int(self.conn.execute("SELECT count(*) FROM notes").fetchone()[0])

    def paths(self) -> list[str]:
        """Every indexed note's path, sorted."""
        return [row[0] for row in self.conn.execute("SELECT path FROM notes ORDER BY path")]

    def page(self, after: str, limit: int) -> list[tuple[str, str, int]]:
        """Up to ``limit`` notes (path, title, size) after the path ``after``, in path order."""
        return self.conn.execute(
            "SELECT path, title, size FROM notes WHERE path > ? ORDER BY path LIMIT ?",
            (after, limit),
        ).fetchall()


DAMAGE_CODES: Final = frozenset({10, 11, 26})
"""SQLite's primary result codes that mean a damaged file: SQLITE_IOERR ("disk I/O error", a
short read of a file overwritten or truncated under us), SQLITE_CORRUPT ("malformed") and
SQLITE_NOTADB ("not a database")."""
DAMAGE_WORDS: Final = ("disk i/o error", "malformed", "not a database", "vtable constructor failed")
"""The same in SQLite's words (FTS5 says "vtable constructor failed" when its tables are gone)."""


def is_damage(exc: BaseException) -> bool:
    """Whether ``exc`` says the database file is damaged (any of the errors above)."""
    if not isinstance(exc, sqlite3.DatabaseError):
        return False
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int) and code & 0xFF in DAMAGE_CODES:
        return True
    text = str(exc).lower()
    return any(word in text for word in DAMAGE_WORDS)
