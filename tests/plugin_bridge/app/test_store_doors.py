"""The stores behind their doors: the usage log, the budget checks, the conversation store and
the client keys are touched only on their own door's thread, never on the event loop's; a
budget reached by a call just posted is refused; the client keys are cached and read again
when another process changes the file."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from llm_service import ScriptedProvider, Usage
from plugin_bridge.app.clients import OWNER_CALLER, ClientKeys
from plugin_bridge.app.conversations.usage import Budgets, Spending
from plugin_bridge.app.conversations.usage_log import USAGE_FILE, UsageLog
from plugin_bridge.app.settings.config import BridgeSettings
from plugin_bridge.wire.errors import RpcError, WireCode
from tests.helpers.bridge import running_bridge

PRICED = "claude-haiku-5-5"
"""$0.10 / $0.50 per million tokens: 1,000 in + 1,000 out cost $0.0006."""
CALL = Usage(1000, 1000)


def _threads_of(sql_seen: set[str]) -> Callable[[str], None]:
    """A trace callback: SQLite calls it on the thread that runs each statement."""
    return lambda statement: sql_seen.add(threading.current_thread().name)


async def test_a_session_runs_no_sqlite_and_reads_no_key_file_on_the_event_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Turns with a budget set (checked, recorded, warned about), a conversation kept as a
    note and read back, usage/summary and a client key's requests: every statement of the
    usage log runs on its door's thread, every one of the conversation store on its own, and
    the keys file is looked at on the keys' door only."""
    provider = ScriptedProvider()
    for text in ("one", "two", "three"):
        provider.enqueue_text(text, usage=CALL)
    settings = BridgeSettings(conversations_folder="Chats")
    async with running_bridge(
        tmp_path,
        provider=provider,
        model=PRICED,
        budgets=Budgets(daily_usd=1.0, monthly_usd=0.001),
        settings=settings,
    ) as bridge:
        app = bridge.app
        usage_threads: set[str] = set()
        store_threads: set[str] = set()
        app.usage_log._conn.set_trace_callback(_threads_of(usage_threads))
        app.conversations.store._conn.set_trace_callback(_threads_of(store_threads))
        key_threads: set[str] = set()
        load = ClientKeys._load

        def watched_load(keys: ClientKeys) -> None:
            if keys is app.clients:  # the server's keys, not the CLI's below
                key_threads.add(threading.current_thread().name)
            load(keys)

        monkeypatch.setattr(ClientKeys, "_load", watched_load)
        key = ClientKeys(bridge.vault.data_dir).add("phone", "chat")
        wire = await bridge.wire(token=key)
        first = await wire.result("chat/send", {"text": "First?"})
        await wire.result("chat/send", {"text": "Next?", "conversationId": first["conversationId"]})
        refused = await wire.error("chat/send", {"text": "Third?"})
        await wire.result("conversations/get", {"id": first["conversationId"]})
        await wire.result("usage/summary")
        warnings = [n for n in wire.notifications if n["method"] == "budget/warning"]
        await app.conversations.settled()
    assert refused["code"] == WireCode.BUDGET_EXCEEDED and "monthly budget" in refused["message"]
    assert warnings, "the second call passed 80 % of the monthly budget"
    assert [path.parent.name for path in bridge.vault.root.glob("Chats/*.md")] == ["Chats"]
    loop_thread = threading.main_thread().name
    assert usage_threads and {name.split("_")[0] for name in usage_threads} == {"usage-log"}
    assert store_threads and {name.split("_")[0] for name in store_threads} == {"conversations"}
    assert key_threads and {name.split("_")[0] for name in key_threads} == {"client-keys"}
    assert loop_thread not in usage_threads | store_threads | key_threads


async def test_a_budget_reached_by_a_call_just_posted_is_refused(tmp_path: Path) -> None:
    """A call's row is posted to the log's door and the check asked after it reads it there:
    the next check refuses with -32012 naming the period, spent and budget."""
    log = UsageLog(tmp_path)
    spending = Spending(log, Budgets(daily_usd=0.01))
    try:
        await spending.check()  # nothing spent yet
        spending.recorder(None, "chat", OWNER_CALLER)("m", CALL, 0.006, "anthropic")
        await spending.check()  # $0.006 of $0.01
        spending.recorder(None, "chat", OWNER_CALLER)("m", CALL, 0.004, "anthropic")
        with pytest.raises(RpcError) as refused:
            await spending.check()
    finally:
        await log.execute(UsageLog.close)
    assert refused.value.code == WireCode.BUDGET_EXCEEDED
    assert refused.value.data == {"period": "day", "spentUsd": 0.01, "budgetUsd": 0.01}
    assert "daily budget of $0.01 is used up" in str(refused.value)


async def test_a_call_another_process_records_counts_at_the_next_check(tmp_path: Path) -> None:
    """The totals a check reads are kept up to date by this log's own rows; a row written
    through another connection (another server on the same vault) is summed in at the next
    check all the same."""
    log, other = UsageLog(tmp_path), UsageLog(tmp_path)
    spending = Spending(log, Budgets(monthly_usd=1.0))
    try:
        assert await spending.snapshot() == {"month": 0.0}
        spending.recorder(None, "chat", OWNER_CALLER)("m", CALL, 0.25, "anthropic")
        assert await spending.snapshot() == {"month": 0.25}
        other.record(None, "chat", "anthropic", "m", CALL, 0.75)
        with pytest.raises(RpcError) as refused:
            await spending.check()
    finally:
        other.close()
        await log.execute(UsageLog.close)
    assert refused.value.data == {"period": "month", "spentUsd": 1.0, "budgetUsd": 1.0}


async def test_a_recorded_call_is_committed_once_recorded_returns(tmp_path: Path) -> None:
    """Rows are posted without waiting; ``recorded()`` returns once every one posted before
    it is committed, so another connection (a restart after a kill -9) sees them all."""
    log = UsageLog(tmp_path)
    spending = Spending(log, Budgets())
    record = spending.recorder("c", "chat", OWNER_CALLER)
    for _ in range(10):
        record("m", CALL, None, "ollama")
    await spending.recorded()
    other = sqlite3.connect(tmp_path / USAGE_FILE)
    try:
        assert other.execute("SELECT COUNT(*) FROM usage").fetchone() == (10,)
    finally:
        other.close()
        await log.execute(UsageLog.close)


async def test_without_a_budget_a_check_never_reaches_the_log(tmp_path: Path) -> None:
    """No budget set: check and snapshot answer at once, without a hop to the log."""
    log = UsageLog(tmp_path)
    await log.execute(UsageLog.close)  # any read of it would fail now
    spending = Spending(log, Budgets())
    await spending.check()
    assert await spending.snapshot() == {}
    assert await spending.crossings({}) == []


async def test_client_keys_are_read_again_after_another_process_changes_the_file(
    tmp_path: Path,
) -> None:
    """The server's keys see a key the CLI (another ClientKeys) adds, and stop seeing it at
    the next lookup once it is revoked; a key revoked and added again under the same name
    no longer holds for a caller that authenticated with the old one."""
    server, cli = ClientKeys(tmp_path), ClientKeys(tmp_path)
    key = cli.add("laptop", "chat")
    caller = await server.caller(key)
    assert caller is not None and caller.name == "laptop"
    await server.authorize(caller, "chat/send")
    cli.revoke("laptop")
    assert await server.caller(key) is None
    assert await server.revoked_name(key) == "laptop"
    cli.add("laptop", "chat")
    with pytest.raises(RpcError) as refused:
        await server.authorize(caller, "chat/send")
    assert refused.value.code == WireCode.UNAUTHORIZED and "'laptop' was revoked" in str(
        refused.value
    )


async def test_client_keys_unchanged_on_disk_are_not_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A lookup looks at the file's identity only: while it is unchanged, the keys come from
    memory, and the owner's token never reaches the door at all."""
    keys = ClientKeys(tmp_path)
    key = ClientKeys(tmp_path).add("tablet", "read")
    assert await keys.caller(key) is not None  # the first lookup reads the file
    reads: list[Path] = []
    read_text = Path.read_text

    def counted(path: Path, encoding: str | None = None) -> str:
        if path == keys.path:
            reads.append(path)
        return read_text(path, encoding=encoding)

    monkeypatch.setattr(Path, "read_text", counted)
    for _ in range(3):
        assert await keys.caller(key) is not None
    assert await keys.authenticate("owner-token-xyz", "owner-token-xyz") is not None
    assert reads == []
    ClientKeys(tmp_path).add("watch", "read")  # the CLI: the file changed
    reads.clear()
    assert await keys.caller(key) is not None
    assert reads == [keys.path]


async def test_rows_posted_from_many_tasks_all_land_in_order(tmp_path: Path) -> None:
    """Rows posted from the loop and from another thread are all written, and a read asked
    after them sees every one."""
    log = UsageLog(tmp_path)
    spending = Spending(log, Budgets())
    record = spending.recorder("c", "chat", OWNER_CALLER)  # type: ignore[arg-type]
    for _ in range(20):
        record("m", Usage(1, 1), 0.001, "anthropic")
    await asyncio.to_thread(
        lambda: [record("m", Usage(1, 1), 0.001, "anthropic") for _ in range(5)]
    )
    try:
        (row,) = (await spending.by_period())["day"]
    finally:
        await log.execute(UsageLog.close)
    assert row.calls == 25
