"""Chat conversations: stored turn by turn, each served by an LLMService while it is in use.

At most ``limit`` services stay in memory (the least recently used is dropped); every
conversation lives on in the store, so ``get`` of one that is not in memory, after a restart
say, rebuilds its service from the stored messages (the last 20 as working history).
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Final

from plugin_bridge.wire.errors import RpcError, WireCode

if TYPE_CHECKING:
    from llm_service import LLMService
    from plugin_bridge.app.conversations.store import ConversationStore

logger = logging.getLogger(__name__)

MAX_CONVERSATIONS: Final = 64


class Conversations:
    """Conversation id -> LLMService, backed by ``store``; at most ``limit`` in memory."""

    def __init__(
        self,
        factory: Callable[[str], LLMService],
        store: ConversationStore,
        *,
        limit: int = MAX_CONVERSATIONS,
    ) -> None:
        self._factory = factory
        self.store = store
        self._limit = limit
        self._items: OrderedDict[str, LLMService] = OrderedDict()

    def __len__(self) -> int:
        return len(self._items)

    def start(self) -> tuple[str, LLMService]:
        """A new conversation (stored once its first turn completes)."""
        conversation_id = self.store.new_id()
        service = self._factory(conversation_id)
        self._keep(conversation_id, service)
        return conversation_id, service

    def get(self, conversation_id: str) -> LLMService:
        """The conversation ``conversation_id``, from memory or the store, or -32602."""
        service = self._items.get(conversation_id)
        if service is not None:
            self._items.move_to_end(conversation_id)
            return service
        if self.store.get(conversation_id) is None:
            raise unknown(conversation_id)
        service = self._factory(conversation_id)
        service.load_history(self.store.messages(conversation_id))
        self._keep(conversation_id, service)
        return service

    def record(self, conversation_id: str, service: LLMService) -> None:
        """Store the turn ``service`` just completed (blocking: call it off the event loop)."""
        self.store.append(conversation_id, service.last_exchange, service.model)

    def clear(self, conversation_id: str) -> None:
        self.get(conversation_id).clear_conversation()
        self.store.clear(conversation_id)

    def forget(self, conversation_id: str) -> None:
        """Drop a deleted conversation's service."""
        self._items.pop(conversation_id, None)

    def _keep(self, conversation_id: str, service: LLMService) -> None:
        self._items[conversation_id] = service
        while len(self._items) > self._limit:
            dropped, _ = self._items.popitem(last=False)
            logger.debug("conversation %s leaves memory (limit %d)", dropped, self._limit)


def unknown(conversation_id: str) -> RpcError:
    return RpcError(
        WireCode.INVALID_PARAMS,
        f"Unknown conversationId '{conversation_id[:100]}': omit it to start a new conversation.",
    )
