"""Refusals logged at most once a second, with a count: a flood of refused requests or
handshakes writes one line a second, not one per refusal (7,650 lines a second, 5 GiB an hour,
before)."""

from __future__ import annotations

import asyncio
import logging
from typing import Final

LOG_INTERVAL: Final = 1.0


class RefusalLog:
    """``refused(what)`` logs at once, then at most once a second with the count since: a flood
    of refused requests writes one line a second, not one per request."""

    def __init__(
        self, logger: logging.Logger, listener: str = "HTTP", interval: float = LOG_INTERVAL
    ) -> None:
        self.logger = logger
        self.listener = listener
        """Which listener refused (the first word of each line)."""
        self.interval = interval
        self.count = 0
        self.last = ""
        self._timer: asyncio.TimerHandle | None = None

    def refused(self, what: str) -> None:
        self.count += 1
        self.last = what
        if self._timer is None:
            self._flush()

    def _flush(self) -> None:
        self._timer = None
        if not self.count:
            return
        if self.count == 1:
            self.logger.warning("%s: %s", self.listener, self.last)
        else:
            self.logger.warning(
                "%s: %d refused in the last %.0f s; the last: %s",
                self.listener,
                self.count,
                self.interval,
                self.last,
            )
        self.count = 0
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._timer = loop.call_later(self.interval, self._flush)
