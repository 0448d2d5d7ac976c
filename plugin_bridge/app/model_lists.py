"""The model lists of one provider setup, as :class:`~plugin_bridge.app.model_routes.ModelRoutes`
reads them: each provider's list fetched at most once per :data:`LIST_SECONDS` (and again when a
request needs a list read after it started).

The lists belong to the providers they were read from: a :class:`~plugin_bridge.app.runtime.Runtime`
that keeps its providers keeps its lists, one with new providers starts with none.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from llm_service import LLMError

if TYPE_CHECKING:
    from llm_service import Provider
    from llm_service.profiles import ProviderName

LIST_SECONDS: Final = 600.0
"""How long a provider's model list is kept."""
MAX_SENT_UNLISTED: Final = 256
"""The most unlisted ids kept per list as sent without a refusal (see ``_Listed``)."""
_NO_LIST: Final = frozenset({"invalid_request", "invalid_response"})
"""Failures of a models endpoint that mean "this server has no list" (every id is accepted);
any other failure (down, refused key) would fail the chat request too, and is raised."""


@dataclass
class _Listed:
    read: float
    """When it was read (``time.monotonic()``)."""
    ids: frozenset[str] | None
    """None: the server lists no models (every id is accepted)."""
    sent_unlisted: set[str] = field(default_factory=set)
    """Ids that name no provider, found missing from this list even read again, and sent as
    they are: not read again for (a gateway's id would cost a list call per request)."""


class ModelLists:
    """Each provider's model ids, fetched on demand and kept (see the module docstring)."""

    def __init__(self) -> None:
        self._lists: dict[ProviderName | None, _Listed] = {}
        self._fetching: dict[ProviderName | None, asyncio.Lock] = {}

    def clear(self) -> None:
        """Forget every fetched list (the next request fetches again)."""
        self._lists.clear()

    def kept(self, name: ProviderName | None) -> bool:
        """Whether provider ``name``'s list is kept and still fresh."""
        kept = self._lists.get(name)
        return kept is not None and kept.read + LIST_SECONDS > time.monotonic()

    def sent_unlisted(self, name: ProviderName | None, model: str) -> bool:
        """Whether ``model`` was sent to ``name`` unlisted before (its list is not read again
        for it)."""
        kept = self._lists.get(name)
        return kept is not None and model in kept.sent_unlisted

    def send_unlisted(self, name: ProviderName | None, model: str) -> None:
        """Remember that ``model`` goes to ``name`` unlisted (up to :data:`MAX_SENT_UNLISTED`)."""
        kept = self._lists.get(name)
        if kept is not None and len(kept.sent_unlisted) < MAX_SENT_UNLISTED:
            kept.sent_unlisted.add(model)

    async def listed(
        self, name: ProviderName | None, provider: Provider, *, read_after: float | None = None
    ) -> frozenset[str] | None:
        """The ids ``provider`` lists (None: it has no list), fetched at most once per
        :data:`LIST_SECONDS`, and again when the kept list was read before ``read_after``."""
        async with self._fetching.setdefault(name, asyncio.Lock()):
            cached = self._lists.get(name)
            now = time.monotonic()
            if (
                cached is not None
                and cached.read + LIST_SECONDS > now
                and (read_after is None or cached.read >= read_after)
            ):
                return cached.ids
            try:
                ids: frozenset[str] | None = frozenset(await provider.list_model_ids())
            except LLMError as exc:
                if exc.code not in _NO_LIST:
                    raise
                ids = None
            self._lists[name] = _Listed(now, ids or None)
            return ids or None
