"""Chat methods: chat/send (streams chat/delta, chat/toolCall, chat/toolResult) and chat/clear."""

from __future__ import annotations

import asyncio

from plugin_bridge.app.prompts import context_note, read_prompt
from plugin_bridge.app.state import BridgeApp
from plugin_bridge.app.turn_context import resolve_context, turn_sources
from plugin_bridge.handlers.context import AppRouter, Context
from plugin_bridge.handlers.relay import relay, spending
from plugin_bridge.wire.models import (
    ChatClearParams,
    ChatSendParams,
    ChatSendResult,
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
    # settings/update may have changed the provider or the models since the last turn
    service.provider, service.model = app.require_provider(), app.model_for(params.purpose)
    first_turn = not service.history
    text, context, given, note = await asyncio.to_thread(_turn_input, app, params)
    service.set_conversation_context(note)
    async with spending(ctx):
        reply = await relay(ctx, service.stream_message(text, context=context or None))
    await asyncio.to_thread(app.conversations.record, conversation_id, service)
    if first_turn:
        app.title_later(conversation_id, service.last_exchange)
    return ChatSendResult(
        conversation_id=conversation_id,
        text=reply.text,
        stop_reason=reply.stop_reason,
        usage=UsageModel.model_validate(reply.usage, from_attributes=True),
        cost_usd=reply.cost_usd,
        sources=turn_sources(given, service.last_exchange),
    )


def _turn_input(app: BridgeApp, params: ChatSendParams) -> tuple[str, str, list[str], str | None]:
    """The message (a custom prompt's instruction first, when one is named), its context block,
    the notes given as context and the vault's context note (blocking: one worker-thread hop
    for all four)."""
    text = params.text.strip()
    if params.prompt_id is not None:
        instruction = read_prompt(app.vault, params.prompt_id).instruction
        text = f"{instruction}\n\n{text}" if text else instruction
    context, given = resolve_context(app.vault, params.context)
    return text, context, given, context_note(app.vault)


async def clear(ctx: Context, params: ChatClearParams) -> EmptyResult:
    """Forget a conversation's messages (its id stays valid)."""
    await asyncio.to_thread(ctx.app.conversations.clear, params.conversation_id)
    return EmptyResult()


def register(router: AppRouter) -> None:
    router.register("chat/send", ChatSendParams, send)
    router.register("chat/clear", ChatClearParams, clear)
