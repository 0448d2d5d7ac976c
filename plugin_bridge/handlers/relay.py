"""The one relay from a model's event stream to the client's notifications, and the budget
guard around every model call a request makes.

``chat/send`` and ``command/searchSummarize`` both stream through :func:`relay`: text deltas
become ``chat/delta``, tool calls ``chat/toolCall``, tool results ``chat/toolResult``, all
tagged with the request's id; the stream is closed however the relay ends (a cancelled request
drops the provider's HTTP stream at once).

Text deltas are coalesced: the relay hands them to a sender task and goes on reading the model,
so every delta that arrives before the sender next runs (the rest of one network read, or all
that came while the client's socket was busy) goes out as one ``chat/delta``. The first delta
waits only one loop tick; the order of text and other notifications is kept.
"""

from __future__ import annotations

import asyncio
import time
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
MAX_PENDING_CHARS: Final = 65536
"""Past this much unsent text the relay waits for the sender (a client that reads slowly slows
the relay instead of growing its buffer)."""


@asynccontextmanager
async def spending(ctx: RequestContext[BridgeApp]) -> AsyncIterator[None]:
    """Refuse (-32012) when a budget is used up, before any provider call; after the calls,
    send ``budget/warning`` for each budget whose 80 % mark they passed."""
    app = ctx.app
    app.spending.check()
    before = app.spending.snapshot()
    yield
    for crossing in app.spending.crossings(before):
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
                        await asyncio.sleep(0)
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


class _Deltas:
    """Text not yet sent as ``chat/delta``, and the task that will send it."""

    def __init__(self, ctx: RequestContext[Any]) -> None:
        self.ctx = ctx
        self.parts: list[str] = []
        self.size = 0
        self.sender: asyncio.Task[None] | None = None

    async def add(self, text: str) -> None:
        self.parts.append(text)
        self.size += len(text)
        if self.sender is None or self.sender.done():
            self.sender = asyncio.create_task(self._send())
        elif self.size > MAX_PENDING_CHARS:
            await self.flush()

    async def flush(self) -> None:
        """Return once every text added so far has been sent."""
        while self.sender is not None and not self.sender.done():
            await self.sender
        if self.sender is not None:
            self.sender.result()  # a failed send fails the relay

    def cancel(self) -> None:
        if self.sender is not None:
            self.sender.cancel()

    async def _send(self) -> None:
        await asyncio.sleep(0)  # one loop tick: the rest of this network read joins in
        while self.parts:
            text = "".join(self.parts)
            self.parts.clear()
            self.size = 0
            await self.ctx.notify(ChatDelta(request_id=self.ctx.request_id, text=text))
