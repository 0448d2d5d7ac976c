"""A conversation's turn (``chat/send``), as :meth:`~plugin_bridge.app.assistant.Assistant.turn`
runs it: everything the transport used to gather itself is decided here, once, from the runtime
in effect and the collaborators of :class:`TurnParts` (never the composition root itself).

:func:`start_turn` checks that a chat provider is set, finds (or starts) the conversation and
refuses another key's, reads what the message sends (a custom prompt, the context the user
points at, the vault's context note, images and PDFs: one worker-thread hop, none for a plain
message whose context note is unchanged), picks the route of its purpose, sets the turn's
system prompt, tools and usage recorder (under the caller's key), and checks the budget.
:meth:`Turn.events` then streams the model's answer and, once it is complete, commits the turn
before its last event is consumed (acknowledged is durable); what needs the stored turn (its
title, the conversation's note) follows in the background.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import AsyncGenerator, Callable, Sequence
from contextlib import aclosing
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple, Protocol

from plugin_bridge.app.clients import OWNER_CALLER, Caller
from plugin_bridge.app.conversations.transcripts import save_conversation_note
from plugin_bridge.app.turn.context import ContextItem, resolve_context, turn_sources
from plugin_bridge.app.turn.media import Media, sendable_media
from plugin_bridge.app.turn.prompts import read_prompt, system_prompt
from plugin_bridge.app.turn.setup import FIRST_MESSAGE, setup_prompt
from plugin_bridge.vault.errors import VaultError

if TYPE_CHECKING:
    from llm_service import LLMService, Message
    from llm_service.events import ServiceEvent
    from llm_service.messages import MediaBlock
    from llm_service.tools import ToolRegistry
    from plugin_bridge.app.conversations.live import Conversations
    from plugin_bridge.app.conversations.usage import Spending
    from plugin_bridge.app.runtime import Runtime
    from plugin_bridge.app.settings.config import BridgeSettings
    from plugin_bridge.app.settings.providers import Purpose, Route
    from plugin_bridge.app.turn.confirm import Reviewer
    from plugin_bridge.app.turn.prompts import ContextNoteCache
    from plugin_bridge.vault.vault import Vault
    from plugin_bridge.wire.context import Peer

logger = logging.getLogger(__name__)


class TurnTools(Protocol):
    """The tools a turn gets (the access policy's)."""

    def for_turn(
        self,
        caller: Caller,
        *,
        setup: bool = False,
        peer: Peer | None = None,
        reviewer: Reviewer | None = None,
    ) -> ToolRegistry:
        """The tools of ``caller``'s turn (a setup turn's with ``complete_setup``), their
        writes reviewed by ``reviewer``, else by ``peer``'s client."""
        ...


@dataclass(frozen=True, slots=True)
class TurnParts:
    """What a turn works with besides its request, given by the composition root."""

    runtime: Callable[[], Runtime]
    """The runtime in effect, read as the turn is prepared (a settings change swaps it)."""
    vault: Vault
    conversations: Conversations
    spending: Spending
    context_notes: ContextNoteCache
    tools: TurnTools
    title_later: Callable[[str, list[Message], Caller], None]
    """Asks for a new conversation's title in the background, once its first turn is stored."""


@dataclass(frozen=True, slots=True)
class TurnRequest:
    """What a turn asks for, and who asks."""

    text: str
    conversation_id: str | None = None
    """None: a new conversation."""
    purpose: Purpose | None = None
    """The model's purpose; None: the custom prompt's, else chat."""
    prompt_id: str | None = None
    """A custom prompt whose instruction goes before the text."""
    context: Sequence[ContextItem] = ()
    """What the user points at, sent with this message only."""
    setup: bool = False
    """A turn of the setup conversation (empty text starts it)."""
    caller: Caller = OWNER_CALLER
    """Who asks: a key reaches its own conversations only, and its usage is recorded under it."""
    client: str | None = None
    """The client program's name (what to configure when no provider is set)."""
    model: str | None = None
    """This turn's model (the panel's switcher); None: the purpose's."""
    peer: Peer | None = None
    """The connection that sent the turn: its client reviews the writes (``tool/confirm``)."""
    reviewer: Reviewer | None = None
    """Who reviews this turn's writes instead of a connection's client (a chat app's Approve /
    Deny buttons): the model is then offered the write tools only when ``caller`` may write."""


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


@dataclass
class Turn:
    """One turn, ready to run (:func:`start_turn`)."""

    parts: TurnParts
    conversation_id: str
    service: LLMService
    request: TurnRequest
    input: TurnInput
    route: Route
    media: list[MediaBlock]
    warnings: list[str]
    """One sentence for each thing of the message the model does not get."""
    first_turn: bool

    async def events(self) -> AsyncGenerator[ServiceEvent, None]:
        """The model's answer as it comes (text deltas, tool calls and results, then
        ResponseComplete); the turn is committed before the generator ends. Closing it early
        (a cancelled request) stores nothing."""
        parts, service, turn = self.parts, self.service, self.input
        stream = service.stream_message(
            turn.text,
            context=turn.context or None,
            model=self.route.model,
            provider=self.route.provider,
            media=self.media,
        )
        async with aclosing(stream) as events:
            async for event in events:
                yield event
        first_exchange = service.last_exchange if self.first_turn else None
        stored = functools.partial(
            _stored, parts, self.conversation_id, first_exchange, self.request.caller
        )
        await asyncio.gather(  # the turn and its calls' usage durable before the reply
            parts.conversations.record(
                self.conversation_id, service, stored, caller=self.request.caller
            ),
            parts.spending.recorded(),
        )

    @property
    def sources(self) -> list[str]:
        """The notes the turn drew on: those given as context, then those the model read; an
        image or PDF that did not reach the model (the warnings say why) is not among them."""
        media = self.input.media
        sent = {block.name for block in self.media}
        unsent = {block.name for block in media.blocks} - sent if media else set()
        if media:
            unsent.update(media.left_out)
        given = [path for path in self.input.given if path not in unsent]
        return turn_sources(given, self.service.last_exchange)


async def start_turn(parts: TurnParts, request: TurnRequest) -> Turn:
    """A turn ready to run (see the module docstring)."""
    parts.runtime().route("chat", request.client)  # -32011 saying what to configure
    conversations = parts.conversations
    if request.conversation_id is None:
        conversation_id, service = conversations.start()
    else:
        conversation_id = request.conversation_id
        await conversations.check_owner(conversation_id, request.caller)
        await conversations.settled(conversation_id)  # its last turn is stored
        service = await conversations.get(conversation_id)
    settings = parts.runtime().config  # the runtime in effect once the last turn is stored
    turn = _plain_turn_input(parts, settings, request)
    if turn is None:
        turn = await asyncio.to_thread(_turn_input, parts, settings, request)
    undone = conversations.take_undone(conversation_id)
    if undone:  # the model hears of its writes the user undid, before this message
        turn = turn._replace(context=f"{undone}\n{turn.context}" if turn.context else undone)
    # What the settings (or the switcher's choice) say now, this turn only.
    route = parts.runtime().route(turn.purpose, request.client, request.model)
    vault_name = parts.vault.name
    if request.setup:
        prompt = setup_prompt(vault_name, settings.context_note, turn.note is not None)
    else:
        prompt = system_prompt(vault_name)
    service.set_system_prompt(prompt)
    service.tools = parts.tools.for_turn(
        request.caller, setup=request.setup, peer=request.peer, reviewer=request.reviewer
    )
    service.on_usage = parts.spending.recorder(conversation_id, "chat", request.caller)
    first_turn = not service.history
    service.set_conversation_context(turn.note)
    media, warnings = await sendable_media(turn.media, route.provider, route.model)
    await parts.spending.check()  # -32012 before any provider call
    return Turn(parts, conversation_id, service, request, turn, route, media, warnings, first_turn)


async def _stored(
    parts: TurnParts,
    conversation_id: str,
    first_exchange: list[Message] | None,
    caller: Caller,
) -> None:
    """Once a turn is stored: a first turn gets its title, the conversation's note is kept."""
    if first_exchange is not None:
        parts.title_later(conversation_id, first_exchange, caller)
    await _keep_note(parts, conversation_id)


def _text(request: TurnRequest) -> str:
    return request.text.strip() or (FIRST_MESSAGE if request.setup else "")


def _plain_turn_input(
    parts: TurnParts, settings: BridgeSettings, request: TurnRequest
) -> TurnInput | None:
    """The input of a plain message (no prompt, no context) whose context note is unchanged
    since it was last read, without a worker thread; None otherwise."""
    if request.prompt_id is not None or request.context:
        return None
    fresh, note = parts.context_notes.cached(parts.vault, settings.context_note)
    if not fresh:
        return None
    return TurnInput(_text(request), "", [], request.purpose or "chat", note)


def _turn_input(parts: TurnParts, settings: BridgeSettings, request: TurnRequest) -> TurnInput:
    """What this turn sends, which model runs it and the vault's context note (blocking: one
    worker-thread hop for all of it)."""
    text = _text(request)
    purpose: Purpose = request.purpose or "chat"
    vault = parts.vault
    if request.prompt_id is not None:
        prompt = read_prompt(vault, request.prompt_id, settings.prompts_folder)
        text = f"{prompt.instruction}\n\n{text}" if text else prompt.instruction
        if prompt.purpose is not None and request.purpose is None:
            purpose = prompt.purpose
    context, given, media = resolve_context(vault, request.context)
    note = parts.context_notes.read(vault, settings.context_note)
    return TurnInput(text, context, given, purpose, note, media)


async def _keep_note(parts: TurnParts, conversation_id: str) -> None:
    """With the setting conversations_folder, the conversation's note is brought up to date;
    a note that cannot be written is logged, never a failed turn (the turn is stored)."""
    folder = parts.runtime().config.conversations_folder
    if folder is None:
        return
    notes = parts.vault.notes
    try:
        await parts.conversations.store.execute(
            lambda store: save_conversation_note(notes, store, folder, conversation_id)
        )
    except VaultError as exc:
        logger.warning("conversation %s was not saved as a note: %s", conversation_id, exc)
