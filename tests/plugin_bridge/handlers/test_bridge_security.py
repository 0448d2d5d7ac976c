"""Who may talk to the bridge: handshake checks, token, initialize rules, limits, logs."""

from __future__ import annotations

import asyncio
import base64
import logging
import os
from pathlib import Path
from typing import Any

import pytest
from websockets.exceptions import ConnectionClosed, InvalidStatus

from llm_service import LLMResponse, ScriptedProvider
from llm_service.providers.base import ChatRequest
from plugin_bridge.wire.transport import MAX_FRAME_BYTES
from tests.helpers.bridge import WAIT, init_params, running_bridge


async def raw_handshake(port: int, headers: dict[str, str]) -> int:
    """Send a WebSocket upgrade request with exactly ``headers``; the HTTP status."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    key = base64.b64encode(os.urandom(16)).decode()
    lines = [
        "GET / HTTP/1.1",
        *(f"{name}: {value}" for name, value in headers.items()),
        "Upgrade: websocket",
        "Connection: Upgrade",
        f"Sec-WebSocket-Key: {key}",
        "Sec-WebSocket-Version: 13",
    ]
    writer.write(("\r\n".join(lines) + "\r\n\r\n").encode())
    try:
        async with asyncio.timeout(WAIT):
            status_line = await reader.readline()
    finally:
        writer.close()
    return int(status_line.split()[1])


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({"Host": "127.0.0.1:{port}"}, 101),
        ({"Host": "localhost:{port}"}, 101),
        ({"Host": "[::1]:{port}"}, 101),
        ({"Host": "127.0.0.1:{port}", "Origin": "app://obsidian.md"}, 101),
        ({"Host": "127.0.0.1:{port}", "Origin": "https://evil.example"}, 403),
        ({"Host": "127.0.0.1:{port}", "Origin": "null"}, 403),
        ({"Host": "evil.example:{port}"}, 403),
        ({"Host": "evil.example"}, 403),
        ({"Host": "127.0.0.1:1"}, 403),
        ({"Host": "127.0.0.1"}, 403),
    ],
)
async def test_handshake_checks_origin_and_host(
    tmp_path: Path, headers: dict[str, str], status: int
) -> None:
    """Browser origins outside the allowlist and non-loopback Host headers get HTTP 403."""
    async with running_bridge(tmp_path) as bridge:
        port = bridge.server.port
        filled = {name: value.format(port=port) for name, value in headers.items()}
        assert await raw_handshake(port, filled) == status


async def test_the_websockets_client_is_refused_for_a_foreign_origin(tmp_path: Path) -> None:
    """A client sending a web page's Origin cannot open the socket."""
    async with running_bridge(tmp_path) as bridge:
        with pytest.raises(InvalidStatus) as refused:
            await bridge.wire(initialize=False, origin="https://evil.example")
        assert refused.value.response.status_code == 403


async def test_a_configured_origin_is_allowed(tmp_path: Path) -> None:
    """allowed_origins extends who may connect."""
    async with running_bridge(tmp_path, allowed_origins=["http://localhost:5173"]) as bridge:
        wire = await bridge.wire(origin="http://localhost:5173")
        assert (await wire.result("health"))["status"] == "ok"


async def test_wrong_token_gets_unauthorized_then_close_4401(tmp_path: Path) -> None:
    """initialize with a wrong token answers -32001 and closes the connection with 4401."""
    async with running_bridge(tmp_path) as bridge:
        wire = await bridge.wire(initialize=False)
        error = await wire.error("initialize", init_params("not-the-token"))
        assert error["code"] == -32001
        with pytest.raises(ConnectionClosed):
            async with asyncio.timeout(WAIT):
                await wire.ws.recv()
        assert wire.ws.close_code == 4401


async def test_non_ascii_tokens_are_just_wrong(tmp_path: Path) -> None:
    """A token with any characters is compared safely (no crash, -32001)."""
    async with running_bridge(tmp_path) as bridge:
        wire = await bridge.wire(initialize=False)
        assert (await wire.error("initialize", init_params("トークン")))["code"] == -32001


async def test_requests_before_initialize_are_refused(tmp_path: Path) -> None:
    """Any method before initialize is -32002 and the connection stays open for initialize."""
    async with running_bridge(tmp_path) as bridge:
        wire = await bridge.wire(initialize=False)
        assert (await wire.error("vault/search", {"query": "kafka"}))["code"] == -32002
        result = await wire.result("initialize", init_params(bridge.app.token))
        assert result["vault"] == {"name": "vault", "noteCount": 16, "embedder": None}
        assert result["protocolVersion"] == 1
        assert "chat/send" in result["capabilities"]["methods"]


async def test_initialize_can_be_pipelined_with_requests(tmp_path: Path) -> None:
    """Requests sent right after initialize, before its reply, are served."""
    async with running_bridge(tmp_path) as bridge:
        wire = await bridge.wire(initialize=False)
        init_id = await wire.request("initialize", init_params(bridge.app.token))
        health_id = await wire.request("health")
        assert "result" in await wire.reply_to(init_id)
        assert (await wire.reply_to(health_id))["result"]["status"] == "ok"


async def test_unsupported_protocol_version_names_the_supported_one(tmp_path: Path) -> None:
    """protocolVersion 2 is -32602 saying the server speaks 1; the client may retry."""
    async with running_bridge(tmp_path) as bridge:
        wire = await bridge.wire(initialize=False)
        error = await wire.error("initialize", init_params(bridge.app.token, version=2))
        assert error["code"] == -32602
        assert "protocolVersion 1" in error["message"]
        await wire.result("initialize", init_params(bridge.app.token))


async def test_initialize_params_are_validated(tmp_path: Path) -> None:
    """A missing token is -32602 naming the field."""
    async with running_bridge(tmp_path) as bridge:
        wire = await bridge.wire(initialize=False)
        error = await wire.error("initialize", {"protocolVersion": 1, "client": {}})
        assert error["code"] == -32602
        assert "'token'" in error["message"]


async def test_no_initialize_in_time_closes_the_connection(tmp_path: Path) -> None:
    """A connection that does not initialize within init_timeout is closed with 4408."""
    async with running_bridge(tmp_path, init_timeout=0.2) as bridge:
        wire = await bridge.wire(initialize=False)
        await wire.send({"jsonrpc": "2.0", "id": 1, "method": "health"})
        assert (await wire.recv())["error"]["code"] == -32002
        with pytest.raises(ConnectionClosed):
            async with asyncio.timeout(WAIT):
                await wire.ws.recv()
        assert wire.ws.close_code == 4408


async def test_an_initialized_connection_outlives_the_init_timeout(tmp_path: Path) -> None:
    """The timeout applies to initialize only."""
    async with running_bridge(tmp_path, init_timeout=0.2) as bridge:
        wire = await bridge.wire()
        await asyncio.sleep(0.3)  # longer than init_timeout: the thing under test is time
        assert (await wire.result("health"))["status"] == "ok"


async def test_oversize_frames_close_with_1009(tmp_path: Path) -> None:
    """A frame over 4 MiB closes the connection with 1009 (message too big)."""
    async with running_bridge(tmp_path) as bridge:
        wire = await bridge.wire()
        await wire.send("x" * (MAX_FRAME_BYTES + 1))
        with pytest.raises(ConnectionClosed):
            async with asyncio.timeout(WAIT):
                await wire.ws.recv()
        assert wire.ws.close_code == 1009


async def test_a_frame_just_under_the_limit_is_accepted(tmp_path: Path) -> None:
    """A 3 MiB note is created over the socket."""
    async with running_bridge(tmp_path) as bridge:
        wire = await bridge.wire()
        content = "word " * (3 * 1024 * 1024 // 5)
        result = await wire.result("note/create", {"path": "Big.md", "content": content})
        assert result["path"] == "Big.md"


async def test_binary_frames_get_invalid_request_and_the_connection_stays(tmp_path: Path) -> None:
    """A binary frame is answered -32600; the connection keeps working."""
    async with running_bridge(tmp_path) as bridge:
        wire = await bridge.wire()
        await wire.send(b'{"jsonrpc": "2.0", "id": 1, "method": "health"}')
        reply = await wire.recv()
        assert reply["error"]["code"] == -32600
        assert reply["id"] is None
        assert (await wire.result("health"))["status"] == "ok"


async def test_the_33rd_request_in_flight_is_refused(tmp_path: Path) -> None:
    """With 32 requests unanswered the next one gets -32003; after replies it works again."""
    release = asyncio.Event()
    started = 0

    async def slow(request: ChatRequest) -> LLMResponse:
        nonlocal started
        started += 1
        await release.wait()
        return LLMResponse(text="done", model="scripted")

    provider = ScriptedProvider(*([slow] * 32))
    async with running_bridge(tmp_path, provider=provider) as bridge:
        wire = await bridge.wire()
        ids = [await wire.request("chat/send", {"text": f"q{i}"}) for i in range(32)]
        refused = await wire.error("health")
        assert refused["code"] == -32003
        assert "32" in refused["message"]
        release.set()
        for request_id in ids:
            assert (await wire.reply_to(request_id))["result"]["text"] == "done"
        assert started == 32
        assert (await wire.result("health"))["status"] == "ok"


async def test_the_token_never_appears_in_logs(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """At DEBUG, a whole session (bad token, initialize, chat) logs no token."""
    caplog.set_level(logging.DEBUG)
    provider = ScriptedProvider()
    provider.enqueue_text("Hello from the model.")
    async with running_bridge(tmp_path, provider=provider) as bridge:
        bad = await bridge.wire(initialize=False)
        await bad.error("initialize", init_params(bridge.app.token[::-1]))
        wire = await bridge.wire()
        await wire.result("chat/send", {"text": "hi"})
        token = bridge.app.token
    assert "initialized" in caplog.text
    assert token not in caplog.text
    assert token[::-1] not in caplog.text


async def test_many_connections_are_independent(tmp_path: Path) -> None:
    """Each connection has its own initialize state and request ids."""
    async with running_bridge(tmp_path) as bridge:
        first = await bridge.wire()
        second = await bridge.wire(initialize=False)
        results: list[Any] = await asyncio.gather(first.call("health"), second.call("health"))
        assert "result" in results[0]
        assert results[1]["error"]["code"] == -32002
