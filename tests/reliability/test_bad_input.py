"""Bad input gets a 400/413 or -32602/-32700 with one sentence, never a traceback, a 500 or
-32603 (attack item 13 of issue 32): deep JSON and lone surrogates over the WebSocket and HTTP,
a chunked body over the limit, ``max_tokens: 10^30``, a base URL with a "+port" or full-width
digits, and a write the path rules refuse (refused before tool/confirm asks anyone). Full sizes
under ``soak``."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from llm_service.providers.scripted import ScriptedProvider
from tests.helpers.bridge import Bridge, running_bridge


async def _reads_its_body(request: Request) -> Response:
    """A route that turns any failure of reading its body into a 500 (as the MCP SDK does)."""
    try:
        await request.body()
    except Exception:
        return Response(status_code=500)
    return Response(status_code=204)


@pytest.fixture
async def bridge(tmp_path: Path) -> AsyncIterator[Bridge]:
    async with running_bridge(
        tmp_path, http=True, http_mounts=[Route("/mcp", _reads_its_body, methods=["POST"])]
    ) as served:
        yield served


def _nested(depth: int, inner: str = "1") -> str:
    return "[" * depth + inner + "]" * depth


def _http(bridge: Bridge) -> httpx.AsyncClient:
    headers = {"authorization": f"Bearer {bridge.app.token}"}
    return httpx.AsyncClient(base_url=bridge.http_url, headers=headers, timeout=30)


def _one_sentence(message: str) -> None:
    assert "Traceback" not in message and message.count("\n") == 0 and message.endswith(".")


@pytest.mark.parametrize("depth", [100_000])
async def test_deep_json_over_the_websocket(bridge: Bridge, depth: int) -> None:
    """A frame nested past Python's recursion: -32700; params nested 100 deep: -32602 with the
    request's id; the connection goes on."""
    wire = await bridge.wire()
    await wire.send(_nested(depth))
    too_deep = await wire.recv()
    tools = _nested(100, "{}")
    shallow = await wire.call("note/read", {"path": "Welcome.md", "x": json.loads(tools)})
    health = await wire.result("health")
    assert too_deep["error"]["code"] == -32700 and "nested" in too_deep["error"]["message"]
    assert shallow["error"]["code"] == -32602 and "nested more than" in shallow["error"]["message"]
    _one_sentence(shallow["error"]["message"])
    assert health["status"] == "ok"


async def test_a_lone_surrogate_over_the_websocket_is_32602(bridge: Bridge) -> None:
    wire = await bridge.wire()
    params = '{"path":"S.md","content":"a\\ud800b"}'
    frame = '{"jsonrpc":"2.0","id":7,"method":"note/create","params":' + params + "}"
    await wire.send(frame)
    reply = await wire.recv()
    assert reply["id"] == 7 and reply["error"]["code"] == -32602
    assert "surrogate" in reply["error"]["message"]
    assert not (bridge.vault.root / "S.md").exists()


@pytest.mark.parametrize("depth", [100_000])
async def test_deep_json_and_lone_surrogates_over_http_are_400(bridge: Bridge, depth: int) -> None:
    messages = '[{"role":"user","content":"hi"}]'
    bodies = {
        "deep": _nested(depth),
        "deep tools": '{"model":"m","messages":' + messages + ',"tools":' + _nested(3000) + "}",
        "surrogate": '{"model":"m","messages":[{"role":"user","content":"a\\udc00"}]}',
    }
    async with _http(bridge) as http:
        for path in ("/chat", "/v1/chat/completions"):
            for name, body in bodies.items():
                response = await http.post(
                    path, content=body.encode(), headers={"content-type": "application/json"}
                )
                assert response.status_code == 400, (path, name, response.text)
                payload: dict[str, Any] = response.json()
                message = payload.get("message") or payload["error"]["message"]
                _one_sentence(message)


@pytest.mark.parametrize("size", [5 << 20])
async def test_a_chunked_body_over_the_limit_is_413(bridge: Bridge, size: int) -> None:
    """To a route that turns a failed read into a 500 (as the MCP SDK does) and to the bridge's
    own routes: 413, no error logged, and the next request is served."""

    async def chunks() -> AsyncIterator[bytes]:
        for _ in range(size // 65536):
            yield b"x" * 65536

    async with _http(bridge) as http:
        for path in ("/mcp", "/v1/chat/completions", "/chat"):
            with _no_errors_logged():
                response = await http.post(path, content=chunks())
            assert response.status_code == 413, (path, response.text)
            payload = response.json()
            message = payload.get("message") or payload["error"]["message"]
            assert "larger than" in message, payload
        small = await http.post("/mcp", content=b'{"ok": 1}')
    assert small.status_code == 204


@contextmanager
def _no_errors_logged() -> Iterator[None]:
    records: list[logging.LogRecord] = []
    handler = logging.Handler(logging.ERROR)
    handler.emit = records.append  # type: ignore[method-assign]
    logging.getLogger().addHandler(handler)
    try:
        yield
    finally:
        logging.getLogger().removeHandler(handler)
    assert not records, [r.getMessage() for r in records]


@pytest.mark.parametrize(
    "url", ["http://127.0.0.1:+1234/v1", "http://127.0.0.1:\uff11\uff12\uff13\uff14/v1"]
)
async def test_a_base_url_with_a_strange_port_is_refused_clearly(bridge: Bridge, url: str) -> None:
    wire = await bridge.wire()
    error = await wire.error("settings/update", {"provider": "openai", "baseUrl": url})
    assert error["code"] == -32602 and "ASCII digits" in error["message"]


async def test_a_write_the_path_rules_refuse_is_refused_before_anyone_is_asked(
    tmp_path: Path,
) -> None:
    provider = ScriptedProvider()
    provider.enqueue_tool_call("create_note", {"path": "../outside.md", "content": "x"})
    provider.enqueue_text("Could not.")
    async with running_bridge(tmp_path / "b", provider=provider) as served:
        wire = await served.wire()
        asked: list[str] = []

        def answer(method: str, params: dict[str, Any]) -> dict[str, Any]:
            asked.append(method)
            return {"approved": True}

        reply = await wire.call("chat/send", {"text": "write outside"}, answer=answer)
        (result,) = wire.notes_of("chat/toolResult", reply["id"])
    assert asked == [] and result["isError"] is True
    assert "not approve" not in result["content"]


@pytest.mark.soak
async def test_full_size_bad_input(bridge: Bridge) -> None:
    """The attack's sizes: 1,000,000 deep, a 64 MiB chunked body."""
    await test_deep_json_over_the_websocket(bridge, 1_000_000)
    await test_a_chunked_body_over_the_limit_is_413(bridge, 64 << 20)


async def test_max_tokens_of_10_to_the_30_is_400(bridge: Bridge) -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 10**30}
    async with _http(bridge) as http:
        response = await http.post("/v1/chat/completions", json=body)
    assert response.status_code == 400, response.text
    message = response.json()["error"]["message"]
    _one_sentence(message)
    assert "max_tokens" in message
