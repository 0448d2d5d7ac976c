"""Every provider, through its real SDK/HTTP client, against a fake that speaks its wire format."""

from __future__ import annotations

import asyncio
import importlib
import logging
import subprocess
import sys
import time
from types import ModuleType
from typing import Any

import pytest

from llm_service import LLMError, ResponseComplete, TextDelta, ToolCallDelta
from tests.fakes.http import HANG, RESET, FakeHTTPServer, Reply
from tests.fakes.specs import HELLO, SEARCH

PROVIDERS = ["anthropic", "openai", "ollama"]


@pytest.fixture(params=PROVIDERS)
def wire(request: pytest.FixtureRequest) -> ModuleType:
    """The fake-API module of one provider."""
    return importlib.import_module(f"tests.fakes.{request.param}")


async def _collect(provider: Any, **kw: Any) -> list[Any]:
    return [event async for event in provider.stream(HELLO, model="m", **kw)]


async def test_chat_returns_text_and_usage(wire: ModuleType, fake_http: FakeHTTPServer) -> None:
    """A non-streaming call returns the text, end_turn and the token counts."""
    fake_http.enqueue(wire.text_reply("Hello from the vault.", stream=False))
    reply = await wire.make_provider(fake_http).chat(HELLO, model="m")
    assert reply.text == "Hello from the vault."
    assert reply.stop_reason == "end_turn"
    assert reply.usage.input_tokens > 0 and reply.usage.output_tokens > 0


async def test_stream_deltas_add_up_to_the_final_text(
    wire: ModuleType, fake_http: FakeHTTPServer
) -> None:
    """Streaming yields several text deltas, then one ResponseComplete with the same text."""
    text = "Streaming answers arrive piece by piece."
    fake_http.enqueue(wire.text_reply(text))
    events = await _collect(wire.make_provider(fake_http))
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    assert len(deltas) > 1 and "".join(deltas) == text
    assert isinstance(events[-1], ResponseComplete) and events[-1].response.text == text


@pytest.mark.parametrize("stream", [True, False])
async def test_tool_calls_are_assembled(
    wire: ModuleType, fake_http: FakeHTTPServer, stream: bool
) -> None:
    """Two tool calls with arguments split across deltas come back whole and in order."""
    calls = [
        ("call_a", "search_notes", {"query": "kafka streams", "limit": 5}),
        ("call_b", "read_note", {"path": "Projects/日本語.md"}),
    ]
    fake_http.enqueue(wire.tool_reply(calls, stream=stream))
    provider = wire.make_provider(fake_http)
    if stream:
        events = await _collect(provider, tools=[SEARCH])
        assert any(isinstance(e, ToolCallDelta) for e in events)
        reply = events[-1].response
    else:
        reply = await provider.chat(HELLO, model="m", tools=[SEARCH])
    assert reply.stop_reason == "tool_use"
    assert [(c.name, c.arguments) for c in reply.tool_calls] == [(n, a) for _, n, a in calls]
    assert all(c.id for c in reply.tool_calls) and all(
        c.parse_error is None for c in reply.tool_calls
    )


ERROR_TABLE = [
    (401, None, "auth_error", False),
    (403, None, "auth_error", False),
    (429, None, "rate_limit", True),
    (500, None, "server_error", True),
    (502, None, "server_error", True),
    (529, None, "overloaded", True),
    (400, None, "invalid_request", False),
    (404, None, "invalid_request", False),
    (413, None, "invalid_request", False),
    (422, None, "invalid_request", False),
]


@pytest.mark.parametrize(("status", "error_type", "code", "retryable"), ERROR_TABLE)
async def test_http_errors_map_to_codes(
    wire: ModuleType,
    fake_http: FakeHTTPServer,
    status: int,
    error_type: str | None,
    code: str,
    retryable: bool,
) -> None:
    """Each HTTP error becomes its LLMError code; retryable ones are tried max_attempts times."""
    for _ in range(3):
        fake_http.enqueue(wire.error_reply(status, "Something is off", error_type=error_type))
    with pytest.raises(LLMError) as caught:
        await wire.make_provider(fake_http).chat(HELLO, model="m")
    err = caught.value
    assert (err.code, err.retryable, err.status) == (code, retryable, status)
    assert len(fake_http.requests) == (3 if retryable else 1)
    assert str(err).count(".") >= 1 and err.provider in str(err) and str(status) in str(err)


async def test_quota_exhaustion_is_not_retried(wire: ModuleType, fake_http: FakeHTTPServer) -> None:
    """Running out of credit fails at once with quota_exceeded."""
    fake_http.enqueue(wire.quota_reply())
    with pytest.raises(LLMError) as caught:
        await wire.make_provider(fake_http).chat(HELLO, model="m")
    assert caught.value.code == "quota_exceeded" and not caught.value.retryable
    assert len(fake_http.requests) == 1


async def test_retry_after_is_honoured(wire: ModuleType, fake_http: FakeHTTPServer) -> None:
    """A 429 with Retry-After waits at least that long before the retry that succeeds."""
    fake_http.enqueue(
        wire.error_reply(429, "slow down", headers={"retry-after-ms": "150"}),
        wire.text_reply("ok", stream=False),
    )
    started = time.monotonic()
    reply = await wire.make_provider(fake_http).chat(HELLO, model="m")
    assert reply.text == "ok" and time.monotonic() - started >= 0.15
    assert len(fake_http.requests) == 2


async def test_long_retry_after_fails_at_once(wire: ModuleType, fake_http: FakeHTTPServer) -> None:
    """Retry-After above 60 s is not waited for: rate_limit with retry_after set."""
    fake_http.enqueue(wire.error_reply(429, "slow down", headers={"retry-after": "120"}))
    with pytest.raises(LLMError) as caught:
        await wire.make_provider(fake_http).chat(HELLO, model="m")
    assert caught.value.code == "rate_limit" and caught.value.retry_after == 120.0
    assert len(fake_http.requests) == 1


async def test_retries_are_logged(
    wire: ModuleType, fake_http: FakeHTTPServer, caplog: pytest.LogCaptureFixture
) -> None:
    """Each retry leaves one INFO line with the attempt and code."""
    caplog.set_level(logging.INFO, logger="llm_service.providers.base")
    fake_http.enqueue(wire.error_reply(500), wire.text_reply("ok", stream=False))
    await wire.make_provider(fake_http).chat(HELLO, model="m")
    assert [r.getMessage() for r in caplog.records if "attempt 1/3, server_error" in r.getMessage()]


async def test_error_mid_stream_raises_without_retry(
    wire: ModuleType, fake_http: FakeHTTPServer
) -> None:
    """An error after text was shown raises; the half answer is never silently restarted."""
    fake_http.enqueue(wire.midstream_error_reply("Partial answer"), wire.text_reply("again"))
    seen: list[str] = []
    with pytest.raises(LLMError) as caught:
        async for event in wire.make_provider(fake_http).stream(HELLO, model="m"):
            if isinstance(event, TextDelta):
                seen.append(event.text)
    assert "".join(seen) == "Partial answer"
    assert caught.value.code == "overloaded"
    assert len(fake_http.requests) == 1


async def test_error_before_first_event_is_retried(
    wire: ModuleType, fake_http: FakeHTTPServer
) -> None:
    """A stream that fails before showing anything is retried like a call."""
    fake_http.enqueue(wire.early_error_reply(), wire.text_reply("second try"))
    events = await _collect(wire.make_provider(fake_http))
    assert events[-1].response.text == "second try"
    assert len(fake_http.requests) == 2


async def test_connection_reset_is_a_retried_network_error(
    wire: ModuleType, fake_http: FakeHTTPServer
) -> None:
    """A reset before the response is network_error and retried."""
    fake_http.enqueue(Reply(reset=True), Reply(reset=True), Reply(reset=True))
    with pytest.raises(LLMError) as caught:
        await wire.make_provider(fake_http).chat(HELLO, model="m")
    assert caught.value.code == "network_error" and caught.value.retryable
    assert len(fake_http.requests) == 3


async def test_reset_mid_stream_raises_network_error(
    wire: ModuleType, fake_http: FakeHTTPServer
) -> None:
    """A connection torn down mid-stream ends the stream with network_error."""
    fake_http.enqueue(Reply.stream([*wire.hanging_reply("Hel"), RESET]))
    with pytest.raises(LLMError) as caught:
        await _collect(wire.make_provider(fake_http))
    assert caught.value.code == "network_error"


async def test_malformed_stream_is_invalid_response(
    wire: ModuleType, fake_http: FakeHTTPServer
) -> None:
    """Bytes that are not the API's format give invalid_response, not a crash."""
    fake_http.enqueue(wire.malformed_reply())
    with pytest.raises(LLMError) as caught:
        await _collect(wire.make_provider(fake_http, max_attempts=1))
    assert caught.value.code == "invalid_response"


async def test_timeout_is_reported(wire: ModuleType, fake_http: FakeHTTPServer) -> None:
    """A server that stops answering gives code timeout."""
    fake_http.enqueue(Reply.stream([HANG]))
    with pytest.raises(LLMError) as caught:
        await _collect(wire.make_provider(fake_http, max_attempts=1, timeout=0.3))
    assert caught.value.code == "timeout" and caught.value.retryable


async def test_cancelling_closes_the_http_request(
    wire: ModuleType, fake_http: FakeHTTPServer
) -> None:
    """Cancelling the consumer drops the connection at once and re-raises CancelledError."""
    fake_http.enqueue(Reply.stream([*wire.hanging_reply("Thinking"), HANG]))
    started = asyncio.Event()

    async def consume() -> None:
        async for event in wire.make_provider(fake_http).stream(HELLO, model="m"):
            if isinstance(event, TextDelta):
                started.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(started.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.wait_for(fake_http.disconnected.wait(), 2)


async def test_forced_tool_choice_reaches_the_api(
    wire: ModuleType, fake_http: FakeHTTPServer
) -> None:
    """tool_choice names the tool the model must call, in the API's own shape (if it has one)."""
    fake_http.enqueue(wire.tool_reply([("c1", "search_notes", {"query": "x"})], stream=False))
    await wire.make_provider(fake_http).chat(
        HELLO, model="m", tools=[SEARCH], tool_choice="search_notes"
    )
    expected = "search_notes" if wire.SUPPORTS_TOOL_CHOICE else None
    assert wire.forced_tool(fake_http.requests[0].json()) == expected


async def test_aclose_releases_the_client_and_a_later_call_reopens_it(
    wire: ModuleType, fake_http: FakeHTTPServer
) -> None:
    """After aclose the provider still works: its next call builds a new client."""
    fake_http.enqueue(wire.text_reply("one", stream=False), wire.text_reply("two", stream=False))
    provider = wire.make_provider(fake_http)
    assert (await provider.chat(HELLO, model="m")).text == "one"
    await provider.aclose()
    assert (await provider.chat(HELLO, model="m")).text == "two"
    await provider.aclose()


@pytest.mark.parametrize(
    ("cls", "sdk"),
    [("AnthropicProvider", "anthropic"), ("OpenAIProvider", "openai"), ("OllamaProvider", "httpx")],
)
def test_provider_import_does_not_load_the_sdk(cls: str, sdk: str) -> None:
    """Naming a provider class costs nothing: its SDK loads on the first call."""
    code = f"import sys, llm_service; llm_service.{cls}; print({sdk!r} in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize(
    ("cls", "sdk"),
    [("AnthropicProvider", "anthropic"), ("OpenAIProvider", "openai"), ("OllamaProvider", "httpx")],
)
def test_warm_up_imports_the_sdk_before_the_first_call(cls: str, sdk: str) -> None:
    """warm_up() (which serve calls once started) loads the SDK in a thread, not on a call."""
    code = (
        "import asyncio, sys, llm_service\n"
        f"provider = llm_service.{cls}(model='m')\n"
        f"before = {sdk!r} in sys.modules\n"
        "asyncio.run(provider.warm_up())\n"
        f"print(before, {sdk!r} in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True"]
