"""LLMService end to end through the real providers and SDKs against the fake HTTP APIs.

Each API's wire format is spelled out below (independently of the providers' code) so the tests
can compare the EXACT request bodies the fakes receive: system text with the context, the tools
list, the assistant's tool calls and the results that answer them.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import pytest

from llm_service import (
    LLMError,
    LLMService,
    Message,
    ResponseComplete,
    TextDelta,
    ToolCallStarted,
    ToolResult,
    Usage,
)
from llm_service.history import history_problems
from llm_service.pricing import cost_usd
from tests.fakes import anthropic as anthropic_fake
from tests.fakes import ollama as ollama_fake
from tests.fakes import openai as openai_fake
from tests.fakes.http import HANG, FakeHTTPServer, Reply

SYSTEM = "You are an assistant inside the vault Notes."
CONTEXT = "The open note is Ideas.md."
SEARCH_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"query": {"type": "string"}},
    "required": ["query"],
}
READ_SCHEMA: dict[str, Any] = {"type": "object", "properties": {"path": {"type": "string"}}}


@dataclass(frozen=True)
class ToolRun:
    """One tool call and the result the service must send back for it."""

    id: str
    name: str
    arguments: dict[str, Any]
    content: str
    is_error: bool = False


class Wire:
    """How one API spells a conversation; subclasses give each message kind's JSON."""

    fake: ModuleType
    stream_type = "text/event-stream"

    def user(self, text: str) -> dict[str, Any]:
        raise NotImplementedError

    def assistant(self, text: str, runs: list[ToolRun]) -> dict[str, Any]:
        raise NotImplementedError

    def results(self, runs: list[ToolRun]) -> list[dict[str, Any]]:
        raise NotImplementedError

    def body(self, messages: list[dict[str, Any]], *, stream: bool) -> dict[str, Any]:
        raise NotImplementedError


def _openai_tool(name: str, description: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": schema},
    }


OPENAI_STYLE_TOOLS = [
    _openai_tool("search_notes", "Search the vault.", SEARCH_SCHEMA),
    _openai_tool("read_note", "Read a note.", READ_SCHEMA),
]


class AnthropicWire(Wire):
    fake = anthropic_fake

    def user(self, text: str) -> dict[str, Any]:
        return {"role": "user", "content": [{"type": "text", "text": text}]}

    def assistant(self, text: str, runs: list[ToolRun]) -> dict[str, Any]:
        content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
        content += [
            {"type": "tool_use", "id": r.id, "name": r.name, "input": r.arguments} for r in runs
        ]
        return {"role": "assistant", "content": content}

    def results(self, runs: list[ToolRun]) -> list[dict[str, Any]]:
        blocks = [
            {
                "type": "tool_result",
                "tool_use_id": r.id,
                "content": r.content,
                "is_error": r.is_error,
            }
            for r in runs
        ]
        return [{"role": "user", "content": blocks}]

    def body(self, messages: list[dict[str, Any]], *, stream: bool) -> dict[str, Any]:
        cache = {"type": "ephemeral"}
        body = {
            "max_tokens": 4096,
            "messages": messages,
            "model": self.fake.MODEL,
            "system": [{"type": "text", "text": f"{SYSTEM}\n\n{CONTEXT}", "cache_control": cache}],
            "tools": [
                {
                    "name": "search_notes",
                    "description": "Search the vault.",
                    "input_schema": SEARCH_SCHEMA,
                },
                {
                    "name": "read_note",
                    "description": "Read a note.",
                    "input_schema": READ_SCHEMA,
                    "cache_control": cache,
                },
            ],
        }
        return {**body, "stream": True} if stream else body


class OpenAIWire(Wire):
    fake = openai_fake

    def user(self, text: str) -> dict[str, Any]:
        return {"role": "user", "content": text}

    def assistant(self, text: str, runs: list[ToolRun]) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": text or None}
        if runs:
            message["tool_calls"] = [
                {
                    "id": r.id,
                    "type": "function",
                    "function": {"name": r.name, "arguments": json.dumps(r.arguments)},
                }
                for r in runs
            ]
        return message

    def results(self, runs: list[ToolRun]) -> list[dict[str, Any]]:
        return [
            {
                "role": "tool",
                "tool_call_id": r.id,
                "content": f"Error: {r.content}" if r.is_error else r.content,
            }
            for r in runs
        ]

    def body(self, messages: list[dict[str, Any]], *, stream: bool) -> dict[str, Any]:
        body = {
            "model": self.fake.MODEL,
            "messages": [{"role": "system", "content": f"{SYSTEM}\n\n{CONTEXT}"}, *messages],
            "max_tokens": 4096,
            "tools": OPENAI_STYLE_TOOLS,
        }
        if stream:
            body |= {"stream": True, "stream_options": {"include_usage": True}}
        return body


class OllamaWire(OpenAIWire):
    fake = ollama_fake
    stream_type = ollama_fake.NDJSON

    def assistant(self, text: str, runs: list[ToolRun]) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": text}
        if runs:
            message["tool_calls"] = [
                {"function": {"name": r.name, "arguments": r.arguments}} for r in runs
            ]
        return message

    def results(self, runs: list[ToolRun]) -> list[dict[str, Any]]:
        return [
            {
                "role": "tool",
                "content": f"Error: {r.content}" if r.is_error else r.content,
                "tool_name": r.name,
            }
            for r in runs
        ]

    def body(self, messages: list[dict[str, Any]], *, stream: bool) -> dict[str, Any]:
        return {
            "model": self.fake.MODEL,
            "messages": [{"role": "system", "content": f"{SYSTEM}\n\n{CONTEXT}"}, *messages],
            "stream": stream,
            "options": {"num_predict": 4096},
            "tools": OPENAI_STYLE_TOOLS,
        }


WIRES: dict[str, Callable[[], Wire]] = {
    "anthropic": AnthropicWire,
    "openai": OpenAIWire,
    "ollama": OllamaWire,
}


@pytest.fixture(params=list(WIRES))
def wire(request: pytest.FixtureRequest) -> Wire:
    return WIRES[request.param]()


def _read_note(arguments: dict[str, Any]) -> str:
    raise FileNotFoundError(f"Note {arguments['path']!r} does not exist.")


async def _service(wire: Wire, server: FakeHTTPServer) -> LLMService:
    svc = LLMService(wire.fake.make_provider(server), model=wire.fake.MODEL)
    svc.set_system_prompt(SYSTEM)
    svc.set_conversation_context(CONTEXT)
    svc.register_tool(
        "search_notes",
        "Search the vault.",
        SEARCH_SCHEMA,
        lambda a: {"hits": ["Reading list.md"], "query": a["query"]},
    )
    svc.register_tool("read_note", "Read a note.", READ_SCHEMA, _read_note)
    return svc


ROUND_1 = [
    ToolRun(
        "call_a", "search_notes", {"query": "kafka"}, '{"hits":["Reading list.md"],"query":"kafka"}'
    ),
    ToolRun(
        "call_b",
        "read_note",
        {"path": "Kafka.md"},
        "Tool 'read_note' failed: Note 'Kafka.md' does not exist.",
        is_error=True,
    ),
]
ROUND_2 = [
    ToolRun(
        "call_c",
        "search_notes",
        {"query": "streams"},
        '{"hits":["Reading list.md"],"query":"streams"}',
    ),
]
FINAL = "Kafka is in [[Reading list]]."


def _script(wire: Wire, server: FakeHTTPServer, *, stream: bool) -> None:
    def calls(runs: list[ToolRun]) -> list[tuple[str, str, dict[str, Any]]]:
        return [(r.id, r.name, r.arguments) for r in runs]

    server.enqueue(
        wire.fake.tool_reply(calls(ROUND_1), text="Let me look.", stream=stream),
        wire.fake.tool_reply(calls(ROUND_2), stream=stream),
        wire.fake.text_reply(FINAL, stream=stream, usage=Usage(40, 12)),
    )


def _expected_bodies(wire: Wire, *, stream: bool) -> list[dict[str, Any]]:
    question = [wire.user("Where is Kafka?")]
    first = [*question, wire.assistant("Let me look.", ROUND_1), *wire.results(ROUND_1)]
    second = [*first, wire.assistant("", ROUND_2), *wire.results(ROUND_2)]
    return [wire.body(messages, stream=stream) for messages in (question, first, second)]


@pytest.mark.parametrize("stream", [False, True], ids=["chat", "stream"])
async def test_multi_round_tool_loop_sends_exact_bodies(
    wire: Wire, fake_http: FakeHTTPServer, stream: bool
) -> None:
    """Two tool rounds (one failing tool) then an answer: every request body is exact."""
    _script(wire, fake_http, stream=stream)
    svc = await _service(wire, fake_http)
    events: list[object] = []
    if stream:
        events = [event async for event in svc.stream_message("Where is Kafka?")]
        final = events[-1]
        assert isinstance(final, ResponseComplete)
        reply = final.response
    else:
        reply = await svc.process_message("Where is Kafka?")
    assert [r.json() for r in fake_http.requests] == _expected_bodies(wire, stream=stream)
    assert reply.text == f"Let me look.\n\n{FINAL}"
    assert (reply.stop_reason, reply.tool_calls) == ("end_turn", [])
    assert reply.usage.input_tokens > 40 and reply.usage.output_tokens > 12
    # Priced on Anthropic's API; an OpenAI-compatible server (the fake's base URL) is local.
    assert reply.cost_usd == cost_usd(wire.fake.MODEL, reply.usage, svc.provider.price_provider)
    assert (reply.cost_usd is None) == (not isinstance(wire, AnthropicWire))
    assert history_problems(svc.history) == [] and len(svc.history) == 6
    if stream:
        assert "".join(e.text for e in events if isinstance(e, TextDelta)) == reply.text
        started = [e.call.name for e in events if isinstance(e, ToolCallStarted)]
        results = [(e.name, e.is_error) for e in events if isinstance(e, ToolResult)]
        assert started == ["search_notes", "read_note", "search_notes"]
        assert results == [("search_notes", False), ("read_note", True), ("search_notes", False)]
    await svc.provider.aclose()


async def test_second_turn_carries_the_first_exchange(
    wire: Wire, fake_http: FakeHTTPServer
) -> None:
    """The next message's request holds the previous exchange, then the new question."""
    fake_http.enqueue(
        wire.fake.text_reply("Hello!", stream=False), wire.fake.text_reply("Bye!", stream=False)
    )
    svc = await _service(wire, fake_http)
    await svc.process_message("Hi")
    await svc.process_message("Goodbye")
    messages = [wire.user("Hi"), wire.assistant("Hello!", []), wire.user("Goodbye")]
    assert fake_http.requests[1].json() == wire.body(messages, stream=False)
    assert svc.history[-1] == Message.assistant("Bye!")
    await svc.provider.aclose()


async def test_provider_errors_surface_after_retries_with_history_kept(
    wire: Wire, fake_http: FakeHTTPServer
) -> None:
    """A 500 on every attempt raises the provider's LLMError; the history stays as it was."""
    fake_http.enqueue(wire.fake.text_reply("Hello!", stream=False))
    fake_http.enqueue(*[wire.fake.error_reply(500, "Internal failure") for _ in range(3)])
    svc = await _service(wire, fake_http)
    await svc.process_message("Hi")
    before = svc.history
    with pytest.raises(LLMError) as caught:
        await svc.process_message("Again")
    assert caught.value.code == "server_error" and caught.value.status == 500
    assert len(fake_http.requests) == 4
    assert svc.history == before
    await svc.provider.aclose()


async def test_cancelling_a_stream_disconnects_and_keeps_history(
    wire: Wire, fake_http: FakeHTTPServer
) -> None:
    """Cancel while the API hangs mid-stream: the HTTP request closes at once, history unchanged."""
    fake_http.enqueue(wire.fake.text_reply("Hello!", stream=False))
    hanging = Reply.stream([*wire.fake.hanging_reply("Partial"), HANG], wire.stream_type)
    fake_http.enqueue(hanging)
    svc = await _service(wire, fake_http)
    await svc.process_message("Hi")
    before = svc.history
    first_delta = asyncio.Event()

    async def consume() -> None:
        async for event in svc.stream_message("Tell me more"):
            if isinstance(event, TextDelta):
                first_delta.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(first_delta.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.wait_for(fake_http.disconnected.wait(), 2)
    assert svc.history == before
    await svc.provider.aclose()
