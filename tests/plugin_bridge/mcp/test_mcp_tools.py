"""The MCP server's tools in process: related_notes follows the embedder, through the SDK's
in-process client over the same low-level server the stdio and HTTP transports serve."""

from __future__ import annotations

from pathlib import Path

from mcp import Client

from llm_service.embedders import FakeEmbedder
from plugin_bridge.app.access import ToolAccess
from plugin_bridge.app.settings.config import BridgeSettings
from plugin_bridge.app.turn.confirm import ask_client
from plugin_bridge.mcp.server import build_server
from plugin_bridge.mcp.tools import LocalTools
from tests.helpers.bridge import running_bridge
from tests.helpers.mcp import json_of, text_of


async def test_related_notes_is_offered_while_there_is_an_embedder(tmp_path: Path) -> None:
    async with running_bridge(tmp_path, embedder=FakeEmbedder()) as bridge:
        tools = LocalTools(bridge.vault, bridge.app.access, allow_writes=False)
        async with Client(build_server(tools, bridge.vault.name)) as client:
            listed = {tool.name for tool in (await client.list_tools()).tools}
            assert "related_notes" in listed
            found = await client.call_tool("related_notes", {"path": "Projects/Kafka pipeline.md"})
            related = json_of(found)["related"]
            assert related and all(item["path"] != "Projects/Kafka pipeline.md" for item in related)
            await bridge.app.use_embedder(None, 0.5)
            listed = {tool.name for tool in (await client.list_tools()).tools}
            assert "related_notes" not in listed
            gone = await client.call_tool("related_notes", {"path": "Projects/Kafka pipeline.md"})
            assert gone.is_error and "needs semantic search" in text_of(gone)


async def test_writes_follow_a_live_switch(tmp_path: Path) -> None:
    """/mcp's writes follow http_allow_writes as it is now: offered and run while it is on,
    refused naming the setting while it is off."""
    settings = BridgeSettings.model_construct(http_allow_writes=False)
    async with running_bridge(tmp_path) as bridge:
        access = ToolAccess(
            bridge.vault, bridge.app.writes, lambda: settings, ask_client(bridge.vault)
        )
        tools = LocalTools(bridge.vault, access, allow_writes=None)
        async with Client(build_server(tools, bridge.vault.name)) as client:
            create = {"path": "Live.md", "content": "x"}
            assert "create_note" not in {t.name for t in (await client.list_tools()).tools}
            refused = await client.call_tool("create_note", create)
            assert refused.is_error and "http_allow_writes" in text_of(refused)
            settings = BridgeSettings.model_construct(http_allow_writes=True)
            listed = await client.list_tools(cache_mode="bypass")
            assert "create_note" in {tool.name for tool in listed.tools}
            assert json_of(await client.call_tool("create_note", create))["path"] == "Live.md"
