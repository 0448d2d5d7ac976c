"""A search index damaged under a running server (index.sqlite3 truncated and overwritten):
the server notices SQLite's "malformed" or "not a database", logs one line and rebuilds it in
the background; meanwhile initialize, health, reads and writes answer, and search says
pending until the rebuilt index answers."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from tests.helpers.bridge import Bridge, running_bridge, wait_for


def damage(db: Path) -> None:
    """Truncate the file and put two pages of other bytes in it (its inode stays: the
    server's connections keep it open)."""
    with open(db, "r+b") as handle:
        handle.truncate(0)
        handle.write(os.urandom(8192))


def _damage_noticed(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "is damaged" in r.getMessage()]


def _settled(bridge: Bridge) -> None:
    """As in a server that has run a while: the write-ahead log checkpointed into the file."""
    bridge.vault.index.read(lambda reader: reader.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)"))


def _no_cache(bridge: Bridge) -> None:
    """Make the read connection keep (almost) no pages cached, as in a vault larger than its
    cache: SQLite then reads the damaged file instead of answering from memory."""
    bridge.vault.index.read(lambda reader: reader.conn.execute("PRAGMA cache_size=1"))


async def test_a_damaged_index_is_rebuilt_while_everything_answers(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    async with running_bridge(tmp_path) as bridge:
        _settled(bridge)
        damage(bridge.vault.index.db_path)
        _no_cache(bridge)
        wire = await bridge.wire()  # initialize answers (notes counted in the damaged file)
        health = await wire.result("health")
        read = await wire.result("note/read", {"path": "Welcome.md"})
        written = await wire.result("note/create", {"path": "After.md", "content": "kafka"})
        await wire.result("vault/search", {"query": "kafka"})
        index = bridge.vault.index
        await wait_for(lambda: index.scanned and index.pending == 0, 60)
        after = await wire.result("vault/search", {"query": "kafka"})
        second = await (await bridge.wire()).result("health")
    assert health["status"] == "ok" and read["path"] == "Welcome.md" and written["hash"]
    found = [hit["path"] for hit in after["results"]]
    assert "After.md" in found and "Projects/Kafka pipeline.md" in found
    assert second["index"]["notes"] >= 17
    assert len(_damage_noticed(caplog)) == 1, _damage_noticed(caplog)
    assert not [r for r in caplog.records if r.exc_info], "tracebacks were logged"


def scramble(path: Path) -> None:
    """Random bytes in place of the file, shorter than it was (the inode stays): SQLite then
    says "disk I/O error" (a short read), not "malformed"."""
    size = path.stat().st_size
    with open(path, "r+b") as handle:
        handle.truncate(0)
        handle.write(os.urandom(max(size // 3, 1024)))


async def test_random_bytes_over_the_index_and_its_wal_are_rebuilt(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Random bytes over index.sqlite3 and its WAL (SQLite then says "disk I/O error", not
    "malformed"): initialize and health answer at once, the index is rebuilt."""
    caplog.set_level(logging.WARNING)
    async with running_bridge(tmp_path) as bridge:
        index = bridge.vault.index
        await (await bridge.wire()).result("note/create", {"path": "Fresh.md", "content": "kafka"})
        await wait_for(lambda: index.pending == 0, 60)
        _no_cache(bridge)
        for suffix in ("", "-wal"):
            scramble(Path(f"{index.db_path}{suffix}"))
        wire = await bridge.wire()
        health = await wire.result("health")
        await wait_for(lambda: bool(_damage_noticed(caplog)) and index.pending == 0, 60)
        after = await wire.result("vault/search", {"query": "kafka"})
        second = await (await bridge.wire()).result("health")
    assert health["status"] == "ok"
    assert "Fresh.md" in [hit["path"] for hit in after["results"]]
    assert second["index"]["notes"] >= 17


async def test_an_index_scrambled_while_stopped_is_rebuilt_at_start(tmp_path: Path) -> None:
    """Random bytes over index.sqlite3 and its WAL between two runs: the next start rebuilds
    the index instead of failing ("disk I/O error" is damage, not a data folder to refuse)."""
    async with running_bridge(tmp_path) as bridge:
        db, root = bridge.vault.index.db_path, bridge.vault.root
        await (await bridge.wire()).result("note/create", {"path": "Fresh.md", "content": "x"})
    for suffix in ("", "-wal"):
        Path(f"{db}{suffix}").write_bytes(os.urandom(1000))  # noqa: ASYNC240 (no server runs)
    async with running_bridge(tmp_path, vault_root=root) as bridge:
        await wait_for(lambda: bridge.vault.index.pending == 0, 60)
        health = await (await bridge.wire()).result("health")
    assert health["status"] == "ok" and health["index"]["notes"] >= 17
