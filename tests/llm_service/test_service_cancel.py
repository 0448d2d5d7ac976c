"""LLMService failure and cancellation: errors propagate, history is restored, streams close."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import Any

import pytest

from llm_service import (
    LLMError,
    LLMResponse,
    LLMService,
    Message,
    ResponseComplete,
    ScriptedProvider,
    TextDelta,
    ToolCall,
)
from llm_service.events import StreamEvent
from llm_service.providers.base import ChatRequest


class _HangingStream(ScriptedProvider):
    """Streams "partial" then hangs until closed; records that its stream was closed."""

    def __init__(self) -> None:
        super().__init__()
        self.streaming = asyncio.Event()
        self.closed = asyncio.Event()

    async def _stream_once(self, request: ChatRequest) -> AsyncGenerator[StreamEvent, None]:
        self.requests.append(request)
        try:
            yield TextDelta("partial")
            self.streaming.set()
            await asyncio.Event().wait()
            yield ResponseComplete(LLMResponse(text="never"))
        finally:
            self.closed.set()


async def _answered(provider: ScriptedProvider) -> LLMService:
    """A service that already holds one finished exchange."""
    provider.enqueue_text("earlier answer")
    svc = LLMService(provider, model="claude-sonnet-5-5")
    svc.register_tool("lookup", "d", {"type": "object"}, lambda a: "found")
    await svc.process_message("earlier question")
    return svc


BEFORE = [Message.user("earlier question"), Message.assistant("earlier answer")]


async def test_provider_errors_propagate_unchanged_and_history_is_restored() -> None:
    """An LLMError leaves the history as before, so the same message can be sent again."""
    provider = ScriptedProvider()
    svc = await _answered(provider)
    error = LLMError("Scripted overloaded (529).", code="overloaded", provider="Scripted")
    provider.enqueue(error)
    with pytest.raises(LLMError) as caught:
        await svc.process_message("again?")
    assert caught.value is error
    assert svc.history == BEFORE
    provider.enqueue_text("now it works")
    await svc.process_message("again?")
    assert svc.history == [*BEFORE, Message.user("again?"), Message.assistant("now it works")]


async def test_an_error_after_tool_rounds_restores_the_history() -> None:
    """A failure in a later round drops the whole unfinished exchange."""
    provider = ScriptedProvider()
    svc = await _answered(provider)
    provider.enqueue_tool_call("lookup", {})
    provider.enqueue(LLMError("Scripted server error (500).", code="server_error"))
    with pytest.raises(LLMError):
        await svc.process_message("use a tool")
    assert svc.history == BEFORE


async def test_an_error_mid_stream_restores_the_history() -> None:
    """A stream failing after some text raises; the history is as before the turn."""
    error = LLMError("Scripted timeout.", code="timeout")

    class FailingMidway(ScriptedProvider):
        async def _stream_once(self, request: ChatRequest) -> AsyncGenerator[StreamEvent, None]:
            if self.requests:
                yield TextDelta("partial")
                raise error
            async for event in super()._stream_once(request):
                yield event

    provider = FailingMidway()
    svc = LLMService(provider, model="m")
    provider.enqueue_text("earlier answer")
    async for _ in svc.stream_message("earlier question"):
        pass
    received = []
    with pytest.raises(LLMError) as caught:
        async for event in svc.stream_message("q"):
            received.append(event)
    assert caught.value is error and received == [TextDelta("partial")]
    assert svc.history == BEFORE


async def test_cancelling_process_message_restores_history_and_releases_the_lock() -> None:
    """A cancelled turn raises CancelledError, keeps the history and lets the next turn run."""
    provider = ScriptedProvider()
    svc = await _answered(provider)
    called = asyncio.Event()

    async def hang(request: ChatRequest) -> LLMResponse:
        called.set()
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    provider.enqueue(hang)
    task = asyncio.create_task(svc.process_message("slow one"))
    await asyncio.wait_for(called.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert svc.history == BEFORE
    provider.enqueue_text("fast one")
    assert (await asyncio.wait_for(svc.process_message("next"), 5)).text == "fast one"


async def test_cancelling_a_stream_closes_the_provider_stream() -> None:
    """Cancelling the consuming task closes the provider stream at once; history unchanged."""
    provider = _HangingStream()
    svc = await _answered(provider)
    received: list[object] = []

    async def consume() -> None:
        async for event in svc.stream_message("stream it"):
            received.append(event)

    task = asyncio.create_task(consume())
    await asyncio.wait_for(provider.streaming.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert provider.closed.is_set()
    assert received == [TextDelta("partial")]
    assert svc.history == BEFORE


async def test_stopping_iteration_early_closes_the_stream_and_restores_history() -> None:
    """A consumer that closes the generator after the first delta leaves no trace."""
    provider = _HangingStream()
    svc = await _answered(provider)
    async with aclosing(svc.stream_message("stream it")) as events:
        async for event in events:
            assert event == TextDelta("partial")
            break
    assert provider.closed.is_set()
    assert svc.history == BEFORE
    provider.enqueue_text("next answer")
    assert (await asyncio.wait_for(svc.process_message("next"), 5)).text == "next answer"


async def test_stopping_right_after_the_reply_keeps_the_exchange() -> None:
    """The history is committed before ResponseComplete is yielded."""
    provider = ScriptedProvider()
    svc = await _answered(provider)
    provider.enqueue_text("complete answer")
    async with aclosing(svc.stream_message("q")) as events:
        async for event in events:
            if isinstance(event, ResponseComplete):
                break
    assert svc.history[-1] == Message.assistant("complete answer")


async def test_cancelling_during_a_tool_run_restores_history() -> None:
    """Cancellation while a tool runs propagates and discards the partial exchange."""
    running = asyncio.Event()

    async def stuck(arguments: dict[str, Any]) -> str:
        running.set()
        await asyncio.Event().wait()
        return "never"

    provider = ScriptedProvider()
    svc = await _answered(provider)
    svc.register_tool("stuck", "d", {"type": "object"}, stuck)
    provider.enqueue_tool_call("stuck", {})
    task = asyncio.create_task(svc.process_message("run stuck"))
    await asyncio.wait_for(running.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert svc.history == BEFORE


async def test_cancelling_while_waiting_for_approval_restores_history() -> None:
    """Cancellation during confirm() propagates; nothing is recorded."""
    asking = asyncio.Event()

    async def confirm(call: ToolCall) -> bool:
        asking.set()
        await asyncio.Event().wait()
        return True

    provider = ScriptedProvider()
    svc = await _answered(provider)
    svc.confirm = confirm
    svc.register_tool("write", "d", {"type": "object"}, lambda a: "ok", permission="ask")
    provider.enqueue_tool_call("write", {})
    task = asyncio.create_task(svc.process_message("write"))
    await asyncio.wait_for(asking.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert svc.history == BEFORE


async def test_a_stream_without_a_final_response_is_an_error() -> None:
    """A provider stream ending without ResponseComplete raises invalid_response."""

    class Truncated(ScriptedProvider):
        async def _stream_once(self, request: ChatRequest) -> AsyncGenerator[StreamEvent, None]:
            yield TextDelta("half")

    svc = LLMService(Truncated(), model="m")
    with pytest.raises(LLMError) as caught:
        async for _ in svc.stream_message("q"):
            pass
    assert caught.value.code == "invalid_response"
    assert svc.history == []
