"""The search database's schema as named, append-only migrations, and how to open it.

Never edit a migration that has shipped: append a new one. Each runs once, in its own
transaction, and is recorded by name in ``migrations``.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from plugin_bridge.vault.datadir import PRIVATE_FILE
from plugin_bridge.vault.paths import name_key

logger = logging.getLogger(__name__)

MIGRATIONS: Final[tuple[tuple[str, str], ...]] = (
    (
        "001_notes_and_fts",
        """
        CREATE TABLE notes (
            id INTEGER PRIMARY KEY,
            path TEXT NOT NULL UNIQUE,
            mtime REAL NOT NULL,
            size INTEGER NOT NULL,
            hash TEXT NOT NULL,
            title TEXT NOT NULL
        );
        CREATE VIRTUAL TABLE notes_fts USING fts5(
            title, aliases, headings, tags, body,
            tokenize = 'unicode61 remove_diacritics 2'
        );
        CREATE VIRTUAL TABLE notes_cjk USING fts5(text, tokenize = 'trigram');
        CREATE TABLE tags (note INTEGER NOT NULL, tag TEXT NOT NULL);
        CREATE INDEX tags_by_tag ON tags(tag);
        CREATE INDEX tags_by_note ON tags(note);
        CREATE TABLE links (src INTEGER NOT NULL, target TEXT NOT NULL);
        CREATE INDEX links_by_target ON links(target);
        CREATE INDEX links_by_src ON links(src);
        """,
    ),
    (
        # Files too large or not text were read again at every start; remember them instead.
        "002_skipped_files",
        """
        CREATE TABLE skipped (
            path TEXT PRIMARY KEY,
            mtime REAL NOT NULL,
            size INTEGER NOT NULL,
            reason TEXT NOT NULL
        ) WITHOUT ROWID;
        """,
    ),
    (
        # Links are stored once, as the case-folded target, and resolved when asked (a bare
        # name also matched notes of that name in other folders). Every note is read again.
        "003_links_resolved_on_read",
        """
        DELETE FROM links;
        UPDATE notes SET mtime = -1, hash = '';
        """,
    ),
    (
        # CJK runs are indexed as bigram tokens: a trigram table cannot answer one- and
        # two-character words from its index (see cjk.py). Every note is read again.
        "004_cjk_bigrams",
        """
        DROP TABLE notes_cjk;
        CREATE VIRTUAL TABLE notes_cjk USING fts5(text, tokenize = 'unicode61 remove_diacritics 0');
        UPDATE notes SET mtime = -1, hash = '';
        """,
    ),
    (
        # Semantic search: notes split into chunks along headings (chunks.py), one vector per
        # chunk hash and embedding model (a rowid table: lookups by (model, hash) stay in the
        # index and never read the 1-3 KB vectors), and which models' vectors are complete.
        # Every note is read again to make its chunks.
        "005_chunks_and_vectors",
        """
        CREATE TABLE chunks (
            id INTEGER PRIMARY KEY,
            note INTEGER NOT NULL,
            seq INTEGER NOT NULL,
            heading TEXT NOT NULL,
            text TEXT NOT NULL,
            hash TEXT NOT NULL
        );
        CREATE INDEX chunks_by_note ON chunks(note);
        CREATE INDEX chunks_by_hash ON chunks(hash);
        CREATE TABLE vectors (
            id INTEGER PRIMARY KEY,
            model TEXT NOT NULL,
            hash TEXT NOT NULL,
            vector BLOB NOT NULL
        );
        CREATE UNIQUE INDEX vectors_by_model_hash ON vectors(model, hash);
        CREATE TABLE embedding_models (
            model TEXT PRIMARY KEY,
            dims INTEGER NOT NULL,
            complete INTEGER NOT NULL DEFAULT 0,
            updated_at TEXT NOT NULL
        );
        UPDATE notes SET mtime = -1, hash = '';
        """,
    ),
    (
        # Ranked word search: each note's words also as Snowball stems tagged with their
        # language (lexical/words.py), in three stem columns weighted like the fields they come
        # from, and the index's vocabulary for typos (lexical/typos.py). FTS5 tables cannot gain
        # columns: the table is made anew and every note read again.
        "006_stems_and_vocabulary",
        """
        DROP TABLE notes_fts;
        CREATE VIRTUAL TABLE notes_fts USING fts5(
            title, aliases, headings, tags, body, stem_title, stem_headings, stem_body,
            tokenize = 'unicode61 remove_diacritics 2'
        );
        CREATE VIRTUAL TABLE notes_vocab USING fts5vocab(notes_fts, 'row');
        UPDATE notes SET mtime = -1, hash = '';
        """,
    ),
    (
        # The CJK side table gets a title column (title and aliases; the body in ``text``), so
        # a CJK word in thousands of notes is ranked among those with it in their title first
        # without reading each note's row (lexical/search.py). Every note is read again.
        "007_cjk_titles",
        """
        DROP TABLE notes_cjk;
        CREATE VIRTUAL TABLE notes_cjk USING fts5(
            title, text, tokenize = 'unicode61 remove_diacritics 0'
        );
        UPDATE notes SET mtime = -1, hash = '';
        """,
    ),
    (
        # A tag, path or folder filter on hybrid search reads the hashes of its notes' chunks:
        # an index holding both answers that without reading the chunks' text (a path filter
        # over a quarter of 100,000 notes read 1.2 GB of rows, 0.9 s). It replaces the index on
        # ``note`` alone, which it covers.
        "008_chunk_hashes_by_note",
        """
        CREATE INDEX chunks_by_note_hash ON chunks(note, hash);
        DROP INDEX chunks_by_note;
        """,
    ),
    (
        # Front matter for ``[property]`` and ``[property:value]`` search (lexical/filters.py):
        # one row per property and value, both case-folded (lexical/parse.py). Every note is
        # read again.
        "009_properties",
        """
        CREATE TABLE properties (note INTEGER NOT NULL, key TEXT NOT NULL, value TEXT);
        CREATE INDEX properties_by_key ON properties(key, value);
        CREATE INDEX properties_by_note ON properties(note);
        UPDATE notes SET mtime = -1, hash = '';
        """,
    ),
    (
        # FTS5 keeps a transaction's new rows in memory up to ``hashsize`` (1 MB by default)
        # and writes a segment each time it fills, which later merges read and write again: a
        # batch of 500 notes made a dozen segments. At 16 MB a batch is mostly one segment,
        # written at its commit (bench/search.py --serve: the writer's CPU 9.5 s → 6.5 s on
        # 10,000 notes). The memory is held only during a write transaction.
        "010_fts_flush_size",
        """
        INSERT INTO notes_fts(notes_fts, rank) VALUES('hashsize', 16777216);
        INSERT INTO notes_cjk(notes_cjk, rank) VALUES('hashsize', 16777216);
        """,
    ),
    (
        # The CJK side table keeps only its index, not a copy of its bigram text (content=''):
        # nothing reads that text back (snippets come from the body), and writing it was a
        # sixth of the writer's time on 10,000 notes (bench/search.py --serve). A row is
        # deleted with the bigrams of the note's stored title, aliases and body
        # (``Indexer._drop_content``). The rows are copied over: no note is read again.
        "011_cjk_index_only",
        """
        CREATE VIRTUAL TABLE notes_cjk_index USING fts5(
            title, text, content = '', tokenize = 'unicode61 remove_diacritics 0'
        );
        INSERT INTO notes_cjk_index(notes_cjk_index, rank) VALUES('hashsize', 16777216);
        INSERT INTO notes_cjk_index(rowid, title, text) SELECT rowid, title, text FROM notes_cjk;
        DROP TABLE notes_cjk;
        ALTER TABLE notes_cjk_index RENAME TO notes_cjk;
        """,
    ),
)


def connect(path: str, *, readonly: bool = False) -> sqlite3.Connection:
    """A WAL-mode connection usable from any thread (callers serialise it) that waits for a
    busy writer instead of failing; ``readonly`` refuses writes."""
    if not readonly and path != ":memory:":
        with contextlib.suppress(OSError):  # 0600 before SQLite makes it (its -wal, -shm follow)
            os.close(os.open(path, os.O_RDWR | os.O_CREAT, PRIVATE_FILE))
    conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
    conn.create_function("folded", 1, name_key, deterministic=True)  # case-blind folders
    conn.execute("PRAGMA busy_timeout=5000")
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA temp_store=MEMORY")
    if readonly:
        conn.execute("PRAGMA query_only=1")
    else:
        conn.execute("PRAGMA cache_size=-32768")  # 32 MB: FTS5 segment merges stay in memory
    return conn


def migrate(
    conn: sqlite3.Connection, migrations: Sequence[tuple[str, str]] = MIGRATIONS
) -> list[str]:
    """Apply, in order, the ``migrations`` this database has not recorded (the search index's
    by default); return their names."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"
    )
    done = {row[0] for row in conn.execute("SELECT name FROM migrations")}
    applied = []
    for name, sql in migrations:
        if name in done:
            continue
        conn.execute("BEGIN IMMEDIATE")
        try:
            for statement in _statements(sql):
                conn.execute(statement)
            conn.execute(
                "INSERT INTO migrations VALUES (?, strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))",
                (name,),
            )
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        applied.append(name)
    return applied


def _statements(sql: str) -> list[str]:
    """Split a script into complete statements (a ``;`` inside a string does not split)."""
    statements: list[str] = []
    pending = ""
    for part in sql.split(";"):
        pending += part + ";"
        if sqlite3.complete_statement(pending):
            if pending.strip(" \n;"):
                statements.append(pending.strip())
            pending = ""
    return statements


def open_store(
    path: Path, migrations: Sequence[tuple[str, str]], *, afresh: str
) -> sqlite3.Connection:
    """``path`` connected and migrated; a file that is not a readable database (garbage,
    truncated) is moved aside as ``<name>.broken-<UTC time>`` with one logged sentence naming
    it and saying ``afresh`` (what starting from an empty store means), and a new one is used."""
    try:
        return _opened(path, migrations)
    except sqlite3.DatabaseError as exc:
        if isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc):
            raise
        broken = path.with_name(
            f"{path.name}.broken-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}"
        )
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(f"{path}{suffix}"):
                os.replace(f"{path}{suffix}", f"{broken}{suffix}")
        logger.warning(
            "%s is not a readable database (%s): moved it aside as %s; %s.",
            path,
            exc,
            broken.name,
            afresh,
        )
    return _opened(path, migrations)


def _opened(path: Path, migrations: Sequence[tuple[str, str]]) -> sqlite3.Connection:
    conn = connect(str(path))
    try:
        migrate(conn, migrations)
    except BaseException:
        conn.close()
        raise
    return conn
