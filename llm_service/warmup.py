"""Imports made early, in a worker thread, and the gate the first calls wait at.

A server imports the SDKs and httpx in a thread once it listens (importing them first would
delay its info file by a second or more). A call that starts meanwhile must not import the same
modules on the event loop at the same time: two threads importing one package tree can meet
in Python's import locks and one of them then sees a "partially initialized module". So every
provider and embedder call, and every use of httpx in this package, first awaits
:func:`warmed`, which returns at once when no early import is under way.
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Callable

_running: set[asyncio.Future[None]] = set()
"""The early imports under way (of any event loop: :func:`warmed` waits for its own loop's)."""


async def import_early(*modules: str, then: Callable[[], None] | None = None) -> None:
    """Import ``modules`` (then run ``then``) in a worker thread; calls that start meanwhile
    wait for it in :func:`warmed`."""

    def work() -> None:
        for module in modules:
            importlib.import_module(module)
        if then is not None:
            then()

    future = asyncio.ensure_future(asyncio.to_thread(work))
    _running.add(future)
    future.add_done_callback(_running.discard)
    await asyncio.shield(future)


async def warmed() -> None:
    """Return once the early imports under way in this event loop are done (at once if none:
    the cost of every later call is one set lookup)."""
    if not _running:
        return
    loop = asyncio.get_running_loop()
    mine = [future for future in _running if future.get_loop() is loop]
    if mine:
        await asyncio.wait(mine)
