"""Conversation titles from the fast model, after the first turn, in the background."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Final

from llm_service import LLMError, Message
from llm_service.pricing import cost_usd

if TYPE_CHECKING:
    from plugin_bridge.app.state import BridgeApp

logger = logging.getLogger(__name__)

TITLE_MAX_TOKENS: Final = 30
TITLE_CHARS: Final = 80


async def make_title(
    app: BridgeApp, conversation_id: str, exchange: list[Message], model: str
) -> None:
    """Name the conversation from its first question and answer; keep the first-words title
    when the model fails (a title is never worth an error)."""
    provider = app.provider
    if provider is None or not exchange:
        return
    question, answer = exchange[0].text[:2000], exchange[-1].text[:2000]
    prompt = (
        "Give this conversation a title of at most six words, in the language of the question. "
        f"Answer with the title only.\n\nQuestion: {question}\n\nAnswer: {answer}"
    )
    try:
        reply = await provider.chat(
            [Message.user(prompt)], model=model, max_tokens=TITLE_MAX_TOKENS
        )
    except LLMError as exc:
        logger.info("no title for %s: %s", conversation_id, exc.code)
        return
    app.spending.recorder(conversation_id, "title")(
        model, reply.usage, cost_usd(model, reply.usage)
    )
    title = " ".join(reply.text.strip().strip("\"'#*").split())[:TITLE_CHARS]
    if title:
        await asyncio.to_thread(app.conversations.store.rename, conversation_id, title)
