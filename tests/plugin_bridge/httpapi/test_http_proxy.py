"""Raw HTTP (httpx) against the LLM proxy's /chat and /chat/stream and the local-model tool
routes: their exact shapes and error codes."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from llm_service import Usage
from plugin_bridge.app.clients import OWNER_CALLER
from plugin_bridge.app.conversations.usage import Budgets
from plugin_bridge.app.vault_tools import VAULT_TOOL_NAMES, WRITE_TOOL_NAMES
from tests.fakes import anthropic as anthropic_fake
from tests.fakes import openai as openai_fake
from tests.plugin_bridge.handlers.test_bridge_methods import strict_mode
from tests.plugin_bridge.httpapi.conftest import CHAT_MODEL, Served

pytestmark = pytest.mark.asyncio(loop_scope="module")

QUESTION = [{"role": "user", "content": "Hello?"}]


@pytest.fixture(autouse=True)
def _clean(served: Served) -> None:
    served.anthropic.requests.clear()
    served.openai.requests.clear()


def events(text: str) -> list[Any]:
    """The ``data:`` payloads of an SSE body ("[DONE]" as is)."""
    found: list[Any] = []
    for line in text.split("\n\n"):
        if line.startswith("data: "):
            data = line.removeprefix("data: ")
            found.append(data if data == "[DONE]" else json.loads(data))
    return found


async def test_chat_gives_the_proxys_shape(served: Served) -> None:
    served.anthropic.enqueue(anthropic_fake.text_reply("Hi.", stream=False))
    async with served.http() as http:
        response = await http.post("/chat", json={"messages": QUESTION})
    assert response.status_code == 200
    assert response.json() == {
        "content": "Hi.",
        "tool_calls": [],
        "usage": {"prompt_tokens": 25, "completion_tokens": 12},
        "model": anthropic_fake.MODEL,
        "finish_reason": "stop",
    }
    assert served.chats(served.anthropic)[0].json()["model"] == CHAT_MODEL


async def test_chat_routes_by_model_and_returns_openai_tool_calls(served: Served) -> None:
    served.openai.enqueue(openai_fake.tool_reply([("call_9", "lookup", {"q": "x"})], stream=False))
    tools = [{"type": "function", "function": {"name": "lookup", "parameters": {}}}]
    async with served.http() as http:
        response = await http.post(
            "/chat", json={"model": "openai/gpt-5.4-mini", "messages": QUESTION, "tools": tools}
        )
    body = response.json()
    assert body["tool_calls"] == [
        {
            "id": "call_9",
            "type": "function",
            "function": {"name": "lookup", "arguments": '{"q": "x"}'},
        }
    ]
    assert body["finish_reason"] == "tool_calls"
    assert served.chats(served.openai)[0].json()["tools"][0]["function"]["name"] == "lookup"


async def test_chat_stream_sends_content_events_then_done(served: Served) -> None:
    served.anthropic.enqueue(anthropic_fake.text_reply("Streaming works fine."))
    async with served.http() as http:
        response = await http.post("/chat/stream", json={"messages": QUESTION})
    assert response.headers["content-type"].startswith("text/event-stream")
    found = events(response.text)
    assert found[-1] == "[DONE]"
    assert "".join(e["content"] for e in found[:-1]) == "Streaming works fine."


async def test_chat_stream_error_is_one_event(served: Served) -> None:
    served.anthropic.enqueue(anthropic_fake.error_reply(429, "slow down"))
    async with served.http() as http:
        response = await http.post("/chat/stream", json={"messages": QUESTION})
    found = events(response.text)
    assert len(found) == 1
    assert found[0]["error"] == "rate_limit" and found[0]["message"]


@pytest.mark.parametrize(
    ("reply", "status", "code"),
    [
        (anthropic_fake.error_reply(401, "invalid x-api-key"), 401, "auth_failed"),
        (anthropic_fake.quota_reply(), 402, "budget_exceeded"),
        (
            anthropic_fake.error_reply(429, "slow down", headers={"retry-after": "7"}),
            429,
            "rate_limit",
        ),
        (anthropic_fake.error_reply(500, "boom"), 502, "api_error"),
        (anthropic_fake.malformed_reply(), 502, "api_error"),
    ],
)
async def test_chat_errors(served: Served, reply: Any, status: int, code: str) -> None:
    served.anthropic.enqueue(reply)
    async with served.http() as http:
        response = await http.post("/chat", json={"messages": QUESTION})
    assert response.status_code == status
    assert response.json()["error"] == code
    assert response.json()["message"]
    if status == 429:
        assert response.headers["retry-after"] == "7"


async def test_a_used_up_budget_is_402_before_any_call(served: Served) -> None:
    app = served.bridge.app
    budgets = app.spending.budgets
    app.spending.budgets = Budgets(daily_usd=0.01)
    app.spending.recorder(None, "test", OWNER_CALLER)("m", Usage(1, 1), 0.02, "anthropic")
    try:
        async with served.http() as http:
            chat = await http.post("/chat", json={"messages": QUESTION})
            v1 = await http.post(
                "/v1/chat/completions", json={"model": "vault", "messages": QUESTION}
            )
    finally:
        app.spending.budgets = budgets
    assert (chat.status_code, chat.json()["error"]) == (402, "budget_exceeded")
    assert (v1.status_code, v1.json()["error"]["code"]) == (402, "budget_exceeded")
    assert not served.chats(served.anthropic)


@pytest.mark.parametrize(
    "body",
    [
        b"not json",
        b"[]",
        b"{}",
        json.dumps({"messages": []}).encode(),
        json.dumps({"messages": [{"role": "robot", "content": "x"}]}).encode(),
        json.dumps({"messages": QUESTION, "tools": [{"type": "function"}]}).encode(),
        json.dumps({"messages": QUESTION, "temperature": 9}).encode(),
    ],
)
async def test_a_body_that_cannot_be_used_is_400(served: Served, body: bytes) -> None:
    async with served.http() as http:
        chat = await http.post("/chat", content=body)
        stream = await http.post("/chat/stream", content=body)
        v1 = await http.post("/v1/chat/completions", content=body)
    assert (chat.status_code, chat.json()["error"]) == (400, "invalid_request")
    assert (stream.status_code, stream.json()["error"]) == (400, "invalid_request")
    assert (v1.status_code, v1.json()["error"]["code"]) == (400, "invalid_request")
    assert not served.chats(served.anthropic)


@pytest.mark.parametrize("tool_format", ["anthropic", "openai", "ollama", "lmstudio", "vllm"])
async def test_local_tools_in_every_format(served: Served, tool_format: str) -> None:
    async with served.http() as http:
        response = await http.get("/api/local-llm/tools", params={"format": tool_format})
    body = response.json()
    assert body["format"] == tool_format
    assert len(body["tools"]) == len(VAULT_TOOL_NAMES) - len(WRITE_TOOL_NAMES)  # writes are off
    if tool_format == "anthropic":
        assert "input_schema" in body["tools"][0]
    elif tool_format == "lmstudio":
        assert all(strict_mode(tool) for tool in body["tools"])
    else:
        assert body["tools"][0]["type"] == "function"


async def test_local_tools_default_and_unknown_format(served: Served) -> None:
    async with served.http() as http:
        default = await http.get("/api/local-llm/tools")
        unknown = await http.get("/api/local-llm/tools", params={"format": "gemini"})
    assert default.json()["format"] == "anthropic"  # the configured provider's
    assert (unknown.status_code, unknown.json()["error"]) == (400, "invalid_request")
    assert "lmstudio" in unknown.json()["message"]


async def test_execute_tools_runs_calls_in_order(served: Served) -> None:
    calls = [
        {"id": "a", "function": {"name": "search_notes", "arguments": {"query": "kafka"}}},
        {"function": {"name": "read_note", "arguments": '{"path": "Welcome.md"}'}},
        {"function": {"name": "list_notes", "arguments": '{"folder": null, "limit": null}'}},
        {"function": {"name": "no_such_tool", "arguments": {}}},
        {"function": {"name": "read_note", "arguments": "{not json"}},
        {"function": {"name": "read_note", "arguments": {"path": "Missing.md"}}},
    ]
    async with served.http() as http:
        response = await http.post("/api/local-llm/execute-tools", json={"tool_calls": calls})
    body = response.json()
    assert set(body) == {"results", "invalidCalls"}
    assert [r["name"] for r in body["results"]] == [
        "search_notes",
        "read_note",
        "list_notes",
        "read_note",
    ]
    assert [r["isError"] for r in body["results"]] == [False, False, False, True]
    assert "Kafka" in body["results"][0]["content"]
    assert [(c["index"], c["name"]) for c in body["invalidCalls"]] == [
        (3, "no_such_tool"),
        (4, "read_note"),
    ]
    assert "JSON" in body["invalidCalls"][1]["reason"]


async def test_execute_tools_refuses_writes(served: Served) -> None:
    calls = [
        {"function": {"name": "read_note", "arguments": {"path": "Welcome.md"}}},
        {"function": {"name": "create_note", "arguments": {"path": "New.md", "content": "x"}}},
    ]
    async with served.http() as http:
        response = await http.post("/api/local-llm/execute-tools", json={"tool_calls": calls})
    assert response.status_code == 403
    body = response.json()
    assert body["error"] == "tool_denied" and body["index"] == 1
    assert [r["name"] for r in body["results"]] == ["read_note"]
    assert not (served.bridge.vault.root / "New.md").exists()


@pytest.mark.parametrize(
    "body", [{}, {"tool_calls": []}, {"tool_calls": [{"function": {}}]}, {"tool_calls": "x"}]
)
async def test_execute_tools_bad_body_is_400(served: Served, body: object) -> None:
    async with served.http() as http:
        response = await http.post("/api/local-llm/execute-tools", json=body)
    assert (response.status_code, response.json()["error"]) == (400, "invalid_request")


async def test_health_shape(served: Served) -> None:
    async with served.http() as http:
        body = (await http.get("/health")).json()
    assert {"status", "provider", "model", "supportedFormats", "toolCount", "mcpServers"} <= set(
        body
    )
    assert body["mcpServers"] == []  # none configured
    assert (body["status"], body["provider"], body["model"]) == ("ok", "anthropic", CHAT_MODEL)
    assert body["toolCount"] == len(VAULT_TOOL_NAMES)


async def test_http_allow_writes_lets_writes_run(served: Served) -> None:
    app = served.bridge.app
    settings = app.config
    app.runtime = replace(
        app.runtime, settings=settings.model_copy(update={"http_allow_writes": True})
    )
    calls = [
        {"function": {"name": "create_note", "arguments": {"path": "Allowed.md", "content": "hi"}}}
    ]
    try:
        async with served.http() as http:
            response = await http.post("/api/local-llm/execute-tools", json={"tool_calls": calls})
    finally:
        app.runtime = replace(app.runtime, settings=settings)
    assert response.status_code == 200, response.text
    assert response.json()["results"][0]["isError"] is False
    assert (served.bridge.vault.root / "Allowed.md").read_text(encoding="utf-8") == "hi"
