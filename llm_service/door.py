"""The one way async code reaches blocking work (SQLite, files): a :class:`Door` owns worker
threads and runs a job at a time on each, in the order asked, as datasette's ``execute_fn``.
State a door's thread owns is touched by no other thread, so the event loop never waits on a
lock a worker holds; it only awaits the job's future.

A store whose methods block is a :class:`BlockingStore`: async code calls
``await store.execute(work)``, which runs ``work(store)`` in one hop (on the store's door, or a
worker thread), never the methods themselves. A request gathers all it reads and writes into
one ``work``, so it costs one hop off the loop, not one per call: the hops stay few, and each
is deliberate.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import ClassVar, ParamSpec, Self, TypeVar

Args = ParamSpec("Args")
Out = TypeVar("Out")


class Door:
    """``threads`` worker threads named ``name`` (started on first use)."""

    def __init__(self, name: str, threads: int = 1) -> None:
        self.name = name
        self._executor = ThreadPoolExecutor(threads, thread_name_prefix=name)
        self._local = threading.local()

    async def run(self, fn: Callable[Args, Out], *args: Args.args, **kwargs: Args.kwargs) -> Out:
        """``fn(*args, **kwargs)`` on the door's thread, awaited (cancelled before it starts
        when the caller is)."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, self._job(fn, *args, **kwargs))

    def call(self, fn: Callable[Args, Out], *args: Args.args, **kwargs: Args.kwargs) -> Out:
        """``fn(*args, **kwargs)`` on the door's thread, waited for (for threads other than
        the event loop's: scripts, tests, the tool registry's workers); inline when already
        on it."""
        if getattr(self._local, "inside", False):
            return fn(*args, **kwargs)
        return self._executor.submit(self._job(fn, *args, **kwargs)).result()

    def post(self, fn: Callable[[], object]) -> None:
        """Queue ``fn()`` on the door's thread and return at once (its failure is its own to
        log)."""
        self._executor.submit(self._job(fn))

    def close(self) -> None:
        """Stop the threads once the jobs asked so far are done (returns at once)."""
        self._executor.shutdown(wait=False)

    def _job(
        self, fn: Callable[Args, Out], *args: Args.args, **kwargs: Args.kwargs
    ) -> Callable[[], Out]:
        return functools.partial(self._inside, functools.partial(fn, *args, **kwargs))

    def _inside(self, job: Callable[[], Out]) -> Out:
        self._local.inside = True
        return job()


_T = TypeVar("_T")


class BlockingStore:
    """A store whose methods block; async code calls :meth:`execute`, never the methods."""

    door: ClassVar[Door | None] = None
    """The door its work runs on (None: a worker thread of the loop's default pool)."""

    async def execute(self, work: Callable[[Self], _T]) -> _T:
        """``work(self)`` off the event loop, in one hop."""
        if self.door is not None:
            return await self.door.run(work, self)
        return await asyncio.to_thread(work, self)
