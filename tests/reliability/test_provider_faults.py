"""Provider faults through the real SDKs (anthropic, openai) against the fake HTTP APIs.

Each test tries a fault at many points (every cut of a stream, several broken argument strings)
and counts what happened: a fault either gives the whole answer or one LLMError with a code,
never a silently shortened answer, a hang, or a crash.
"""

from __future__ import annotations

import itertools
from collections import Counter
from types import ModuleType
from typing import Any

import pytest

from llm_service import (
    LLMError,
    LLMResponse,
    LLMService,
    ResponseComplete,
    TextDelta,
    ToolResult,
    Usage,
)
from tests.fakes import anthropic as anthropic_fake
from tests.fakes import openai as openai_fake
from tests.fakes.http import RESET, FakeHTTPServer, Reply
from tests.fakes.specs import HELLO, SEARCH

FAKES = {"anthropic": anthropic_fake, "openai": openai_fake}
TEXT = "The vault keeps every note you wrote, 日本語のノートも, and answers from them."
CUTS = 40
"""Cut points tried per stream, spread evenly over its bytes (``make test``)."""
EVERY_BYTE = 1 << 30
"""Every byte offset of the stream (``make soak``)."""
BROKEN_ARGUMENTS = [
    '{"query": "kafka"',
    "not json at all",
    "[1, 2, 3]",
    '{"query": "a"}}',
    '"just a string"',
    "{'query': 'single quotes'}",
]


@pytest.fixture(params=sorted(FAKES))
def wire(request: pytest.FixtureRequest) -> ModuleType:
    """The fake-API module of one provider with a real SDK."""
    return FAKES[request.param]


def _stream_bytes(wire: ModuleType) -> bytes:
    chunks = wire.text_reply(TEXT).chunks
    assert isinstance(chunks, list)
    return b"".join(chunks)


def _cut_points(size: int, count: int = CUTS) -> list[int]:
    """``count`` byte offsets spread over a stream of ``size`` bytes (all of them at most)."""
    count = min(count, size - 1)
    return sorted({1 + (size - 2) * i // (count - 1) for i in range(count)})


async def _outcome(provider: Any) -> tuple[str, LLMResponse | LLMError]:
    """The text shown and how one streamed call ended (its response or its error)."""
    shown: list[str] = []
    try:
        async for event in provider.stream(HELLO, model="m"):
            if isinstance(event, TextDelta):
                shown.append(event.text)
            elif isinstance(event, ResponseComplete):
                return "".join(shown), event.response
    except LLMError as exc:
        return "".join(shown), exc
    raise AssertionError("the stream ended without ResponseComplete or LLMError")


async def test_reset_before_the_response_is_retried_then_reported(
    wire: ModuleType, fake_http: FakeHTTPServer
) -> None:
    """Resets before any byte are retried up to max_attempts; one more gives network_error."""
    provider = wire.make_provider(fake_http, max_attempts=3, backoff_base=0)
    tried = Counter[str]()
    for resets in range(4):
        fake_http.requests.clear()
        fake_http.enqueue(*[Reply(reset=True)] * resets, wire.text_reply(TEXT))
        shown, end = await _outcome(provider)
        fake_http.replies.clear()
        if resets < 3:
            assert isinstance(end, LLMResponse) and end.text == shown == TEXT
            assert len(fake_http.requests) == resets + 1
            tried["recovered"] += 1
        else:
            assert isinstance(end, LLMError) and end.code == "network_error" and shown == ""
            assert len(fake_http.requests) == 3
            tried["reported"] += 1
    assert tried == {"recovered": 3, "reported": 1}


@pytest.mark.parametrize(
    "cuts", [CUTS, pytest.param(EVERY_BYTE, marks=pytest.mark.soak)], ids=["sampled", "every-byte"]
)
async def test_reset_at_every_point_of_a_stream(
    wire: ModuleType, fake_http: FakeHTTPServer, cuts: int
) -> None:
    """A reset anywhere in a stream: retried while nothing was shown, else network_error after
    a prefix of the answer; never a shortened answer passed off as complete."""
    data = _stream_bytes(wire)
    provider = wire.make_provider(fake_http, max_attempts=2, backoff_base=0)
    tried = Counter[str]()
    for cut in _cut_points(len(data), cuts):
        fake_http.requests.clear()
        fake_http.enqueue(Reply.stream([data[:cut], RESET]), wire.text_reply(TEXT))
        shown, end = await _outcome(provider)
        fake_http.replies.clear()
        if isinstance(end, LLMResponse):
            assert end.text == shown == TEXT, f"cut at byte {cut}"
            tried["retried" if len(fake_http.requests) == 2 else "whole"] += 1
        else:
            assert end.code == "network_error", f"cut at byte {cut}: {end!r}"
            assert shown and TEXT.startswith(shown) and len(fake_http.requests) == 1
            tried["failed after a prefix"] += 1
    assert sum(tried.values()) == len(_cut_points(len(data), cuts))
    assert tried["retried"] > 0 and tried["failed after a prefix"] > 0


@pytest.mark.parametrize(
    "cuts", [CUTS, pytest.param(EVERY_BYTE, marks=pytest.mark.soak)], ids=["sampled", "every-byte"]
)
async def test_truncated_stream_at_every_point(
    wire: ModuleType, fake_http: FakeHTTPServer, cuts: int
) -> None:
    """A stream that ends cleanly but early, anywhere, is an error, never a short answer."""
    data = _stream_bytes(wire)
    provider = wire.make_provider(fake_http, max_attempts=1)
    tried = Counter[str]()
    for cut in _cut_points(len(data), cuts):
        fake_http.enqueue(Reply.stream([data[:cut]]))
        shown, end = await _outcome(provider)
        if isinstance(end, LLMResponse):
            assert end.text == TEXT, f"cut at byte {cut} passed a short answer as complete"
            tried["whole"] += 1
        else:
            assert end.code in {"invalid_response", "network_error"}, f"cut {cut}: {end!r}"
            assert TEXT.startswith(shown)
            tried["error"] += 1
    assert sum(tried.values()) == len(_cut_points(len(data), cuts)) and tried["error"] > 0, tried


async def test_invalid_tool_arguments_become_parse_errors(
    wire: ModuleType, fake_http: FakeHTTPServer
) -> None:
    """Broken argument JSON, streamed or whole, gives a call with parse_error and no arguments,
    never a crash. (A whole Anthropic message carries tool input as a JSON object, so only its
    streamed form can be broken.)"""
    provider = wire.make_provider(fake_http, max_attempts=1)
    modes = [True] if wire is anthropic_fake else [True, False]
    parsed = 0
    for stream, raw in itertools.product(modes, BROKEN_ARGUMENTS):
        fake_http.enqueue(wire.tool_reply([("call_1", "search_notes", raw)], stream=stream))
        if stream:
            _, end = await _outcome(provider)
            assert isinstance(end, LLMResponse), end
        else:
            end = await provider.chat(HELLO, model="m", tools=[SEARCH])
        (call,) = end.tool_calls
        assert call.parse_error and call.arguments == {}, raw
        parsed += 1
    assert parsed == len(modes) * len(BROKEN_ARGUMENTS)


async def test_invalid_tool_arguments_never_run_the_tool(
    wire: ModuleType, fake_http: FakeHTTPServer
) -> None:
    """Through LLMService, a call with broken arguments is answered with an error result the
    model can act on; the tool's handler never runs with them."""
    runs: list[dict[str, Any]] = []

    async def search(query: str) -> str:
        runs.append({"query": query})
        return "nothing"

    service = LLMService(wire.make_provider(fake_http, max_attempts=1), model="m")
    service.register_tool("search_notes", SEARCH.description, SEARCH.input_schema, search)
    errors = 0
    for raw in BROKEN_ARGUMENTS:
        fake_http.enqueue(
            wire.tool_reply([("call_1", "search_notes", raw)]), wire.text_reply("Sorry.")
        )
        results = [e async for e in service.stream_message("find kafka")]
        (result,) = [e for e in results if isinstance(e, ToolResult)]
        assert result.is_error and "Invalid arguments" in result.content
        errors += 1
    assert runs == [] and errors == len(BROKEN_ARGUMENTS)


def _endless(wire: ModuleType) -> itertools.chain[Any]:
    """A stream that starts an answer, then sends keep-alive events forever."""
    if wire is anthropic_fake:
        keep_alive = anthropic_fake.sse("ping", {"type": "ping"})
    else:
        keep_alive = openai_fake.chunk({"content": ""})
    return itertools.chain(wire.hanging_reply("Thinking"), itertools.cycle([0.005, keep_alive]))


async def test_a_stream_that_never_ends_is_bounded(
    wire: ModuleType, fake_http: FakeHTTPServer
) -> None:
    """A server that keeps a stream alive forever (each event well within the read timeout)
    gives code timeout after stream_timeout, naming the setting; the connection is dropped."""
    fake_http.enqueue(Reply.stream(_endless(wire)))
    provider = wire.make_provider(fake_http, max_attempts=1, timeout=5.0, stream_timeout=0.3)
    shown, end = await _outcome(provider)
    assert shown and "Thinking".startswith(shown)
    assert isinstance(end, LLMError) and end.code == "timeout"
    assert "stream_timeout" in str(end) and "0.3 s" in str(end)


async def test_a_stream_that_never_starts_is_bounded(
    wire: ModuleType, fake_http: FakeHTTPServer
) -> None:
    """Keep-alive events forever before any content also end in code timeout, not a hang."""
    if wire is anthropic_fake:
        keep_alive = anthropic_fake.sse("ping", {"type": "ping"})
    else:
        keep_alive = openai_fake.data({"id": "x", "object": "chat.completion.chunk", "choices": []})
    fake_http.enqueue(Reply.stream(itertools.cycle([0.005, keep_alive])))
    provider = wire.make_provider(fake_http, max_attempts=1, timeout=5.0, stream_timeout=0.3)
    shown, end = await _outcome(provider)
    assert shown == "" and isinstance(end, LLMError) and end.code == "timeout"


@pytest.mark.parametrize("stream", [True, False])
async def test_a_ten_megabyte_answer_arrives_whole(
    wire: ModuleType, fake_http: FakeHTTPServer, stream: bool
) -> None:
    """A 10 MB answer (streamed in 64 KiB deltas, or as one JSON body) arrives byte-exact."""
    big = ("Ten megabytes of notes, 日本語も. " * 400_000)[: 10 * 1024 * 1024 // 2]
    big = big + big[::-1]
    if stream:
        events = _big_stream(wire, big)
        fake_http.enqueue(Reply.stream(events))
        shown, end = await _outcome(wire.make_provider(fake_http, max_attempts=1))
        assert shown == big
    else:
        fake_http.enqueue(wire.text_reply(big, stream=False))
        end = await wire.make_provider(fake_http, max_attempts=1).chat(HELLO, model="m")
    assert isinstance(end, LLMResponse) and end.text == big
    assert len(end.text.encode()) > 10 * 1024 * 1024


def _big_stream(wire: ModuleType, text: str) -> list[bytes]:
    """The SSE events of ``text`` in 64 KiB deltas (the fakes' own 4-character deltas would
    make 2.6 million events)."""
    size = 65536
    pieces = [text[i : i + size] for i in range(0, len(text), size)]
    if wire is openai_fake:
        head, *_rest = openai_fake.stream_chunks("", [], "stop", Usage(5, 5))
        tail = openai_fake.stream_chunks("", [], "stop", Usage(5, 5))[1:]
        return [head, *[openai_fake.chunk({"content": p}) for p in pieces], *tail]
    events = anthropic_fake.stream_events([{"type": "text", "text": "x"}], "end_turn")
    delta = [
        anthropic_fake.sse(
            "content_block_delta",
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": p}},
        )
        for p in pieces
    ]
    return [*events[:3], *delta, *events[4:]]
