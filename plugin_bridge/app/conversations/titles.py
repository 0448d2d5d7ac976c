"""Conversation titles from the fast model, after the first turn, in the background."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Final

from llm_service import LLMError, Message
from llm_service.pricing import cost_usd

if TYPE_CHECKING:
    from llm_service import Provider
    from llm_service.service import UsageCallback

logger = logging.getLogger(__name__)

TITLE_MAX_TOKENS: Final = 30
TITLE_CHARS: Final = 80


async def make_title(
    provider: Provider,
    exchange: list[Message],
    model: str,
    *,
    on_usage: UsageCallback,
    rename: Callable[[str], Awaitable[object]],
) -> None:
    """Name a conversation from its first question and answer with ``model``; ``rename`` stores
    the title (through the store's door). The first-words title stays when the model fails: a
    title is never worth an error."""
    if not exchange:
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
        logger.info("no title: %s", exc.code)
        return
    cost = cost_usd(model, reply.usage, provider.price_provider)
    on_usage(model, reply.usage, cost, provider.kind or "")
    title = " ".join(reply.text.strip().strip("\"'#*").split())[:TITLE_CHARS]
    if title:
        await rename(title)
