"""Chat methods: chat/send (streams chat/delta, chat/toolCall, chat/toolResult) and chat/clear.

A turn is the assistant's (:meth:`~plugin_bridge.app.assistant.Assistant.turn`); this module
turns the params into its request and its events into notifications."""

from __future__ import annotations

from plugin_bridge.app.turn.conversation import TurnRequest
from plugin_bridge.handlers.context import AppRouter, Context, caller_of
from plugin_bridge.handlers.conversations import check_own
from plugin_bridge.handlers.relay import budget_warnings, relay
from plugin_bridge.wire.models import (
    CHAT_CLEAR,
    CHAT_SEND,
    ChatClearParams,
    ChatSendParams,
    ChatSendResult,
    EmptyResult,
    UsageModel,
)


async def send(ctx: Context, params: ChatSendParams) -> ChatSendResult:
    """Send a user message; the model may call vault tools; notifications stream the turn."""
    request = TurnRequest(
        params.text,
        conversation_id=params.conversation_id,
        purpose=params.purpose if "purpose" in params.model_fields_set else None,
        prompt_id=params.prompt_id,
        context=params.context,
        setup=params.setup,
        caller=caller_of(ctx),
        client=ctx.client,
        peer=ctx.peer,
        model=params.model,
    )
    turn = await ctx.app.assistant.turn(request)
    async with budget_warnings(ctx):
        reply = await relay(ctx, turn.events())
    return ChatSendResult(
        conversation_id=turn.conversation_id,
        text=reply.text,
        stop_reason=reply.stop_reason,
        usage=UsageModel.model_validate(reply.usage, from_attributes=True),
        cost_usd=reply.cost_usd,
        sources=turn.sources,
        warnings=turn.warnings,
        model=turn.route.model,
        provider=turn.route.name or "",
    )


async def clear(ctx: Context, params: ChatClearParams) -> EmptyResult:
    """Forget a conversation's messages (its id stays valid)."""
    await check_own(ctx, params.conversation_id)
    await ctx.app.conversations.settled(params.conversation_id)
    await ctx.app.conversations.clear(params.conversation_id)
    return EmptyResult()


def register(router: AppRouter) -> None:
    router.register(CHAT_SEND, send)
    router.register(CHAT_CLEAR, clear)
