"""MCP servers as the model's tools: our own small MCP server (tests/fakes/mcp_server.py, over
stdio) called through chat with the scripted model, asked for through tool/confirm, crashed and
restarted; a server that cannot start; the servers listed, added and removed by settings."""

from __future__ import annotations

import asyncio
import os
import socket
import sys
import tomllib
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest
import pytest_asyncio

from llm_service import ScriptedProvider
from plugin_bridge.app.settings.config import PLUGIN_CLIENT, BridgeSettings
from tests.conftest import REPO_ROOT
from tests.helpers.bridge import Bridge, Wire, init_params, running_bridge
from tests.helpers.serve import START_WAIT

pytestmark = pytest.mark.asyncio(loop_scope="module")

PLUGIN = {"name": PLUGIN_CLIENT, "version": "0"}
T = TypeVar("T")


def fake_server(starts: Path, **env: str) -> dict[str, Any]:
    """tests/fakes/mcp_server.py over stdio, counting its starts in ``starts``."""
    return {
        "command": sys.executable,
        "args": ["-m", "tests.fakes.mcp_server"],
        "env": {"PYTHONPATH": str(REPO_ROOT), "FAKE_MCP_STARTS": str(starts), **env},
    }


async def until(check: Callable[[], Awaitable[T | None]]) -> T:
    """Poll ``check`` until it gives a value (servers start as processes: the start-up bound)."""
    async with asyncio.timeout(START_WAIT):
        while True:
            value = await check()
            if value is not None:
                return value
            await asyncio.sleep(0.01)


def saved_servers() -> dict[str, Any]:
    """The servers in the settings file, as TOML reads them back."""
    saved = tomllib.loads(Path(os.environ["AI_BRIDGE_CONFIG"]).read_text(encoding="utf-8"))
    servers: dict[str, Any] = saved["mcp"]["servers"]
    return servers


def starts_of(bridge: Bridge) -> int:
    return int(Path(bridge.app.config.mcp.servers["fake"].env["FAKE_MCP_STARTS"]).read_text())


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def web_server() -> AsyncIterator[str]:
    """tests/fakes/mcp_server.py over streamable HTTP on a free loopback port: its URL."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        *("-m", "tests.fakes.mcp_server", "--http", str(port)),
        cwd=REPO_ROOT,
        stderr=asyncio.subprocess.DEVNULL,
    )
    try:
        async with asyncio.timeout(START_WAIT):
            while True:
                try:
                    _, writer = await asyncio.open_connection("127.0.0.1", port)
                except OSError:
                    await asyncio.sleep(0.05)
                    continue
                writer.close()
                break
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        await process.wait()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def bridge(
    tmp_path_factory: pytest.TempPathFactory, web_server: str
) -> AsyncIterator[Bridge]:
    tmp = tmp_path_factory.mktemp("sources")
    settings = BridgeSettings(
        mcp={
            "servers": {
                "fake": fake_server(tmp / "starts"),
                "web": {"url": web_server, "headers": {"Authorization": "Bearer web-secret"}},
                "broken": {"command": str(tmp / "no-such-program")},
            },
            "restart_backoff": 0.05,
        }
    )
    provider = ScriptedProvider()
    async with running_bridge(tmp, provider=provider, settings=settings) as served:
        yield served


@pytest_asyncio.fixture(loop_scope="module")
async def wire(bridge: Bridge) -> AsyncIterator[Wire]:
    wire = await bridge.wire()
    yield wire
    await wire.ws.close()


async def servers(wire: Wire) -> dict[str, dict[str, Any]]:
    health = await wire.result("health")
    return {server["name"]: server for server in health["mcpServers"]}


async def until_running(wire: Wire, name: str = "fake") -> dict[str, Any]:
    async def running() -> dict[str, Any] | None:
        server = (await servers(wire))[name]
        return server if server["state"] == "running" else None

    return await until(running)


def provider_of(bridge: Bridge) -> ScriptedProvider:
    route = bridge.app.providers.chat
    assert route is not None and isinstance(route.provider, ScriptedProvider)
    provider = route.provider
    return provider


async def chat(wire: Wire, text: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """One turn, approving every tool/confirm; the result and the tool results."""
    wire.server_requests.clear()
    request_id = await wire.request("chat/send", {"text": text})
    reply = await wire.reply_to(request_id, answer=lambda method, params: {"approved": True})
    return reply["result"], wire.notes_of("chat/toolResult", request_id)


async def test_health_and_tools_list_show_the_servers_tools(wire: Wire) -> None:
    fake = await until_running(wire)
    assert fake == {"name": "fake", "state": "running", "tools": 5, "error": None}
    listed = await wire.result("tools/list", {"format": "openai"})
    functions = {tool["function"]["name"]: tool["function"] for tool in listed["tools"]}
    assert {"fake__echo", "fake__add", "fake__fail", "fake__crash", "search_notes"} <= set(
        functions
    )
    add = functions["fake__add"]["parameters"]
    assert add["type"] == "object" and set(add["required"]) == {"a", "b"}
    assert "$schema" not in add


async def test_a_server_that_cannot_start_is_failed_with_its_error(wire: Wire) -> None:
    broken = (await servers(wire))["broken"]
    assert broken["state"] in ("failed", "starting") and broken["tools"] == 0

    async def error() -> str | None:
        value: str | None = (await servers(wire))["broken"]["error"]
        return value

    assert "no-such-program" in await until(error)


async def test_the_model_calls_a_tool_after_the_user_approves(bridge: Bridge, wire: Wire) -> None:
    await until_running(wire)
    provider = provider_of(bridge)
    provider.enqueue_tool_call("fake__echo", {"text": "hello"})
    provider.enqueue_text("It said hello.")
    result, (tool_result,) = await chat(wire, "Ask the fake server to echo hello")
    assert result["text"] == "It said hello."
    (confirm,) = wire.server_requests
    assert confirm["method"] == "tool/confirm"
    assert confirm["params"]["tool"] == "fake__echo"
    assert confirm["params"]["server"] == "fake"
    title = "Allow the assistant to run echo from the MCP server 'fake'?"
    assert confirm["params"]["title"] == title
    assert confirm["params"]["arguments"] == {"text": "hello"}
    assert tool_result["isError"] is False
    assert tool_result["content"].startswith("hello (start ")
    offered = {tool.name for tool in provider.requests[-1].tools}
    assert "fake__echo" in offered


async def test_a_server_over_http_gets_its_headers(bridge: Bridge, wire: Wire) -> None:
    """A [mcp.servers] entry with url and headers: its tools are called over streamable HTTP
    with those headers."""
    await until_running(wire, "web")
    provider = provider_of(bridge)
    provider.enqueue_tool_call("web__authorization", {})
    provider.enqueue_text("Checked.")
    _, (tool_result,) = await chat(wire, "which header?")
    assert tool_result == {**tool_result, "isError": False, "content": "Bearer web-secret"}


async def test_an_error_result_reaches_the_model(bridge: Bridge, wire: Wire) -> None:
    await until_running(wire)
    provider = provider_of(bridge)
    provider.enqueue_tool_call("fake__fail", {"reason": "the disk is full"})
    provider.enqueue_text("It failed.")
    _, (tool_result,) = await chat(wire, "fail")
    assert tool_result["isError"] is True
    assert "the disk is full" in tool_result["content"]


async def test_a_crash_is_a_clear_tool_error_and_the_server_restarts(
    bridge: Bridge, wire: Wire
) -> None:
    """The call that kills the server gets a sentence saying so; while it is down its tools
    leave the model's list (and a call naming one says it restarts); then it is back."""
    await until_running(wire)
    provider = provider_of(bridge)
    before = starts_of(bridge)
    provider.enqueue_tool_call("fake__crash", {})
    provider.enqueue_tool_call("fake__echo", {"text": "still there?"})
    provider.enqueue_text("It crashed.")
    _, (crashed, down) = await chat(wire, "crash it")
    assert crashed["isError"] is True
    assert "stopped while running crash" in crashed["content"]
    assert down["isError"] is True
    assert "'fake' is not running" in down["content"] and "restarted" in down["content"]
    # the tools left the registry (the next turn's list), unless the new process is up already
    assert bridge.app.access.tools.permission("fake__echo") is None or starts_of(bridge) > before
    fake = await until_running(wire)
    assert fake["tools"] == 5
    assert starts_of(bridge) == before + 1
    provider.enqueue_tool_call("fake__echo", {"text": "again"})
    provider.enqueue_text("Back.")
    _, (tool_result,) = await chat(wire, "echo again")
    assert tool_result["content"] == f"again (start {before + 1})"


async def test_settings_add_mask_and_remove_a_server(bridge: Bridge, wire: Wire) -> None:
    """settings/update adds a server (its env masked by settings/get, its tools offered) and
    removes it with null (its tools gone); an invalid name or a server with both a command and
    a URL is -32602 and changes nothing."""
    second = fake_server(bridge.vault.data_dir / "second-starts", TOKEN="secret-1")
    plugin = await bridge.wire(initialize=False)
    await plugin.result("initialize", {**init_params(bridge.app.token), "client": PLUGIN})
    asked = plugin.request("settings/update", {"mcpServers": {"second": second}})
    updated = (await plugin.reply_to(await asked, answer=lambda m, p: {"approved": True}))["result"]
    assert plugin.server_requests[0]["method"] == "settings/confirm"
    assert "TOKEN=secret-1" in plugin.server_requests[0]["params"]["commandLine"]
    await plugin.ws.close()
    listed = {server["name"]: server for server in updated["mcpServers"]}
    assert set(listed) == {"fake", "web", "broken", "second"}
    assert listed["web"]["headers"]["Authorization"] != "Bearer web-secret"
    assert listed["second"]["env"]["TOKEN"] != "secret-1"
    assert "secret-1" not in str(await wire.result("settings/get", {}))
    assert "second" in saved_servers()
    await until_running(wire, "second")
    assert bridge.app.access.tools.permission("second__echo") == "ask"
    bad_name = await wire.error("settings/update", {"mcpServers": {"Bad Name": second}})
    assert bad_name["code"] == -32602
    both = await wire.error(
        "settings/update", {"mcpServers": {"both": {"command": "x", "url": "http://127.0.0.1/"}}}
    )
    assert both["code"] == -32602
    removed = await wire.result("settings/update", {"mcpServers": {"second": None}})
    assert {server["name"] for server in removed["mcpServers"]} == {"fake", "web", "broken"}
    assert "second" not in await servers(wire)
    assert set(saved_servers()) == {"fake", "web", "broken"}
    assert bridge.app.access.tools.permission("second__echo") is None
