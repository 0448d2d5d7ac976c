"""Each key is told only what it may do: a read key's ``initialize`` lists no chat, settings
or clients methods, and its tool lists and unknown-tool messages name no write tool (the
WebSocket's tools/list and tools/execute, HTTP's /api/local-llm/*), on a server whose HTTP
writes are on (so the owner does see them)."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from plugin_bridge.app.clients import ClientKeys
from plugin_bridge.app.vault_tools import WRITE_TOOL_NAMES
from tests.plugin_bridge.httpapi.conftest import Served, serve_http

pytestmark = pytest.mark.asyncio(loop_scope="module")

OWNER_ONLY = ("settings/", "clients/", "audit/", "embedder/")
CHAT = ("chat/", "command/", "conversations/", "usage/")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def served(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Served]:
    async for served in serve_http(tmp_path_factory.mktemp("said"), http_allow_writes=True):
        yield served


def key(served: Served, scope: str) -> str:
    store = ClientKeys(served.bridge.vault.data_dir)
    return store.add(f"{scope}-{time.monotonic_ns()}", scope)  # type: ignore[arg-type]


async def methods_of(served: Served, token: str | None) -> list[str]:
    wire = await served.bridge.wire(initialize=False)
    try:
        result = await wire.result("initialize", _init(token or served.bridge.app.token))
    finally:
        await wire.ws.close()
    methods: list[str] = result["capabilities"]["methods"]
    return methods


def _init(token: str) -> dict[str, object]:
    return {"token": token, "protocolVersion": 1, "client": {"name": "t", "version": "0"}}


async def test_initialize_lists_only_the_methods_the_caller_may_call(served: Served) -> None:
    owner = await methods_of(served, None)
    read = await methods_of(served, key(served, "read"))
    chat = await methods_of(served, key(served, "chat"))
    assert {"settings/update", "clients/add", "chat/send", "note/undo"} <= set(owner)
    assert "vault/search" in read and "tools/execute" in read
    assert not [m for m in read if m.startswith(OWNER_ONLY + CHAT) or m == "note/undo"]
    assert "chat/send" in chat and not [m for m in chat if m.startswith(OWNER_ONLY)]
    assert set(read) < set(chat) < set(owner)


async def test_a_read_keys_tool_lists_and_unknown_tool_name_no_write_tool(
    served: Served,
) -> None:
    reader = key(served, "read")
    wire = await served.bridge.wire(token=reader)
    try:
        listed = await wire.result("tools/list", {"format": "openai"})
        executed = await wire.result(
            "tools/execute", {"calls": [{"name": "delete_everything", "arguments": {}}]}
        )
    finally:
        await wire.ws.close()
    names = {tool["function"]["name"] for tool in listed["tools"]}
    assert "search_notes" in names and not names & WRITE_TOOL_NAMES
    reason = executed["invalidCalls"][0]["reason"]
    assert reason.startswith("Unknown tool 'delete_everything'") and "search_notes" in reason
    assert not [name for name in WRITE_TOOL_NAMES if name in reason]

    unknown = {"tool_calls": [{"function": {"name": "delete_everything", "arguments": {}}}]}
    for token, writes in ((reader, False), (served.bridge.app.token, True)):
        async with served.http(token) as http:
            tools = (await http.get("/api/local-llm/tools?format=openai")).json()["tools"]
            ran = (await http.post("/api/local-llm/execute-tools", json=unknown)).json()
        http_names = {tool["function"]["name"] for tool in tools}
        http_reason = ran["invalidCalls"][0]["reason"]
        assert "search_notes" in http_names and "search_notes" in http_reason
        assert bool(http_names & WRITE_TOOL_NAMES) is writes, token == reader
        assert ("create_note" in http_reason) is writes
