"""The writing side of the search index: find what changed on disk and (re)index it.

Used only from the index's worker thread, which owns the one writing connection. A scan lists
the vault and compares each file's mtime and size with what the index recorded; only new,
changed and deleted files are read, and a changed file whose sha256 is unchanged is not parsed
again. Which files are notes is :mod:`plugin_bridge.vault.files`' rule; files over its size
limit or not UTF-8 text are skipped and remembered, never fatal.
"""

from __future__ import annotations

import hashlib
import logging
import os
import sqlite3
import stat
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Final, Literal

from plugin_bridge.vault.chunks import Chunk, chunk_hash, chunk_note
from plugin_bridge.vault.errors import VaultError
from plugin_bridge.vault.files import VaultFiles, is_indexed_name, read_text
from plugin_bridge.vault.lexical.cjk import bigrams
from plugin_bridge.vault.lexical.parse import ParsedNote, link_key, parse_note, properties
from plugin_bridge.vault.lexical.words import note_language, note_stems, tokens
from plugin_bridge.vault.pdf import PAGE_BREAK, PdfUnreadable, is_pdf_name
from plugin_bridge.vault.pdf_worker import extract_pages

logger = logging.getLogger(__name__)

IndexOutcome = Literal["added", "updated", "removed", "unchanged", "skipped", "absent"]
MERGE_PAGES: Final = 2000
"""Pages one merge step may write (FTS5's ``merge`` command; negative: merge every level)."""
CHECKPOINT_PAGES: Final = 1000
"""SQLite's default: the write-ahead log is copied into the database past this many pages."""
BULK_CHECKPOINT_PAGES: Final = 10_000
"""The same while a large backlog is written (about 40 MB of log)."""
Signature = tuple[float, int]
"""A file's (mtime, size): when both match the index, the file is not read."""


@dataclass(frozen=True)
class ScanStats:
    """What a start-up (or recovery) scan did: files indexed anew, re-indexed, dropped, left
    alone (unchanged on disk, or touched with the same content) and skipped (too big, binary)."""

    added: int = 0
    updated: int = 0
    removed: int = 0
    unchanged: int = 0
    skipped: int = 0

    def plus(self, outcomes: Iterable[IndexOutcome]) -> ScanStats:
        counts = dict(vars(self))
        for outcome in outcomes:
            if outcome in counts:
                counts[outcome] += 1
        return ScanStats(**counts)


@dataclass(frozen=True)
class Gone:
    """Not (or no longer) an indexable file: drop it from the index."""

    rel: str


@dataclass(frozen=True)
class Skipped:
    """Too large, binary or unparsable: drop it, and remember it so it is not read again."""

    rel: str
    signature: Signature
    reason: str


@dataclass(frozen=True)
class Note:
    """A parsed note, ready to store."""

    rel: str
    signature: Signature
    digest: str
    fields: tuple[str, str, str, str, str, str, str, str]
    """``notes_fts`` columns: title, aliases, headings, tags, body and their stems (title and
    aliases, headings and tags, body)."""
    tags: frozenset[str]
    links: frozenset[str]
    chunks: tuple[Chunk, ...] = ()
    properties: tuple[tuple[str, str | None], ...] = ()
    """Front matter as (name, value) rows (``parse.properties``)."""
    cjk: tuple[str, str] = ("", "")
    """The CJK side table's columns (:func:`cjk_columns`), made with the rest of the note:
    in a large scan that is the helper process, beside the writer (bench/search.py --serve)."""


Prepared = Gone | Skipped | Note
_CHANGED: frozenset[IndexOutcome] = frozenset({"added", "updated", "removed"})


class Indexer:
    """Reads the notes of ``files`` into the database behind ``conn``."""

    def __init__(self, conn: sqlite3.Connection, files: VaultFiles):
        self.conn = conn
        self.files = files
        self.root = files.root
        self._root = str(files.root)
        self.on_written: Callable[[], None] | None = None
        """Called (in the worker thread) after a transaction that changed notes or chunks, and
        when a scan has finished."""
        self.on_changed: Callable[[list[str]], None] | None = None
        """Called (in the worker thread) with the paths a transaction added, updated or
        removed: the index's change feed."""
        self.totals = (0, 0)
        """(notes, unreadable PDFs) as of the last transaction (or :meth:`count`): read
        without a query."""

    def count(self) -> None:
        """Count :attr:`totals` afresh (after opening the database)."""
        self.totals = _totals(self.conn)

    # -- finding work ----------------------------------------------------------------------

    def known(self, folder: str = "") -> dict[str, Signature]:
        """What the index recorded (notes and skipped files) under ``folder``."""
        sql = "SELECT path, mtime, size FROM {table}"
        params: tuple[str, ...] = ()
        if folder:
            sql += " WHERE path > ? AND path < ?"  # "0" sorts right after "/"
            params = (folder + "/", folder + "0")
        return {
            path: (mtime, size)
            for table in ("notes", "skipped")
            for path, mtime, size in self.conn.execute(sql.format(table=table), params)
        }

    def changes(
        self, folder: str = "", *, many: int = 0, on_many: Callable[[], object] | None = None
    ) -> tuple[list[str], int]:
        """Paths under ``folder`` that are new, changed or gone, and how many are unchanged;
        ``on_many()`` is called once, while the vault is still being listed, when ``many`` of
        them are new or changed (so a helper process can start meanwhile)."""
        known = self.known(folder)
        on_disk: dict[str, Signature] = {}
        changed: list[str] = []
        for rel, info in self.files.walk(folder, pdfs=True):
            signature = on_disk[rel] = (info.st_mtime, info.st_size)
            if known.get(rel) != signature:
                changed.append(rel)
                if len(changed) == many and on_many is not None:
                    on_many()
        removed = [rel for rel in known if rel not in on_disk]
        return changed + removed, len(on_disk) - len(changed)

    def expand(self, rel: str) -> list[str]:
        """A changed path as the note files to look at: itself, or what changed in a folder
        that moved in, or every indexed note under a folder that is gone."""
        full = os.path.join(self._root, rel)
        if os.path.isdir(full) and not os.path.islink(full):
            return self.changes(rel)[0]
        gone = [] if os.path.lexists(full) else list(self.known(rel))
        return ([rel] if is_indexed_name(rel) else []) + gone

    # -- reading (no database: may run in another thread) -----------------------------------

    def prepare(self, rel: str) -> Prepared:
        """Read and parse one path into what the index should hold for it (a PDF's text is
        extracted here, in the worker thread or the read-ahead process)."""
        full = os.path.join(self._root, rel)
        if self.files.ignored(rel) or not is_indexed_name(rel):
            return Gone(rel)
        pdf = is_pdf_name(rel)
        try:
            info = os.stat(full)
            if not stat.S_ISREG(info.st_mode) or (
                os.path.islink(full) and not self.files.inside(full)
            ):
                return Gone(rel)
            signature = (info.st_mtime, info.st_size)
            if pdf and info.st_size > self.files.pdf_max_bytes:
                return Skipped(rel, signature, "pdf_too_large")
            loaded = self._load(rel, full, pdf)
            if loaded is None:
                return Gone(rel)  # vanished between listing and reading
            raw, info = loaded
            signature = (info.st_mtime, info.st_size)
            if pdf:
                return _pdf_note(rel, signature, raw, extract_pages(rel, raw).pages)
            text = read_text(rel, raw)[0]
        except OSError:
            return Gone(rel)
        except PdfUnreadable as exc:
            return Skipped(rel, signature, f"pdf_{exc.reason}")
        except VaultError as exc:  # too large, not text
            return Skipped(rel, signature, exc.code)
        try:
            note = parse_note(rel, text)
        except Exception as exc:  # a parser bug must not stop the other notes
            logger.warning("Could not parse %s (%s); not indexing it.", rel, type(exc).__name__)
            return Skipped(rel, signature, "parse_error")
        return _note(rel, signature, raw, note, tuple(chunk_note(note.title, note.body)))

    def _load(self, rel: str, full: str, pdf: bool) -> tuple[bytes, os.stat_result] | None:
        if not pdf:
            return self.files.load(rel, full)
        with open(full, "rb") as handle:
            raw = handle.read(self.files.pdf_max_bytes + 1)
            info = os.fstat(handle.fileno())
        if len(raw) > self.files.pdf_max_bytes:
            raise PdfUnreadable(rel, "too_large", f"'{rel}' grew past the PDF size limit.")
        return raw, info

    # -- writing -----------------------------------------------------------------------------

    def apply(self, paths: Iterable[str]) -> list[IndexOutcome]:
        """Read, parse and (re)index or drop each path, in one transaction."""
        return self.write([self.prepare(rel) for rel in dict.fromkeys(paths)])

    def write(self, items: Sequence[Prepared]) -> list[IndexOutcome]:
        """Store prepared notes, skips and removals, in one transaction."""
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            outcomes = [self._write_one(item) for item in items]
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")
        self.count()
        if self.on_written is not None and any(o in _CHANGED for o in outcomes):
            self.on_written()
        if self.on_changed is not None:
            changed = [i.rel for i, o in zip(items, outcomes, strict=True) if o in _CHANGED]
            if changed:
                self.on_changed(changed)
        return outcomes

    def _write_one(self, item: Prepared) -> IndexOutcome:
        if isinstance(item, Gone):
            return self._remove(item.rel)
        if isinstance(item, Skipped):
            # an unreadable PDF is worth a line (once: it is not read again until it changes)
            log = logger.info if item.reason.startswith("pdf_") else logger.debug
            log("Not indexing %s: %s.", item.rel, item.reason.replace("_", " "))
            self._remove(item.rel)
            self.conn.execute(
                "INSERT INTO skipped (path, mtime, size, reason) VALUES (?, ?, ?, ?)",
                (item.rel, *item.signature, item.reason),
            )
            return "skipped"
        return self._write_note(item)

    def _write_note(self, note: Note) -> IndexOutcome:
        conn = self.conn
        row = conn.execute("SELECT id, hash FROM notes WHERE path = ?", (note.rel,)).fetchone()
        conn.execute("DELETE FROM skipped WHERE path = ?", (note.rel,))
        if row and row[1] == note.digest:
            conn.execute(
                "UPDATE notes SET mtime = ?, size = ? WHERE id = ?", (*note.signature, row[0])
            )
            return "unchanged"
        title = note.fields[0]
        if row:
            note_id = int(row[0])
            _drop_content(conn, note_id)
            conn.execute(
                "UPDATE notes SET mtime = ?, size = ?, hash = ?, title = ? WHERE id = ?",
                (*note.signature, note.digest, title, note_id),
            )
        else:
            cursor = conn.execute(
                "INSERT INTO notes (path, mtime, size, hash, title) VALUES (?, ?, ?, ?, ?)",
                (note.rel, *note.signature, note.digest, title),
            )
            assert cursor.lastrowid is not None
            note_id = cursor.lastrowid
        conn.execute(
            "INSERT INTO notes_fts (rowid, title, aliases, headings, tags, body, stem_title, "
            "stem_headings, stem_body) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (note_id, *note.fields),
        )
        if any(note.cjk):
            conn.execute(
                "INSERT INTO notes_cjk (rowid, title, text) VALUES (?, ?, ?)", (note_id, *note.cjk)
            )
        conn.executemany("INSERT INTO tags VALUES (?, ?)", [(note_id, t) for t in note.tags])
        conn.executemany("INSERT INTO links VALUES (?, ?)", [(note_id, t) for t in note.links])
        conn.executemany(
            "INSERT INTO properties VALUES (?, ?, ?)", [(note_id, *p) for p in note.properties]
        )
        conn.executemany(
            "INSERT INTO chunks (note, seq, heading, text, hash) VALUES (?, ?, ?, ?, ?)",
            [(note_id, c.seq, c.heading, c.text, c.hash) for c in note.chunks],
        )
        return "updated" if row else "added"

    def bulk(self, on: bool) -> None:
        """Checkpoint the write-ahead log less often while a large backlog is written (on),
        or as usual again (off): at every ~4 MB the checkpoint copied pages into the database
        that the next transactions changed again (measured with ``worker.BULK_WRITE``)."""
        pages = BULK_CHECKPOINT_PAGES if on else CHECKPOINT_PAGES
        self.conn.execute(f"PRAGMA wal_autocheckpoint={pages}")

    def merge_step(self, table: str) -> bool:
        """Merge some of ``table``'s full-text segments (at most ~2,000 pages written, in
        its own transaction: about a second at 100,000 notes); False once nothing is left."""
        before = self.conn.total_changes
        self.conn.execute(f"INSERT INTO {table}({table}, rank) VALUES('merge', -{MERGE_PAGES})")
        return self.conn.total_changes - before > 1

    def _remove(self, rel: str) -> IndexOutcome:
        gone = self.conn.execute("DELETE FROM skipped WHERE path = ?", (rel,)).rowcount
        row = self.conn.execute("SELECT id FROM notes WHERE path = ?", (rel,)).fetchone()
        if row is None:
            return "removed" if gone else "absent"
        _drop_content(self.conn, int(row[0]))
        self.conn.execute("DELETE FROM notes WHERE id = ?", (row[0],))
        return "removed"


def _totals(conn: sqlite3.Connection) -> tuple[int, int]:
    """The notes, and the PDFs skipped because they cannot be read (encrypted, damaged, over
    the size limit)."""
    notes, pdfs = conn.execute(
        "SELECT (SELECT count(*) FROM notes), "
        "(SELECT count(*) FROM skipped WHERE reason LIKE 'pdf_%')"
    ).fetchone()
    return int(notes), int(pdfs)


def _drop_content(conn: sqlite3.Connection, note_id: int) -> None:
    stored = conn.execute(
        "SELECT title, aliases, body FROM notes_fts WHERE rowid = ?", (note_id,)
    ).fetchone()
    if stored is not None and any(cjk := cjk_columns(*stored)):
        # the side table holds no text: a row is deleted with the values it was indexed from
        conn.execute(
            "INSERT INTO notes_cjk (notes_cjk, rowid, title, text) VALUES ('delete', ?, ?, ?)",
            (note_id, *cjk),
        )
    for sql in (
        "DELETE FROM notes_fts WHERE rowid = ?",
        "DELETE FROM tags WHERE note = ?",
        "DELETE FROM links WHERE src = ?",
        "DELETE FROM chunks WHERE note = ?",
        "DELETE FROM properties WHERE note = ?",
    ):
        conn.execute(sql, (note_id,))


def _note(
    rel: str, signature: Signature, raw: bytes, note: ParsedNote, chunks: tuple[Chunk, ...]
) -> Note:
    aliases = " ".join(note.aliases)
    headings, tags = "\n".join(note.headings), " ".join(note.tags)
    body = tokens(note.body)
    language = note_language(body)
    return Note(
        rel,
        signature,
        hashlib.sha256(raw).hexdigest(),
        fields=(
            note.title,
            aliases,
            headings,
            tags,
            note.body,
            note_stems(tokens(f"{note.title} {aliases}"), language),
            note_stems(tokens(f"{headings} {tags}"), language),
            note_stems(body, language),
        ),
        tags=frozenset(tag.casefold() for tag in note.tags),
        links=frozenset(map(link_key, note.links)),
        chunks=chunks,
        properties=tuple(properties(note.frontmatter)),
        cjk=cjk_columns(note.title, aliases, note.body),
    )


def cjk_columns(title: str, aliases: str, body: str) -> tuple[str, str]:
    """The CJK side table's columns for a note: the bigrams of its title and aliases, of its
    body (what a row is inserted and deleted with)."""
    return bigrams(f"{title}\n{aliases}"), bigrams(body)


def _pdf_note(rel: str, signature: Signature, raw: bytes, pages: list[str]) -> Note:
    """A PDF as a note: its name as title, its pages as the body (apart by PAGE_BREAK) and
    one chunk per page with text (``seq`` = page - 1). A page's hash is its text alone, so a
    changed PDF re-embeds only the pages whose text changed."""
    title = unicodedata.normalize("NFC", os.path.splitext(os.path.basename(rel))[0])
    chunks = tuple(
        Chunk(i, f"Page {i + 1}", text, chunk_hash(title, "", text))
        for i, text in ((i, " ".join(page.split())) for i, page in enumerate(pages))
        if text
    ) or (Chunk(0, "", "", chunk_hash(title, "", "")),)
    parsed = ParsedNote(title=title, body=PAGE_BREAK.join(pages))
    return _note(rel, signature, raw, parsed, chunks)
