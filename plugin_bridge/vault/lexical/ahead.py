"""Reading and parsing a large scan's backlog in a helper process, ahead of the writes.

Reading, hashing and parsing a note (front matter, tags, links, CJK bigrams) is Python work
that holds the GIL, and writing it is SQLite work; in one thread they take turns. For a big
backlog (a first index, a vault copied in) helper processes (one per core but the writer's, at
most two: :func:`helper_count`) prepare the next batches while the worker thread writes the
current one, so they run on several cores (bench/search.py: 10,000 notes 7.5 s → 4.5 s with one
helper on 2 cores; a second helper on the same 2 cores made it 5.8 s). A small backlog
is not worth the process start (~0.3 s) and is prepared in the worker thread as before.

A change applied while a batch waits (the user saved a note again) is fresher than what the
helper read: :meth:`AheadReader.drop_stale` leaves those paths out of the batch.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import sqlite3
from collections import deque
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Final

from plugin_bridge.vault.files import VaultFiles
from plugin_bridge.vault.lexical.indexer import Indexer, Prepared

logger = logging.getLogger(__name__)

MIN_BACKLOG: Final = 2000
"""Files in a scan's backlog from which a helper process prepares them."""
MAX_HELPERS: Final = 2
"""Helper processes at most."""


def helper_count(cores: int | None = None) -> int:
    """Helper processes for this machine: one core is the writer's, the others prepare (at
    most two, at least one). Preparing a note now costs more CPU than writing it (10,000
    notes: ~7.5 s against ~6 s), so from 3 cores a second helper keeps the writer busy; on 2
    cores a second helper only takes turns with the writer (measured slower on a quiet
    machine: docs/benchmarks.md)."""
    found = os.cpu_count() if cores is None else cores
    return max(1, min(MAX_HELPERS, (found or 1) - 1))


_helper: Indexer | None = None


def _start_helper(files: VaultFiles) -> None:
    global _helper
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is for the server, which stops us
    _helper = Indexer(sqlite3.connect(":memory:"), files)  # prepare() never uses it


def _started() -> None:
    """A job that only has a helper process started (see :meth:`AheadReader.start`)."""


def _prepare(paths: list[str]) -> list[Prepared]:
    assert _helper is not None
    return [_helper.prepare(rel) for rel in paths]


class AheadReader:
    """Prepares ``backlog`` (taken from it ``batch`` paths at a time) in ``helpers`` helper
    processes, each a batch ahead of the one being written (and one more queued)."""

    def __init__(
        self, files: VaultFiles, backlog: deque[str], batch: int, helpers: int = 1
    ) -> None:
        self._backlog = backlog
        self._batch = batch
        self._helpers = helpers
        self._ahead = helpers + 1
        self._pool = ProcessPoolExecutor(
            helpers,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_start_helper,
            initargs=(files,),
        )
        self._pending: deque[tuple[list[str], Future[list[Prepared]] | None]] = deque()
        self._fresh: set[str] = set()

    def start(self) -> None:
        """Start the helper processes now (else the first batch starts them): the scan does
        while it still lists the vault, so their start (~0.3 s) overlaps the listing."""
        for _ in range(self._helpers):
            self._pool.submit(_started)

    def next(self) -> tuple[list[str], list[Prepared] | None]:
        """The next batch's paths and what the helper prepared for them (None if it failed:
        the caller prepares them itself)."""
        while len(self._pending) <= self._ahead and self._backlog:
            size = min(self._batch, len(self._backlog))
            paths = [self._backlog.popleft() for _ in range(size)]
            try:
                future: Future[list[Prepared]] | None = self._pool.submit(_prepare, paths)
            except Exception:  # the helper is gone (killed, out of memory)
                future = None
            self._pending.append((paths, future))
        paths, pending = self._pending.popleft()
        try:
            items = None if pending is None else pending.result()
        except Exception:
            items = None
        if items is None:
            logger.warning("The indexing helper process failed; reading in the worker instead.")
            return paths, None
        return paths, [item for item in items if item.rel not in self._fresh]

    def ready(self) -> bool:
        """Whether :meth:`next` would return at once (its batch is prepared, or failed)."""
        if not self._pending:
            return False
        future = self._pending[0][1]
        return future is None or future.done()

    def done(self) -> bool:
        return not self._pending and not self._backlog

    def drop_stale(self, paths: list[str]) -> None:
        """``paths`` were just indexed from a change: what the helper read of them is older."""
        self._fresh.update(paths)

    def close(self) -> None:
        """Stop the helper (after the batch it is reading, if any) and wait for it to exit."""
        self._pool.shutdown(wait=True, cancel_futures=True)
