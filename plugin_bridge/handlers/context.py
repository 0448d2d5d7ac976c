"""The request context and router of the bridge's handlers, typed with the app's state."""

from __future__ import annotations

from typing import TypeAlias

from plugin_bridge.app.clients import OWNER_CALLER, Caller
from plugin_bridge.app.state import BridgeApp
from plugin_bridge.wire.context import RequestContext
from plugin_bridge.wire.rpc import Router

Context: TypeAlias = RequestContext[BridgeApp]
AppRouter: TypeAlias = Router[BridgeApp]


def caller_of(ctx: Context) -> Caller:
    """Who sent the request (the owner for a context built without a connection's caller)."""
    return ctx.caller if isinstance(ctx.caller, Caller) else OWNER_CALLER


async def authorize(ctx: Context, method: str) -> None:
    """The app's scope rules for ``method`` (``initialize`` authenticates itself; a client
    key's request hops once to the keys' door)."""
    if method != "initialize":
        await ctx.app.clients.authorize(caller_of(ctx), method)
