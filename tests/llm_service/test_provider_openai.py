"""OpenAIProvider through the real openai SDK and HTTP client, against a byte-level fake API."""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import time
from collections.abc import AsyncGenerator
from typing import Any, cast

import pytest

from llm_service import (
    LLMError,
    LLMResponse,
    Message,
    OpenAIProvider,
    ResponseComplete,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    ToolResultBlock,
    Usage,
)
from tests.fakes import openai as fake
from tests.fakes import specs
from tests.fakes.http import HANG, RESET, FakeHTTPServer, Reply
from tests.fakes.specs import HELLO, READ, SEARCH, collect, failure

KAFKA = ("call_a", "search_notes", {"query": "kafka streams", "limit": 5})
UNICODE = ("call_b", "read_note", {"path": "Projects/日本語.md"})


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


# -- replies --------------------------------------------------------------------------------


async def test_chat_returns_text_usage_model_and_request_id(fake_http: FakeHTTPServer) -> None:
    """A non-streaming call returns the text, end_turn, token counts, model and x-request-id."""
    fake_http.enqueue(fake.text_reply("Hello from the vault.", stream=False, model="gpt-x"))
    reply = await fake.make_provider(fake_http).chat(HELLO, model="gpt-x")
    assert reply == LLMResponse(
        text="Hello from the vault.",
        tool_calls=[],
        stop_reason="end_turn",
        usage=Usage(input_tokens=25, output_tokens=12),
        model="gpt-x",
        request_id=fake.REQUEST_ID,
    )
    assert fake_http.requests[0].path == "/v1/chat/completions"


async def test_stream_yields_text_deltas_then_one_complete_response(
    fake_http: FakeHTTPServer,
) -> None:
    """Streaming yields several TextDeltas in order, then a ResponseComplete with all the text."""
    text = "Streaming answers arrive piece by piece."
    fake_http.enqueue(fake.text_reply(text, usage=Usage(9, 4)))
    events = await collect(fake.make_provider(fake_http))
    deltas = [e.text for e in events[:-1] if isinstance(e, TextDelta)]
    assert len(deltas) == len(events) - 1 > 1 and "".join(deltas) == text
    final = events[-1]
    assert isinstance(final, ResponseComplete)
    assert (final.response.text, final.response.stop_reason) == (text, "end_turn")
    assert (final.response.usage, final.response.request_id) == (Usage(9, 4), fake.REQUEST_ID)
    assert final.response.model == fake.MODEL


async def test_streamed_tool_call_arguments_arrive_as_fragments(fake_http: FakeHTTPServer) -> None:
    """The first delta of a call carries id and name; the others carry argument fragments."""
    fake_http.enqueue(fake.tool_reply([KAFKA]))
    events = await collect(fake.make_provider(fake_http), tools=[SEARCH])
    deltas = [e for e in events if isinstance(e, ToolCallDelta)]
    raw = json.dumps(KAFKA[2])
    assert deltas[0] == ToolCallDelta(0, "call_a", "search_notes", "")
    assert all(d.id is None and d.name is None and d.index == 0 for d in deltas[1:])
    assert len(deltas) > 3 and "".join(d.arguments_delta for d in deltas) == raw
    final = events[-1]
    assert isinstance(final, ResponseComplete)
    assert final.response.tool_calls == [ToolCall(*KAFKA)]
    assert final.response.stop_reason == "tool_use"


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "chat"])
async def test_several_tool_calls_come_back_whole_and_in_order(
    fake_http: FakeHTTPServer, stream: bool
) -> None:
    """Two tool calls (one with non-ASCII arguments) and text in one response, in order."""
    fake_http.enqueue(fake.tool_reply([KAFKA, UNICODE], text="Let me look.", stream=stream))
    reply = await specs.reply(fake.make_provider(fake_http), stream=stream, tools=[SEARCH, READ])
    assert reply.tool_calls == [ToolCall(*KAFKA), ToolCall(*UNICODE)]
    assert (reply.text, reply.stop_reason) == ("Let me look.", "tool_use")


async def test_interleaved_tool_call_deltas_are_assembled_by_index(
    fake_http: FakeHTTPServer,
) -> None:
    """Fragments of parallel calls may interleave, and share a chunk with the call's name."""
    chunks = [
        fake.chunk({"role": "assistant", "content": None, "tool_calls": []}),
        fake.chunk(
            {
                "tool_calls": [
                    {"index": 0, "id": "c0", "type": "function", "function": {"name": "read_note"}},
                    {"index": 0, "function": {"arguments": '{"path"'}},
                    {"index": 1, "id": "c1", "type": "function", "function": {"name": "read_note"}},
                ]
            }
        ),
        fake.chunk({"tool_calls": [{"index": 1, "function": {"arguments": '{"path": "b.md"}'}}]}),
        fake.chunk({"tool_calls": [{"index": 0, "function": {"arguments": ': "a.md"}'}}]}),
        fake.chunk({}, "tool_calls"),
        fake.data("[DONE]"),
    ]
    fake_http.enqueue(Reply.stream(chunks))
    events = await collect(fake.make_provider(fake_http), tools=[READ])
    assert [e for e in events if isinstance(e, ToolCallDelta)] == [
        ToolCallDelta(0, "c0", "read_note", ""),
        ToolCallDelta(0, None, None, '{"path"'),
        ToolCallDelta(1, "c1", "read_note", ""),
        ToolCallDelta(1, None, None, '{"path": "b.md"}'),
        ToolCallDelta(0, None, None, ': "a.md"}'),
    ]
    final = events[-1]
    assert isinstance(final, ResponseComplete)
    assert final.response.tool_calls == [
        ToolCall("c0", "read_note", {"path": "a.md"}),
        ToolCall("c1", "read_note", {"path": "b.md"}),
    ]


async def test_tool_call_without_index_counts_by_position(fake_http: FakeHTTPServer) -> None:
    """A compatible server that sends whole calls without an index still yields each call."""
    calls = [
        {"id": "c0", "type": "function", "function": {"name": "read_note", "arguments": "{}"}},
        {"id": "c1", "type": "function", "function": {"name": "search_notes", "arguments": "{}"}},
    ]
    fake_http.enqueue(Reply.stream([fake.chunk({"tool_calls": calls}, "tool_calls")]))
    reply = await specs.reply(fake.make_provider(fake_http), stream=True, tools=[SEARCH, READ])
    assert [(c.id, c.name) for c in reply.tool_calls] == [
        ("c0", "read_note"),
        ("c1", "search_notes"),
    ]


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "chat"])
async def test_cached_prompt_tokens_are_reported_apart(
    fake_http: FakeHTTPServer, stream: bool
) -> None:
    """prompt_tokens includes cached tokens: input = prompt - cached, cache_read = cached."""
    fake_http.enqueue(fake.text_reply("x", usage=Usage(100, 7, 400, 0), stream=stream))
    reply = await specs.reply(fake.make_provider(fake_http), stream=stream)
    assert reply.usage == Usage(input_tokens=100, output_tokens=7, cache_read_tokens=400)


async def test_usage_without_details_counts_no_cache(fake_http: FakeHTTPServer) -> None:
    """A compatible server's bare usage (no prompt_tokens_details) gives zero cached tokens."""
    body: dict[str, Any] = {
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}}],
        "usage": {"prompt_tokens": 11, "completion_tokens": 3},
    }
    fake_http.enqueue(Reply.json(body))
    reply = await fake.make_provider(fake_http).chat(HELLO, model="m")
    assert (reply.text, reply.usage) == ("ok", Usage(input_tokens=11, output_tokens=3))


@pytest.mark.parametrize(
    ("finish", "expected"),
    [
        ("stop", "end_turn"),
        ("length", "max_tokens"),
        ("content_filter", "refusal"),
        ("tool_calls", "tool_use"),
        ("function_call", "tool_use"),
    ],
)
async def test_finish_reasons_map_to_stop_reasons(
    fake_http: FakeHTTPServer, finish: str, expected: str
) -> None:
    """Each finish_reason of the API becomes our stop_reason."""
    fake_http.enqueue(fake.reply("Some text", [], finish, stream=True))
    assert (await specs.reply(fake.make_provider(fake_http), stream=True)).stop_reason == expected


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "chat"])
async def test_tool_calls_ending_in_stop_are_tool_use_with_generated_ids(
    fake_http: FakeHTTPServer, stream: bool
) -> None:
    """Local servers may end tool calls with 'stop' and send no ids: tool_use, distinct ids."""
    calls = [("", "search_notes", {"query": "a"}), ("", "search_notes", {"query": "b"})]
    fake_http.enqueue(fake.reply("", calls, "stop", stream=stream))
    reply = await specs.reply(fake.make_provider(fake_http), stream=stream)
    ids = [c.id for c in reply.tool_calls]
    assert reply.stop_reason == "tool_use" and [c.arguments for c in reply.tool_calls] == [
        {"query": "a"},
        {"query": "b"},
    ]
    assert len(set(ids)) == 2 and all(i.startswith("call_") for i in ids)


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "chat"])
@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ('{"query": "kafka"', '{"query": "kafka"'),
        ("not json", "not json"),
        ("[1, 2]", "JSON object"),
        ('"just a string"', "JSON object"),
    ],
)
async def test_bad_tool_arguments_become_parse_errors(
    fake_http: FakeHTTPServer, stream: bool, raw: str, expected: str
) -> None:
    """Arguments that are not a JSON object never crash: {} and a parse_error saying why."""
    fake_http.enqueue(fake.tool_reply([("c1", "search_notes", raw)], stream=stream))
    call = (await specs.reply(fake.make_provider(fake_http), stream=stream)).tool_calls[0]
    assert (call.id, call.name, call.arguments) == ("c1", "search_notes", {})
    assert call.parse_error is not None and expected in call.parse_error


# -- requests -------------------------------------------------------------------------------

HISTORY = [
    Message.user("What do my notes say about kafka?"),
    Message.assistant(
        "Let me look.",
        [ToolCall("call_a", "search_notes", {"query": "kafka"}), ToolCall("call_b", "read_note")],
    ),
    Message.tool_results(
        [ToolResultBlock("call_a", '["a.md"]'), ToolResultBlock("call_b", "gone", is_error=True)]
    ),
    Message.assistant("", [ToolCall("call_c", "read_note", {"path": "a.md"})]),
    Message.tool_results([ToolResultBlock("call_c", "# Kafka\nStreams, 日本語.")]),
    Message.assistant("a.md covers Kafka streams."),
    Message.user("And Flink?"),
]


def _call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }


EXPECTED_MESSAGES = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "What do my notes say about kafka?"},
    {
        "role": "assistant",
        "content": "Let me look.",
        "tool_calls": [
            _call("call_a", "search_notes", {"query": "kafka"}),
            _call("call_b", "read_note", {}),
        ],
    },
    {"role": "tool", "tool_call_id": "call_a", "content": '["a.md"]'},
    {"role": "tool", "tool_call_id": "call_b", "content": "Error: gone"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [_call("call_c", "read_note", {"path": "a.md"})],
    },
    {"role": "tool", "tool_call_id": "call_c", "content": "# Kafka\nStreams, 日本語."},
    {"role": "assistant", "content": "a.md covers Kafka streams."},
    {"role": "user", "content": "And Flink?"},
]
OPENAI_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "search_notes",
            "description": "Search the vault",
            "parameters": SEARCH.input_schema,
        },
    },
    {
        "type": "function",
        "function": {
            "name": "read_note",
            "description": "Read a note",
            "parameters": READ.input_schema,
        },
    },
]


async def test_stream_request_body_carries_the_whole_history(fake_http: FakeHTTPServer) -> None:
    """System first, tool calls as JSON strings, one tool message per result, usage requested."""
    fake_http.enqueue(fake.text_reply("Flink is not in your notes."))
    provider = fake.make_provider(fake_http)
    await collect(
        provider, messages=HISTORY, model="gpt-x", system="Be brief.", tools=[SEARCH, READ]
    )
    request = fake_http.requests[0]
    assert (request.method, request.path) == ("POST", "/v1/chat/completions")
    assert request.headers["authorization"] == "Bearer sk-test"
    assert request.json() == {
        "model": "gpt-x",
        "messages": EXPECTED_MESSAGES,
        "max_tokens": 4096,  # a compatible server: the field every server knows
        "tools": OPENAI_TOOLS,
        "stream": True,
        "stream_options": {"include_usage": True},
    }


async def test_chat_request_body_forces_the_named_tool(fake_http: FakeHTTPServer) -> None:
    """tool_choice becomes {"type": "function", "function": {"name": ...}}; no stream fields."""
    fake_http.enqueue(fake.tool_reply([("c1", "search_notes", {"query": "x"})], stream=False))
    await fake.make_provider(fake_http).chat(
        HELLO, model="gpt-x", tools=[SEARCH], tool_choice="search_notes", max_tokens=77
    )
    assert fake_http.requests[0].json() == {
        "model": "gpt-x",
        "messages": [{"role": "user", "content": "hello"}],
        "max_tokens": 77,
        "tools": OPENAI_TOOLS[:1],
        "tool_choice": {"type": "function", "function": {"name": "search_notes"}},
    }
    assert fake.forced_tool(fake_http.requests[0].json()) == "search_notes"


def test_format_tool_is_the_function_tool_shape() -> None:
    """A ToolSpec becomes {"type": "function", "function": {name, description, parameters}}."""
    assert [OpenAIProvider.format_tool(t) for t in (SEARCH, READ)] == OPENAI_TOOLS


async def test_official_api_sends_max_completion_tokens_and_the_env_key(
    fake_http: FakeHTTPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without base_url: OPENAI_API_KEY authenticates and max_completion_tokens is sent."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    monkeypatch.setenv("OPENAI_BASE_URL", fake_http.url + "/v1")  # the SDK's own override
    fake_http.enqueue(fake.text_reply("ok", stream=False))
    await OpenAIProvider(max_attempts=1).chat(HELLO, model="gpt-x", max_tokens=50)
    request = fake_http.requests[0]
    assert request.headers["authorization"] == "Bearer sk-from-env"
    body = request.json()
    assert body["max_completion_tokens"] == 50 and "max_tokens" not in body


async def test_missing_key_fails_before_any_request(
    fake_http: FakeHTTPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No key and no base_url: auth_error saying how to fix it, and nothing is sent."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", fake_http.url + "/v1")
    with pytest.raises(LLMError) as caught:
        await OpenAIProvider().chat(HELLO, model="gpt-x")
    assert caught.value.code == "auth_error" and not caught.value.retryable
    assert str(caught.value) == "OpenAI API key is missing: set OPENAI_API_KEY."
    assert fake_http.requests == []


async def test_a_base_url_without_a_key_gets_no_authorization_header(
    fake_http: FakeHTTPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A base_url with no key given works keyless: OPENAI_API_KEY (meant for OpenAI's API) is
    not sent to it, and no Authorization header at all."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-for-openai-only")
    fake_http.enqueue(fake.text_reply("local", stream=False))
    reply = await OpenAIProvider(base_url=fake_http.url + "/v1").chat(HELLO, model="qwen3")
    assert reply.text == "local"
    assert "authorization" not in fake_http.requests[0].headers


async def test_list_models_reads_the_models_endpoint_newest_first(
    fake_http: FakeHTTPServer,
) -> None:
    """list_models GETs /v1/models and orders ids by creation time, newest first."""
    models = [
        {"id": "gpt-old", "object": "model", "created": 1, "owned_by": "x"},
        {"id": "gpt-new", "object": "model", "created": 9, "owned_by": "x"},
        {"id": "local-model", "object": "model"},
    ]
    fake_http.enqueue(Reply.json({"object": "list", "data": models}), fake.models_reply("b", "a"))
    provider = fake.make_provider(fake_http)
    assert [m.id for m in await provider.list_models()] == ["gpt-new", "gpt-old", "local-model"]
    assert [m.id for m in await provider.list_models()] == ["a", "b"]
    assert [(r.method, r.path) for r in fake_http.requests] == [("GET", "/v1/models")] * 2


async def test_the_official_api_lists_chat_models_only_with_what_is_known_of_them(
    fake_http: FakeHTTPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """From api.openai.com: no embedding, speech or image models; prices and limits from the
    catalog; validate_key is that same cheap call."""
    models = [
        {"id": name, "object": "model", "created": n, "owned_by": "openai"}
        for n, name in enumerate(
            ["gpt-5-mini", "text-embedding-3-small", "tts-1", "whisper-1", "dall-e-3", "o3"]
        )
    ]
    fake_http.enqueue(Reply.json({"object": "list", "data": models}), fake.models_reply("x"))
    provider = fake.make_provider(fake_http)
    provider.base_url = None  # as the official API, which the fake stands in for
    monkeypatch.setattr(provider, "_sdk", lambda: _sdk_at(fake_http))
    listed = await provider.list_models()
    assert [m.id for m in listed] == ["o3", "gpt-5-mini"]
    mini = listed[1]
    assert (mini.input_price_per_mtok, mini.output_price_per_mtok) == (0.25, 2.0)
    assert mini.context_window and mini.max_output_tokens and mini.supports_tools
    assert await provider.validate_key() is None


def _sdk_at(fake_http: FakeHTTPServer) -> Any:
    from openai import AsyncOpenAI

    return AsyncOpenAI(api_key="sk-test", base_url=fake_http.url + "/v1", max_retries=0)


# -- errors ---------------------------------------------------------------------------------

ERROR_TABLE = [
    pytest.param(401, None, "auth_error", False, id="401"),
    pytest.param(403, None, "auth_error", False, id="403"),
    pytest.param(429, None, "rate_limit", True, id="429"),
    pytest.param(429, "insufficient_quota", "quota_exceeded", False, id="429-quota"),
    # OpenRouter and other compatible APIs answer 402 "insufficient credits"
    pytest.param(402, None, "quota_exceeded", False, id="402"),
    pytest.param(529, None, "overloaded", True, id="529"),
    pytest.param(503, "overloaded_error", "overloaded", True, id="503-overloaded"),
    pytest.param(500, None, "server_error", True, id="500"),
    pytest.param(502, None, "server_error", True, id="502"),
    pytest.param(503, None, "server_error", True, id="503"),
    pytest.param(400, None, "invalid_request", False, id="400"),
    pytest.param(404, None, "invalid_request", False, id="404"),
    pytest.param(413, None, "invalid_request", False, id="413"),
    pytest.param(422, None, "invalid_request", False, id="422"),
]


@pytest.mark.parametrize(("status", "error_type", "code", "retryable"), ERROR_TABLE)
async def test_http_errors_map_to_codes_and_retry_only_when_transient(
    fake_http: FakeHTTPServer, status: int, error_type: str | None, code: str, retryable: bool
) -> None:
    """Each HTTP error gets its code; transient ones are tried max_attempts (3) times."""
    for _ in range(3):
        fake_http.enqueue(fake.error_reply(status, "Something is off", error_type=error_type))
    err = await failure(fake.make_provider(fake_http))
    assert (err.code, err.retryable, err.status) == (code, retryable, status)
    assert (err.provider, err.request_id) == ("OpenAI", fake.REQUEST_ID)
    assert len(fake_http.requests) == (3 if retryable else 1)
    message = str(err)
    assert message.startswith("OpenAI ") and f"({status})" in message
    assert fake.REQUEST_ID in message and message.endswith(".") and ". " not in message


async def test_rate_limit_message_says_when_to_retry(fake_http: FakeHTTPServer) -> None:
    """A 429 with Retry-After tells the user how long to wait, in one sentence."""
    fake_http.enqueue(
        fake.error_reply(429, "Rate limit reached for requests", headers={"retry-after": "20"})
    )
    err = await failure(fake.make_provider(fake_http, max_attempts=1))
    assert (err.code, err.retry_after) == ("rate_limit", 20.0)
    assert str(err) == (
        "OpenAI rate limit reached (429): Rate limit reached for requests; retry in 20 s "
        f"(request id {fake.REQUEST_ID})."
    )


async def test_auth_error_never_shows_the_key(fake_http: FakeHTTPServer) -> None:
    """A 401 that quotes the key gives an actionable message without it."""
    fake_http.enqueue(
        fake.error_reply(
            401,
            "Incorrect API key provided: sk-test. You can find your API key at "
            "https://platform.openai.com/account/api-keys.",
        )
    )
    err = await failure(fake.make_provider(fake_http))
    assert "sk-test" not in str(err) and "sk-test" not in repr(err)
    assert str(err).startswith("OpenAI rejected the API key (401)")
    assert "check the API key" in str(err) and "platform.openai.com" not in str(err)


async def test_html_error_page_is_not_quoted(fake_http: FakeHTTPServer) -> None:
    """A proxy's HTML 502 page stays out of the message."""
    page = b"<html><body><h1>502 Bad Gateway</h1></body></html>"
    fake_http.enqueue(Reply(502, {"content-type": "text/html"}, page))
    err = await failure(fake.make_provider(fake_http, max_attempts=1))
    assert err.code == "server_error"
    assert str(err) == "OpenAI had a server error (502); try again in a minute."


async def test_server_name_override_appears_in_messages(fake_http: FakeHTTPServer) -> None:
    """name="LM Studio" makes errors name the server the user runs."""
    fake_http.enqueue(fake.error_reply(404, "Model qwen9 not found"))
    err = await failure(fake.make_provider(fake_http, name="LM Studio"))
    assert err.provider == "LM Studio" and str(err).startswith("LM Studio refused the request")


@pytest.mark.parametrize("header", ["retry-after", "retry-after-ms"])
async def test_retry_after_is_waited_for(fake_http: FakeHTTPServer, header: str) -> None:
    """A 429 with Retry-After (seconds or ms) waits at least that long, then succeeds."""
    value = "0.05" if header == "retry-after" else "50"
    fake_http.enqueue(
        fake.error_reply(429, "slow down", headers={header: value}),
        fake.text_reply("ok", stream=False),
    )
    started = time.monotonic()
    reply = await fake.make_provider(fake_http).chat(HELLO, model="m")
    assert reply.text == "ok" and time.monotonic() - started >= 0.05
    assert len(fake_http.requests) == 2


async def test_retry_after_over_a_minute_fails_at_once(fake_http: FakeHTTPServer) -> None:
    """Retry-After above 60 s is not waited for: rate_limit, retry_after set, one request."""
    fake_http.enqueue(fake.error_reply(429, "slow down", headers={"retry-after": "120"}))
    err = await failure(fake.make_provider(fake_http))
    assert (err.code, err.retry_after, err.retryable) == ("rate_limit", 120.0, True)
    assert len(fake_http.requests) == 1 and "retry in 120 s" in str(err)


async def test_each_retry_logs_one_info_line_without_the_key(
    fake_http: FakeHTTPServer, caplog: pytest.LogCaptureFixture
) -> None:
    """Two failures then success: two INFO lines naming attempt and code, never the key."""
    caplog.set_level(logging.DEBUG)
    fake_http.enqueue(
        fake.error_reply(500), fake.error_reply(503), fake.text_reply("ok", stream=False)
    )
    assert (await fake.make_provider(fake_http).chat(HELLO, model="m")).text == "ok"
    retries = [
        r.getMessage()
        for r in caplog.records
        if r.name == "llm_service.providers.base" and r.levelno == logging.INFO
    ]
    assert len(retries) == 2 and len(fake_http.requests) == 3
    assert "attempt 1/3, server_error" in retries[0] and "attempt 2/3" in retries[1]
    assert all(r.startswith("OpenAI call failed") for r in retries)
    assert "sk-test" not in caplog.text


@pytest.mark.parametrize(
    ("message", "code"),
    [("The server is overloaded.", "overloaded"), ("The server had an error.", "server_error")],
)
async def test_error_mid_stream_raises_without_retry(
    fake_http: FakeHTTPServer, message: str, code: str
) -> None:
    """An error object after text was shown raises at once; the answer is never restarted."""
    fake_http.enqueue(
        fake.midstream_error_reply("Partial answer", message=message), fake.text_reply("again")
    )
    seen: list[str] = []
    with pytest.raises(LLMError) as caught:
        async for event in fake.make_provider(fake_http).stream(HELLO, model="m"):
            if isinstance(event, TextDelta):
                seen.append(event.text)
    assert "".join(seen) == "Partial answer" and len(fake_http.requests) == 1
    assert caught.value.code == code and caught.value.request_id == fake.REQUEST_ID
    assert str(caught.value).startswith("OpenAI ")


async def test_error_before_the_first_event_is_retried(fake_http: FakeHTTPServer) -> None:
    """A stream that fails before showing anything is retried like a call."""
    fake_http.enqueue(fake.early_error_reply(), fake.text_reply("second try"))
    reply = await specs.reply(fake.make_provider(fake_http), stream=True)
    assert reply.text == "second try" and len(fake_http.requests) == 2


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "chat"])
async def test_connection_reset_is_a_retried_network_error(
    fake_http: FakeHTTPServer, stream: bool
) -> None:
    """A reset before the response is network_error, tried max_attempts times."""
    fake_http.enqueue(Reply(reset=True), Reply(reset=True), Reply(reset=True))
    err = await failure(fake.make_provider(fake_http), stream=stream)
    assert (err.code, err.retryable) == ("network_error", True)
    assert len(fake_http.requests) == 3


async def test_reset_mid_stream_raises_network_error_once(fake_http: FakeHTTPServer) -> None:
    """A connection torn down after text was shown ends the stream with network_error."""
    fake_http.enqueue(Reply.stream([*fake.hanging_reply("Hel"), RESET]))
    err = await failure(fake.make_provider(fake_http), stream=True)
    assert err.code == "network_error" and len(fake_http.requests) == 1


async def test_refused_connection_names_the_server_and_url() -> None:
    """Nothing listening at base_url: network_error naming the server and the URL."""
    url = f"http://127.0.0.1:{_free_port()}/v1"
    provider = OpenAIProvider(
        "sk-test", base_url=url, max_attempts=2, backoff_base=0.001, name="vLLM"
    )
    err = await failure(provider)
    assert (err.code, err.retryable) == ("network_error", True)
    assert (
        str(err) == f"vLLM at {url} could not be reached; check your connection and the base URL."
    )


INVALID_REPLIES = [
    pytest.param(fake.malformed_reply(), True, id="sse-not-json"),
    pytest.param(fake.text_reply("json, not sse", stream=False), True, id="stream-got-json"),
    pytest.param(
        Reply(200, {"content-type": "text/html"}, b"<html>login</html>"), False, id="html"
    ),
    pytest.param(Reply.json({"object": "chat.completion", "choices": []}), False, id="no-choices"),
    pytest.param(
        Reply(200, {"content-type": "application/json"}, b'{"choices": ['), False, id="cut-json"
    ),
    pytest.param(
        fake.reply("", [("c1", "", {})], "tool_calls", stream=False), False, id="nameless-call"
    ),
]


@pytest.mark.parametrize(("bad", "stream"), INVALID_REPLIES)
async def test_unreadable_replies_are_invalid_response(
    fake_http: FakeHTTPServer, bad: Reply, stream: bool
) -> None:
    """A reply that is not a readable completion gives invalid_response, not retried."""
    fake_http.enqueue(bad)
    err = await failure(fake.make_provider(fake_http), stream=stream)
    assert (err.code, err.retryable) == ("invalid_response", False)
    assert len(fake_http.requests) == 1 and str(err).startswith("OpenAI sent a response")


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "chat"])
async def test_silent_server_times_out(fake_http: FakeHTTPServer, stream: bool) -> None:
    """A server that stops sending gives code timeout (retryable)."""
    content_type = "text/event-stream" if stream else "application/json"
    fake_http.enqueue(Reply.stream([HANG], content_type))
    err = await failure(fake.make_provider(fake_http, max_attempts=1, timeout=0.2), stream=stream)
    assert (err.code, err.retryable) == ("timeout", True)


async def test_closing_the_stream_early_closes_the_http_request(
    fake_http: FakeHTTPServer,
) -> None:
    """A consumer that stops after the first delta and closes the stream frees the connection."""
    fake_http.enqueue(Reply.stream([*fake.hanging_reply("Thinking"), HANG]))
    events = cast(
        AsyncGenerator[StreamEvent], fake.make_provider(fake_http).stream(HELLO, model="m")
    )
    assert isinstance(await asyncio.wait_for(anext(events), 5), TextDelta)
    await asyncio.wait_for(events.aclose(), 5)
    await asyncio.wait_for(fake_http.disconnected.wait(), 2)
