"""The HTTP app: every route of docs/http.md behind :class:`~.guard.Guard`.

Other parts of the server add their own ASGI apps with ``mounts`` (e.g. MCP's streamable HTTP
at ``/mcp``) and the async context managers those apps need running with ``lifespans`` (an MCP
session manager's ``run``): they are entered when the listener starts and left when it stops.
The guard covers mounted apps too.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Collection, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from typing import TYPE_CHECKING

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from plugin_bridge.handlers.session import health_of
from plugin_bridge.httpapi import routes_local, routes_openai, routes_proxy
from plugin_bridge.httpapi.chat import HttpChat
from plugin_bridge.httpapi.guard import MAX_BODY_BYTES, Guard
from plugin_bridge.httpapi.limits import Concurrency, HttpLimits, Limited
from plugin_bridge.httpapi.responses import chat_of, json_response
from plugin_bridge.wire.models import dump

if TYPE_CHECKING:
    from starlette.types import ASGIApp

    from plugin_bridge.app.remote import RemoteGate
    from plugin_bridge.app.state import BridgeApp
    from plugin_bridge.wire.budget import MemoryBudget

Lifespan = Callable[[], AbstractAsyncContextManager[object]]


async def health(request: Request) -> Response:
    return json_response(dump(health_of(chat_of(request).bridge)))


def build_http_app(
    bridge: BridgeApp,
    *,
    port: int,
    allowed_origins: Collection[str],
    mounts: Sequence[BaseRoute] = (),
    lifespans: Sequence[Lifespan] = (),
    max_body: int = MAX_BODY_BYTES,
    budget: MemoryBudget | None = None,
    limits: HttpLimits | None = None,
    remote: RemoteGate | None = None,
) -> ASGIApp:
    """The guarded HTTP app of ``bridge`` for a listener on ``port``; its requests count in
    ``budget`` (the WebSocket server's) and are bounded by ``limits``; ``remote``: the remote
    listener's rules instead of the loopback one's."""
    limits = limits or HttpLimits()

    chat = HttpChat(bridge)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            for enter in lifespans:
                await stack.enter_async_context(enter())
            yield

    routes: list[BaseRoute] = [
        Route("/health", health, methods=["GET"]),
        *routes_proxy.PROXY_ROUTES,
        *routes_openai.OPENAI_ROUTES,
        *routes_local.LOCAL_ROUTES,
        *mounts,
    ]
    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.chat = chat
    limited = Limited(
        app,
        budget=budget,
        concurrency=Concurrency(limits.max_per_client, limits.max_requests),
        stall=limits.timeout,
    )
    return Guard(
        limited,
        token=bridge.token,
        port=port,
        allowed_origins=allowed_origins,
        max_body=max_body,
        identify=bridge.clients.caller,
        revoked=bridge.clients.revoked_name,
        remote=remote,
    )
