"""The writing side of the search index: find what changed on disk and (re)index it.

Used only from the index's worker thread, which owns the one writing connection. A scan lists
the vault and compares each file's mtime and size with what the index recorded; only new,
changed and deleted files are read, and a changed file whose sha256 is unchanged is not parsed
again. Files over 5 MB or not UTF-8 text are skipped and remembered, never fatal.
"""

from __future__ import annotations

import hashlib
import logging
import os
import sqlite3
import stat
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from plugin_bridge.vault.cjk import bigrams
from plugin_bridge.vault.parse import link_key, parse_note
from plugin_bridge.vault.paths import READABLE_SUFFIXES, to_posix

logger = logging.getLogger("plugin_bridge.vault.index")

MAX_NOTE_BYTES: Final = 5 * 1024 * 1024
_BINARY_SNIFF: Final = 8192

Outcome = Literal["added", "updated", "removed", "unchanged", "skipped", "absent"]
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

    def plus(self, outcomes: Iterable[Outcome]) -> ScanStats:
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
    fields: tuple[str, str, str, str, str]
    """``notes_fts`` columns: title, aliases, headings, tags, body."""
    cjk: str
    tags: frozenset[str]
    links: frozenset[str]


Prepared = Gone | Skipped | Note


class Indexer:
    """Reads notes under ``root`` into the database behind ``conn``.

    ``ignored(rel_path)`` says which vault-relative paths (files or folders) are never indexed.
    """

    def __init__(self, conn: sqlite3.Connection, root: Path, ignored: Callable[[str], bool]):
        self.conn = conn
        self.root = root
        self._root = str(root)
        self._ignored = ignored

    # -- finding work ----------------------------------------------------------------------

    def walk(self, folder: str = "") -> dict[str, Signature]:
        """Every indexable file under ``folder`` (vault-relative, "" = all) and its signature."""
        found: dict[str, Signature] = {}
        stack = [os.path.join(self._root, folder) if folder else self._root]
        while stack:
            try:
                entries = list(os.scandir(stack.pop()))
            except OSError:
                continue  # vanished or unreadable folder
            for entry in entries:
                rel = to_posix(os.path.relpath(entry.path, self._root))
                if self._ignored(rel):
                    continue
                try:
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(entry.path)
                    elif _readable(rel) and self._inside(entry.path, entry.is_symlink()):
                        info = entry.stat()
                        if stat.S_ISREG(info.st_mode):
                            found[rel] = (info.st_mtime, info.st_size)
                except OSError:
                    continue  # vanished between listing and stat: it is not there
        return found

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

    def changes(self, folder: str = "") -> tuple[list[str], int]:
        """Paths under ``folder`` that are new, changed or gone, and how many are unchanged."""
        on_disk = self.walk(folder)
        known = self.known(folder)
        changed = [rel for rel, signature in on_disk.items() if known.get(rel) != signature]
        removed = [rel for rel in known if rel not in on_disk]
        return changed + removed, len(on_disk) - len(changed)

    def expand(self, rel: str) -> list[str]:
        """A changed path as the note files to look at: itself, or what changed in a folder
        that moved in, or every indexed note under a folder that is gone."""
        full = os.path.join(self._root, rel)
        if os.path.isdir(full) and not os.path.islink(full):
            return self.changes(rel)[0]
        gone = [] if os.path.lexists(full) else list(self.known(rel))
        return ([rel] if _readable(rel) else []) + gone

    # -- reading (no database: may run in another thread) -----------------------------------

    def prepare(self, rel: str) -> Prepared:
        """Read and parse one path into what the index should hold for it."""
        full = os.path.join(self._root, rel)
        if self._ignored(rel) or not _readable(rel):
            return Gone(rel)
        try:
            info = os.stat(full)
            if not stat.S_ISREG(info.st_mode) or not self._inside(full, os.path.islink(full)):
                return Gone(rel)
            signature = (info.st_mtime, info.st_size)
            if info.st_size > MAX_NOTE_BYTES:
                return Skipped(rel, signature, "too_large")
            with open(full, "rb") as handle:
                raw = handle.read(MAX_NOTE_BYTES + 1)
        except OSError:
            return Gone(rel)  # vanished between listing and reading
        if len(raw) > MAX_NOTE_BYTES:
            return Skipped(rel, signature, "too_large")
        if b"\x00" in raw[:_BINARY_SNIFF]:
            return Skipped(rel, signature, "not_text")
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError:
            return Skipped(rel, signature, "not_text")
        try:
            note = parse_note(rel, text)
        except Exception as exc:  # a parser bug must not stop the other notes
            logger.warning("Could not parse %s (%s); not indexing it.", rel, type(exc).__name__)
            return Skipped(rel, signature, "parse_error")
        aliases = " ".join(note.aliases)
        return Note(
            rel,
            signature,
            hashlib.sha256(raw).hexdigest(),
            fields=(note.title, aliases, "\n".join(note.headings), " ".join(note.tags), note.body),
            cjk=bigrams(f"{note.title}\n{aliases}\n{note.body}"),
            tags=frozenset(tag.casefold() for tag in note.tags),
            links=frozenset(map(link_key, note.links)),
        )

    # -- writing -----------------------------------------------------------------------------

    def apply(self, paths: Iterable[str]) -> list[Outcome]:
        """Read, parse and (re)index or drop each path, in one transaction."""
        return self.write([self.prepare(rel) for rel in dict.fromkeys(paths)])

    def write(self, items: Sequence[Prepared]) -> list[Outcome]:
        """Store prepared notes, skips and removals, in one transaction."""
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            outcomes = [self._write_one(item) for item in items]
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")
        return outcomes

    def _write_one(self, item: Prepared) -> Outcome:
        if isinstance(item, Gone):
            return self._remove(item.rel)
        if isinstance(item, Skipped):
            logger.debug("Not indexing %s: %s.", item.rel, item.reason.replace("_", " "))
            self._remove(item.rel)
            self.conn.execute(
                "INSERT INTO skipped (path, mtime, size, reason) VALUES (?, ?, ?, ?)",
                (item.rel, *item.signature, item.reason),
            )
            return "skipped"
        return self._write_note(item)

    def _write_note(self, note: Note) -> Outcome:
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
            "INSERT INTO notes_fts (rowid, title, aliases, headings, tags, body) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (note_id, *note.fields),
        )
        if note.cjk:
            conn.execute("INSERT INTO notes_cjk (rowid, text) VALUES (?, ?)", (note_id, note.cjk))
        conn.executemany("INSERT INTO tags VALUES (?, ?)", [(note_id, t) for t in note.tags])
        conn.executemany("INSERT INTO links VALUES (?, ?)", [(note_id, t) for t in note.links])
        return "updated" if row else "added"

    def _remove(self, rel: str) -> Outcome:
        gone = self.conn.execute("DELETE FROM skipped WHERE path = ?", (rel,)).rowcount
        row = self.conn.execute("SELECT id FROM notes WHERE path = ?", (rel,)).fetchone()
        if row is None:
            return "removed" if gone else "absent"
        _drop_content(self.conn, int(row[0]))
        self.conn.execute("DELETE FROM notes WHERE id = ?", (row[0],))
        return "removed"

    def _inside(self, path: str, is_link: bool) -> bool:
        """A symlinked note is indexed only when it points inside the vault."""
        if not is_link:
            return True
        real = os.path.realpath(path)
        return real == self._root or real.startswith(self._root + os.sep)


def _readable(rel: str) -> bool:
    return os.path.splitext(rel)[1].lower() in READABLE_SUFFIXES


def _drop_content(conn: sqlite3.Connection, note_id: int) -> None:
    for sql in (
        "DELETE FROM notes_fts WHERE rowid = ?",
        "DELETE FROM notes_cjk WHERE rowid = ?",
        "DELETE FROM tags WHERE note = ?",
        "DELETE FROM links WHERE src = ?",
    ):
        conn.execute(sql, (note_id,))
