"""The server-wide budget of unsent bytes: replies and notifications handed to connections
that have not gone out yet, summed over every connection.

Each connection is bounded on its own (see :mod:`plugin_bridge.wire.connection`), but many
connections that do not read could still hold any amount between them. Past the budget the
connections holding the most are evicted first (the server closes them with 4429) until the
rest fit in it again. Pure bookkeeping: the caller decides what eviction means.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Final, Generic, TypeVar

DEFAULT_MEMORY_BUDGET: Final = 64 * 1024 * 1024
"""64 MiB of unsent data over all connections."""

K = TypeVar("K", bound=Hashable)


class UnsentBudget(Generic[K]):
    """Unsent bytes per holder and in total; ``evict(holder)`` is called for the holders that
    must go, the largest first, whenever the total passes ``limit``."""

    def __init__(self, limit: int, evict: Callable[[K], None]) -> None:
        self.limit = limit
        self.total = 0
        self._held: dict[K, int] = {}
        self._evicted: set[K] = set()
        self._evict = evict
        self.evictions = 0
        """How many holders were evicted so far."""

    def held(self, holder: K) -> int:
        return self._held.get(holder, 0)

    def change(self, holder: K, delta: int) -> None:
        """``holder`` handed ``delta`` more bytes to send (negative: that many went out or
        were dropped)."""
        held = self._held.get(holder, 0) + delta
        if held > 0:
            self._held[holder] = held
        else:
            self._held.pop(holder, None)
        self.total += delta
        if delta > 0 and self.total > self.limit:
            self._shed()

    def forget(self, holder: K) -> None:
        """``holder`` is gone (its pending sends have failed or finished)."""
        self._evicted.discard(holder)

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
            self._evict(holder)
