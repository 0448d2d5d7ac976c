"""The persistent, incremental, live search index of one vault (SQLite FTS5).

A worker thread owns the writing connection: it scans the vault on start (only new, changed
and deleted files are processed, in batched transactions) and then applies changes that the
watcher or our own writes queue for it. Searches use a separate read connection, so they answer
at once during indexing, from what is indexed so far, and say how many files are pending.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import queue
import sqlite3
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from stat import S_ISREG

from plugin_bridge.vault import search as search_sql
from plugin_bridge.vault.parse import parse_note
from plugin_bridge.vault.paths import READABLE_SUFFIXES, is_ignored, to_posix
from plugin_bridge.vault.query import spaced
from plugin_bridge.vault.schema import connect, migrate
from plugin_bridge.vault.watcher import watch_vault

logger = logging.getLogger("plugin_bridge.vault.index")

MAX_NOTE_BYTES = 5 * 1024 * 1024
BATCH = 500
WATCH_READY_SECONDS = 5.0


@dataclass(frozen=True)
class SearchHit:
    path: str
    title: str
    score: float
    snippet: str


@dataclass(frozen=True)
class SearchResults:
    hits: list[SearchHit]
    pending: int
    took_ms: float


@dataclass
class ScanStats:
    """What the last start-up scan found."""

    added: int = 0
    updated: int = 0
    removed: int = 0
    unchanged: int = 0
    skipped: int = 0


@dataclass
class _Work:
    path: str
    done: threading.Event | None = field(default=None)


_STOP = _Work("")


class SearchIndex:
    """Full-text search over the notes of the vault at ``root``, stored at ``db_path``."""

    def __init__(
        self,
        root: Path,
        db_path: Path,
        *,
        watch: bool = True,
        debounce_ms: int = 30,
        excluded: frozenset[Path] = frozenset(),
    ) -> None:
        self.root = root.resolve()
        self.db_path = db_path
        self.watch = watch
        self.debounce_ms = debounce_ms
        self.excluded = frozenset(p.resolve() for p in excluded)
        self._root_str = str(self.root)
        self._excluded_prefixes = tuple(str(p) + os.sep for p in self.excluded)
        self.last_scan_stats = ScanStats()
        self.applied_migrations: list[str] = []
        self._queue: queue.Queue[_Work] = queue.Queue()
        self._in_progress = 0
        self._scanned = threading.Event()
        self._watching = threading.Event()
        self._closing = threading.Event()
        self._read_lock = threading.Lock()
        self._reader: sqlite3.Connection | None = None
        self._thread: threading.Thread | None = None
        self._watcher: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self.vault_missing = False

    # -- life cycle -------------------------------------------------------------------

    async def start(self) -> None:
        """Open and migrate the database, then scan and watch in the background."""
        self.db_path.parent.mkdir(parents=True, exist_ok=True)
        writer = connect(str(self.db_path))
        self.applied_migrations = migrate(writer)
        self._reader = connect(str(self.db_path), readonly=True)
        self._thread = threading.Thread(
            target=self._run, args=(writer,), name="vault-indexer", daemon=True
        )
        self._thread.start()
        if self.watch:
            self._watcher = asyncio.create_task(
                watch_vault(
                    self.root,
                    self._on_change,
                    self._on_vault_state,
                    self._stop,
                    on_ready=self._watching.set,
                    debounce_ms=self.debounce_ms,
                ),
                name="vault-watcher",
            )

    async def close(self) -> None:
        self._stop.set()
        self._closing.set()
        self._watching.set()  # releases a worker still waiting for the watcher
        if self._watcher is not None:
            self._watcher.cancel()
            await asyncio.gather(self._watcher, return_exceptions=True)
            self._watcher = None
        if self._thread is not None:
            self._queue.put(_STOP)
            await asyncio.to_thread(self._thread.join, 10)
            self._thread = None
        if self._reader is not None:
            self._conn().close()
            self._reader = None

    async def wait_until_idle(self, timeout: float = 30.0) -> None:  # noqa: ASYNC109 - pinned API
        """Return once the start-up scan is done and no change is queued."""
        deadline = time.monotonic() + timeout
        while not (self._scanned.is_set() and self.pending == 0):
            if time.monotonic() > deadline:
                raise TimeoutError(f"index still has {self.pending} files pending")
            await asyncio.sleep(0.01)

    # -- queries ------------------------------------------------------------------------

    @property
    def pending(self) -> int:
        """Files waiting to be indexed; at least 1 until the start-up scan has listed them all."""
        waiting = self._queue.qsize() + self._in_progress
        return waiting if self._scanned.is_set() else max(waiting, 1)

    @property
    def note_count(self) -> int:
        with self._read_lock:
            row = self._conn().execute("SELECT count(*) FROM notes").fetchone()
        return int(row[0])

    def list_paths(self) -> list[str]:
        with self._read_lock:
            return [r[0] for r in self._conn().execute("SELECT path FROM notes ORDER BY path")]

    def search(self, query: str, limit: int = 10) -> SearchResults:
        started = time.perf_counter()
        with self._read_lock:
            rows = search_sql.run(self._conn(), query, max(1, min(limit, 100)))
        hits = [
            SearchHit(path, title, round(score, 4), snippet) for path, title, score, snippet in rows
        ]
        took = (time.perf_counter() - started) * 1000
        return SearchResults(hits, self.pending, round(took, 2))

    def backlinks(self, path: str) -> list[str]:
        rel = to_posix(path)
        stem = PurePosixPath(rel).stem.lower()
        full = rel.lower().removesuffix(".md")
        with self._read_lock:
            rows = self._conn().execute(
                "SELECT DISTINCT n.path FROM links l JOIN notes n ON n.id = l.src "
                "WHERE (l.target = ? OR l.target = ?) AND n.path != ? ORDER BY n.path",
                (stem, full, rel),
            )
            return [r[0] for r in rows]

    def notify_changed(self, rel_path: str, *, timeout: float = 5.0) -> None:
        """Re-index one path now (after our own writes) and wait until it is searchable.

        Does nothing before ``start()`` or after ``close()``: the next start-up scan sees it.
        """
        if self._thread is None or not self._thread.is_alive():
            return
        done = threading.Event()
        self._queue.put(_Work(to_posix(rel_path), done))
        done.wait(timeout)

    # -- worker thread ------------------------------------------------------------------

    def _run(self, conn: sqlite3.Connection) -> None:
        if self.watch and not self._watching.wait(WATCH_READY_SECONDS):
            logger.warning("the vault watcher did not start in time; scanning anyway")
        if self._closing.is_set():
            conn.close()
            return
        try:
            self._scan(conn)
        except Exception:
            logger.exception("the start-up scan of the vault failed; live updates continue")
        finally:
            self._scanned.set()
        while True:
            work = [self._queue.get()]
            while len(work) < BATCH:
                try:
                    work.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            self._in_progress = len(work)
            stop = any(w is _STOP for w in work)
            try:
                self._apply(conn, [w.path for w in work if w is not _STOP])
            except Exception:
                logger.exception("indexing %d changed files failed", len(work))
            finally:
                self._in_progress = 0
                for w in work:
                    if w.done is not None:
                        w.done.set()
            if stop:
                conn.close()
                return

    def _scan(self, conn: sqlite3.Connection) -> None:
        known = {p: (m, s) for p, m, s in conn.execute("SELECT path, mtime, size FROM notes")}
        stats = ScanStats()
        changed: list[str] = []
        for rel, stat in self._walk():
            old = known.pop(rel, None)
            if old is not None and old == (stat.st_mtime, stat.st_size):
                stats.unchanged += 1
            else:
                changed.append(rel)
                if old is None:
                    stats.added += 1
                else:
                    stats.updated += 1
        stats.removed = len(known)
        for rel in changed:
            self._queue.put(_Work(rel))
        for rel in known:
            self._queue.put(_Work(rel))
        self.last_scan_stats = stats
        logger.info(
            "vault scan: %d new, %d changed, %d removed, %d unchanged",
            stats.added,
            stats.updated,
            stats.removed,
            stats.unchanged,
        )

    def _walk(self) -> list[tuple[str, os.stat_result]]:
        found: list[tuple[str, os.stat_result]] = []
        stack = [self.root]
        while stack:
            folder = stack.pop()
            try:
                entries = list(os.scandir(folder))
            except OSError:
                continue
            for entry in entries:
                rel = to_posix(os.path.relpath(entry.path, self.root))
                if is_ignored(rel) or Path(entry.path) in self.excluded:
                    continue
                if entry.is_dir(follow_symlinks=False):
                    if not entry.name.startswith("."):
                        stack.append(Path(entry.path))
                elif PurePosixPath(rel).suffix.lower() in READABLE_SUFFIXES:
                    try:
                        found.append((rel, entry.stat()))
                    except OSError:
                        continue
        return found

    def _apply(self, conn: sqlite3.Connection, paths: list[str]) -> None:
        if not paths:
            return
        conn.execute("BEGIN")
        try:
            for rel in dict.fromkeys(paths):
                self._apply_one(conn, rel)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def _apply_one(self, conn: sqlite3.Connection, rel: str) -> None:
        row = conn.execute("SELECT id, hash FROM notes WHERE path = ?", (rel,)).fetchone()
        raw, stat = self._read(rel)
        if raw is None or stat is None:
            if row and self.root.is_dir():  # a vanished vault keeps its last indexed state
                _delete(conn, row[0])
            return
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError:
            logger.debug("not indexing %s: not UTF-8 text", rel)
            if row:
                _delete(conn, row[0])
            return
        digest = hashlib.sha256(raw).hexdigest()
        if row and row[1] == digest:
            conn.execute(
                "UPDATE notes SET mtime = ?, size = ? WHERE id = ?",
                (stat.st_mtime, stat.st_size, row[0]),
            )
            return
        if row:
            _delete(conn, row[0])
        note = parse_note(rel, text)
        cursor = conn.execute(
            "INSERT INTO notes (path, mtime, size, hash, title) VALUES (?, ?, ?, ?, ?)",
            (rel, stat.st_mtime, stat.st_size, digest, note.title),
        )
        note_id = cursor.lastrowid
        conn.execute(
            "INSERT INTO notes_fts (rowid, title, aliases, headings, tags, body) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (
                note_id,
                note.title,
                " ".join(note.aliases),
                " ".join(note.headings),
                " ".join(note.tags),
                note.body,
            ),
        )
        cjk = spaced(f"{note.title}\n{' '.join(note.aliases)}\n{note.body}")
        if cjk:
            conn.execute("INSERT INTO notes_cjk (rowid, text) VALUES (?, ?)", (note_id, cjk))
        conn.executemany("INSERT INTO tags VALUES (?, ?)", [(note_id, t) for t in note.tags])
        targets = {link.lower() for link in note.links} | {
            PurePosixPath(link).name.lower() for link in note.links
        }
        conn.executemany("INSERT INTO links VALUES (?, ?)", [(note_id, t) for t in targets])

    def _read(self, rel: str) -> tuple[bytes | None, os.stat_result | None]:
        """The bytes and stat of an indexable note, or (None, None) for anything else."""
        if is_ignored(rel) or os.path.splitext(rel)[1].lower() not in READABLE_SUFFIXES:
            return None, None
        full = os.path.join(self._root_str, rel)
        if any(full.startswith(prefix) for prefix in self._excluded_prefixes):
            return None, None
        try:
            stat = os.stat(full)
            if not S_ISREG(stat.st_mode) or stat.st_size > MAX_NOTE_BYTES:
                return None, None
            with open(full, "rb") as handle:
                return handle.read(), stat
        except OSError:
            return None, None

    # -- watcher callbacks (event loop thread) ---------------------------------------------

    def _on_change(self, rel_paths: set[str]) -> None:
        for rel in rel_paths:
            self._queue.put(_Work(rel))

    def _on_vault_state(self, present: bool) -> None:
        if not present and not self.vault_missing:
            logger.warning(
                "Vault folder %s is gone; search shows the last indexed state until it comes back.",
                self.root,
            )
        if present and self.vault_missing:
            logger.warning("Vault folder %s is back; re-indexing what changed.", self.root)
            threading.Thread(target=self._rescan, name="vault-rescan", daemon=True).start()
        self.vault_missing = not present

    def _rescan(self) -> None:
        known = set(self.list_paths())
        for rel, _ in self._walk():
            known.discard(rel)
            self._queue.put(_Work(rel))
        for rel in known:
            self._queue.put(_Work(rel))

    # -- helpers -----------------------------------------------------------------------

    def _conn(self) -> sqlite3.Connection:
        assert self._reader is not None, "SearchIndex.start() was not awaited"
        return self._reader


def _delete(conn: sqlite3.Connection, note_id: int) -> None:
    for sql in (
        "DELETE FROM notes WHERE id = ?",
        "DELETE FROM notes_fts WHERE rowid = ?",
        "DELETE FROM notes_cjk WHERE rowid = ?",
        "DELETE FROM tags WHERE note = ?",
        "DELETE FROM links WHERE src = ?",
    ):
        conn.execute(sql, (note_id,))
