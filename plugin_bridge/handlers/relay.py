"""The one relay from a model's event stream to the client's notifications.

``chat/send`` and ``command/searchSummarize`` both stream through :func:`relay`: text deltas
become ``chat/delta``, tool calls ``chat/toolCall``, tool results ``chat/toolResult``, all
tagged with the request's id; the stream is closed however the relay ends (a cancelled request
drops the provider's HTTP stream at once).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import Any

from llm_service import LLMResponse, ResponseComplete, TextDelta, ToolCallStarted, ToolResult
from plugin_bridge.wire.context import RequestContext
from plugin_bridge.wire.models import ChatDelta, ChatToolCall, ChatToolResult


async def relay(ctx: RequestContext[Any], events: AsyncGenerator[Any, None]) -> LLMResponse:
    """Forward ``events`` to the client; the final response (or RuntimeError if none came)."""
    reply = None
    async with aclosing(events) as stream:
        async for event in stream:
            if isinstance(event, TextDelta):
                await ctx.notify(
                    "chat/delta", ChatDelta(request_id=ctx.request_id, text=event.text)
                )
            elif isinstance(event, ToolCallStarted):
                call = event.call
                await ctx.notify(
                    "chat/toolCall",
                    ChatToolCall(
                        request_id=ctx.request_id,
                        id=call.id,
                        name=call.name,
                        arguments=call.arguments,
                    ),
                )
            elif isinstance(event, ToolResult):
                await ctx.notify(
                    "chat/toolResult",
                    ChatToolResult(
                        request_id=ctx.request_id,
                        id=event.call_id,
                        is_error=event.is_error,
                        content=event.content,
                    ),
                )
            elif isinstance(event, ResponseComplete):
                reply = event.response
    if reply is None:
        raise RuntimeError("the model's stream ended without a reply")
    return reply
