"""A large backlog is read and parsed in a helper process: same index, fresher changes win."""

from __future__ import annotations

import pickle
import sqlite3
from collections import deque
from collections.abc import Sequence
from pathlib import Path

import pytest

from plugin_bridge.vault.files import VaultFiles
from plugin_bridge.vault.lexical import worker as worker_module
from plugin_bridge.vault.lexical.ahead import AheadReader, helper_count
from plugin_bridge.vault.lexical.index import SearchIndex
from plugin_bridge.vault.lexical.indexer import Indexer, IndexOutcome, Note, Prepared
from tests.helpers.bridge import WAIT
from tests.plugin_bridge.vault.lexical.test_index import NOTES, write_vault

QUERIES = ["kafka", "zebra", "东京", "会議", "서울", "tag:infra", "crème", "Москва"]


async def _hits(root: Path, db: Path) -> dict[str, list[str]]:
    index = SearchIndex(root, db, watch=False)
    await index.start()
    await index.wait_until_idle(WAIT)
    try:
        return {q: sorted(hit.path for hit in index.search(q).hits) for q in QUERIES}
    finally:
        await index.close()


async def test_a_helper_process_builds_the_same_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every backlog through the helper (batches of 3) answers every query exactly as the
    worker thread alone does, and the helper really ran."""
    write_vault(tmp_path / "vault", NOTES)
    alone = await _hits(tmp_path / "vault", tmp_path / "alone.sqlite3")
    started: list[AheadReader] = []

    class Spy(AheadReader):
        def __init__(self, *args: object) -> None:
            super().__init__(*args)  # type: ignore[arg-type]
            started.append(self)

    monkeypatch.setattr(worker_module, "MIN_BACKLOG", 1)
    monkeypatch.setattr(worker_module, "BATCH", 3)
    monkeypatch.setattr(worker_module, "AheadReader", Spy)
    helped = await _hits(tmp_path / "vault", tmp_path / "helped.sqlite3")
    assert len(started) == 1
    assert helped == alone and any(helped.values())


@pytest.mark.parametrize(("min_backlog", "started_with"), [(2, [0]), (len(NOTES) + 1, [])])
async def test_the_helper_starts_while_the_vault_is_still_listed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, min_backlog: int, started_with: list[int]
) -> None:
    """Once the scan has found MIN_BACKLOG new notes the helper process starts, so its own
    start overlaps the rest of the listing: the backlog it is handed is still empty then (it
    fills when the listing ends). A smaller backlog starts no helper."""
    write_vault(tmp_path / "vault", NOTES)
    seen: list[int] = []

    class Spy(AheadReader):
        def __init__(
            self,
            files: VaultFiles,
            backlog: deque[str],
            batch: int,
            helpers: int = 1,
        ) -> None:
            super().__init__(files, backlog, batch, helpers)
            seen.append(len(backlog))

    monkeypatch.setattr(worker_module, "MIN_BACKLOG", min_backlog)
    monkeypatch.setattr(worker_module, "AheadReader", Spy)
    found = await _hits(tmp_path / "vault", tmp_path / "index.sqlite3")
    assert seen == started_with and found["kafka"]


def test_a_change_applied_meanwhile_is_not_overwritten_by_the_helper(tmp_path: Path) -> None:
    """Paths indexed from a change while their batch waited are left out of that batch."""
    write_vault(tmp_path / "vault", NOTES)
    files = VaultFiles((tmp_path / "vault").resolve())
    backlog = deque(sorted(NOTES))
    reader = AheadReader(files, backlog, 4)
    try:
        reader.drop_stale(["Kafka.md"])
        seen: list[str] = []
        while not reader.done():
            _paths, items = reader.next()
            assert items is not None
            seen += [item.rel for item in items]
            assert all(isinstance(item, Note) for item in items)
        assert sorted(seen) == sorted(set(NOTES) - {"Kafka.md"})
    finally:
        reader.close()


def test_a_helper_that_is_gone_leaves_every_batch_to_the_worker(tmp_path: Path) -> None:
    """With the helper process gone, every batch comes back unprepared (the worker thread
    reads it itself): none is lost, none raises."""
    write_vault(tmp_path / "vault", NOTES)
    reader = AheadReader(VaultFiles((tmp_path / "vault").resolve()), deque(sorted(NOTES)), 3)
    reader.close()
    returned: list[str] = []
    while not reader.done():
        paths, items = reader.next()
        assert items is None
        returned += paths
    assert returned == sorted(NOTES)


def test_a_helper_per_core_but_the_writers_one_to_two() -> None:
    """One or two cores get one helper; three or more get two (preparing costs more than
    writing, so with a core to spare the writer no longer waits for one helper)."""
    assert [helper_count(cores) for cores in (1, 2, 3, 64)] == [1, 1, 2, 2]
    assert helper_count() in (1, 2)


def test_two_helpers_prepare_every_batch_in_order(tmp_path: Path) -> None:
    """With two helper processes the batches still come back in backlog order, each whole."""
    write_vault(tmp_path / "vault", NOTES)
    files = VaultFiles((tmp_path / "vault").resolve())
    reader = AheadReader(files, deque(sorted(NOTES)), 2, helpers=2)
    try:
        seen: list[str] = []
        while not reader.done():
            paths, items = reader.next()
            assert items is not None and [item.rel for item in items] == paths
            seen += paths
        assert seen == sorted(NOTES)
    finally:
        reader.close()


class _ReadyAhead:
    """An AheadReader stand-in that prepares each batch at once, in this process: every
    batch is ready when the worker asks."""

    def __init__(self, files: VaultFiles, backlog: deque[str], batch: int, helpers: int) -> None:
        self._backlog, self._batch = backlog, batch
        self._indexer = Indexer(sqlite3.connect(":memory:"), files)

    def next(self) -> tuple[list[str], list[Prepared]]:
        paths = [self._backlog.popleft() for _ in range(min(self._batch, len(self._backlog)))]
        return paths, [self._indexer.prepare(rel) for rel in paths]

    def ready(self) -> bool:
        return bool(self._backlog)

    def done(self) -> bool:
        return not self._backlog

    def drop_stale(self, paths: list[str]) -> None:
        pass

    def close(self) -> None:
        pass


async def test_ready_batches_are_written_together_with_the_log_checkpointed_less_meanwhile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A large backlog whose batches are ready goes in transactions of BULK_WRITE files, with
    the write-ahead log checkpointed less often until the backlog is written."""
    write_vault(tmp_path / "vault", NOTES)
    writes: list[int] = []
    bulk: list[bool] = []
    write, set_bulk = Indexer.write, Indexer.bulk

    def counted(self: Indexer, items: Sequence[Prepared]) -> list[IndexOutcome]:
        writes.append(len(items))
        return write(self, items)

    def noted(self: Indexer, on: bool) -> None:
        bulk.append(on)
        set_bulk(self, on)

    monkeypatch.setattr(Indexer, "write", counted)
    monkeypatch.setattr(Indexer, "bulk", noted)
    monkeypatch.setattr(worker_module, "MIN_BACKLOG", 1)
    monkeypatch.setattr(worker_module, "BATCH", 2)
    monkeypatch.setattr(worker_module, "BULK_WRITE", 4)
    monkeypatch.setattr(worker_module, "AheadReader", _ReadyAhead)
    hits = await _hits(tmp_path / "vault", tmp_path / "i.sqlite3")
    assert writes == [4, 4] and len(NOTES) == 8
    assert bulk == [True, False]
    assert hits["zebra"] == ["Broken.md"] and hits["Москва"] == ["Café.md"]


def test_a_prepared_note_reaches_the_writer_unchanged(tmp_path: Path) -> None:
    """What the helper sends (pickled) is equal to what it prepared, chunks included."""
    write_vault(tmp_path / "vault", NOTES)
    files = VaultFiles(tmp_path / "vault")
    indexer = Indexer(sqlite3.connect(":memory:"), files)
    prepared = [indexer.prepare(rel) for rel in sorted(rel for rel, _ in files.walk(pdfs=True))]
    notes = [item for item in prepared if isinstance(item, Note)]
    assert notes and all(note.chunks for note in notes)
    assert pickle.loads(pickle.dumps(prepared)) == prepared
