"""/mcp tells a key only of the tools it may use: with HTTP writes on, the owner is offered
the write tools and a read key is not, and an unknown tool's message names only the read
tools (the SDK's client over a real socket, the bridge in process)."""

from __future__ import annotations

from pathlib import Path

from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from plugin_bridge.app.clients import ClientKeys
from plugin_bridge.app.vault_tools import WRITE_TOOL_NAMES
from plugin_bridge.mcp import McpHttpApp, streamable_http_app
from tests.helpers.bridge import running_bridge
from tests.helpers.mcp import http_client, text_of


class Later:
    """``/mcp``, built once the bridge (which it needs) runs."""

    app: McpHttpApp | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        assert self.app is not None
        await self.app(scope, receive, send)


async def test_a_read_key_is_told_only_of_the_tools_it_may_use(tmp_path: Path) -> None:
    later = Later()
    async with running_bridge(tmp_path, http=True, http_mounts=[Route("/mcp", later)]) as bridge:
        later.app = streamable_http_app(bridge.app, allow_writes=True)
        url = bridge.http_url + "/mcp"
        key = ClientKeys(bridge.vault.data_dir).add("reader", "read")
        async with later.app.lifespan():
            async with http_client(url, bridge.app.token) as owner:
                assert "create_note" in await owner.tools()
            async with http_client(url, key) as reader:
                assert not set(await reader.tools()) & WRITE_TOOL_NAMES
                unknown = await reader.call("delete_everything", {})
    said = text_of(unknown)
    assert unknown.is_error and "Unknown tool 'delete_everything'" in said
    assert "search_notes" in said and not [name for name in WRITE_TOOL_NAMES if name in said]
