"""The index's worker thread: the only user of the writing connection.

It takes work from a queue: single changed paths (from the watcher or after our own writes) and
scan requests. A scan lists the vault, compares it with the index and keeps what differs as a
backlog, written 500 files per transaction; queued changes always go ahead of the next backlog
batch, so a note we just wrote is searchable without waiting for the scan.

A scan that wrote many notes leaves the full-text tables in many segments, full of the rows it
replaced: at 100,000 notes rewritten, searches took twice as long. The worker then merges
them, a bounded step at a time between queued changes (:data:`MERGE_AFTER`,
:meth:`Indexer.merge_step`).
"""

from __future__ import annotations

import enum
import logging
import queue
import sqlite3
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from plugin_bridge.vault.lexical.ahead import MIN_BACKLOG, AheadReader, helper_count
from plugin_bridge.vault.lexical.indexer import Indexer, IndexOutcome, ScanStats

logger = logging.getLogger(__name__)

BATCH: Final = 500
"""Files per write transaction (and per batch a helper process prepares)."""
BULK_WRITE: Final = 2000
"""Files per write transaction of a large backlog, when the helpers have them ready and no
change waits: each commit flushes a full-text segment that later merges rewrite. With the
rarer checkpoints of ``Indexer.bulk``: the writer's CPU for 10,000 prepared notes 6.4 / 8.2 s
→ 6.0 / 7.1 s (two runs on a loaded machine, docs/benchmarks.md)."""
MERGE_AFTER: Final = 1000
"""Notes a scan added, updated or removed from which the full-text tables are merged after it."""


@dataclass(frozen=True)
class _Change:
    path: str
    done: threading.Event | None = None


class _Signal(enum.Enum):
    SCAN = "scan"
    STOP = "stop"


class IndexWorker:
    """Runs ``indexer`` in a thread. ``vault_gone()`` is called when a scan finds the vault
    folder missing (the index then keeps its last state)."""

    def __init__(
        self,
        indexer: Indexer,
        vault_gone: Callable[[], None],
        corrupted: Callable[[BaseException], bool] = lambda exc: False,
    ) -> None:
        self.last_scan_stats = ScanStats()
        self.scanned = threading.Event()
        """Set once the first scan has finished."""
        self._indexer = indexer
        self._vault_gone = vault_gone
        self._corrupted = corrupted
        """Told of every failed write; True when the database is damaged (rebuilt elsewhere)."""
        self._queue: queue.Queue[_Change | _Signal] = queue.Queue()
        self._backlog: deque[str] = deque()
        self._ahead: AheadReader | None = None
        """Prepares a large backlog in a helper process (see :mod:`.ahead`)."""
        self._unfinished = 0
        self._round = (0, 0)
        """(done, total) files of the indexing under way; (0, 0) once nothing waits."""
        self._count_lock = threading.Lock()
        self._scan_stats = ScanStats()
        self._scanning = False
        self._rescan_after = False
        self._merging: list[str] = []
        """Full-text tables still to merge after a large scan."""
        self._thread = threading.Thread(target=self._run, name="vault-indexer", daemon=True)

    @property
    def pending(self) -> int:
        """Files (and requested scans) not processed yet."""
        return self._unfinished

    @property
    def progress(self) -> tuple[int, int]:
        """``(done, total)``: files indexed of those the indexing under way covers (a scan's
        new, changed and deleted files plus the changes queued meanwhile); ``(0, 0)`` when
        nothing waits, and while a scan is still listing the vault."""
        return self._round

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float) -> None:
        """Stop after the batch being written and close the connection; blocks."""
        if self._thread.is_alive():
            self._queue.put(_Signal.STOP)
            self._thread.join(timeout)

    def request_scan(self) -> None:
        self._put(_Signal.SCAN)

    def change(self, rel_path: str, done: threading.Event | None = None) -> None:
        """Queue one changed path (a file or a folder); ``done`` is set once it is applied."""
        if threading.current_thread() is self._thread:
            raise RuntimeError("The indexing thread cannot wait for itself.")
        self._put(_Change(rel_path, done))

    def _put(self, item: _Change | _Signal) -> None:
        self._count(1, files=isinstance(item, _Change))
        self._queue.put(item)

    def _count(self, delta: int, *, files: bool = True) -> None:
        """``delta`` more (or, negative, fewer) items waiting; ``files``: they are files, so
        they count in :attr:`progress` too (a scan request does not)."""
        with self._count_lock:
            self._unfinished += delta
            done, total = self._round
            if files and delta > 0:
                total += delta
            elif files:
                done -= delta
            self._round = (0, 0) if self._unfinished == 0 else (done, total)

    # -- in the thread ----------------------------------------------------------------------

    def _run(self) -> None:
        try:
            while self._step():
                pass
        finally:
            if self._ahead is not None:
                self._ahead.close()
            self._indexer.conn.close()

    def _has_backlog(self) -> bool:
        return bool(self._backlog) or self._ahead is not None

    def _step(self) -> bool:
        """Handle what is queued, else the next batch of a running scan; False to stop."""
        items = self._take()
        if _Signal.STOP in items:
            self._release(items)
            return False
        changes = [item for item in items if isinstance(item, _Change)]
        if changes:
            self._apply_changes(changes)
        elif self._has_backlog():
            self._apply_backlog()
        elif self._merging:
            self._merge_step()
        if _Signal.SCAN in items:
            self._begin_scan()
            self._count(-items.count(_Signal.SCAN), files=False)
        return True

    def _take(self) -> list[_Change | _Signal]:
        try:
            items = [self._queue.get(block=not (self._has_backlog() or self._merging))]
        except queue.Empty:
            return []
        while len(items) < BATCH:
            try:
                items.append(self._queue.get_nowait())
            except queue.Empty:
                break
        return items

    def _release(self, items: list[_Change | _Signal]) -> None:
        """Wake whoever waits on queued changes that will not be applied (we are stopping)."""
        while True:
            try:
                items.append(self._queue.get_nowait())
            except queue.Empty:
                break
        for item in items:
            if isinstance(item, _Change) and item.done is not None:
                item.done.set()

    def _apply_changes(self, changes: list[_Change]) -> None:
        try:
            if self._indexer.root.is_dir():  # a vanished vault keeps its last indexed state
                paths = [rel for change in changes for rel in self._indexer.expand(change.path)]
                self._indexer.apply(paths)
                if self._ahead is not None:
                    self._ahead.drop_stale(paths)
        except Exception as exc:
            if not self._corrupted(exc):
                logger.exception("Indexing %d changed files failed.", len(changes))
        finally:
            self._count(-len(changes))
            for change in changes:
                if change.done is not None:
                    change.done.set()

    def _begin_scan(self) -> None:
        if self._scanning:
            self._rescan_after = True
            return
        if not self._indexer.root.is_dir():
            self._vault_gone()
            self.scanned.set()
            return
        try:
            todo, unchanged = self._indexer.changes(many=MIN_BACKLOG, on_many=self._read_ahead)
        except sqlite3.Error as exc:
            if not self._corrupted(exc):
                logger.exception("Could not compare the vault with its index.")
            todo, unchanged = [], 0
            if self._ahead is not None:  # started while listing: nothing for it now
                self._ahead.close()
                self._ahead = None
        self._scan_stats = ScanStats(unchanged=unchanged)
        self._scanning = True
        self._count(len(todo))
        self._backlog.extend(todo)
        if len(todo) >= MIN_BACKLOG and self._ahead is None:
            self._read_ahead()
        if self._ahead is not None:
            self._indexer.bulk(True)
        if todo:
            logger.info("Indexing %d new, changed or deleted notes in the background.", len(todo))
        else:
            self._finish_scan()

    def _read_ahead(self) -> None:
        """Helper processes for a large backlog, started at once (the backlog may still be
        listed: they start meanwhile)."""
        try:
            self._ahead = AheadReader(self._indexer.files, self._backlog, BATCH, helper_count())
            self._ahead.start()
        except Exception:
            logger.warning("No indexing helper process; reading in the worker instead.")

    def _apply_backlog(self) -> None:
        prepared = None
        if self._ahead is not None:
            batch, prepared = self._ahead.next()
            while len(batch) < BULK_WRITE and self._ahead.ready() and self._queue.empty():
                more, ready = self._ahead.next()  # one transaction for what is ready
                batch += more
                prepared = None if prepared is None or ready is None else prepared + ready
        else:
            batch = [self._backlog.popleft() for _ in range(min(BATCH, len(self._backlog)))]
        outcomes: list[IndexOutcome] = []
        try:
            if self._indexer.root.is_dir():
                if prepared is None:
                    outcomes = self._indexer.apply(batch)
                else:
                    outcomes = self._indexer.write(prepared)
        except Exception as exc:
            if not self._corrupted(exc):
                logger.exception("Indexing a batch of %d notes failed.", len(batch))
        finally:
            self._count(-len(batch))
        self._scan_stats = self._scan_stats.plus(outcomes)
        if self._ahead is not None and self._ahead.done():
            self._ahead.close()
            self._ahead = None
            self._indexer.bulk(False)
        if not self._has_backlog():
            self._finish_scan()

    def _merge_step(self) -> None:
        try:
            if not self._indexer.merge_step(self._merging[0]):
                self._merging.pop(0)
        except sqlite3.Error as exc:
            self._merging.clear()
            if not self._corrupted(exc):
                logger.warning("Merging the search index failed (%s); searches still work.", exc)

    def _finish_scan(self) -> None:
        self._scanning = False
        stats = self.last_scan_stats = self._scan_stats
        if stats.added + stats.updated + stats.removed >= MERGE_AFTER:
            self._merging = ["notes_fts", "notes_cjk"]
        logger.info(
            "Vault index up to date: %d added, %d updated, %d removed, %d unchanged, %d skipped.",
            stats.added,
            stats.updated,
            stats.removed,
            stats.unchanged,
            stats.skipped,
        )
        self.scanned.set()
        if self._indexer.on_written is not None:
            self._indexer.on_written()  # whoever follows the index may now see it whole
        if self._rescan_after:
            self._rescan_after = False
            self._begin_scan()
