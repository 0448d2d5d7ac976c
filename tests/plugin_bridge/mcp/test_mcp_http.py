"""MCP over streamable HTTP at /mcp on `serve`'s HTTP listener, through the SDK's client: the
info file's token as a bearer token works; a wrong or missing one is 401 before MCP runs."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager

import httpx
import pytest
import pytest_asyncio

from plugin_bridge.app.clients import ClientKeys
from tests.helpers.mcp import HeldClient, http_client, json_of, text_of
from tests.helpers.serve import START_WAIT, Served, start_serve

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def served(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Served]:
    tmp = tmp_path_factory.mktemp("http")
    served = await start_serve(tmp, "--info-file", str(tmp / "server.json"))
    try:
        yield served
    finally:
        served.process.terminate()
        await served.process.wait()


def endpoint(served: Served) -> str:
    return f"{served.info['httpUrl']}/mcp"


def client_with(served: Served, token: str) -> AbstractAsyncContextManager[HeldClient]:
    """The SDK's client on /mcp with ``token`` as the bearer token."""
    return http_client(endpoint(served), token)


async def test_the_right_token_lists_and_calls_the_vault_tools(served: Served) -> None:
    async with client_with(served, str(served.info["token"])) as client:
        tools = await client.tools()
        assert {"search_notes", "read_note", "list_notes", "get_backlinks"} <= set(tools)
        assert "create_note" not in tools  # httpAllowWrites is off
        listed = json_of(await client.call("list_notes", {"folder": "Projects"}))
        assert "Projects/Kafka pipeline.md" in listed["notes"]
        refused = await client.call("create_note", {"path": "Web.md", "content": "x"})
        assert refused.is_error and "http_allow_writes" in text_of(refused)
        assert "--allow-writes" not in text_of(refused)


@pytest.mark.parametrize("token", ["wrong-token", None])
async def test_a_wrong_or_missing_token_is_401(served: Served, token: str | None) -> None:
    headers = {"Accept": "application/json, text/event-stream"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    async with httpx.AsyncClient(timeout=START_WAIT) as http:
        response = await http.post(endpoint(served), json=ping, headers=headers)
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Bearer")
    body = response.json()
    assert body["jsonrpc"] == "2.0" and body["id"] is None
    assert body["error"]["code"] == -32001 and "bearer token" in body["error"]["message"]
    with pytest.raises(ExceptionGroup):  # the SDK's client cannot start a session
        async with client_with(served, token or ""):
            pass


async def test_a_read_key_reads_and_is_refused_writes(served: Served) -> None:
    """A client key works on /mcp (added while the server runs); a write needs scope write."""
    key = ClientKeys(served.info_file.parent / "data").add("mcp-reader", "read")
    async with client_with(served, key) as client:
        listed = json_of(await client.call("list_notes", {"folder": "Projects"}))
        assert "Projects/Kafka pipeline.md" in listed["notes"]
        refused = await client.call("create_note", {"path": "Web.md", "content": "x"})
        assert refused.is_error and "scope write" in text_of(refused)
