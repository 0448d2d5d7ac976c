"""The one relay from a model's event stream to the client's notifications, and the budget
guard around every model call a request makes.

``chat/send`` and ``command/searchSummarize`` both stream through :func:`relay`: text deltas
become ``chat/delta``, tool calls ``chat/toolCall``, tool results ``chat/toolResult``, all
tagged with the request's id; the stream is closed however the relay ends (a cancelled request
drops the provider's HTTP stream at once).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing, asynccontextmanager
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from llm_service import LLMResponse, ResponseComplete, TextDelta, ToolCallStarted, ToolResult
from plugin_bridge.wire.context import RequestContext
from plugin_bridge.wire.conversation_models import BudgetWarning
from plugin_bridge.wire.models import ChatDelta, ChatToolCall, ChatToolResult
from plugin_bridge.wire.protocol import RequestId

if TYPE_CHECKING:
    from plugin_bridge.app.state import BridgeApp


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
            "budget/warning",
            BudgetWarning(
                period=crossing.period,
                spent_usd=round(crossing.spent_usd, 6),
                budget_usd=crossing.budget_usd,
            ),
        )


async def relay(ctx: RequestContext[Any], events: AsyncGenerator[Any, None]) -> LLMResponse:
    """Forward ``events`` to the client; the final response (or RuntimeError if none came)."""
    reply = None
    async with aclosing(events) as stream:
        async for event in stream:
            if isinstance(event, ResponseComplete):
                reply = event.response
                continue
            notification = _notification(ctx.request_id, event)
            if notification is not None:
                await ctx.notify(*notification)
    if reply is None:
        raise RuntimeError("the model's stream ended without a reply")
    return reply


def _notification(request_id: RequestId, event: object) -> tuple[str, BaseModel] | None:
    """The notification that tells the client about ``event``, if it is one to tell."""
    if isinstance(event, TextDelta):
        return "chat/delta", ChatDelta(request_id=request_id, text=event.text)
    if isinstance(event, ToolCallStarted):
        call = event.call
        return "chat/toolCall", ChatToolCall(
            request_id=request_id, id=call.id, name=call.name, arguments=call.arguments
        )
    if isinstance(event, ToolResult):
        return "chat/toolResult", ChatToolResult(
            request_id=request_id, id=event.call_id, is_error=event.is_error, content=event.content
        )
    return None
