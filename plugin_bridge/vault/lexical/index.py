"""The persistent, incremental, live search index of one vault (SQLite FTS5).

A worker thread (``worker.py``) owns the one writing connection. On start it scans the vault
(only new, changed and deleted files are processed, 500 per transaction) and then applies the
changes the watcher (``watcher.py``) and our own writes queue for it, ahead of the rest of a
running scan. Reads use a separate read connection (WAL), owned by the index's read door (one
thread, ``door.py``): async code awaits :meth:`SearchIndex.execute` with a function of an
:class:`IndexReader`, which runs there whole. So searches answer at once during indexing, from
what is indexed so far, say how many files are pending, and never hold the event loop.
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

from llm_service.door import Door
from plugin_bridge.vault.datadir import private_folder
from plugin_bridge.vault.errors import VaultError
from plugin_bridge.vault.files import VaultFiles
from plugin_bridge.vault.lexical.indexer import Indexer, ScanStats
from plugin_bridge.vault.lexical.query import Query, parse_query, with_filters
from plugin_bridge.vault.lexical.reader import IndexReader, SearchHit, is_damage
from plugin_bridge.vault.lexical.typos import Vocabulary
from plugin_bridge.vault.lexical.watcher import WatchCallbacks, watch_vault
from plugin_bridge.vault.lexical.worker import IndexWorker
from plugin_bridge.vault.paths import case_sensitive, to_posix
from plugin_bridge.vault.schema import connect, migrate

__all__ = ["IndexReader", "ScanStats", "SearchHit", "SearchIndex", "SearchResults"]

logger = logging.getLogger(__name__)
RowsT = TypeVar("RowsT")

MAX_LIMIT: Final = 200
NOTIFY_TIMEOUT: Final = 10.0
WATCH_READY_TIMEOUT: Final = 2.0
"""Scan anyway when the watcher has not reported ready by then."""
CLOSE_TIMEOUT: Final = 10.0


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
        self._door = Door("vault-reader")
        self._reader: IndexReader | None = None
        """Touched only on the door's thread."""
        self._indexer: Indexer | None = None
        self._worker: IndexWorker | None = None
        self._watcher: asyncio.Task[None] | None = None
        self._fallback: asyncio.TimerHandle | None = None
        self._stop = asyncio.Event()
        self._closed = False
        self._listeners: list[Callable[[], None]] = []
        self._change_listeners: list[Callable[[list[str]], None]] = []
        self._vocabulary = Vocabulary()
        self._case_sensitive: bool | None = None
        """Whether the vault's file system tells names apart by case (probed when needed)."""
        self._rebuilding = False
        """True while a database found damaged is rebuilt (reads answer empty meanwhile)."""
        self._rebuild_lock = threading.Lock()
        self._checking = False
        """A check of the read connection is queued (see ``note_count``)."""

    # -- life cycle -------------------------------------------------------------------------

    async def start(self) -> None:
        """Open (and migrate) the database, then return: scanning runs in a worker thread and,
        with ``watch``, the watcher task starts; the scan waits until the watch is in place."""
        if self._worker is not None or self._closed:
            return
        await self._door.run(self._open_all)
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
        await self._door.run(self._shut)  # after a rebuild under way: the door's jobs take turns
        self._door.close()

    def _shut(self) -> None:
        if self._worker is not None:
            self._worker.stop(CLOSE_TIMEOUT)
        self._drop_reader()

    async def wait_until_idle(self, timeout: float = 30.0) -> None:  # noqa: ASYNC109 - pinned API
        """Return once the first scan is done and no change is queued; TimeoutError otherwise."""
        deadline = time.monotonic() + timeout
        while not self.idle:
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"The vault index is still busy after {timeout:g} s "
                    f"({self.pending} files pending)."
                )
            await asyncio.sleep(0.01)

    @property
    def idle(self) -> bool:
        """The first scan is done and no change is queued."""
        return bool(self._worker and self._worker.scanned.is_set() and self.pending == 0)

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
        """Notes in the index (0 while a damaged database is rebuilt), as counted after the
        last write: no read, so ``health`` answers whatever searches run. Each look also has
        the read door check that the file still reads (a damaged one is then rebuilt)."""
        if self._rebuilding or self._indexer is None:
            return 0
        if not self._checking and not self._closed:
            self._checking = True
            self._door.post(self._check)
        return self._indexer.totals[0]

    def _check(self) -> None:
        self._checking = False
        with contextlib.suppress(sqlite3.Error, RuntimeError):  # damage starts the rebuild
            self._with_reader(IndexReader.count)

    @property
    def unreadable_pdfs(self) -> int:
        """PDFs skipped as unreadable (encrypted, damaged, too large), counted like notes."""
        if self._rebuilding or self._indexer is None:
            return 0
        return self._indexer.totals[1]

    def list_paths(self) -> list[str]:
        """The indexed note paths, sorted."""
        return self._guarded(IndexReader.paths, [])

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

    def add_change_listener(self, callback: Callable[[list[str]], None]) -> None:
        """Call ``callback`` (from the worker thread) with the paths of the notes each write
        added, updated or removed."""
        self._change_listeners.append(callback)

    def remove_change_listener(self, callback: Callable[[list[str]], None]) -> None:
        if callback in self._change_listeners:
            self._change_listeners.remove(callback)

    def _changed(self, paths: list[str]) -> None:
        for callback in list(self._change_listeners):
            callback(paths)

    def _written(self) -> None:
        self._vocabulary.changed()
        for callback in list(self._listeners):
            callback()

    async def execute(self, reads: Callable[[IndexReader], RowsT]) -> RowsT:
        """``reads(reader)`` on the index's read door: the one hop from the event loop to the
        index (a whole search runs in one). sqlite3.Error while a damaged database is rebuilt
        (noticing the damage starts the rebuild)."""
        return await self._door.run(self._with_reader, reads)

    def read(self, reads: Callable[[IndexReader], RowsT]) -> RowsT:
        """:meth:`execute` for threads other than the event loop's (blocks until done)."""
        return self._door.call(self._with_reader, reads)

    def _with_reader(self, reads: Callable[[IndexReader], RowsT]) -> RowsT:
        if self._reader is None:
            if self._rebuilding:
                raise sqlite3.OperationalError("the search index is being rebuilt")
            raise RuntimeError("Await SearchIndex.start() before using the index.")
        try:
            return reads(self._reader)
        except sqlite3.DatabaseError as exc:
            self._damaged(exc)
            raise

    def parse(self, query: str, folder: str | None = None, tag: str | None = None) -> Query:
        """``query`` parsed, with the folder and tag filters of ``vault/search`` (the folder
        compared as the vault's file system compares names)."""
        return self.filtered(parse_query(query), folder, tag)

    def filtered(self, query: Query, folder: str | None = None, tag: str | None = None) -> Query:
        """``query`` with the folder and tag filters of ``vault/search``."""
        if folder and self._case_sensitive is None:
            self._case_sensitive = case_sensitive(self.root)
        return with_filters(query, folder, tag, fold=not self._case_sensitive)

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
        wanted = clamp(limit)
        none: list[SearchHit] = []
        hits = self._guarded(lambda reader: reader.search(parsed, wanted, snippets=snippets), none)
        took = (time.perf_counter() - started) * 1000
        return SearchResults(hits, self.pending, round(took, 3))

    def backlinks(self, path: str) -> list[str]:
        """Notes whose wikilinks resolve to ``path``: by file name or by (partial) path."""
        return self._guarded(lambda reader: reader.backlinks(to_posix(path)), [])

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
        """Open the database (rebuilt when unreadable), the read connection and the worker
        (on the read door's thread)."""
        writer = self._open()
        self._reader = IndexReader(connect(str(self.db_path), readonly=True), self._vocabulary)
        indexer = self._indexer = Indexer(writer, self.files)
        indexer.count()
        indexer.on_written = self._written
        indexer.on_changed = self._changed
        self._worker = IndexWorker(indexer, self._vault_gone, self._damaged)
        self._worker.start()

    def _drop_reader(self) -> None:
        if self._reader is not None:
            self._reader.conn.close()
            self._reader = None

    def _damaged(self, exc: BaseException) -> bool:
        """Whether ``exc`` says the database file is damaged (SQLite's "disk I/O error",
        "malformed" or "not a database": truncated or overwritten under us); if so, rebuild
        it in the background, as start-up does, and log it once."""
        if not is_damage(exc):
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
        self._door.post(self._rebuild)  # reads wait for it, on the door, not on the loop
        return True

    def _rebuild(self) -> None:
        """Stop the worker, drop the damaged database, open a new one and scan the vault (on
        the read door)."""
        try:
            if self._worker is not None:
                self._worker.stop(CLOSE_TIMEOUT)
            self._drop_reader()
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

    def _guarded(self, reads: Callable[[IndexReader], RowsT], empty: RowsT) -> RowsT:
        """:meth:`read`, or ``empty`` while the database is rebuilt or when it turns out
        damaged (which starts the rebuild)."""
        try:
            return self.read(reads)
        except sqlite3.DatabaseError as exc:
            if self._rebuilding or is_damage(exc):
                return empty
            raise

    # -- helpers ----------------------------------------------------------------------------

    def _open(self) -> sqlite3.Connection:
        """The writing connection, migrated; an unreadable database is rebuilt (it is a cache).

        Raises VaultError(forbidden_path) when the index cannot live at ``db_path`` at all (a
        folder there, a read-only or missing data folder)."""
        try:
            private_folder(self.db_path.parent)
            if self.db_path.is_dir():
                raise IsADirectoryError(f"{self.db_path} is a folder")
            return self._open_and_migrate()
        except sqlite3.DatabaseError as exc:
            if isinstance(exc, sqlite3.OperationalError) and not is_damage(exc):
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


def clamp(limit: int) -> int:
    """A search's ``limit`` within 0 and :data:`MAX_LIMIT`."""
    return max(0, min(limit, MAX_LIMIT))


def _remove_database(path: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            os.remove(f"{path}{suffix}")
