"""The one way async code reaches a blocking store (SQLite, a file): ``await store.execute(work)``
runs ``work(store)`` in a worker thread. A request gathers all it reads and writes into one
``work``, so it costs one hop off the event loop, not one per call (as datasette's
``execute_fn``); the hops stay few, and each is deliberate."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Self, TypeVar

_T = TypeVar("_T")


class Door:
    """A store whose methods block; async code calls :meth:`execute`, never the methods."""

    async def execute(self, work: Callable[[Self], _T]) -> _T:
        """``work(self)`` in a worker thread."""
        return await asyncio.to_thread(work, self)
