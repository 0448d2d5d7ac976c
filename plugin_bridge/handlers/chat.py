"""Chat methods: chat/send (streams chat/delta, chat/toolCall, chat/toolResult) and chat/clear."""

from __future__ import annotations

import asyncio
import functools
import logging
from typing import TYPE_CHECKING, NamedTuple

from plugin_bridge.app.conversations.transcripts import save_conversation_note
from plugin_bridge.app.settings.providers import Purpose
from plugin_bridge.app.state import BridgeApp
from plugin_bridge.app.turn.context import resolve_context, turn_sources
from plugin_bridge.app.turn.media import Media, sendable_media
from plugin_bridge.app.turn.prompts import read_prompt
from plugin_bridge.app.turn.setup import FIRST_MESSAGE
from plugin_bridge.handlers.context import AppRouter, Context
from plugin_bridge.handlers.conversations import check_own
from plugin_bridge.handlers.relay import relay, spending
from plugin_bridge.vault.errors import VaultError
from plugin_bridge.wire.models import (
    ChatClearParams,
    ChatSendParams,
    ChatSendResult,
    EmptyResult,
    UsageModel,
)

if TYPE_CHECKING:
    from llm_service import Message

logger = logging.getLogger(__name__)


class TurnInput(NamedTuple):
    text: str
    """The message, a custom prompt's instruction first when one is named."""
    context: str
    """The context block for the model ("" without context)."""
    given: list[str]
    """The notes given as context."""
    purpose: Purpose
    """The model's purpose: what the client asked for, else the prompt's, else chat."""
    note: str | None
    """The vault's context note (the conversation's standing context)."""
    media: Media | None = None
    """Images and PDFs sent with the message."""


async def send(ctx: Context, params: ChatSendParams) -> ChatSendResult:
    """Send a user message; the model may call vault tools; notifications stream the turn."""
    app = ctx.app
    app.require_provider()
    if params.conversation_id is None:
        conversation_id, service = app.conversations.start()
    else:
        conversation_id = params.conversation_id
        await check_own(ctx, conversation_id)
        await app.conversations.settled(conversation_id)  # its last turn is stored
        service = app.conversations.get(conversation_id)
    turn = _plain_turn_input(app, params)
    if turn is None:
        turn = await asyncio.to_thread(_turn_input, app, params)
    route = app.route(turn.purpose)  # what settings/update says now, for this turn only
    app.prepare_turn(service, setup=params.setup, has_note=turn.note is not None)
    first_turn = not service.history
    service.set_conversation_context(turn.note)
    media, warnings = await sendable_media(turn.media, route.provider, route.model)
    events = service.stream_message(
        turn.text,
        context=turn.context or None,
        model=route.model,
        provider=route.provider,
        media=media,
    )
    async with spending(ctx):
        reply = await relay(ctx, events)
    first_exchange = service.last_exchange if first_turn else None
    await app.conversations.record(  # committed before the result: acknowledged is durable
        conversation_id, service, functools.partial(_stored, app, conversation_id, first_exchange)
    )
    return ChatSendResult(
        conversation_id=conversation_id,
        text=reply.text,
        stop_reason=reply.stop_reason,
        usage=UsageModel.model_validate(reply.usage, from_attributes=True),
        cost_usd=reply.cost_usd,
        sources=turn_sources(turn.given, service.last_exchange),
        warnings=warnings,
    )


async def _stored(
    app: BridgeApp, conversation_id: str, first_exchange: list[Message] | None
) -> None:
    """Once a turn is stored: a first turn gets its title, the conversation's note is kept."""
    if first_exchange is not None:
        app.title_later(conversation_id, first_exchange)
    await _keep_note(app, conversation_id)


def _plain_turn_input(app: BridgeApp, params: ChatSendParams) -> TurnInput | None:
    """The input of a plain message (no prompt, no context) whose context note is unchanged
    since it was last read, without a worker thread; None otherwise."""
    if params.prompt_id is not None or params.context:
        return None
    fresh, note = app.context_notes.cached(app.vault, app.config.context_note)
    if not fresh:
        return None
    text = params.text.strip() or (FIRST_MESSAGE if params.setup else "")
    return TurnInput(text, "", [], params.purpose, note)


def _turn_input(app: BridgeApp, params: ChatSendParams) -> TurnInput:
    """What this turn sends, which model runs it and the vault's context note (blocking: one
    worker-thread hop for all of it)."""
    text = params.text.strip() or (FIRST_MESSAGE if params.setup else "")
    purpose: Purpose = params.purpose
    if params.prompt_id is not None:
        prompt = read_prompt(app.vault, params.prompt_id, app.config.prompts_folder)
        text = f"{prompt.instruction}\n\n{text}" if text else prompt.instruction
        if prompt.purpose is not None and "purpose" not in params.model_fields_set:
            purpose = prompt.purpose
    context, given, media = resolve_context(app.vault, params.context)
    note = app.context_notes.read(app.vault, app.config.context_note)
    return TurnInput(text, context, given, purpose, note, media)


async def _keep_note(app: BridgeApp, conversation_id: str) -> None:
    """With the setting conversations_folder, the conversation's note is brought up to date;
    a note that cannot be written is logged, never a failed turn (the turn is stored)."""
    folder = app.config.conversations_folder
    if folder is None:
        return
    store = app.conversations.store
    try:
        await store.execute(
            lambda store: save_conversation_note(app.vault.notes, store, folder, conversation_id)
        )
    except VaultError as exc:
        logger.warning("conversation %s was not saved as a note: %s", conversation_id, exc)


async def clear(ctx: Context, params: ChatClearParams) -> EmptyResult:
    """Forget a conversation's messages (its id stays valid)."""
    await check_own(ctx, params.conversation_id)
    await ctx.app.conversations.settled(params.conversation_id)
    await ctx.app.conversations.clear(params.conversation_id)
    return EmptyResult()


def register(router: AppRouter) -> None:
    router.register("chat/send", ChatSendParams, send)
    router.register("chat/clear", ChatClearParams, clear)
