"""Messages, tool specs and call helpers the provider tests share."""

from __future__ import annotations

from typing import Any

import pytest

from llm_service import (
    LLMError,
    LLMResponse,
    Message,
    Provider,
    ResponseComplete,
    StreamEvent,
    ToolSpec,
)

HELLO = [Message.user("hello")]
SEARCH = ToolSpec(
    "search_notes",
    "Search the vault",
    {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
)
READ = ToolSpec(
    "read_note", "Read a note", {"type": "object", "properties": {"path": {"type": "string"}}}
)


async def collect(provider: Provider, **options: Any) -> list[StreamEvent]:
    """Every event of one streamed call (HELLO to model "m" unless ``options`` say otherwise)."""
    messages = options.pop("messages", HELLO)
    options.setdefault("model", "m")
    return [event async for event in provider.stream(messages, **options)]


def final(events: list[StreamEvent]) -> LLMResponse:
    """The response a stream ended with."""
    last = events[-1]
    assert isinstance(last, ResponseComplete)
    return last.response


async def reply(provider: Provider, *, stream: bool, **options: Any) -> LLMResponse:
    """The response of one call, streamed or not."""
    if stream:
        return final(await collect(provider, **options))
    messages = options.pop("messages", HELLO)
    options.setdefault("model", "m")
    return await provider.chat(messages, **options)


async def failure(provider: Provider, *, stream: bool = False, **options: Any) -> LLMError:
    """The LLMError one call (chat or stream) raises."""
    with pytest.raises(LLMError) as caught:
        await reply(provider, stream=stream, **options)
    return caught.value
