"""The server-wide memory budget: every byte a client made the server hold for it, summed over
every client of both listeners (the WebSocket's connections and the HTTP API's).

What counts, per holder:

- replies being built (:meth:`MemoryBudget.hold`: a ``note/read`` result from the moment its
  bytes are read, until it is handed to the connection);
- replies, results and streamed events handed to a connection that have not gone out yet
  (:meth:`MemoryBudget.change`);
- on HTTP, request bodies while their request runs, and response bytes (SSE events) the client
  has not taken.

Each connection is bounded on its own too (see :mod:`plugin_bridge.wire.connection`), but many
connections could still hold any amount between them. Past the budget:

- a new large reply (:meth:`MemoryBudget.hold`) of a holder that already holds the most is
  refused (the caller answers -32003 ``busy``, or HTTP 503);
- the holders holding the most are evicted first (each holder's ``evict``: the WebSocket server
  closes with 4429, the HTTP listener drops the connection) until the rest fit again.

Pure bookkeeping: the holders decide what eviction means.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Final

DEFAULT_MEMORY_BUDGET: Final = 64 * 1024 * 1024
"""64 MiB over all clients."""


class MemoryBudget:
    """Bytes held per holder and in total; a holder's ``evict`` (given to :meth:`join`) is
    called, the largest holders first, whenever the total passes ``limit``."""

    def __init__(self, limit: int = DEFAULT_MEMORY_BUDGET) -> None:
        self.limit = limit
        self.total = 0
        self._held: dict[Hashable, int] = {}
        self._evictors: dict[Hashable, Callable[[], None]] = {}
        self._evicted: set[Hashable] = set()
        self.evictions = 0
        """How many holders were evicted so far."""
        self.refusals = 0
        """How many :meth:`hold` calls were refused so far."""

    def join(self, holder: Hashable, evict: Callable[[], None]) -> None:
        """``holder`` may hold bytes from now on; ``evict()`` makes it let them go."""
        self._evictors[holder] = evict

    def forget(self, holder: Hashable) -> None:
        """``holder`` is gone (its pending sends have failed or finished)."""
        self._evicted.discard(holder)
        self._evictors.pop(holder, None)

    def held(self, holder: Hashable) -> int:
        return self._held.get(holder, 0)

    def change(self, holder: Hashable, delta: int) -> None:
        """``holder`` holds ``delta`` more bytes (negative: that many went out or were
        dropped)."""
        held = self._held.get(holder, 0) + delta
        if held > 0:
            self._held[holder] = held
        else:
            self._held.pop(holder, None)
        self.total += delta
        if delta > 0 and self.total > self.limit:
            self._shed()

    def hold(self, holder: Hashable, size: int) -> bool:
        """Count ``size`` bytes of a reply ``holder`` is building; False (nothing counted) when
        they would pass the budget and ``holder`` already holds the most: that reply is
        refused. Otherwise the largest holders are evicted as :meth:`change` does."""
        held = self._held.get(holder, 0)
        if (
            held > 0
            and self.total + size > self.limit
            and held >= max(self._held.values(), default=0)
        ):
            self.refusals += 1
            return False
        self.change(holder, size)
        return True

    def _shed(self) -> None:
        """Evict the largest holders not yet evicted until the others fit in the budget."""
        kept = self.total - sum(self._held.get(h, 0) for h in self._evicted)
        for holder, held in sorted(self._held.items(), key=lambda item: -item[1]):
            if kept <= self.limit:
                return
            if holder in self._evicted:
                continue
            self._evicted.add(holder)
            self.evictions += 1
            kept -= held
            evict = self._evictors.get(holder)
            if evict is not None:
                evict()
