"""Chat conversations: stored turn by turn, each served by an LLMService while it is in use.

At most ``limit`` services stay in memory (the least recently used is dropped); every
conversation lives on in the store, so ``get`` of one that is not in memory, after a restart
say, rebuilds its service from the stored messages (the last 20 as working history), read in
one hop to the store's door. Every read and write of the store goes through that door
(``store.execute``), never from the event loop.

A completed turn is committed before its reply goes out (:meth:`Conversations.record`): on
the store's door, one transaction per turn (WAL, synchronous NORMAL: it survives a kill -9 of the
server), turns of one conversation in order; only the final result waits for it, never the
streamed deltas. What needs the stored turn (its note, its title) follows in the background.
Whatever reads the store first waits for the work still under way (:meth:`Conversations.stored`),
and so does the next turn of the same conversation (:meth:`Conversations.settled`) and shutdown.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, Final

from plugin_bridge.wire.errors import RpcError, WireCode

if TYPE_CHECKING:
    from llm_service import LLMService, Message
    from plugin_bridge.app.clients import Caller
    from plugin_bridge.app.conversations.store import ConversationStore

logger = logging.getLogger(__name__)

MAX_CONVERSATIONS: Final = 64
COMMIT_BEFORE_REPLY = True
"""Wait for a turn's commit before the reply (False answers first, as before: bench/turn_commit.py's
baseline, which a kill -9 right after the reply can lose)."""


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
        self._writes: dict[str, asyncio.Task[None]] = {}
        """The last write under way of each conversation (each waits for the one before)."""
        self._undone: dict[str, list[str]] = {}
        """Notes whose write the user undid since the conversation's last turn (note/undo with
        its id): the next turn tells the model, so it does not take the change as made."""

    def __len__(self) -> int:
        return len(self._items)

    def start(self) -> tuple[str, LLMService]:
        """A new conversation (stored once its first turn completes)."""
        conversation_id = self.store.new_id()
        service = self._factory(conversation_id)
        self._keep(conversation_id, service)
        return conversation_id, service

    def undone(self, conversation_id: str, path: str) -> None:
        """The user undid the write of ``path`` made in ``conversation_id``."""
        paths = self._undone.setdefault(conversation_id, [])
        if path not in paths:
            paths.append(path)

    def take_undone(self, conversation_id: str) -> str:
        """What the next turn of ``conversation_id`` tells the model of the writes undone since
        its last turn ("" for none); told once."""
        paths = self._undone.pop(conversation_id, [])
        return "".join(
            f"The user undid your change to {path}: it is back as it was before it.\n"
            for path in paths
        )

    async def get(self, conversation_id: str) -> LLMService:
        """The conversation ``conversation_id``, from memory or the store (one hop), or
        -32602."""
        service = self._items.get(conversation_id)
        if service is not None:
            self._items.move_to_end(conversation_id)
            return service

        def stored(store: ConversationStore) -> list[Message] | None:
            return None if store.get(conversation_id) is None else store.messages(conversation_id)

        messages = await self.store.execute(stored)
        if messages is None:
            raise unknown(conversation_id)
        service = self._items.get(conversation_id)  # another request may have loaded it meanwhile
        if service is None:
            service = self._factory(conversation_id)
            service.load_history(messages)
            self._keep(conversation_id, service)
        return service

    async def record(
        self,
        conversation_id: str,
        service: LLMService,
        then: Callable[[], Coroutine[Any, Any, None]] | None = None,
        *,
        caller: Caller,
    ) -> None:
        """Commit the turn ``service`` just completed and return once it is committed (see the
        module docstring); a new conversation is ``caller``'s. Then run ``then`` in the
        background (what needs the stored turn: the conversation's note, its title). A write
        that fails raises (and is logged); the turn stays in memory. A cancelled caller does
        not stop the write."""
        exchange, model = list(service.last_exchange), service.model
        before = self._writes.get(conversation_id)

        async def append() -> None:
            if before is not None:
                await asyncio.wait([before])
            await self.store.execute(
                lambda store: store.append(conversation_id, exchange, model, caller.label)
            )

        stored = self._track(conversation_id, append())
        if then is not None:

            async def follow() -> None:  # runs even when the caller is cancelled meanwhile
                await asyncio.wait([stored])
                if not stored.cancelled() and stored.exception() is None:
                    await then()

            self._track(conversation_id, follow())
        if COMMIT_BEFORE_REPLY:
            await asyncio.shield(stored)

    def _track(self, conversation_id: str, work: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        """Run ``work`` as the conversation's latest write (the next one waits for it)."""
        task = asyncio.get_running_loop().create_task(work, name=f"store {conversation_id}")
        self._writes[conversation_id] = task
        task.add_done_callback(lambda done: self._written(conversation_id, done))
        return task

    def _written(self, conversation_id: str, task: asyncio.Task[None]) -> None:
        if self._writes.get(conversation_id) is task:
            del self._writes[conversation_id]
        if not task.cancelled() and task.exception() is not None:
            logger.error(
                "conversation %s: a turn was not stored", conversation_id, exc_info=task.exception()
            )

    async def settled(self, conversation_id: str | None = None) -> None:
        """Return once the writes under way (of ``conversation_id``, or all) are done."""
        pending = (
            list(self._writes.values())
            if conversation_id is None
            else [task for task in (self._writes.get(conversation_id),) if task is not None]
        )
        if pending:
            await asyncio.wait(pending)

    async def stored(self) -> ConversationStore:
        """The store, once every turn completed so far is in it."""
        await self.settled()
        return self.store

    async def check_owner(self, conversation_id: str, caller: Caller) -> None:
        """A client key reaches its own conversations only: another's is unknown to it."""
        if caller.is_owner:
            return
        store = await self.stored()
        client = await store.execute(lambda store: store.client_of(conversation_id))
        if client is not None and client != caller.label:
            raise unknown(conversation_id)

    async def clear(self, conversation_id: str) -> None:
        """Forget a conversation's messages, in memory and in the store (its id stays), or
        -32602 for an unknown id; one hop to the store."""
        service = self._items.get(conversation_id)

        def clear(store: ConversationStore) -> None:
            if service is None and store.get(conversation_id) is None:
                raise unknown(conversation_id)
            store.clear(conversation_id)

        if service is not None:
            service.clear_conversation()
        await self.store.execute(clear)

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
