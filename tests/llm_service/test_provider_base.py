"""The Provider base: retry policy, Retry-After, stream semantics, request validation."""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncGenerator
from typing import Any

import pytest

from llm_service import LLMError, LLMResponse, ScriptedProvider, TextDelta, ToolSpec
from llm_service.events import ResponseComplete, StreamEvent
from llm_service.providers.base import ChatRequest, Provider
from tests.fakes.specs import HELLO


def _err(code: str, **kw: Any) -> LLMError:
    return LLMError(f"Scripted {code}.", code=code, provider="Scripted", **kw)  # type: ignore[arg-type]


def _provider(*script: Any, attempts: int = 3) -> ScriptedProvider:
    return ScriptedProvider(*script, max_attempts=attempts, backoff_base=0.001)


async def test_retryable_errors_are_retried_until_success() -> None:
    """A transient error is retried and the later success returned."""
    provider = _provider(_err("overloaded"), _err("server_error"), LLMResponse(text="ok"))
    reply = await provider.chat(HELLO, model="m")
    assert reply.text == "ok"
    assert len(provider.requests) == 3


async def test_attempts_are_capped_by_max_attempts() -> None:
    """After max_attempts failures the last error propagates unchanged."""
    last = _err("network_error")
    provider = _provider(_err("timeout"), _err("rate_limit"), last, LLMResponse(text="never"))
    with pytest.raises(LLMError) as caught:
        await provider.chat(HELLO, model="m")
    assert caught.value is last
    assert len(provider.requests) == 3


@pytest.mark.parametrize("code", ["auth_error", "quota_exceeded", "invalid_request", "unknown"])
async def test_permanent_errors_are_not_retried(code: str) -> None:
    """Errors that cannot succeed on retry fail after one request."""
    provider = _provider(_err(code), LLMResponse(text="never"))
    with pytest.raises(LLMError) as caught:
        await provider.chat(HELLO, model="m")
    assert caught.value.code == code and not caught.value.retryable
    assert len(provider.requests) == 1


async def test_retry_after_is_waited_at_least() -> None:
    """A Retry-After hint makes the retry wait at least that long, whatever the backoff."""
    provider = _provider(_err("rate_limit", retry_after=0.2), LLMResponse(text="ok"))
    started = time.monotonic()
    await provider.chat(HELLO, model="m")
    assert time.monotonic() - started >= 0.2


async def test_retry_after_beyond_a_minute_fails_at_once() -> None:
    """A server asking for more than 60 s is not waited for: rate_limit with retry_after set."""
    provider = _provider(_err("rate_limit", retry_after=120.0), LLMResponse(text="never"))
    with pytest.raises(LLMError) as caught:
        await provider.chat(HELLO, model="m")
    assert caught.value.code == "rate_limit" and caught.value.retry_after == 120.0
    assert len(provider.requests) == 1


@pytest.mark.parametrize("stream", [False, True])
async def test_a_failure_given_up_on_says_the_next_backoff(stream: bool) -> None:
    """After the last attempt a retryable error without a server's wait carries the wait the
    next attempt would have had; a server's own wait is kept; a permanent error gets none."""
    provider = _provider(*[_err("rate_limit") for _ in range(3)])
    with pytest.raises(LLMError) as caught:
        if stream:
            await anext(provider.stream(HELLO, model="m"))
        else:
            await provider.chat(HELLO, model="m")
    assert caught.value.retry_after == provider.next_backoff() == pytest.approx(0.004)
    said = _provider(*[_err("overloaded", retry_after=0.01) for _ in range(3)])
    with pytest.raises(LLMError) as caught:
        await said.chat(HELLO, model="m")
    assert caught.value.retry_after == 0.01
    refused = _provider(_err("invalid_request"))
    with pytest.raises(LLMError) as caught:
        await refused.chat(HELLO, model="m")
    assert caught.value.retry_after is None


def test_backoff_grows_exponentially_and_is_capped() -> None:
    """Waits double per attempt (plus at most one base of jitter) and never exceed 30 s."""
    from tenacity import RetryCallState

    provider = ScriptedProvider(backoff_base=1.0)
    waits = []
    for attempt in range(1, 9):
        state = RetryCallState(None, None, (), {})
        state.attempt_number = attempt
        waits.append(provider._wait_seconds(state))
    for n, wait in enumerate(waits[:4]):
        assert 2**n <= wait <= 2**n + 1.0
    assert max(waits) <= 30.0


async def test_each_retry_is_logged_at_info(caplog: pytest.LogCaptureFixture) -> None:
    """Every retry logs the attempt, the error code and the wait."""
    caplog.set_level(logging.INFO, logger="llm_service.providers.base")
    provider = _provider(_err("overloaded"), _err("overloaded"), LLMResponse(text="ok"))
    await provider.chat(HELLO, model="m")
    lines = [r.getMessage() for r in caplog.records if r.name == "llm_service.providers.base"]
    assert len(lines) == 2
    assert "attempt 1/3" in lines[0] and "overloaded" in lines[0] and "retrying in" in lines[0]


class _MidStreamFailure(Provider):
    """Streams some text, then fails; counts attempts."""

    name = "Flaky"

    def __init__(self, fail_before_first: int = 0) -> None:
        super().__init__(max_attempts=3, backoff_base=0.001)
        self.attempts = 0
        self.fail_before_first = fail_before_first
        self.closed = 0

    @staticmethod
    def format_tool(spec: ToolSpec) -> dict[str, Any]:
        return {"name": spec.name}

    async def _chat_once(self, request: ChatRequest) -> LLMResponse:
        raise NotImplementedError

    async def _stream_once(self, request: ChatRequest) -> AsyncGenerator[StreamEvent, None]:
        self.attempts += 1
        try:
            if self.attempts <= self.fail_before_first:
                raise _err("overloaded")
            yield TextDelta("Hel")
            raise ConnectionResetError("peer reset")
        finally:
            self.closed += 1

    def _convert_error(self, exc: Exception) -> LLMError:
        return _err("network_error")


async def test_stream_error_after_text_raises_without_retry() -> None:
    """A stream that already showed text is never silently restarted."""
    provider = _MidStreamFailure()
    seen = []
    with pytest.raises(LLMError) as caught:
        async for event in provider.stream(HELLO, model="m"):
            seen.append(event)
    assert seen == [TextDelta("Hel")]
    assert caught.value.code == "network_error"
    assert provider.attempts == 1 and provider.closed == 1


async def test_stream_error_before_first_event_is_retried() -> None:
    """Failures before anything was yielded are retried like chat."""
    provider = _MidStreamFailure(fail_before_first=2)
    seen = []
    with pytest.raises(LLMError):
        async for event in provider.stream(HELLO, model="m"):
            seen.append(event)
    assert provider.attempts == 3
    assert seen == [TextDelta("Hel")]


async def test_scripted_stream_ends_with_response_complete() -> None:
    """A stream yields text deltas that add up to the final response."""
    provider = _provider(LLMResponse(text="one two three"))
    events = [e async for e in provider.stream(HELLO, model="m")]
    assert isinstance(events[-1], ResponseComplete)
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert text == events[-1].response.text == "one two three"


async def test_tool_choice_must_name_a_given_tool() -> None:
    """Forcing a tool that is not in the request is a programming error."""
    provider = _provider(LLMResponse(text="x"))
    with pytest.raises(ValueError, match="names no tool"):
        await provider.chat(HELLO, model="m", tool_choice="save_note")


def test_invalid_retry_settings_are_refused() -> None:
    """max_attempts below 1 or a negative backoff are rejected."""
    with pytest.raises(ValueError):
        ScriptedProvider(max_attempts=0)
    with pytest.raises(ValueError):
        ScriptedProvider(backoff_base=-1)
