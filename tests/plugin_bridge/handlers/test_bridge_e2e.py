"""The bridge end to end through the real providers and SDKs against the fake HTTP APIs."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from llm_service import OllamaProvider
from tests.fakes import anthropic as anthropic_fake
from tests.fakes import ollama as ollama_fake
from tests.fakes import openai as openai_fake
from tests.fakes.http import HANG, FakeHTTPServer, Reply
from tests.helpers.bridge import WAIT, Wire, running_bridge

FAKES: dict[str, ModuleType] = {
    "anthropic": anthropic_fake,
    "openai": openai_fake,
    "ollama": ollama_fake,
}
STREAM_TYPES = {
    "anthropic": "text/event-stream",
    "openai": "text/event-stream",
    "ollama": ollama_fake.NDJSON,
}


@pytest.fixture(params=list(FAKES))
def api(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    return name


def bridge_for(tmp_path: Path, api: str, server: FakeHTTPServer, **kw: Any) -> Any:
    provider = FAKES[api].make_provider(server, **kw)
    return running_bridge(tmp_path, provider=provider, provider_name=api, model="test-model")


async def until_notification(wire: Wire, method: str) -> dict[str, Any]:
    """Read frames until a notification ``method`` arrives (kept in wire.notifications)."""
    while True:
        message = await wire.recv()
        if "method" in message and "id" not in message:
            wire.notifications.append(message)
            if message["method"] == method:
                return message


async def test_chat_with_a_tool_round_through_each_api(
    tmp_path: Path, fake_http: FakeHTTPServer, api: str
) -> None:
    """search_notes runs between two streamed calls; notifications and the reply agree."""
    fake = FAKES[api]
    fake_http.enqueue(
        fake.tool_reply([("call_1", "search_notes", {"query": "sourdough"})]),
        fake.text_reply("Feed the starter daily, see [[Areas/Cooking/Sourdough]]."),
    )
    async with bridge_for(tmp_path, api, fake_http) as bridge:
        wire = await bridge.wire()
        request_id = await wire.request("chat/send", {"text": "How do I keep my starter?"})
        result = (await wire.reply_to(request_id))["result"]
    assert result["text"] == "Feed the starter daily, see [[Areas/Cooking/Sourdough]]."
    deltas = wire.notes_of("chat/delta", request_id)
    assert deltas and "".join(d["text"] for d in deltas) == result["text"]
    (call,) = wire.notes_of("chat/toolCall", request_id)
    (tool_result,) = wire.notes_of("chat/toolResult", request_id)
    assert (call["name"], call["arguments"]) == ("search_notes", {"query": "sourdough"})
    assert tool_result["id"] == call["id"]
    assert "Sourdough" in tool_result["content"]
    assert result["usage"]["inputTokens"] > 0
    first, second = (r.json() for r in fake_http.requests)
    assert "Obsidian vault named “vault”" in json.dumps(first, ensure_ascii=False)
    assert "Areas/Cooking/Sourdough.md" in json.dumps(second)


async def test_cancel_closes_the_provider_request(
    tmp_path: Path, fake_http: FakeHTTPServer, api: str
) -> None:
    """$/cancelRequest mid-stream: -32800 for the client, the API sees its request dropped."""
    fake = FAKES[api]
    fake_http.enqueue(Reply.stream([*fake.hanging_reply("Partial"), HANG], STREAM_TYPES[api]))
    async with bridge_for(tmp_path, api, fake_http) as bridge:
        wire = await bridge.wire()
        request_id = await wire.request("chat/send", {"text": "long answer please"})
        delta = await until_notification(wire, "chat/delta")
        assert delta["params"]["requestId"] == request_id
        await wire.send(
            {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": request_id}}
        )
        assert (await wire.reply_to(request_id))["error"]["code"] == -32800
        await asyncio.wait_for(fake_http.disconnected.wait(), WAIT)


async def test_a_vanished_client_drops_its_provider_request(
    tmp_path: Path, fake_http: FakeHTTPServer
) -> None:
    """A client gone mid-stream: the API request is dropped, other clients are still served."""
    fake_http.enqueue(
        Reply.stream([*anthropic_fake.hanging_reply("Partial"), HANG]),
        anthropic_fake.text_reply("Still serving."),
    )
    async with bridge_for(tmp_path, "anthropic", fake_http) as bridge:
        leaving = await bridge.wire()
        staying = await bridge.wire()
        await leaving.request("chat/send", {"text": "long"})
        await until_notification(leaving, "chat/delta")
        leaving.ws.transport.abort()
        await asyncio.wait_for(fake_http.disconnected.wait(), WAIT)
        assert (await staying.result("chat/send", {"text": "hi"}))["text"] == "Still serving."


async def test_fifty_concurrent_streams_stay_apart(
    tmp_path: Path, fake_http: FakeHTTPServer
) -> None:
    """50 streaming chats at once: every reply's deltas add up to that reply, none is lost."""
    texts = {f"Answer {n}: " + "word " * (n % 7 + 3) + "end." for n in range(50)}
    fake_http.enqueue(*(anthropic_fake.text_reply(text) for text in texts))
    async with bridge_for(tmp_path, "anthropic", fake_http) as bridge:
        wires = [await bridge.wire() for _ in range(10)]

        async def five_chats(wire: Wire) -> list[str]:
            ids = [await wire.request("chat/send", {"text": f"question {i}"}) for i in range(5)]
            replies = []
            for request_id in ids:
                text = (await wire.reply_to(request_id))["result"]["text"]
                deltas = wire.notes_of("chat/delta", request_id)
                assert "".join(d["text"] for d in deltas) == text
                replies.append(text)
            return replies

        answered = await asyncio.gather(*(five_chats(wire) for wire in wires))
    assert sorted(text for replies in answered for text in replies) == sorted(texts)


async def test_create_note_forces_the_tool_where_the_api_can(
    tmp_path: Path, fake_http: FakeHTTPServer, api: str
) -> None:
    """command/createNote sends a forced save_note; Ollama, which cannot force a tool, is
    asked for the note as JSON of the same schema (its ``format``)."""
    fake = FAKES[api]
    title, body = "Kite festival", "On the dunes.\n"
    arguments = {"title": title, "content": body}
    if fake.SUPPORTS_TOOL_CHOICE:
        fake_http.enqueue(fake.tool_reply([("c1", "save_note", arguments)], stream=False))
    else:
        fake_http.enqueue(fake.text_reply(json.dumps(arguments), stream=False))
    async with bridge_for(tmp_path, api, fake_http) as bridge:
        result = await (await bridge.wire()).result(
            "command/createNote", {"prompt": "kite festival note", "folder": "Ideas"}
        )
        assert result["path"] == "Ideas/Kite festival.md"
        assert (bridge.vault.root / result["path"]).read_text() == body
    (request,) = fake_http.requests
    forced = fake.forced_tool(request.json())
    assert forced == ("save_note" if fake.SUPPORTS_TOOL_CHOICE else None)
    if not fake.SUPPORTS_TOOL_CHOICE:
        assert request.json()["format"]["required"] == ["title", "content"]
        assert "tools" not in request.json()


async def test_search_summarize_streams_through_the_api(
    tmp_path: Path, fake_http: FakeHTTPServer
) -> None:
    """The summary streams as chat/delta and cites only notes that were given."""
    fake_http.enqueue(
        anthropic_fake.text_reply("Sleep: same wake-up time daily [[Areas/Health/Sleep]].")
    )
    async with bridge_for(tmp_path, "anthropic", fake_http) as bridge:
        wire = await bridge.wire()
        request_id = await wire.request("command/searchSummarize", {"query": "caffeine"})
        result = (await wire.reply_to(request_id))["result"]
    assert result["sources"] == ["Areas/Health/Sleep.md"]
    assert "".join(d["text"] for d in wire.notes_of("chat/delta", request_id)) == result["summary"]
    body = fake_http.requests[0].json()
    assert "half-life" in json.dumps(body)


async def test_models_list_through_ollama(tmp_path: Path, fake_http: FakeHTTPServer) -> None:
    """models/list asks the provider's API (Ollama /api/tags)."""
    fake_http.enqueue(Reply.json({"models": [{"name": "llama3.1:8b"}, {"name": "qwen3:4b"}]}))
    async with bridge_for(tmp_path, "ollama", fake_http) as bridge:
        result = await (await bridge.wire()).result("models/list")
    assert [m["id"] for m in result["models"]] == ["llama3.1:8b", "qwen3:4b"]
    assert result["source"] == "api"
    assert fake_http.requests[0].path == "/api/tags"


async def test_api_errors_reach_the_client_as_32010(
    tmp_path: Path, fake_http: FakeHTTPServer
) -> None:
    """A rejected key is -32010 with code auth_error, not retryable, naming the variable."""
    fake_http.enqueue(anthropic_fake.error_reply(401, "invalid x-api-key"))
    async with bridge_for(tmp_path, "anthropic", fake_http) as bridge:
        error = await (await bridge.wire()).error("chat/send", {"text": "hi"})
    assert error["code"] == -32010
    assert error["data"]["code"] == "auth_error"
    assert error["data"]["retryable"] is False
    assert "ANTHROPIC_API_KEY" in error["message"]


async def test_an_unreachable_ollama_is_a_retryable_network_error(tmp_path: Path) -> None:
    """Ollama not running: chat answers -32010 network_error telling how to start it (while
    models/list falls back to the built-in catalog)."""
    async with FakeHTTPServer() as server:
        url_of_closed_port = server.url
    provider = OllamaProvider(base_url=url_of_closed_port, max_attempts=1)
    async with running_bridge(tmp_path, provider=provider, provider_name="ollama") as bridge:
        wire = await bridge.wire()
        assert (await wire.result("models/list"))["source"] == "catalog"
        error = await wire.error("chat/send", {"text": "hi"})
    assert error["code"] == -32010
    assert error["data"]["code"] == "network_error"
    assert "ollama serve" in error["message"]
