"""OllamaProvider through real httpx against a fake speaking Ollama's /api/chat bytes."""

from __future__ import annotations

import logging
import re
import time
from typing import Any

import pytest

from llm_service import (
    LLMError,
    Message,
    OllamaProvider,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    ToolResultBlock,
    Usage,
)
from tests.fakes import ollama as fake
from tests.fakes.http import HANG, FakeHTTPServer, Reply
from tests.fakes.specs import HELLO, READ, SEARCH, collect, failure, final

GENERATED_ID = re.compile(r"^call_[0-9a-f]{32}$")


# -- text ------------------------------------------------------------------------------------


async def test_chat_returns_text_usage_and_model(fake_http: FakeHTTPServer) -> None:
    """A non-streaming call POSTs stream=false and returns text, token counts and the model."""
    fake_http.enqueue(fake.text_reply("Hello from the vault.", stream=False, usage=Usage(31, 7)))
    reply = await fake.make_provider(fake_http).chat(HELLO, model="llama3.1:8b")
    assert (reply.text, reply.stop_reason, reply.model) == (
        "Hello from the vault.",
        "end_turn",
        fake.MODEL,
    )
    assert reply.usage == Usage(
        input_tokens=31, output_tokens=7, cache_read_tokens=0, cache_write_tokens=0
    )
    assert reply.tool_calls == [] and reply.request_id is None
    request = fake_http.requests[0]
    assert (request.method, request.path, request.json()["stream"]) == ("POST", "/api/chat", False)


async def test_stream_yields_text_pieces_then_the_whole_response(fake_http: FakeHTTPServer) -> None:
    """Each NDJSON content piece is a TextDelta; the last event carries text and usage."""
    text = "Streaming answers arrive piece by piece."
    fake_http.enqueue(fake.text_reply(text, usage=Usage(40, 9), model="qwen3:4b"))
    events = await collect(fake.make_provider(fake_http))
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    assert deltas == [text[i : i + 4] for i in range(0, len(text), 4)]
    response = final(events)
    assert (response.text, response.usage, response.model) == (text, Usage(40, 9), "qwen3:4b")
    assert fake_http.requests[0].json()["stream"] is True


async def test_lines_split_or_joined_across_http_chunks_are_parsed(
    fake_http: FakeHTTPServer,
) -> None:
    """NDJSON is read by line, not by HTTP chunk: split and packed lines both work."""
    first, second, last = (
        fake.line(o) for o in (fake.chunk("Hel"), fake.chunk("lo"), fake.final())
    )
    fake_http.enqueue(Reply.stream([first[:10], first[10:] + second, b"\n" + last], fake.NDJSON))
    events = await collect(fake.make_provider(fake_http))
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Hel", "lo"]
    assert final(events).text == "Hello"


@pytest.mark.parametrize(
    ("done_reason", "stop_reason"),
    [("stop", "end_turn"), ("length", "max_tokens"), ("load", "end_turn")],
)
async def test_done_reason_maps_to_stop_reason(
    fake_http: FakeHTTPServer, done_reason: str, stop_reason: str
) -> None:
    """done_reason "length" (num_predict reached) is max_tokens; other reasons end the turn."""
    fake_http.enqueue(fake.reply("Cut", [], stream=True, done_reason=done_reason))
    assert final(await collect(fake.make_provider(fake_http))).stop_reason == stop_reason


# -- tool calls ------------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [True, False])
async def test_tool_calls_keep_wire_ids_and_report_tool_use(
    fake_http: FakeHTTPServer, stream: bool
) -> None:
    """Calls with ids keep them; done_reason "stop" after tool calls still means tool_use."""
    calls: list[tuple[str, str, dict[str, Any]]] = [
        ("call_k3x9", "search_notes", {"query": "kafka streams", "limit": 5}),
        ("call_p2m7", "read_note", {"path": "Projects/日本語.md"}),
    ]
    fake_http.enqueue(fake.tool_reply(calls, text="Looking.", stream=stream))
    provider = fake.make_provider(fake_http)
    if stream:
        events = await collect(provider, tools=[SEARCH, READ])
        assert [e for e in events if isinstance(e, ToolCallDelta)] == [
            ToolCallDelta(0, "call_k3x9", "search_notes", '{"query": "kafka streams", "limit": 5}'),
            ToolCallDelta(1, "call_p2m7", "read_note", '{"path": "Projects/日本語.md"}'),
        ]
        reply = final(events)
    else:
        reply = await provider.chat(HELLO, model="m", tools=[SEARCH, READ])
    assert reply.tool_calls == [ToolCall(i, n, a) for i, n, a in calls]
    assert (reply.text, reply.stop_reason) == ("Looking.", "tool_use")


async def test_several_id_less_calls_in_one_line_get_unique_ids(fake_http: FakeHTTPServer) -> None:
    """Two calls on one line without ids get distinct call_<uuid hex> ids and indexes 0, 1."""
    calls = [("", "search_notes", {"query": "a"}), ("", "search_notes", {"query": "b"})]
    fake_http.enqueue(fake.ndjson(fake.chunk("", calls), fake.final()))
    events = await collect(fake.make_provider(fake_http), tools=[SEARCH])
    deltas = [e for e in events if isinstance(e, ToolCallDelta)]
    reply = final(events)
    assert [d.index for d in deltas] == [0, 1]
    assert [d.id for d in deltas] == [c.id for c in reply.tool_calls]
    assert all(GENERATED_ID.match(c.id) for c in reply.tool_calls)
    assert len({c.id for c in reply.tool_calls}) == 2
    assert [c.arguments for c in reply.tool_calls] == [{"query": "a"}, {"query": "b"}]


@pytest.mark.parametrize(
    ("arguments", "expected", "error_part"),
    [
        ('{"query": "x"}', {"query": "x"}, None),
        ('{"query": "x"', {}, "not valid JSON"),
        ("[1, 2]", {}, "must be a JSON object"),
        ([1, 2], {}, "must be a JSON object, got list"),
        (None, {}, None),
    ],
)
async def test_non_object_arguments_set_parse_error(
    fake_http: FakeHTTPServer, arguments: Any, expected: dict[str, Any], error_part: str | None
) -> None:
    """String arguments are parsed like OpenAI's; anything but an object sets parse_error."""
    fake_http.enqueue(fake.tool_reply([("c1", "search_notes", arguments)], stream=False))
    (call,) = (await fake.make_provider(fake_http).chat(HELLO, model="m")).tool_calls
    assert call.arguments == expected
    if error_part is None:
        assert call.parse_error is None
    else:
        assert call.parse_error is not None and error_part in call.parse_error


# -- request body ----------------------------------------------------------------------------


async def test_request_body_for_a_multi_round_history(fake_http: FakeHTTPServer) -> None:
    """System first, tools as functions, calls with object arguments, results named by call."""
    history = [
        Message.user("What do my notes say about kafka?"),
        Message.assistant(
            "Let me look.",
            [
                ToolCall("call_a", "search_notes", {"query": "kafka"}),
                ToolCall("call_b", "read_note", {"path": "a.md"}),
            ],
        ),
        Message.tool_results(
            [
                ToolResultBlock("call_a", '["a.md"]'),
                ToolResultBlock("call_b", "gone", is_error=True),
            ]
        ),
        Message.assistant(tool_calls=[ToolCall("call_c", "read_note", {"path": "b.md"})]),
        Message.tool_results([ToolResultBlock("call_c", "# B")]),
        Message.assistant("B mentions kafka."),
        Message.user("Thanks!"),
    ]
    fake_http.enqueue(fake.text_reply("You're welcome.", stream=False))
    provider = fake.make_provider(fake_http)
    await provider.chat(
        history, model="llama3.1:8b", system="Be brief.", tools=[SEARCH], max_tokens=77
    )
    assert fake_http.requests[0].json() == {
        "model": "llama3.1:8b",
        "stream": False,
        "options": {"num_predict": 77},
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "What do my notes say about kafka?"},
            {
                "role": "assistant",
                "content": "Let me look.",
                "tool_calls": [
                    {"function": {"name": "search_notes", "arguments": {"query": "kafka"}}},
                    {"function": {"name": "read_note", "arguments": {"path": "a.md"}}},
                ],
            },
            {"role": "tool", "content": '["a.md"]', "tool_name": "search_notes"},
            {"role": "tool", "content": "Error: gone", "tool_name": "read_note"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"function": {"name": "read_note", "arguments": {"path": "b.md"}}}],
            },
            {"role": "tool", "content": "# B", "tool_name": "read_note"},
            {"role": "assistant", "content": "B mentions kafka."},
            {"role": "user", "content": "Thanks!"},
        ],
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "search_notes",
                    "description": "Search the vault",
                    "parameters": dict(SEARCH.input_schema),
                },
            },
        ],
    }


async def test_forced_tool_choice_is_not_sent(fake_http: FakeHTTPServer) -> None:
    """Ollama has no tool_choice field: a forced tool leaves the body as without one."""
    fake_http.enqueue(fake.tool_reply([("c1", "search_notes", {"query": "x"})], stream=False))
    await fake.make_provider(fake_http).chat(
        HELLO, model="m", tools=[SEARCH], tool_choice="search_notes"
    )
    body = fake_http.requests[0].json()
    assert set(body) == {"model", "messages", "stream", "options", "tools"}
    assert fake.forced_tool(body) is None


async def test_no_tools_and_no_system_leave_them_out(fake_http: FakeHTTPServer) -> None:
    """Without tools or a system prompt the body has neither."""
    fake_http.enqueue(fake.text_reply("ok", stream=False))
    await fake.make_provider(fake_http).chat(HELLO, model="m")
    body = fake_http.requests[0].json()
    assert "tools" not in body and body["messages"] == [{"role": "user", "content": "hello"}]


# -- list_models and the client --------------------------------------------------------------


async def test_list_models_reads_api_tags(fake_http: FakeHTTPServer) -> None:
    """list_models GETs /api/tags and returns the model names in order."""
    fake_http.enqueue(
        Reply.json({"models": [{"name": "llama3.1:8b", "size": 1}, {"name": "qwen3:4b"}]})
    )
    models = await fake.make_provider(fake_http).list_models()
    assert [m.id for m in models] == ["llama3.1:8b", "qwen3:4b"]
    assert (fake_http.requests[0].method, fake_http.requests[0].path) == ("GET", "/api/tags")


async def test_list_models_without_a_model_list_is_invalid_response(
    fake_http: FakeHTTPServer,
) -> None:
    """A server that is not Ollama answering /api/tags gives invalid_response naming the URL."""
    fake_http.enqueue(Reply.json({"object": "list", "data": []}))
    with pytest.raises(LLMError) as caught:
        await fake.make_provider(fake_http).list_models()
    assert caught.value.code == "invalid_response" and fake_http.url in str(caught.value)


# -- errors ----------------------------------------------------------------------------------

ERROR_TABLE = [
    (401, "unauthorized", None, "auth_error", False),
    (403, "forbidden", None, "auth_error", False),
    (429, "too many requests", None, "rate_limit", True),
    (429, "You exceeded your current quota", "insufficient_quota", "quota_exceeded", False),
    (402, "usage limit reached", None, "quota_exceeded", False),
    (500, "the model failed to generate a response", None, "server_error", True),
    (502, "cloud model unreachable", None, "server_error", True),
    (503, fake.BUSY, None, "overloaded", True),
    (529, "overloaded", None, "overloaded", True),
    (400, "invalid JSON", None, "invalid_request", False),
    (404, "not found", None, "invalid_request", False),
    (413, "request too large", None, "invalid_request", False),
    (422, "unprocessable", None, "invalid_request", False),
    (499, "request canceled", None, "cancelled", False),
    (418, "I'm a teapot", None, "unknown", False),
]


@pytest.mark.parametrize(("status", "text", "error_type", "code", "retryable"), ERROR_TABLE)
@pytest.mark.parametrize("stream", [False, True])
async def test_http_errors_follow_the_error_table(
    fake_http: FakeHTTPServer,
    status: int,
    text: str,
    error_type: str | None,
    code: str,
    retryable: bool,
    stream: bool,
) -> None:
    """Each status becomes its code; retryable ones are tried max_attempts (3) times."""
    fake_http.enqueue(*[fake.error_reply(status, text, error_type=error_type)] * 3)
    err = await failure(fake.make_provider(fake_http), stream=stream)
    assert (err.code, err.retryable, err.status, err.provider) == (
        code,
        retryable,
        status,
        "Ollama",
    )
    assert len(fake_http.requests) == (3 if retryable else 1)
    message = str(err)
    assert message.startswith("Ollama ") and f"({status})" in message and text in message
    assert message.endswith(".") and message.count("; ") == 1


async def test_error_body_that_is_not_json_keeps_its_status(fake_http: FakeHTTPServer) -> None:
    """A proxy's HTML 502 is a retried server_error quoting its first line."""
    html = Reply(502, {"content-type": "text/html"}, b"<html>Bad gateway</html>\n<body/>")
    fake_http.enqueue(html, html)
    err = await failure(fake.make_provider(fake_http, max_attempts=2))
    assert (err.code, err.status, len(fake_http.requests)) == ("server_error", 502, 2)
    assert "<html>Bad gateway</html>" in str(err) and "<body/>" not in str(err)


@pytest.mark.parametrize(
    "text", ["model 'qwen9' not found", 'model "qwen9" not found, try pulling it first']
)
async def test_missing_model_tells_the_pull_command(fake_http: FakeHTTPServer, text: str) -> None:
    """A 404 for an unknown model says exactly which `ollama pull` fixes it."""
    fake_http.enqueue(fake.error_reply(404, text))
    err = await failure(fake.make_provider(fake_http))
    assert err.code == "invalid_request" and not err.retryable
    assert (
        str(err)
        == f"Ollama refused the request (404): {text}; download it with `ollama pull qwen9`."
    )


async def test_unauthorized_says_to_sign_in(fake_http: FakeHTTPServer) -> None:
    """A 401 (a cloud model without sign-in) points at `ollama signin`, not an API key."""
    fake_http.enqueue(fake.error_reply(401, "unauthorized"))
    assert "`ollama signin`" in str(await failure(fake.make_provider(fake_http)))


async def test_refused_connection_says_how_to_start_ollama() -> None:
    """Nothing listening: a retried network_error naming the URL and `ollama serve`."""
    async with FakeHTTPServer() as closed:
        url = closed.url
    provider = OllamaProvider(base_url=url + "/", max_attempts=2, backoff_base=0.001)
    err = await failure(provider, stream=True)
    assert (err.code, err.retryable) == ("network_error", True)
    assert str(err) == f"Ollama is not reachable at {url}: start it with `ollama serve`."
    with pytest.raises(LLMError) as caught:
        await provider.list_models()
    assert caught.value.code == "network_error"


async def test_connection_reset_is_retried(fake_http: FakeHTTPServer) -> None:
    """A connection torn down before the answer is network_error, and the retry succeeds."""
    fake_http.enqueue(Reply(reset=True), fake.text_reply("second try"))
    events = await collect(fake.make_provider(fake_http))
    assert final(events).text == "second try" and len(fake_http.requests) == 2


async def test_repeated_resets_fail_as_a_dropped_connection(fake_http: FakeHTTPServer) -> None:
    """Resets on every attempt end in network_error saying Ollama dropped the connection."""
    fake_http.enqueue(*[Reply(reset=True)] * 3)
    err = await failure(fake.make_provider(fake_http))
    assert (err.code, len(fake_http.requests)) == ("network_error", 3)
    assert "dropped the connection" in str(err)


async def test_retries_back_off_and_log_one_info_line_each(
    fake_http: FakeHTTPServer, caplog: pytest.LogCaptureFixture
) -> None:
    """Two 500s then success: three requests and two INFO retry lines naming Ollama."""
    caplog.set_level(logging.INFO, logger="llm_service.providers.base")
    fake_http.enqueue(
        fake.error_reply(500), fake.error_reply(500), fake.text_reply("ok", stream=False)
    )
    reply = await fake.make_provider(fake_http).chat(HELLO, model="m")
    assert reply.text == "ok" and len(fake_http.requests) == 3
    lines = [r.getMessage() for r in caplog.records if r.name == "llm_service.providers.base"]
    assert [r.levelno for r in caplog.records if r.name == "llm_service.providers.base"] == [
        logging.INFO
    ] * 2
    assert lines[0].startswith("Ollama call failed (attempt 1/3, server_error)")
    assert lines[1].startswith("Ollama call failed (attempt 2/3, server_error)")


async def test_retry_after_is_honoured(fake_http: FakeHTTPServer) -> None:
    """A 429 with Retry-After: 0.05 waits at least that long before the retry."""
    fake_http.enqueue(
        fake.error_reply(429, "slow down", headers={"retry-after": "0.05"}),
        fake.text_reply("ok", stream=False),
    )
    started = time.monotonic()
    reply = await fake.make_provider(fake_http).chat(HELLO, model="m")
    assert reply.text == "ok" and time.monotonic() - started >= 0.05
    assert len(fake_http.requests) == 2


async def test_retry_after_over_a_minute_fails_at_once(fake_http: FakeHTTPServer) -> None:
    """Retry-After: 120 fails at once: one request, rate_limit, retry_after and the wait told."""
    fake_http.enqueue(fake.error_reply(429, "slow down", headers={"retry-after": "120"}))
    err = await failure(fake.make_provider(fake_http))
    assert (err.code, err.retry_after, len(fake_http.requests)) == ("rate_limit", 120.0, 1)
    assert str(err) == "Ollama rate limit reached (429): slow down; retry in 120 s."


@pytest.mark.parametrize(
    ("error", "code"),
    [
        ("an error was encountered while running the model", "server_error"),
        (fake.BUSY, "overloaded"),
    ],
)
async def test_error_line_after_text_raises_without_retry(
    fake_http: FakeHTTPServer, error: str, code: str
) -> None:
    """An error line after text was shown raises its code; the half answer is not restarted."""
    fake_http.enqueue(fake.midstream_error_reply("Partial answer", error), fake.text_reply("again"))
    seen: list[str] = []
    with pytest.raises(LLMError) as caught:
        async for event in fake.make_provider(fake_http).stream(HELLO, model="m"):
            if isinstance(event, TextDelta):
                seen.append(event.text)
    assert "".join(seen) == "Partial answer" and len(fake_http.requests) == 1
    assert (caught.value.code, caught.value.status) == (code, None)
    assert error in str(caught.value)


async def test_error_line_before_the_first_event_is_retried(fake_http: FakeHTTPServer) -> None:
    """A stream whose first line is an error is retried like a failed call."""
    fake_http.enqueue(fake.early_error_reply(fake.BUSY), fake.text_reply("second try"))
    events = await collect(fake.make_provider(fake_http))
    assert final(events).text == "second try" and len(fake_http.requests) == 2


@pytest.mark.parametrize(
    ("chunks", "reason"),
    [
        ([b"{not json\n"], "a line is not JSON"),
        ([b"[1, 2]\n"], "expected a JSON object, got list"),
        ([fake.line({"message": "hi", "done": False})], "`message` is not an object"),
        ([fake.line(fake.chunk("", [("c1", "", {})]))], "a tool call has no function name"),
        ([fake.line({"message": {"tool_calls": [{"name": "x"}]}})], "a tool call has no function"),
        ([fake.line(fake.chunk("Cut off"))], "the stream ended before its final `done` line"),
    ],
)
async def test_malformed_streams_are_invalid_response(
    fake_http: FakeHTTPServer, chunks: list[Any], reason: str
) -> None:
    """Bytes that are not Ollama's NDJSON give invalid_response, not retried."""
    fake_http.enqueue(Reply.stream(chunks, fake.NDJSON), fake.text_reply("never asked"))
    err = await failure(fake.make_provider(fake_http), stream=True)
    assert (err.code, err.retryable, len(fake_http.requests)) == ("invalid_response", False, 1)
    assert str(err) == (
        f"Ollama sent a response that could not be read ({reason}); "
        f"check that {fake_http.url} is an Ollama server."
    )


async def test_html_page_instead_of_json_is_invalid_response(fake_http: FakeHTTPServer) -> None:
    """A base URL pointing at a web page gives invalid_response on a plain chat too."""
    fake_http.enqueue(Reply(200, {"content-type": "text/html"}, b"<html>It works!</html>"))
    assert (await failure(fake.make_provider(fake_http))).code == "invalid_response"


async def test_a_silent_server_times_out_and_is_retried(fake_http: FakeHTTPServer) -> None:
    """No byte within the timeout is code timeout, retried, naming the timeout in seconds."""
    fake_http.enqueue(Reply.stream([HANG]), Reply.stream([HANG]))
    err = await failure(fake.make_provider(fake_http, max_attempts=2, timeout=0.2), stream=True)
    assert (err.code, err.retryable, len(fake_http.requests)) == ("timeout", True, 2)
    assert "within 0.2 s" in str(err)
