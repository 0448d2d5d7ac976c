"""Chat methods: chat/send (streams chat/delta, chat/toolCall, chat/toolResult) and chat/clear."""

from __future__ import annotations

from contextlib import aclosing

from llm_service import ResponseComplete, TextDelta, ToolCallStarted, ToolResult
from plugin_bridge.handlers.context import AppRouter, Context
from plugin_bridge.wire.models import (
    ChatClearParams,
    ChatDelta,
    ChatSendParams,
    ChatSendResult,
    ChatToolCall,
    ChatToolResult,
    EmptyResult,
    UsageModel,
)


async def send(ctx: Context, params: ChatSendParams) -> ChatSendResult:
    """Send a user message; the model may call vault tools; notifications stream the turn."""
    app = ctx.app
    app.require_provider()
    if params.conversation_id is None:
        conversation_id, service = app.conversations.start()
    else:
        conversation_id = params.conversation_id
        service = app.conversations.get(conversation_id)
    reply = None
    async with aclosing(service.stream_message(params.text)) as events:
        async for event in events:
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
    usage = reply.usage
    return ChatSendResult(
        conversation_id=conversation_id,
        text=reply.text,
        stop_reason=reply.stop_reason,
        usage=UsageModel(
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cache_read_tokens=usage.cache_read_tokens,
            cache_write_tokens=usage.cache_write_tokens,
        ),
        cost_usd=reply.cost_usd,
    )


async def clear(ctx: Context, params: ChatClearParams) -> EmptyResult:
    """Forget a conversation's messages (its id stays valid)."""
    ctx.app.conversations.get(params.conversation_id).clear_conversation()
    return EmptyResult()


def register(router: AppRouter) -> None:
    router.register("chat/send", ChatSendParams, send)
    router.register("chat/clear", ChatClearParams, clear)
