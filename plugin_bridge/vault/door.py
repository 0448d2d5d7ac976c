"""The vault's doors off the event loop: the one way async code reaches its blocking work.

A :class:`Door` owns worker threads and runs a job at a time on each, in the order asked (as
datasette's ``execute_fn``): the search index has one for its read connection (a search's FTS5
query, vector search, chunk reads and snippets run there in one hop), the embedding job one for
its store and vectors, and :data:`FILES` is the one for the notes' files (reads, PDFs, the audit
log, the vault folder's stats). State a door's thread owns is touched by no other thread, so
the loop never waits on a lock a worker holds; it only awaits the job's future.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Final, ParamSpec, TypeVar

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


FILES: Final = Door("vault-files", threads=4)
"""Blocking work on the notes' files, shared by every vault of the process."""
