"""The server-wide memory budget: every byte a client made the server hold for it, summed over
every client of both listeners (the WebSocket's connections and the HTTP API's).

What counts, per holder:

- replies being built: a ``note/read`` reply from before its bytes are read (its size
  reserved with :meth:`MemoryBudget.reserve`), every other result from the moment it is
  encoded;
- replies, results and streamed events handed to a connection that have not gone out yet
  (:meth:`MemoryBudget.change`);
- on HTTP, request bodies while their request runs, and response bytes (SSE events) the client
  has not taken.

Each connection is bounded on its own too (see :mod:`plugin_bridge.wire.connection`), but many
connections could still hold any amount between them. Past the budget:

- a holder that holds at least its share (the mean over all holders) is *busy*: its new
  requests and large replies wait up to :data:`BUSY_WAIT` seconds for room
  (:meth:`MemoryBudget.reserve`, :meth:`MemoryBudget.admit`), then are refused (the caller
  answers -32003 ``busy``, or HTTP 503); a holder holding less (the plugin, whose replies go
  out as fast as they come) is never kept waiting by the others;
- the holders holding the most are evicted first (each holder's ``evict``: the WebSocket server
  closes with 4429, the HTTP listener drops the connection) until the rest fit again.

Bookkeeping only: the holders decide what eviction means.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Hashable
from typing import Final

DEFAULT_MEMORY_BUDGET: Final = 64 * 1024 * 1024
"""64 MiB over all clients."""
BUSY_WAIT: Final = 2.0
"""Seconds a busy holder's request waits for room, at most, before it is refused."""


class MemoryBudget:
    """Bytes held per holder and in total; a holder's ``evict`` (given to :meth:`join`) is
    called, the largest holders first, whenever the total passes ``limit``."""

    def __init__(self, limit: int = DEFAULT_MEMORY_BUDGET, busy_wait: float = BUSY_WAIT) -> None:
        self.limit = limit
        self.busy_wait = busy_wait
        self.total = 0
        self._held: dict[Hashable, int] = {}
        self._evictors: dict[Hashable, Callable[[], None]] = {}
        self._evicted: set[Hashable] = set()
        self._waiting: list[tuple[Hashable, int, asyncio.Future[None]]] = []
        """Holders waiting for room: (holder, size, woken once it fits)."""
        self._waking = False
        self.evictions = 0
        """How many holders were evicted so far."""
        self.refusals = 0
        """How many requests and replies were refused so far."""

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
        elif delta < 0 and self._waiting and not self._waking:
            # Later in this turn of the loop: a reply's bytes move from "being built" to
            # "unsent" as a release followed by a count, and no waiter may take that room.
            self._waking = True
            asyncio.get_running_loop().call_soon(self._wake)

    def busy(self, holder: Hashable, size: int = 0) -> bool:
        """Whether ``size`` more bytes of ``holder`` would pass the budget while ``holder``
        already holds at least its share: the mean over the holders not evicted (the bytes of
        evicted ones still count in the total until they are let go)."""
        held = self._held.get(holder, 0)
        if held == 0 or self.total + size <= self.limit:
            return False
        if holder in self._evicted:
            return True
        kept = [n for h, n in self._held.items() if h not in self._evicted]
        return held * len(kept) >= sum(kept)

    def hold(self, holder: Hashable, size: int) -> bool:
        """Count ``size`` bytes of ``holder`` at once; False (nothing counted) when
        :meth:`busy`. Otherwise the largest holders are evicted as :meth:`change` does."""
        if self.busy(holder, size):
            self.refusals += 1
            return False
        self.change(holder, size)
        return True

    async def reserve(self, holder: Hashable, size: int) -> bool:
        """:meth:`hold`, but a busy holder first waits up to ``busy_wait`` seconds for room
        (its own bytes going out, or the others')."""
        if not self.busy(holder, size):
            self.change(holder, size)
            return True
        room: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        entry = (holder, size, room)
        self._waiting.append(entry)
        try:
            # Between half the wait and all of it: the requests a client pipelined in one burst
            # are not all refused in the same turn of the loop.
            async with asyncio.timeout(self.busy_wait * random.uniform(0.5, 1.0)):
                await room  # counted by _wake
        except BaseException as exc:
            if room.done() and not room.cancelled():  # counted just before the timeout
                self.change(holder, -size)
            if not isinstance(exc, TimeoutError):
                raise
            self.refusals += 1
            return False
        finally:
            if entry in self._waiting:
                self._waiting.remove(entry)
        return True

    async def admit(self, holder: Hashable) -> bool:
        """Whether a new request of ``holder`` may run: at once unless :meth:`busy`, else
        once there is room again within ``busy_wait`` seconds."""
        return await self.reserve(holder, 0)

    def _wake(self) -> None:
        """Count and wake the waiting holders that are no longer busy, in their order."""
        self._waking = False
        for entry in list(self._waiting):
            holder, size, room = entry
            if room.done():
                continue
            if not self.busy(holder, size):
                self._waiting.remove(entry)
                self.change(holder, size)
                room.set_result(None)

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
