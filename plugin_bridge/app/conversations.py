"""Chat conversations: one LLMService each, the least recently used evicted past a cap."""

from __future__ import annotations

import logging
import secrets
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Final

from plugin_bridge.wire.errors import RpcError, WireCode

if TYPE_CHECKING:
    from llm_service import LLMService

logger = logging.getLogger(__name__)

MAX_CONVERSATIONS: Final = 64


class Conversations:
    """Conversation id -> LLMService, at most ``limit`` of them."""

    def __init__(
        self, factory: Callable[[], LLMService], *, limit: int = MAX_CONVERSATIONS
    ) -> None:
        self._factory = factory
        self._limit = limit
        self._items: OrderedDict[str, LLMService] = OrderedDict()

    def __len__(self) -> int:
        return len(self._items)

    def start(self) -> tuple[str, LLMService]:
        """A new conversation; evicts the least recently used one when full."""
        conversation_id = secrets.token_hex(8)
        self._items[conversation_id] = self._factory()
        while len(self._items) > self._limit:
            evicted, _ = self._items.popitem(last=False)
            logger.info("conversation %s evicted (limit %d)", evicted, self._limit)
        return conversation_id, self._items[conversation_id]

    def get(self, conversation_id: str) -> LLMService:
        """The conversation ``conversation_id`` (now the most recently used), or -32602."""
        service = self._items.get(conversation_id)
        if service is None:
            raise RpcError(
                WireCode.INVALID_PARAMS,
                f"Unknown conversationId '{conversation_id[:100]}': omit it to start a new "
                "conversation.",
            )
        self._items.move_to_end(conversation_id)
        return service
