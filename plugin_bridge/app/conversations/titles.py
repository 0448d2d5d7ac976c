"""Conversation titles from the fast model, after the first turn, in the background."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Final, Protocol

from llm_service import LLMError, Message
from plugin_bridge.app.ask_options import AskOptions
from plugin_bridge.app.conversations.store import TITLE_CHARS
from plugin_bridge.wire.errors import RpcError

if TYPE_CHECKING:
    from llm_service import LLMResponse
    from plugin_bridge.app.clients import Caller

logger = logging.getLogger(__name__)

TITLE_MAX_TOKENS: Final = 30


class Asker(Protocol):
    """Who answers a one-off question (the assistant)."""

    async def ask(
        self, purpose: str, messages: Sequence[Message], options: AskOptions
    ) -> LLMResponse:
        """The model's whole answer to ``messages``; usage recorded under ``purpose``."""
        ...


async def make_title(
    assistant: Asker,
    conversation_id: str,
    exchange: list[Message],
    caller: Caller,
    *,
    rename: Callable[[str], Awaitable[object]],
) -> None:
    """Name a conversation from its first question and answer with the fast model (its usage
    counted with the conversation, under ``caller``); ``rename`` stores the title (through the
    store's door). The first-words title stays when the model fails or a budget is used up: a
    title is never worth an error."""
    if not exchange:
        return
    question, answer = exchange[0].text[:2000], exchange[-1].text[:2000]
    prompt = (
        "Give this conversation a title of at most six words, in the language of the question. "
        f"Answer with the title only.\n\nQuestion: {question}\n\nAnswer: {answer}"
    )
    options = AskOptions(
        route="fast", max_tokens=TITLE_MAX_TOKENS, caller=caller, conversation=conversation_id
    )
    try:
        reply = await assistant.ask("title", [Message.user(prompt)], options)
    except (LLMError, RpcError) as exc:
        logger.info("no title: %s", exc.code)
        return
    title = " ".join(reply.text.strip().strip("\"'#*").split())[:TITLE_CHARS]
    if title:
        await rename(title)
