"""The vault's one search door: a search parses its query once and runs whole on the index's
read door, off the event loop, which stays free meanwhile; a door runs its jobs in order on its
own thread and drops a job whose caller gave up before it started."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from llm_service.door import Door
from plugin_bridge.vault import vault as vault_module
from plugin_bridge.vault.errors import VaultError
from plugin_bridge.vault.lexical import index as index_module
from plugin_bridge.vault.lexical.reader import IndexReader
from plugin_bridge.vault.vault import Vault

NOTES = {
    "Garden/Tomatoes.md": "# Tomatoes\nWater the tomato plants every morning. #garden",
    "Work/Deploy.md": "# Deploy\nThe release pipeline builds the container.",
}


@pytest.fixture
async def vault(tmp_path: Path) -> AsyncIterator[Vault]:
    root = tmp_path / "vault"
    for rel, text in NOTES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    opened = Vault(root, tmp_path / "data", watch=False)
    await opened.start()
    await opened.index.wait_until_idle(20)
    yield opened
    await opened.close()


async def test_a_search_runs_off_the_loop_while_the_loop_answers(
    vault: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The FTS5 query runs on the read door's thread; the loop keeps running while it does."""
    seen: list[str] = []
    original = IndexReader.search

    def slow(self: IndexReader, *args: Any, **kwargs: Any) -> Any:
        seen.append(threading.current_thread().name)
        time.sleep(0.3)  # a slow search, holding its thread
        return original(self, *args, **kwargs)

    monkeypatch.setattr(IndexReader, "search", slow)
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    ticker = asyncio.create_task(tick())
    found = await vault.search("tomato", 5, None, "Garden", "garden")
    ticker.cancel()
    assert [hit.path for hit in found.hits] == ["Garden/Tomatoes.md"]
    assert seen and all(name.startswith("vault-reader") for name in seen), seen
    assert ticks >= 10  # the loop ran on while the search slept in its thread


async def test_the_query_is_parsed_once(vault: Vault, monkeypatch: pytest.MonkeyPatch) -> None:
    """One search, one parse, whatever the filters (the index's own parse is not used)."""
    calls: list[str] = []
    original = vault_module.parse_query

    def counting(text: str) -> Any:
        calls.append(text)
        return original(text)

    monkeypatch.setattr(vault_module, "parse_query", counting)
    monkeypatch.setattr(index_module, "parse_query", counting)
    await vault.search("tomato path:Garden", 5, "hybrid", "Garden", "garden")
    assert calls == ["tomato path:Garden"]


async def test_a_folder_outside_the_vault_and_a_missing_note_are_refused(vault: Vault) -> None:
    with pytest.raises(VaultError) as refused:
        await vault.search("tomato", 5, None, "../elsewhere")
    assert refused.value.code == "forbidden_path"
    with pytest.raises(VaultError) as missing:
        await vault.related("Garden/Nope.md")
    assert missing.value.code == "not_found"
    related = await vault.related("Garden/Tomatoes.md")  # no embedder: not ready, nothing
    assert related.path == "Garden/Tomatoes.md" and not related.ready and related.notes == []


async def test_a_door_runs_jobs_in_order_and_drops_those_given_up() -> None:
    door = Door("test-door")
    done: list[int] = []
    gate = threading.Event()
    first = asyncio.create_task(door.run(gate.wait, 5))
    await asyncio.sleep(0.05)  # the first job holds the thread
    given_up = asyncio.create_task(door.run(done.append, 0))
    await asyncio.sleep(0.01)
    given_up.cancel()
    await asyncio.sleep(0.01)  # the cancellation reaches the queued job
    second = asyncio.create_task(door.run(done.append, 1))
    third = asyncio.create_task(door.run(lambda: door.call(done.append, 2)))  # inline
    gate.set()
    await asyncio.gather(first, second, third)
    assert done == [1, 2]
    door.close()
