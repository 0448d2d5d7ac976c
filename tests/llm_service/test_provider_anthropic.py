"""AnthropicProvider, through the real ``anthropic`` SDK, against a byte-level fake Messages API."""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import time
from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import Any, cast

import pytest

from llm_service import (
    AnthropicProvider,
    LLMError,
    LLMResponse,
    Message,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    ToolResultBlock,
    Usage,
)
from tests.fakes import anthropic as wire
from tests.fakes.http import HANG, RESET, FakeHTTPServer, Reply
from tests.fakes.specs import HELLO, READ, SEARCH, collect, failure, final

CALLS: list[tuple[str, str, dict[str, Any]]] = [
    ("toolu_01A", "search_notes", {"query": "kafka streams", "limit": 5}),
    ("toolu_01B", "read_note", {"path": "Projects/日本語.md"}),
]
CACHED = Usage(input_tokens=30, output_tokens=42, cache_read_tokens=900, cache_write_tokens=120)


# -- replies ------------------------------------------------------------------------------


async def test_chat_returns_the_whole_response(fake_http: FakeHTTPServer) -> None:
    """A non-streaming call returns text, stop reason, all four token counts, model, request id."""
    fake_http.enqueue(wire.text_reply("Hello from the vault.", stream=False, usage=CACHED))
    reply = await wire.make_provider(fake_http).chat(HELLO, model="claude-x")
    assert reply == LLMResponse(
        text="Hello from the vault.",
        stop_reason="end_turn",
        usage=CACHED,
        model=wire.MODEL,
        request_id=wire.REQUEST_ID,
    )
    assert "stream" not in fake_http.requests[0].json()


async def test_stream_yields_text_deltas_then_one_complete_response(
    fake_http: FakeHTTPServer,
) -> None:
    """Text arrives delta by delta (pings ignored); the last event carries the whole response."""
    text = "Streaming answers arrive piece by piece."
    fake_http.enqueue(wire.text_reply(text, usage=CACHED))
    events = await collect(wire.make_provider(fake_http))
    assert events[:-1] == [TextDelta(piece) for piece in wire.pieces(text, 4)]
    assert final(events) == LLMResponse(
        text=text, usage=CACHED, model=wire.MODEL, request_id=wire.REQUEST_ID
    )
    assert fake_http.requests[0].json()["stream"] is True


async def test_stream_survives_any_chunk_boundary(fake_http: FakeHTTPServer) -> None:
    """SSE lines and UTF-8 characters split across HTTP chunks are reassembled."""
    text = "Grüße — 日本語のノート 🚀 done"
    events = wire.stream_events([{"type": "text", "text": text}], "end_turn")
    fake_http.enqueue(Reply.stream(wire.rechunk(events, 5)))
    assert final(await collect(wire.make_provider(fake_http))).text == text


async def test_streamed_tool_calls_are_announced_then_their_arguments_stream(
    fake_http: FakeHTTPServer,
) -> None:
    """Each call opens with (index, id, name), then argument fragments that add up to its JSON."""
    fake_http.enqueue(wire.tool_reply(CALLS, text="Let me look."))
    events = await collect(wire.make_provider(fake_http), tools=[SEARCH, READ])
    deltas = [e for e in events if isinstance(e, ToolCallDelta)]
    for index, (call_id, name, arguments) in enumerate(CALLS):
        mine = [d for d in deltas if d.index == index]
        assert mine[0] == ToolCallDelta(index, call_id, name, "")
        assert len(mine) > 2 and all(d.id is None and d.name is None for d in mine[1:])
        assert json.loads("".join(d.arguments_delta for d in mine)) == arguments
    reply = final(events)
    assert reply.text == "Let me look." and reply.stop_reason == "tool_use"
    assert reply.tool_calls == [ToolCall(i, n, a) for i, n, a in CALLS]


async def test_chat_returns_several_tool_calls_in_order(fake_http: FakeHTTPServer) -> None:
    """A non-streamed response with two tool_use blocks gives both calls, in order."""
    fake_http.enqueue(wire.tool_reply(CALLS, text="Let me look.", stream=False))
    reply = await wire.make_provider(fake_http).chat(HELLO, model="claude-x", tools=[SEARCH])
    assert reply.tool_calls == [ToolCall(i, n, a) for i, n, a in CALLS]
    assert (reply.text, reply.stop_reason) == ("Let me look.", "tool_use")


@pytest.mark.parametrize(
    "delta_usage",
    [wire.wire_usage(CACHED), {"output_tokens": CACHED.output_tokens}],
    ids=["cumulative-totals", "output-only"],
)
async def test_message_delta_usage_replaces_never_adds(
    fake_http: FakeHTTPServer, delta_usage: dict[str, int]
) -> None:
    """message_delta's cumulative counts replace message_start's; fields it omits are kept."""
    events = wire.stream_events(
        [{"type": "text", "text": "cached"}], "end_turn", CACHED, delta_usage=delta_usage
    )
    fake_http.enqueue(Reply.stream(events))
    assert final(await collect(wire.make_provider(fake_http))).usage == CACHED


async def test_absent_cache_counts_are_zero(fake_http: FakeHTTPServer) -> None:
    """Null or missing cache token fields count as 0."""
    body = wire.message([{"type": "text", "text": "ok"}], "end_turn")
    body["usage"] = {"input_tokens": 7, "output_tokens": 3, "cache_read_input_tokens": None}
    fake_http.enqueue(Reply.json(body))
    reply = await wire.make_provider(fake_http).chat(HELLO, model="claude-x")
    assert reply.usage == Usage(input_tokens=7, output_tokens=3)


@pytest.mark.parametrize(
    ("api_reason", "ours"),
    [
        ("end_turn", "end_turn"),
        ("tool_use", "tool_use"),
        ("max_tokens", "max_tokens"),
        ("stop_sequence", "stop_sequence"),
        ("refusal", "refusal"),
        ("pause_turn", "end_turn"),
        ("model_context_window_exceeded", "max_tokens"),
        ("a_reason_from_the_future", "end_turn"),
    ],
)
async def test_stop_reasons_are_mapped(
    fake_http: FakeHTTPServer, api_reason: str, ours: str
) -> None:
    """The API's stop reasons map onto ours; unknown ones count as end_turn."""
    fake_http.enqueue(Reply.stream(wire.stream_events([], api_reason)))
    assert final(await collect(wire.make_provider(fake_http))).stop_reason == ours


async def test_unknown_stop_reason_is_logged_at_debug(
    fake_http: FakeHTTPServer, caplog: pytest.LogCaptureFixture
) -> None:
    """An unknown stop reason leaves a DEBUG line naming it."""
    caplog.set_level(logging.DEBUG, logger="llm_service.providers.anthropic")
    fake_http.enqueue(wire.reply([], "a_reason_from_the_future", stream=False))
    await wire.make_provider(fake_http).chat(HELLO, model="claude-x")
    assert any(
        r.levelno == logging.DEBUG and "a_reason_from_the_future" in r.getMessage()
        for r in caplog.records
    )


@pytest.mark.parametrize("raw", ['{"query": "kaf', "[1, 2]", "not json"])
async def test_unparseable_tool_input_becomes_a_parse_error(
    fake_http: FakeHTTPServer, raw: str
) -> None:
    """Tool input that is not a JSON object is reported on its call; other calls are intact."""
    content: list[dict[str, Any]] = [
        {"type": "tool_use", "id": "toolu_bad", "name": "search_notes", "input": raw},
        {"type": "tool_use", "id": "toolu_ok", "name": "read_note", "input": {"path": "a.md"}},
    ]
    fake_http.enqueue(Reply.stream(wire.stream_events(content, "tool_use")))
    bad, ok = final(await collect(wire.make_provider(fake_http))).tool_calls
    assert (bad.id, bad.arguments) == ("toolu_bad", {}) and bad.parse_error
    assert ok == ToolCall("toolu_ok", "read_note", {"path": "a.md"})


async def test_unknown_blocks_deltas_and_events_are_skipped(fake_http: FakeHTTPServer) -> None:
    """Thinking blocks, signature deltas and event types we do not know never reach the caller."""
    thinking = {"type": "thinking", "thinking": "", "signature": ""}
    events = [
        wire.sse("message_start", {"type": "message_start", "message": wire.message([], None)}),
        wire.sse(
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": thinking},
        ),
        wire.sse(
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "thinking_delta", "thinking": "hm"},
            },
        ),
        wire.sse(
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "signature_delta", "signature": "c2ln"},
            },
        ),
        wire.sse("content_block_stop", {"type": "content_block_stop", "index": 0}),
        wire.sse("brand_new_event", {"type": "brand_new_event", "detail": 1}),
        *wire.stream_events([{"type": "text", "text": "Answer."}], "end_turn")[1:],
    ]
    fake_http.enqueue(Reply.stream(events))
    result = await collect(wire.make_provider(fake_http))
    assert result[:-1] == [TextDelta("Answ"), TextDelta("er.")]
    assert final(result).text == "Answer."


# -- the request ----------------------------------------------------------------------------


async def test_request_body_for_a_multi_round_history(fake_http: FakeHTTPServer) -> None:
    """System and last tool cached; calls go back as tool_use; a round's results share a turn."""
    broken = ToolCall("toolu_02", "read_note", {}, parse_error="arguments are not valid JSON")
    history = [
        Message.user("What do my notes say about kafka?"),
        Message.assistant(
            "Let me look.", [ToolCall("toolu_01", "search_notes", {"query": "kafka"}), broken]
        ),
        Message.tool_results(
            [
                ToolResultBlock("toolu_01", '["a.md"]'),
                ToolResultBlock("toolu_02", "Invalid arguments", is_error=True),
            ]
        ),
        Message.assistant("a.md mentions Kafka Streams."),
        Message.user("Open it."),
    ]
    fake_http.enqueue(wire.text_reply("Done."))
    provider = wire.make_provider(fake_http)
    await collect_history(provider, history)
    request = fake_http.requests[0]
    assert (request.method, request.path) == ("POST", "/v1/messages")
    assert request.headers["authorization"] == f"Bearer {wire.API_KEY}"  # SDK 2.x sends keys so
    assert "anthropic-version" in request.headers
    assert request.json() == {
        "model": "claude-x",
        "max_tokens": 300,
        "stream": True,
        "system": [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}],
        "tools": [
            AnthropicProvider.format_tool(SEARCH),
            {**AnthropicProvider.format_tool(READ), "cache_control": {"type": "ephemeral"}},
        ],
        "tool_choice": {"type": "tool", "name": "read_note"},
        "messages": [
            {
                "role": "user",
                "content": [{"type": "text", "text": "What do my notes say about kafka?"}],
            },
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Let me look."},
                    {
                        "type": "tool_use",
                        "id": "toolu_01",
                        "name": "search_notes",
                        "input": {"query": "kafka"},
                    },
                    {"type": "tool_use", "id": "toolu_02", "name": "read_note", "input": {}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_01",
                        "content": '["a.md"]',
                        "is_error": False,
                    },
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_02",
                        "content": "Invalid arguments",
                        "is_error": True,
                    },
                ],
            },
            {
                "role": "assistant",
                "content": [{"type": "text", "text": "a.md mentions Kafka Streams."}],
            },
            {"role": "user", "content": [{"type": "text", "text": "Open it."}]},
        ],
    }


async def collect_history(provider: AnthropicProvider, history: list[Message]) -> None:
    async for _ in provider.stream(
        history,
        model="claude-x",
        system="Be brief.",
        tools=[SEARCH, READ],
        max_tokens=300,
        tool_choice="read_note",
    ):
        pass


async def test_plain_request_sends_no_system_tools_or_tool_choice(
    fake_http: FakeHTTPServer,
) -> None:
    """Without a system prompt or tools, those fields are absent, not empty."""
    fake_http.enqueue(wire.text_reply("ok", stream=False))
    await wire.make_provider(fake_http).chat(HELLO, model="claude-x")
    assert set(fake_http.requests[0].json()) == {"model", "max_tokens", "messages"}


def test_format_tool_is_name_description_and_input_schema() -> None:
    """A ToolSpec becomes Anthropic's tool object, schema copied as is."""
    assert AnthropicProvider.format_tool(SEARCH) == {
        "name": "search_notes",
        "description": "Search the vault",
        "input_schema": dict(SEARCH.input_schema),
    }


async def test_missing_key_fails_before_any_request(
    fake_http: FakeHTTPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With no key anywhere, auth_error says which variable to set, and nothing is sent."""
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    provider = AnthropicProvider(base_url=fake_http.url)
    with pytest.raises(LLMError) as caught:
        await provider.chat(HELLO, model="claude-x")
    assert str(caught.value) == "Anthropic API key is missing: set ANTHROPIC_API_KEY."
    assert caught.value.code == "auth_error" and fake_http.requests == []


async def test_key_comes_from_the_environment_when_not_given(
    fake_http: FakeHTTPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """api_key=None uses ANTHROPIC_API_KEY, as the SDK does."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-from-env")
    fake_http.enqueue(wire.text_reply("ok", stream=False))
    await wire.track(AnthropicProvider(base_url=fake_http.url)).chat(HELLO, model="claude-x")
    assert fake_http.requests[0].headers["authorization"] == "Bearer sk-ant-from-env"


# -- errors ---------------------------------------------------------------------------------

HTML_502 = Reply(502, {"content-type": "text/html"}, b"<html><h1>502 Bad Gateway</h1></html>")
ERROR_TABLE = [
    pytest.param(wire.error_reply(401, "invalid x-api-key"), "auth_error", False, id="401"),
    pytest.param(wire.error_reply(403, "no access to model"), "auth_error", False, id="403"),
    pytest.param(wire.error_reply(429, "slow down"), "rate_limit", True, id="429"),
    pytest.param(
        wire.error_reply(429, "spend limit", error_code="enforced_spend_limit_reached"),
        "quota_exceeded",
        False,
        id="429-spend-limit",
    ),
    pytest.param(wire.quota_reply(), "quota_exceeded", False, id="400-credit-balance"),
    pytest.param(wire.error_reply(402, "billing issue"), "quota_exceeded", False, id="402"),
    pytest.param(wire.error_reply(529, "Overloaded"), "overloaded", True, id="529"),
    pytest.param(wire.error_reply(500, "Internal server error"), "server_error", True, id="500"),
    pytest.param(HTML_502, "server_error", True, id="502-html"),
    pytest.param(wire.error_reply(503, "unavailable"), "server_error", True, id="503"),
    pytest.param(wire.error_reply(504, "Request timeout"), "server_error", True, id="504"),
    pytest.param(wire.error_reply(400, "messages: empty"), "invalid_request", False, id="400"),
    pytest.param(wire.error_reply(404, "model: x"), "invalid_request", False, id="404"),
    pytest.param(wire.error_reply(413, "too large"), "invalid_request", False, id="413"),
    pytest.param(wire.error_reply(422, "unprocessable"), "invalid_request", False, id="422"),
    pytest.param(wire.error_reply(409, "conflict"), "unknown", False, id="409"),
]


@pytest.mark.parametrize(("reply", "code", "retryable"), ERROR_TABLE)
async def test_http_errors_map_to_codes(
    fake_http: FakeHTTPServer, reply: Reply, code: str, retryable: bool
) -> None:
    """Each API error becomes its code; retryable ones are tried max_attempts (3) times."""
    fake_http.enqueue(reply, reply, reply)
    err = await failure(wire.make_provider(fake_http))
    assert (err.code, err.retryable, err.status, err.provider) == (
        code,
        retryable,
        reply.status,
        "Anthropic",
    )
    assert len(fake_http.requests) == (3 if retryable else 1)
    message = str(err)
    assert message.startswith("Anthropic ") and f"({reply.status})" in message
    assert message.endswith(".") and ". " not in message, "one sentence"
    assert wire.API_KEY not in message
    if reply is not HTML_502:
        assert err.request_id == wire.REQUEST_ID and wire.REQUEST_ID in message


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (
            wire.error_reply(401, "invalid x-api-key"),
            "Anthropic rejected the API key (401): invalid x-api-key; check ANTHROPIC_API_KEY"
            f" (request id {wire.REQUEST_ID}).",
        ),
        (
            wire.error_reply(429, "Rate limited", headers={"retry-after": "75"}),
            "Anthropic rate limit reached (429): Rate limited; retry in 75 s"
            f" (request id {wire.REQUEST_ID}).",
        ),
        (
            wire.quota_reply(),
            "Anthropic quota or credit is used up (400): Your credit balance is too low to access"
            " the Anthropic API; add credit or raise the spend limit in the Claude Console"
            f" (request id {wire.REQUEST_ID}).",
        ),
    ],
    ids=["auth", "rate-limit", "credit"],
)
async def test_error_messages_say_what_to_do(
    fake_http: FakeHTTPServer, reply: Reply, expected: str
) -> None:
    """The sentence names the provider, the status, the API's words and the fix."""
    fake_http.enqueue(reply)
    assert str(await failure(wire.make_provider(fake_http))) == expected


@pytest.mark.parametrize("headers", [{"retry-after": "0.05"}, {"retry-after-ms": "50"}])
async def test_retry_after_is_honoured(fake_http: FakeHTTPServer, headers: dict[str, str]) -> None:
    """A 429's Retry-After (seconds or ms) is waited before the retry that succeeds."""
    fake_http.enqueue(wire.error_reply(429, "slow down", headers=headers), wire.text_reply("ok"))
    started = time.monotonic()
    reply = final(await collect(wire.make_provider(fake_http)))
    assert reply.text == "ok" and time.monotonic() - started >= 0.05
    assert len(fake_http.requests) == 2


async def test_retry_after_over_a_minute_fails_at_once(fake_http: FakeHTTPServer) -> None:
    """Retry-After above 60 s is not waited for: rate_limit with retry_after set, one request."""
    fake_http.enqueue(wire.error_reply(429, "slow down", headers={"retry-after": "120"}))
    err = await failure(wire.make_provider(fake_http))
    assert (err.code, err.retry_after, err.retryable) == ("rate_limit", 120.0, True)
    assert "retry in 120 s" in str(err) and len(fake_http.requests) == 1


async def test_each_retry_logs_one_info_line_without_secrets(
    fake_http: FakeHTTPServer, caplog: pytest.LogCaptureFixture
) -> None:
    """Two failures then success: two INFO retry lines (attempt, code); no key or note text."""
    caplog.set_level(logging.INFO)
    fake_http.enqueue(
        wire.error_reply(500), wire.error_reply(529, "Overloaded"), wire.text_reply("ok")
    )
    await collect(wire.make_provider(fake_http))
    retries = [r.getMessage() for r in caplog.records if r.name == "llm_service.providers.base"]
    assert len(retries) == 2 and len(fake_http.requests) == 3
    assert "attempt 1/3, server_error" in retries[0] and "attempt 2/3, overloaded" in retries[1]
    logged = " ".join(r.getMessage() for r in caplog.records)
    assert wire.API_KEY not in logged and "hello" not in logged


async def test_error_mid_stream_raises_without_retry(fake_http: FakeHTTPServer) -> None:
    """An error event after text was shown raises overloaded; the answer is not restarted."""
    fake_http.enqueue(wire.midstream_error_reply("Partial answer"), wire.text_reply("again"))
    seen: list[str] = []
    with pytest.raises(LLMError) as caught:
        async for event in wire.make_provider(fake_http).stream(HELLO, model="claude-x"):
            if isinstance(event, TextDelta):
                seen.append(event.text)
    assert "".join(seen) == "Partial answer" and len(fake_http.requests) == 1
    err = caught.value
    assert (err.code, err.retryable, err.status) == ("overloaded", True, None)
    assert err.request_id == wire.REQUEST_ID


@pytest.mark.parametrize(
    "first",
    [
        wire.early_error_reply(),
        Reply.stream(
            [wire.stream_events([], "end_turn")[0], wire.error_event("api_error", "boom")]
        ),
    ],
    ids=["first-event", "after-message-start"],
)
async def test_error_before_anything_is_shown_is_retried(
    fake_http: FakeHTTPServer, first: Reply
) -> None:
    """A stream that fails before yielding an event is retried like a call."""
    fake_http.enqueue(first, wire.text_reply("second try"))
    assert final(await collect(wire.make_provider(fake_http))).text == "second try"
    assert len(fake_http.requests) == 2


async def test_connection_resets_are_retried_network_errors(fake_http: FakeHTTPServer) -> None:
    """A reset before any response byte is network_error, retried until max_attempts."""
    fake_http.enqueue(Reply(reset=True), Reply(reset=True))
    err = await failure(wire.make_provider(fake_http, max_attempts=2))
    assert (err.code, err.retryable) == ("network_error", True)
    assert len(fake_http.requests) == 2


async def test_a_reset_then_success_recovers(fake_http: FakeHTTPServer) -> None:
    """After a reset the retry's answer is returned."""
    fake_http.enqueue(Reply(reset=True), wire.text_reply("recovered"))
    assert final(await collect(wire.make_provider(fake_http))).text == "recovered"


async def test_reset_mid_stream_is_a_network_error_without_retry(
    fake_http: FakeHTTPServer,
) -> None:
    """A connection torn down after text was shown raises network_error after one request."""
    fake_http.enqueue(Reply.stream([*wire.hanging_reply("Hel"), RESET]), wire.text_reply("x"))
    err = await failure(wire.make_provider(fake_http), stream=True)
    assert err.code == "network_error" and len(fake_http.requests) == 1


async def test_refused_connection_names_the_url() -> None:
    """Nothing listening: network_error naming the base URL."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    provider = wire.track(AnthropicProvider(api_key=wire.API_KEY, base_url=url, max_attempts=1))
    with pytest.raises(LLMError) as caught:
        await provider.chat(HELLO, model="claude-x")
    assert caught.value.code == "network_error" and url in str(caught.value)


def _event(name: str, payload: dict[str, Any]) -> bytes:
    return wire.sse(name, {"type": name, **payload})


START = wire.stream_events([], "end_turn")[0]
UNREADABLE = [
    pytest.param(wire.malformed_reply(), True, id="data-not-json"),
    pytest.param(
        Reply.stream(wire.stream_events([{"type": "text", "text": "cut"}], "end_turn")[:-1]),
        True,
        id="no-message-stop",
    ),
    pytest.param(
        Reply.stream(
            [
                START,
                _event(
                    "content_block_delta",
                    {"index": 3, "delta": {"type": "text_delta", "text": "x"}},
                ),
            ]
        ),
        True,
        id="delta-before-start",
    ),
    pytest.param(
        Reply.stream(
            [START, _event("content_block_start", {"content_block": {"type": "text", "text": ""}})]
        ),
        True,
        id="block-without-index",
    ),
    pytest.param(
        Reply(200, {"content-type": "text/html"}, b"<html>login</html>"), False, id="html"
    ),
    pytest.param(Reply.json({"type": "message", "content": "oops"}), False, id="wrong-shape"),
]


@pytest.mark.parametrize(("reply", "stream"), UNREADABLE)
async def test_unreadable_responses_are_invalid_response(
    fake_http: FakeHTTPServer, reply: Reply, stream: bool
) -> None:
    """Bytes that are not the Messages API's format give invalid_response, never retried."""
    fake_http.enqueue(reply, wire.text_reply("never", stream=stream))
    err = await failure(wire.make_provider(fake_http), stream=stream)
    assert (err.code, err.retryable) == ("invalid_response", False)
    assert str(err).startswith("Anthropic sent a response that could not be read")
    assert len(fake_http.requests) == 1


async def test_timeouts_are_retried_then_reported(fake_http: FakeHTTPServer) -> None:
    """A server that stops answering gives code timeout, retried like other transient errors."""
    fake_http.enqueue(Reply.stream([HANG]), Reply.stream([HANG]))
    err = await failure(wire.make_provider(fake_http, max_attempts=2, timeout=0.2), stream=True)
    assert (err.code, err.retryable) == ("timeout", True)
    assert "raise the timeout (0.2 s)" in str(err) and len(fake_http.requests) == 2


async def test_closing_the_stream_early_closes_the_connection(
    fake_http: FakeHTTPServer,
) -> None:
    """A consumer that stops reading and closes the stream releases the connection."""
    fake_http.enqueue(Reply.stream([*wire.hanging_reply("Thinking"), HANG]))
    stream = wire.make_provider(fake_http).stream(HELLO, model="claude-x")
    async with aclosing(cast(AsyncGenerator[StreamEvent, None], stream)) as events:
        async for event in events:
            assert isinstance(event, TextDelta)
            break
    await asyncio.wait_for(fake_http.disconnected.wait(), 2)


# -- models and lifecycle ---------------------------------------------------------------------


def _models_page(ids: list[str], has_more: bool) -> Reply:
    data = [
        {"type": "model", "id": i, "display_name": i, "created_at": "2026-01-01T00:00:00Z"}
        for i in ids
    ]
    return Reply.json({"data": data, "has_more": has_more, "first_id": ids[0], "last_id": ids[-1]})


async def test_list_models_reads_every_page(fake_http: FakeHTTPServer) -> None:
    """list_models follows has_more/last_id through all pages of GET /v1/models."""
    fake_http.enqueue(
        _models_page(["claude-b", "claude-a"], True), _models_page(["claude-old"], False)
    )
    models = await wire.make_provider(fake_http).list_models()
    assert [m.id for m in models] == ["claude-b", "claude-a", "claude-old"]
    first, second = fake_http.requests
    assert first.path.startswith("/v1/models") and "after_id=claude-a" in second.path


async def test_list_models_errors_are_llm_errors(fake_http: FakeHTTPServer) -> None:
    """A refused key while listing models is the same auth_error as in chat."""
    fake_http.enqueue(wire.error_reply(401, "invalid x-api-key"))
    with pytest.raises(LLMError) as caught:
        await wire.make_provider(fake_http).list_models()
    assert caught.value.code == "auth_error" and len(fake_http.requests) == 1


async def test_provider_works_again_after_aclose(fake_http: FakeHTTPServer) -> None:
    """aclose releases the client; a later call builds a new one."""
    fake_http.enqueue(wire.text_reply("one", stream=False), wire.text_reply("two", stream=False))
    provider = wire.make_provider(fake_http)
    assert (await provider.chat(HELLO, model="claude-x")).text == "one"
    await provider.aclose()
    assert (await provider.chat(HELLO, model="claude-x")).text == "two"


async def test_a_key_hint_says_what_to_do_about_a_refused_key(fake_http: FakeHTTPServer) -> None:
    """The caller knows where the key came from (a settings file, say): its hint replaces the
    environment variable's in a 401's sentence."""
    fake_http.enqueue(wire.error_reply(401, "invalid x-api-key"))
    hint = "the key was saved by setup: run `obsidian-ai-bridge setup` to give a new one"
    err = await failure(wire.make_provider(fake_http, key_hint=hint))
    assert err.code == "auth_error" and f"invalid x-api-key; {hint}" in str(err)
    assert "ANTHROPIC_API_KEY" not in str(err)
