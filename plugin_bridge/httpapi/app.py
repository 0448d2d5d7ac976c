"""The HTTP app: every route of docs/http.md behind :class:`~.guard.Guard`.

Other parts of the server add their own ASGI apps with ``mounts`` (e.g. MCP's streamable HTTP
at ``/mcp``) and the async context managers those apps need running with ``lifespans`` (an MCP
session manager's ``run``): they are entered when the listener starts and left when it stops.
The guard covers mounted apps too.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Collection, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from typing import TYPE_CHECKING, cast

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from plugin_bridge.httpapi.guard import MAX_BODY_BYTES, Guard
from plugin_bridge.wire.models import dump

if TYPE_CHECKING:
    from starlette.types import ASGIApp

    from plugin_bridge.app.state import BridgeApp

Lifespan = Callable[[], AbstractAsyncContextManager[object]]


def bridge_of(request: Request) -> BridgeApp:
    """The bridge application a route serves."""
    return cast("BridgeApp", request.app.state.bridge)


async def health(request: Request) -> Response:
    from plugin_bridge.handlers.session import health_of

    return JSONResponse(dump(health_of(bridge_of(request))))


def build_http_app(
    bridge: BridgeApp,
    *,
    port: int,
    allowed_origins: Collection[str],
    mounts: Sequence[BaseRoute] = (),
    lifespans: Sequence[Lifespan] = (),
    max_body: int = MAX_BODY_BYTES,
) -> ASGIApp:
    """The guarded HTTP app of ``bridge`` for a listener on ``port``."""

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            for enter in lifespans:
                await stack.enter_async_context(enter())
            yield

    routes: list[BaseRoute] = [Route("/health", health, methods=["GET"]), *mounts]
    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.bridge = bridge
    return Guard(
        app, token=bridge.token, port=port, allowed_origins=allowed_origins, max_body=max_body
    )
