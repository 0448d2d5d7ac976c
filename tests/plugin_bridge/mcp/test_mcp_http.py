"""MCP over streamable HTTP at /mcp on `serve`'s HTTP listener, through the SDK's client: the
info file's token as a bearer token works; a wrong or missing one is 401 before MCP runs."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any, cast

import httpx
import pytest
import pytest_asyncio

import plugin_bridge.mcp as mcp_module
from plugin_bridge.app.clients import ClientKeys
from plugin_bridge.app.settings.config import PLUGIN_CLIENT
from plugin_bridge.mcp import McpHttpApp
from plugin_bridge.wire.client import BridgeClient
from tests.helpers.mcp import HeldClient, http_client, json_of, text_of
from tests.helpers.serve import START_WAIT, Served, start_serve

if TYPE_CHECKING:
    from plugin_bridge.app.state import BridgeApp

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
    assert body["error"]["code"] == -32001
    assert "missing or wrong client key" in body["error"]["message"]
    assert body["error"]["data"] == {"error": "auth_failed"}
    assert "info file" not in body["error"]["message"]
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


async def test_a_write_keys_writes_go_through_the_plugins_review(served: Served) -> None:
    """A write key while the plugin is open: the write tools are offered whatever
    http_allow_writes says (off here), each write is asked of the plugin (tool/confirm) and
    only an approved one is made; a chat key is offered none and is refused."""
    asked: list[dict[str, Any]] = []
    answers = iter([False, True])

    async def review(method: str, params: dict[str, Any]) -> dict[str, Any]:
        asked.append({"method": method, **params})
        return {"approved": next(answers)}

    plugin = await BridgeClient.connect(
        str(served.info["url"]),
        str(served.info["token"]),
        client_name=PLUGIN_CLIENT,
        on_request=review,
    )
    keys = ClientKeys(served.info_file.parent / "data")
    root = served.info_file.parent / "vault"
    try:
        async with client_with(served, keys.add("mcp-writer", "write")) as client:
            assert "create_note" in await client.tools()
            denied = await client.call("create_note", {"path": "Denied.md", "content": "x"})
            made = await client.call("create_note", {"path": "Kites.md", "content": "# Kites\n"})
        async with client_with(served, keys.add("mcp-talker", "chat")) as client:
            assert "create_note" not in await client.tools()
            refused = await client.call("create_note", {"path": "Talk.md", "content": "x"})
    finally:
        await plugin.close()
    assert [(a["method"], a["tool"]) for a in asked] == [("tool/confirm", "create_note")] * 2
    assert denied.is_error and not (root / "Denied.md").exists()
    assert not made.is_error and (root / "Kites.md").read_text(encoding="utf-8") == "# Kites\n"
    assert refused.is_error and "scope write" in text_of(refused)


async def test_a_failed_start_of_mcp_is_tried_again_by_the_next_request(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Out of file handles while /mcp starts: that request fails, and the next one starts it
    afresh instead of getting the cached failure until a restart."""
    failures = iter([OSError(24, "Too many open files"), RuntimeError("second start")])

    async def failing_import(name: str) -> None:
        raise next(failures)

    monkeypatch.setattr(mcp_module, "import_early", failing_import)
    mcp_app = McpHttpApp(cast("BridgeApp", object()), allow_writes=False)

    async def nothing() -> dict[str, Any]:
        return {"type": "http.disconnect"}

    async def ignore(message: Any) -> None:
        return None

    with pytest.raises(OSError, match="Too many open files"):
        await mcp_app({"type": "http"}, nothing, ignore)
    with pytest.raises(RuntimeError, match="second start"):
        await mcp_app({"type": "http"}, nothing, ignore)
