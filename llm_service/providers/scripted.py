"""A scripted in-memory provider for tests and demos: ``enqueue`` what the model will say."""

from __future__ import annotations

import json
from collections import deque
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any, TypeAlias

from llm_service.errors import LLMError
from llm_service.events import ResponseComplete, StreamEvent, TextDelta, ToolCallDelta
from llm_service.messages import LLMResponse, StopReason, ToolCall, Usage
from llm_service.providers.base import ChatRequest, Provider
from llm_service.providers.common import anthropic_tool

ScriptItem: TypeAlias = LLMResponse | LLMError | Callable[[ChatRequest], Awaitable[LLMResponse]]
"""A canned response, an error to raise, or a coroutine function computing the response."""


class ScriptedProvider(Provider):
    """Answers each call with the next enqueued item and records every request it received.

    >>> provider = ScriptedProvider()
    >>> provider.enqueue_tool_call("search_notes", {"query": "kafka"})
    >>> provider.enqueue_text("Kafka is mentioned in [[Reading list]].")
    """

    name = "Scripted"

    def __init__(
        self,
        *script: ScriptItem,
        model: str | None = None,
        max_attempts: int = 1,
        backoff_base: float = 0.0,
    ) -> None:
        super().__init__(model, max_attempts=max_attempts, backoff_base=backoff_base)
        self._script: deque[ScriptItem] = deque(script)
        self.requests: list[ChatRequest] = []
        self._call_ids = 0

    def enqueue(self, *items: ScriptItem) -> None:
        self._script.extend(items)

    def enqueue_text(
        self, text: str, *, stop_reason: StopReason = "end_turn", usage: Usage | None = None
    ) -> None:
        self.enqueue(
            LLMResponse(
                text=text,
                stop_reason=stop_reason,
                usage=usage or Usage(10, max(1, len(text.split()))),
                model="scripted",
            )
        )

    def enqueue_tool_call(
        self, name: str, arguments: dict[str, Any], *, text: str = "", call_id: str | None = None
    ) -> None:
        self.enqueue_tool_calls([(name, arguments)], text=text, call_ids=[call_id])

    def enqueue_tool_calls(
        self,
        calls: list[tuple[str, dict[str, Any]]],
        *,
        text: str = "",
        call_ids: list[str | None] | None = None,
    ) -> None:
        ids = call_ids or [None] * len(calls)
        tool_calls = [
            ToolCall(call_id or self._next_call_id(), name, dict(arguments))
            for (name, arguments), call_id in zip(calls, ids, strict=True)
        ]
        self.enqueue(
            LLMResponse(
                text=text,
                tool_calls=tool_calls,
                stop_reason="tool_use",
                usage=Usage(10, 5),
                model="scripted",
            )
        )

    @property
    def pending(self) -> int:
        """How many enqueued items have not been used yet."""
        return len(self._script)

    format_tool = staticmethod(anthropic_tool)

    async def _chat_once(self, request: ChatRequest) -> LLMResponse:
        self.requests.append(request)
        if not self._script:
            raise LLMError(
                "Scripted provider has no response queued: enqueue one before calling it.",
                code="invalid_request",
                provider=self.name,
            )
        item = self._script.popleft()
        if isinstance(item, LLMError):
            raise item
        if isinstance(item, LLMResponse):
            return item
        return await item(request)

    async def _stream_once(self, request: ChatRequest) -> AsyncGenerator[StreamEvent, None]:
        response = await self._chat_once(request)
        for i, word in enumerate(response.text.split(" ")):
            yield TextDelta(word if i == 0 else " " + word)
        for index, call in enumerate(response.tool_calls):
            yield ToolCallDelta(index, call.id, call.name, json.dumps(call.arguments))
        yield ResponseComplete(response)

    def _convert_error(self, exc: Exception) -> LLMError:
        return LLMError(f"Scripted provider failed: {exc}.", code="unknown", provider=self.name)

    def _next_call_id(self) -> str:
        self._call_ids += 1
        return f"call_{self._call_ids}"
