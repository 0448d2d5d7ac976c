"""Pacing for embedding jobs: at most N requests per minute and M at once, slowed by 429s.

A rate-limit answer does not fail the job: :meth:`Throttle.rate_limited` pauses every request
of the job (for the server's Retry-After, or a doubled interval) and widens the spacing between
requests; each success narrows it again towards the configured rate.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Final

MIN_SLOWDOWN_SECONDS: Final = 1.0
"""After a 429 the spacing between requests is at least this long."""
MAX_INTERVAL_SECONDS: Final = 60.0
RECOVERY: Final = 0.8
"""Each success multiplies the widened spacing by this, back down to the configured rate."""


class Throttle:
    """Limits shared by every batch of one embedder. ``clock`` and ``sleep`` are injectable so
    tests can drive time."""

    def __init__(
        self,
        requests_per_minute: float | None = None,
        concurrency: int = 4,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        if requests_per_minute is not None and requests_per_minute <= 0:
            raise ValueError("requests_per_minute must be positive")
        self.base_interval = 60.0 / requests_per_minute if requests_per_minute else 0.0
        self.interval = self.base_interval
        """Seconds between the starts of two requests, now."""
        self.concurrency = concurrency
        self.slowdowns = 0
        """How many 429s slowed this throttle down."""
        self._clock = clock
        self._sleep = sleep
        self._next_start = 0.0
        self._semaphore = asyncio.Semaphore(concurrency)
        self._lock = asyncio.Lock()

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Hold one of the ``concurrency`` slots, starting no sooner than the rate allows."""
        async with self._semaphore:
            await self._wait_turn()
            yield

    async def _wait_turn(self) -> None:
        async with self._lock:
            now = self._clock()
            start = max(now, self._next_start)
            self._next_start = start + self.interval
        if start > now:
            await self._sleep(start - now)

    def rate_limited(self, retry_after: float | None) -> float:
        """A request got a 429: widen the spacing and pause every request; the pause's seconds."""
        self.slowdowns += 1
        self.interval = min(max(self.interval * 2, MIN_SLOWDOWN_SECONDS), MAX_INTERVAL_SECONDS)
        pause = max(retry_after or 0.0, self.interval)
        self._next_start = max(self._next_start, self._clock() + pause)
        return pause

    def succeeded(self) -> None:
        """A request went through: ease the spacing back towards the configured rate."""
        if self.interval > self.base_interval:
            eased = self.interval * RECOVERY
            self.interval = eased if eased > self.base_interval + 0.01 else self.base_interval
