"""A garbage conversations.sqlite3 never stops the server: it is moved aside with one logged
sentence naming it and a fresh store is used; the usage log lives in its own file, takes over
the rows the old store held, and says budgets start from zero when none can be read."""

from __future__ import annotations

import logging
import os
import sqlite3
import time
from pathlib import Path

import pytest

from llm_service import ScriptedProvider
from tests.helpers.bridge import running_bridge


def _old_store_with_usage(data: Path, cost: float) -> None:
    """A conversations.sqlite3 as the server wrote it before usage.sqlite3 existed."""
    from plugin_bridge.app.conversations.store import CONVERSATION_MIGRATIONS
    from plugin_bridge.vault.schema import connect, migrate

    data.mkdir(parents=True)
    conn = connect(str(data / "conversations.sqlite3"))
    migrate(conn, CONVERSATION_MIGRATIONS)
    conn.execute(
        "INSERT INTO usage (time, conversation, purpose, model, input_tokens, output_tokens, "
        "cache_read_tokens, cache_write_tokens, cost_usd, provider) "
        "VALUES (?, 'c1', 'chat', 'claude-haiku-4-5', 10, 5, 0, 0, ?, 'anthropic')",
        (time.time(), cost),
    )
    conn.close()


async def test_a_garbage_conversation_store_is_moved_aside(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    data = tmp_path / "data"
    data.mkdir()
    (data / "conversations.sqlite3").write_bytes(os.urandom(10_000))
    provider = ScriptedProvider()
    provider.enqueue_text("Hello.")
    async with running_bridge(tmp_path, provider=provider) as bridge:
        wire = await bridge.wire()
        chat = await wire.result("chat/send", {"text": "hi"})
        listed = await wire.result("conversations/list")
        found = await wire.result("vault/search", {"query": "kafka"})
    broken = [p.name for p in data.iterdir() if p.name.startswith("conversations.sqlite3.broken-")]
    assert len(broken) == 1
    assert [c["id"] for c in listed["conversations"]] == [chat["conversationId"]]
    assert found["results"]
    said = [r.getMessage() for r in caplog.records if "moved it aside" in r.getMessage()]
    assert len(said) == 1 and "conversations.sqlite3" in said[0] and broken[0] in said[0]
    zero = [r.getMessage() for r in caplog.records if "budgets start from zero" in r.getMessage()]
    assert len(zero) == 1


async def test_the_usage_log_takes_over_the_old_rows_and_survives_a_broken_store(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Rows moved once by a named migration; the store broken afterwards loses no usage."""
    caplog.set_level(logging.INFO)
    data = tmp_path / "data"
    _old_store_with_usage(data, 0.25)
    async with running_bridge(tmp_path) as bridge:
        first = await (await bridge.wire()).result("usage/summary")
    (data / "conversations.sqlite3").write_bytes(os.urandom(10_000))
    for suffix in ("-wal", "-shm"):
        (data / f"conversations.sqlite3{suffix}").unlink(missing_ok=True)
    async with running_bridge(tmp_path, vault_root=tmp_path / "vault") as bridge:
        second = await (await bridge.wire()).result("usage/summary")
    assert first["today"]["costUsd"] == second["today"]["costUsd"] == 0.25
    with sqlite3.connect(data / "usage.sqlite3") as conn:
        names = [row[0] for row in conn.execute("SELECT name FROM migrations")]
    assert "002_rows_from_conversations" in names
    assert not [r for r in caplog.records if "budgets start from zero" in r.getMessage()]
