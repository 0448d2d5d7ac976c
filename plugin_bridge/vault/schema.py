"""The search database's schema as named, append-only migrations (never edit a shipped one)."""

from __future__ import annotations

import sqlite3
from typing import Final

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
        INSERT INTO notes_fts (notes_fts, rank) VALUES ('rank', 'bm25(10.0, 8.0, 4.0, 3.0, 1.0)');
        CREATE VIRTUAL TABLE notes_cjk USING fts5(text, tokenize = 'unicode61');
        CREATE TABLE tags (note INTEGER NOT NULL, tag TEXT NOT NULL);
        CREATE INDEX tags_by_tag ON tags(tag);
        CREATE INDEX tags_by_note ON tags(note);
        CREATE TABLE links (src INTEGER NOT NULL, target TEXT NOT NULL);
        CREATE INDEX links_by_target ON links(target);
        CREATE INDEX links_by_src ON links(src);
        """,
    ),
)


def connect(path: str, *, readonly: bool = False) -> sqlite3.Connection:
    """A connection in WAL mode that waits for a busy writer instead of failing."""
    conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA busy_timeout=5000")
    if readonly:
        conn.execute("PRAGMA query_only=1")
    return conn


def migrate(conn: sqlite3.Connection) -> list[str]:
    """Apply the migrations this database has not seen, in order; return their names."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"
    )
    done = {row[0] for row in conn.execute("SELECT name FROM migrations")}
    applied = []
    for name, sql in MIGRATIONS:
        if name in done:
            continue
        conn.execute("BEGIN")
        for statement in filter(str.strip, sql.split(";")):
            conn.execute(statement)
        conn.execute(
            "INSERT INTO migrations VALUES (?, strftime('%Y-%m-%dT%H:%M:%SZ','now'))", (name,)
        )
        conn.execute("COMMIT")
        applied.append(name)
    return applied
