"""The persistent, incremental, live search index of one vault (SQLite FTS5).

A worker thread (``worker.py``) owns the one writing connection. On start it scans the vault
(only new, changed and deleted files are processed, 500 per transaction) and then applies the
changes the watcher (``watcher.py``) and our own writes queue for it, ahead of the rest of a
running scan. Searches use a separate read connection (WAL), so they answer at once during
indexing, from what is indexed so far, and say how many files are pending.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final, TypeVar

from plugin_bridge.vault.errors import VaultError
from plugin_bridge.vault.files import VaultFiles
from plugin_bridge.vault.lexical import search as search_sql
from plugin_bridge.vault.lexical.indexer import Indexer, ScanStats
from plugin_bridge.vault.lexical.parse import link_forms
from plugin_bridge.vault.lexical.query import Query, parse_query, with_filters
from plugin_bridge.vault.lexical.typos import Vocabulary
from plugin_bridge.vault.lexical.watcher import WatchCallbacks, watch_vault
from plugin_bridge.vault.lexical.worker import IndexWorker
from plugin_bridge.vault.paths import case_sensitive, to_posix
from plugin_bridge.vault.schema import connect, migrate

__all__ = ["ScanStats", "SearchHit", "SearchIndex", "SearchResults"]

logger = logging.getLogger(__name__)
RowsT = TypeVar("RowsT")

MAX_LIMIT: Final = 200
NOTIFY_TIMEOUT: Final = 10.0
WATCH_READY_TIMEOUT: Final = 2.0
"""Scan anyway when the watcher has not reported ready by then."""
CLOSE_TIMEOUT: Final = 10.0


@dataclass(frozen=True)
class SearchHit:
    """One matching note; ``score`` is higher for better matches, ``snippet`` marks the match
    with ``**``."""

    path: str
    title: str
    score: float
    snippet: str


@dataclass(frozen=True)
class SearchResults:
    """The hits, best first; ``pending`` files were not indexed yet when the search ran."""

    hits: list[SearchHit]
    pending: int
    took_ms: float


class SearchIndex:
    """Full-text search over the notes of the vault at ``root``, stored at ``db_path``.

    ``excluded`` holds absolute folders never indexed (the data dir when it is in the vault).
    """

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
        self.applied_migrations: list[str] = []
        """Names of the migrations ``start()`` applied to this database."""
        self.files = VaultFiles(self.root, excluded)
        self._scan_requested = False
        self._missing = False
        self._missing_lock = threading.Lock()
        self._read_lock = threading.Lock()
        self._reader: sqlite3.Connection | None = None
        self._worker: IndexWorker | None = None
        self._watcher: asyncio.Task[None] | None = None
        self._fallback: asyncio.TimerHandle | None = None
        self._stop = asyncio.Event()
        self._closed = False
        self._listeners: list[Callable[[], None]] = []
        self._vocabulary = Vocabulary()
        self._case_sensitive: bool | None = None
        """Whether the vault's file system tells names apart by case (probed when needed)."""
        self._rebuilding = False
        """True while a database found damaged is rebuilt (reads answer empty meanwhile)."""
        self._rebuild_lock = threading.Lock()
        self._rebuilder: threading.Thread | None = None
        """The thread rebuilding a damaged database, while one runs."""

    # -- life cycle -------------------------------------------------------------------------

    async def start(self) -> None:
        """Open (and migrate) the database, then return: scanning runs in a worker thread and,
        with ``watch``, the watcher task starts; the scan waits until the watch is in place."""
        if self._worker is not None or self._closed:
            return
        await asyncio.to_thread(self._open_all)
        if not self.watch:
            self._request_scan()
            return
        callbacks = WatchCallbacks(self._on_changes, self._on_watch_ready, self._on_vault_missing)
        self._watcher = asyncio.create_task(
            watch_vault(
                self.root,
                callbacks,
                self._stop,
                ignored=self.files.ignored,
                debounce_ms=self.debounce_ms,
            ),
            name="vault-watcher",
        )
        self._fallback = asyncio.get_running_loop().call_later(
            WATCH_READY_TIMEOUT, self._scan_without_watch
        )

    async def close(self) -> None:
        """Stop the watcher and the worker (after its current batch), close the database."""
        if self._closed:
            return
        self._closed = True
        self._stop.set()
        if self._fallback is not None:
            self._fallback.cancel()
        if self._watcher is not None:
            try:
                await asyncio.wait_for(self._watcher, CLOSE_TIMEOUT)  # cancels it on timeout
            except TimeoutError:
                logger.warning("The vault watcher did not stop in time; cancelled it.")
        if self._rebuilder is not None:
            await asyncio.to_thread(self._rebuilder.join, CLOSE_TIMEOUT)
        if self._worker is not None:
            await asyncio.to_thread(self._worker.stop, CLOSE_TIMEOUT)
        with self._read_lock:
            if self._reader is not None:
                self._reader.close()
                self._reader = None

    async def wait_until_idle(self, timeout: float = 30.0) -> None:  # noqa: ASYNC109 - pinned API
        """Return once the first scan is done and no change is queued; TimeoutError otherwise."""
        deadline = time.monotonic() + timeout
        while not (self._worker and self._worker.scanned.is_set() and self.pending == 0):
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"The vault index is still busy after {timeout:g} s "
                    f"({self.pending} files pending)."
                )
            await asyncio.sleep(0.01)

    # -- reading ----------------------------------------------------------------------------

    @property
    def pending(self) -> int:
        """Files not processed yet (at least 1 until the first scan has listed the vault)."""
        if self._worker is None:
            return 0
        if self._rebuilding:
            return max(self._worker.pending, 1)
        waiting = self._worker.pending
        return waiting if self._worker.scanned.is_set() else max(waiting, 1)

    @property
    def progress(self) -> tuple[int, int]:
        """``(done, total)`` files of the indexing under way (see ``IndexWorker.progress``)."""
        return self._worker.progress if self._worker else (0, 0)

    @property
    def last_scan_stats(self) -> ScanStats:
        """What the most recent scan (on start, or when the vault came back) did."""
        return self._worker.last_scan_stats if self._worker else ScanStats()

    @property
    def vault_missing(self) -> bool:
        """True while the vault folder is gone (search then shows the last indexed state)."""
        return self._missing

    @property
    def note_count(self) -> int:
        """Notes in the index (0 while a damaged database is rebuilt)."""
        return self._guarded(
            lambda conn: int(conn.execute("SELECT count(*) FROM notes").fetchone()[0]), 0
        )

    def list_paths(self) -> list[str]:
        """The indexed note paths, sorted."""
        return self._guarded(
            lambda conn: [row[0] for row in conn.execute("SELECT path FROM notes ORDER BY path")],
            [],
        )

    @property
    def scanned(self) -> bool:
        """True once the first scan has finished."""
        return self._worker is not None and self._worker.scanned.is_set()

    def add_listener(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` (from the worker thread) after each write that changed notes."""
        self._listeners.append(callback)

    def remove_listener(self, callback: Callable[[], None]) -> None:
        if callback in self._listeners:
            self._listeners.remove(callback)

    def _written(self) -> None:
        self._vocabulary.changed()
        for callback in list(self._listeners):
            callback()

    def read(self, query: Callable[[sqlite3.Connection], RowsT]) -> RowsT:
        """Run ``query`` on the read connection (serialised with searches); sqlite3.Error
        while a damaged database is rebuilt."""
        try:
            with self._read_lock:
                if self._reader is None and self._rebuilding:
                    raise sqlite3.OperationalError("the search index is being rebuilt")
                return query(self._conn())
        except sqlite3.DatabaseError as exc:
            self._damaged(exc)
            raise

    def parse(self, query: str, folder: str | None = None, tag: str | None = None) -> Query:
        """``query`` parsed, with the folder and tag filters of ``vault/search`` (the folder
        compared as the vault's file system compares names)."""
        if folder and self._case_sensitive is None:
            self._case_sensitive = case_sensitive(self.root)
        return with_filters(parse_query(query), folder, tag, fold=not self._case_sensitive)

    def search(
        self,
        query: str,
        limit: int = 10,
        *,
        folder: str | None = None,
        tag: str | None = None,
        snippets: bool = True,
    ) -> SearchResults:
        """The best ``limit`` notes for ``query`` (any string is valid; see ``query.py``),
        inside ``folder`` and with ``tag`` when given; ``snippets=False`` leaves them ""."""
        started = time.perf_counter()
        parsed = self.parse(query, folder, tag)
        none: list[search_sql.Row] = []
        try:
            rows = self._guarded(
                lambda conn: search_sql.run(
                    conn,
                    parsed,
                    max(0, min(limit, MAX_LIMIT)),
                    snippets=snippets,
                    vocabulary=self._vocabulary,
                ),
                none,
            )
        except sqlite3.Error as exc:
            logger.warning("A search failed inside SQLite (%s); returning no results.", exc)
            rows = []
        hits = [SearchHit(path, title, score, snippet) for path, title, score, snippet in rows]
        took = (time.perf_counter() - started) * 1000
        return SearchResults(hits, self.pending, round(took, 3))

    def snippets(self, query: str, paths: list[str]) -> dict[str, str]:
        """The search snippets of ``query`` in these notes (by path)."""
        parsed = parse_query(query)
        try:
            return self.read(lambda conn: search_sql.snippets_for(conn, parsed, paths))
        except sqlite3.Error as exc:
            logger.warning("Making snippets failed inside SQLite (%s).", exc)
            return {}

    def backlinks(self, path: str) -> list[str]:
        """Notes whose wikilinks resolve to ``path``: by file name or by (partial) path."""
        rel = to_posix(path)
        targets = sorted(link_forms(rel))
        marks = ", ".join("?" * len(targets))
        sql = (
            "SELECT DISTINCT n.path FROM links l JOIN notes n ON n.id = l.src "
            f"WHERE l.target IN ({marks}) AND n.path != ? ORDER BY n.path"
        )
        return self._guarded(
            lambda conn: [row[0] for row in conn.execute(sql, (*targets, rel))], []
        )

    # -- changes ----------------------------------------------------------------------------

    def notify_changed(self, rel_path: str) -> None:
        """(Re)index or drop ``rel_path`` now and return when it is done (after our own
        writes). Waits at most for the batch being written; does nothing when not running."""
        worker = self._worker
        if worker is None or not worker.running or self._closed:
            return
        done = threading.Event()
        worker.change(to_posix(rel_path), done)
        if not done.wait(NOTIFY_TIMEOUT):
            logger.warning(
                "Re-indexing %s took over %g s; it continues in the background.",
                rel_path,
                NOTIFY_TIMEOUT,
            )

    def _on_changes(self, rel_paths: set[str]) -> None:
        if self._worker is not None:
            for rel in sorted(rel_paths):
                self._worker.change(rel)

    def _on_watch_ready(self) -> None:
        if self._fallback is not None:
            self._fallback.cancel()
        if self._set_missing(False):
            logger.info("Vault folder %s is back; updating the index.", self.root)
        self._request_scan()  # first start, or the watch restarted: catch what it missed

    def _vault_gone(self) -> None:
        self._set_missing(True)

    def _on_vault_missing(self) -> None:
        self._set_missing(True)
        if not self._scan_requested:
            self._request_scan()  # ends the first scan at once, keeping the last indexed state

    def _scan_without_watch(self) -> None:
        if not self._scan_requested:
            logger.warning("The vault watcher is not ready; indexing without waiting for it.")
            self._request_scan()

    def rescan(self) -> None:
        """Compare the vault with the index again (as at start) and apply the differences."""
        if self._worker is not None and not self._closed:
            self._request_scan()

    def _request_scan(self) -> None:
        if self._worker is not None:
            self._scan_requested = True
            self._worker.request_scan()

    def _set_missing(self, missing: bool) -> bool:
        """Record whether the vault folder is gone; True when that changed."""
        with self._missing_lock:
            changed, self._missing = self._missing != missing, missing
        if changed and missing:
            logger.warning(
                "Vault folder %s is gone; search shows the last indexed state until it comes back.",
                self.root,
            )
        return changed

    # -- a database damaged while running ---------------------------------------------------

    def _open_all(self) -> None:
        """Open the database (rebuilt when unreadable), the read connection and the worker."""
        writer = self._open()
        self._reader = connect(str(self.db_path), readonly=True)
        indexer = Indexer(writer, self.files)
        indexer.on_written = self._written
        self._worker = IndexWorker(indexer, self._vault_gone, self._damaged)
        self._worker.start()

    def _damaged(self, exc: BaseException) -> bool:
        """Whether ``exc`` says the database file is damaged (SQLite's "disk I/O error",
        "malformed" or "not a database": truncated or overwritten under us); if so, rebuild
        it in the background, as start-up does, and log it once."""
        if not _is_damage(exc):
            return False
        with self._rebuild_lock:
            if self._rebuilding or self._closed:
                return True
            self._rebuilding = True
        logger.warning(
            "The search index %s is damaged (%s); rebuilding it from the notes in the "
            "background (search answers from it again once done).",
            self.db_path,
            exc,
        )
        self._rebuilder = threading.Thread(
            target=self._rebuild, name="vault-index-rebuild", daemon=True
        )
        self._rebuilder.start()
        return True

    def _rebuild(self) -> None:
        """Stop the worker, drop the damaged database, open a new one and scan the vault."""
        try:
            if self._worker is not None:
                self._worker.stop(CLOSE_TIMEOUT)
            with self._read_lock:
                if self._reader is not None:
                    self._reader.close()
                    self._reader = None
            if self._closed:
                return
            _remove_database(self.db_path)
            self._open_all()
            self._request_scan()
        except Exception:
            logger.exception("Rebuilding the search index %s failed.", self.db_path)
        finally:
            with self._rebuild_lock:
                self._rebuilding = False

    def _guarded(self, query: Callable[[sqlite3.Connection], RowsT], empty: RowsT) -> RowsT:
        """``query`` on the read connection; ``empty`` while the database is rebuilt or when
        it turns out damaged (which starts the rebuild)."""
        try:
            with self._read_lock:
                if self._reader is None and self._rebuilding:
                    return empty
                return query(self._conn())
        except sqlite3.DatabaseError as exc:
            if self._damaged(exc):
                return empty
            raise

    # -- helpers ----------------------------------------------------------------------------

    def _open(self) -> sqlite3.Connection:
        """The writing connection, migrated; an unreadable database is rebuilt (it is a cache).

        Raises VaultError(forbidden_path) when the index cannot live at ``db_path`` at all (a
        folder there, a read-only or missing data folder)."""
        try:
            self.db_path.parent.mkdir(parents=True, exist_ok=True)
            if self.db_path.is_dir():
                raise IsADirectoryError(f"{self.db_path} is a folder")
            return self._open_and_migrate()
        except sqlite3.DatabaseError as exc:
            if isinstance(exc, sqlite3.OperationalError) and not _is_damage(exc):
                raise self._unusable(exc) from exc  # read-only, no such folder, ...
            logger.warning(
                "The search index %s is unreadable (%s); rebuilding it from the notes.",
                self.db_path,
                exc,
            )
        except OSError as exc:
            raise self._unusable(exc) from exc
        _remove_database(self.db_path)
        try:
            return self._open_and_migrate()
        except (OSError, sqlite3.OperationalError) as exc:
            raise self._unusable(exc) from exc

    def _unusable(self, exc: BaseException) -> VaultError:
        """The error of an index that cannot live at ``db_path`` at all."""
        return VaultError(
            "forbidden_path",
            f"The search index cannot be stored at {self.db_path} ({exc}): pass a writable "
            "--data-dir.",
        )

    def _open_and_migrate(self) -> sqlite3.Connection:
        conn = connect(str(self.db_path))
        try:
            self.applied_migrations = migrate(conn)
        except BaseException:
            conn.close()
            raise
        return conn

    def _conn(self) -> sqlite3.Connection:
        if self._reader is None:
            raise RuntimeError("Await SearchIndex.start() before using the index.")
        return self._reader


DAMAGE_CODES: Final = frozenset({10, 11, 26})
"""SQLite's primary result codes that mean a damaged file: SQLITE_IOERR ("disk I/O error", a
short read of a file overwritten or truncated under us), SQLITE_CORRUPT ("malformed") and
SQLITE_NOTADB ("not a database")."""
DAMAGE_WORDS: Final = ("disk i/o error", "malformed", "not a database", "vtable constructor failed")
"""The same in SQLite's words (FTS5 says "vtable constructor failed" when its tables are gone)."""


def _is_damage(exc: BaseException) -> bool:
    """Whether ``exc`` says the database file is damaged (any of the errors above)."""
    if not isinstance(exc, sqlite3.DatabaseError):
        return False
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int) and code & 0xFF in DAMAGE_CODES:
        return True
    text = str(exc).lower()
    return any(word in text for word in DAMAGE_WORDS)


def _remove_database(path: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            os.remove(f"{path}{suffix}")
