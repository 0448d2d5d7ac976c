"""The one relay from the assistant's event stream to the client's notifications, and the
budget warnings after a request's model calls (the assistant checks the budgets before them).

``chat/send``, ``command/searchSummarize`` and ``command/rewrite`` stream through
:func:`relay`: text deltas
become ``chat/delta``, tool calls ``chat/toolCall``, tool results ``chat/toolResult``, all
tagged with the request's id; the stream is closed however the relay ends (a cancelled request
drops the provider's HTTP stream at once).

Text deltas are coalesced: the relay hands them to a sender task and goes on reading the model,
so every delta that arrives before the sender next runs (the rest of one network read, or all
that came while the client's socket was busy) goes out as one ``chat/delta``. The first delta
waits only one loop tick, the next ones at least :data:`DELTA_INTERVAL` after the one before,
and the stream's end flushes at once; the order of text and other notifications is kept.

Streams take turns on the loop: a relay waits for its turn (:class:`_Turns`) after each
:data:`YIELD_AFTER` seconds of deltas, and at most :data:`TURNS_PER_TICK` relays resume per turn
of the loop; starting a stream takes a turn to itself. Without it every ready stream ran a
slice in each turn of the loop, so 50 streams made each turn ~25 ms long and a ``health`` on
another connection, which needs three turns, waited 300 ms and more; 50 chats sent at once all
started their streams (~4 ms each) in one turn (bench/stalls.py --health).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import weakref
from collections import deque
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing, asynccontextmanager
from typing import TYPE_CHECKING, Any, Final

from llm_service import LLMResponse, ResponseComplete, TextDelta, ToolCallStarted, ToolResult
from plugin_bridge.wire.context import RequestContext
from plugin_bridge.wire.models import (
    BudgetWarning,
    ChatDelta,
    ChatToolCall,
    ChatToolResult,
    Notification,
)
from plugin_bridge.wire.protocol import RequestId

if TYPE_CHECKING:
    from plugin_bridge.app.state import BridgeApp

COALESCE = True
"""Coalesce text deltas (False sends one notification per delta: bench/stalls.py's baseline)."""
YIELD_AFTER = 0.0005
"""Seconds of deltas the relay works through before it lets the loop run other work
(0: never, as in bench/stalls.py's earlier steps)."""
TURNS_PER_TICK = 2
"""How many relays that used up their slice resume per turn of the loop."""
DELTA_INTERVAL = 0.02
"""After a ``chat/delta``, the next one of the same request waits this long (text meanwhile joins
it): a frame costs a system call that wakes the client, and 50 fps reads as fluid. The first
delta and the last (the stream's end) never wait."""
MAX_PENDING_CHARS: Final = 65536
"""Past this much unsent text the relay waits for the sender (a client that reads slowly slows
the relay instead of growing its buffer)."""


@asynccontextmanager
async def budget_warnings(ctx: RequestContext[BridgeApp]) -> AsyncIterator[None]:
    """After the model calls in the block, send ``budget/warning`` for each budget whose 80 %
    mark they passed."""
    app = ctx.app
    before = await app.spending.snapshot()
    yield
    for crossing in await app.spending.crossings(before):
        await ctx.notify(
            BudgetWarning(
                period=crossing.period,
                spent_usd=round(crossing.spent_usd, 6),
                budget_usd=crossing.budget_usd,
            )
        )


async def relay(ctx: RequestContext[Any], events: AsyncGenerator[Any, None]) -> LLMResponse:
    """Forward ``events`` to the client; the final response (or RuntimeError if none came)."""
    reply = None
    turns = _turns()
    if YIELD_AFTER:
        # Starting the stream (the request built and sent to the model, ~4 ms) takes a turn of
        # the loop to itself: 50 chats sent at once would otherwise all start in one.
        await turns.wait(weight=TURNS_PER_TICK)
    deltas = _Deltas(ctx)
    held = time.perf_counter()
    try:
        async with aclosing(events) as stream:
            async for event in stream:
                if isinstance(event, ResponseComplete):
                    reply = event.response
                elif isinstance(event, TextDelta) and COALESCE:
                    await deltas.add(event.text)
                    if YIELD_AFTER and time.perf_counter() - held > YIELD_AFTER:
                        # A burst of chunks from one network read would otherwise be worked
                        # through in one go, while every other client waits.
                        await turns.wait()
                        held = time.perf_counter()
                elif (notification := _notification(ctx.request_id, event)) is not None:
                    await deltas.flush()
                    await ctx.notify(notification)
        await deltas.flush()
    finally:
        deltas.cancel()
    if reply is None:
        raise RuntimeError("the model's stream ended without a reply")
    return reply


def _notification(request_id: RequestId, event: object) -> Notification | None:
    """The notification that tells the client about ``event``, if it is one to tell."""
    if isinstance(event, TextDelta):
        return ChatDelta(request_id=request_id, text=event.text)
    if isinstance(event, ToolCallStarted):
        call = event.call
        return ChatToolCall(
            request_id=request_id, id=call.id, name=call.name, arguments=call.arguments
        )
    if isinstance(event, ToolResult):
        return ChatToolResult(
            request_id=request_id, id=event.call_id, is_error=event.is_error, content=event.content
        )
    return None


class _Turns:
    """The queue of relays waiting for their turn on one loop (see the module docstring)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.waiting: deque[tuple[asyncio.Future[None], int]] = deque()
        self.scheduled = False

    async def wait(self, weight: int = 1) -> None:
        """Return in a later turn of the loop, after the relays that were waiting before;
        ``weight``: how many of a turn's :data:`TURNS_PER_TICK` this one counts for."""
        turn = self.loop.create_future()
        self.waiting.append((turn, weight))
        if not self.scheduled:
            self.scheduled = True
            self.loop.call_soon(self._wake)
        await turn

    def _wake(self) -> None:
        woken = 0
        while self.waiting and woken < TURNS_PER_TICK:
            turn, weight = self.waiting.popleft()
            if not turn.done():  # a cancelled relay's turn is skipped
                turn.set_result(None)
                woken += weight
        self.scheduled = bool(self.waiting)
        if self.scheduled:
            self.loop.call_soon(self._wake)


_queues: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Turns] = weakref.WeakKeyDictionary()


def _turns() -> _Turns:
    loop = asyncio.get_running_loop()
    turns = _queues.get(loop)
    if turns is None:
        turns = _queues[loop] = _Turns(loop)
    return turns


class _Deltas:
    """Text not yet sent as ``chat/delta``, and the task that will send it."""

    def __init__(self, ctx: RequestContext[Any]) -> None:
        self.ctx = ctx
        self.parts: list[str] = []
        self.size = 0
        self.sender: asyncio.Task[None] | None = None
        self.sent_at = -DELTA_INTERVAL
        self.hurry = asyncio.Event()
        """Set by :meth:`flush`: the sender stops waiting out the interval."""

    async def add(self, text: str) -> None:
        self.parts.append(text)
        self.size += len(text)
        if self.sender is None or self.sender.done():
            self.sender = asyncio.create_task(self._send())
        elif self.size > MAX_PENDING_CHARS:
            await self.flush()

    async def flush(self) -> None:
        """Return once every text added so far has been sent."""
        self.hurry.set()
        while self.sender is not None and not self.sender.done():
            await self.sender
        self.hurry.clear()
        if self.sender is not None:
            self.sender.result()  # a failed send fails the relay

    def cancel(self) -> None:
        if self.sender is not None:
            self.sender.cancel()

    async def _send(self) -> None:
        await asyncio.sleep(0)  # one loop tick: the rest of this network read joins in
        loop = asyncio.get_running_loop()
        while self.parts:
            wait = self.sent_at + DELTA_INTERVAL - loop.time()
            if wait > 0 and not self.hurry.is_set():
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(wait):
                        await self.hurry.wait()
            self.sent_at = loop.time()
            text = "".join(self.parts)
            self.parts.clear()
            self.size = 0
            await self.ctx.notify(ChatDelta(request_id=self.ctx.request_id, text=text))
