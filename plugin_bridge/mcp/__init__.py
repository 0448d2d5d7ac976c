"""The vault as an MCP server: ``obsidian-ai-bridge mcp`` over stdio (:mod:`plugin_bridge.cli.mcp`),
``/mcp`` over streamable HTTP on the bridge's HTTP listeners (:func:`streamable_http_app`), and
the legacy HTTP+SSE transport beside it (``GET /sse``, ``POST /messages``: :attr:`McpHttpApp.sse`
and :attr:`McpHttpApp.messages`) for clients that only speak that.

All offer the model's own vault tools (:mod:`plugin_bridge.mcp.tools`). The SDK takes about a
second to import, so ``/mcp`` imports it on its first request, not when the server starts.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Final

from llm_service import lazy
from llm_service.warmup import import_early
from plugin_bridge.mcp.tools import LocalTools

if TYPE_CHECKING:
    from typing import Any

    from mcp.server import streamable_http_manager
    from mcp.server.lowlevel.server import Server
    from mcp.server.sse import SseServerTransport
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from starlette.types import Receive, Scope, Send

    from plugin_bridge.app.state import BridgeApp
else:
    streamable_http_manager = lazy.module("mcp.server.streamable_http_manager")

SSE_PATH: Final = "/sse"
MESSAGES_PATH: Final = "/messages"


def streamable_http_app(app: BridgeApp, *, allow_writes: bool | None = None) -> McpHttpApp:
    """The ASGI app of ``/mcp`` for the server of ``app``: its vault's tools as the access
    policy gives them (:meth:`~plugin_bridge.app.access.ToolAccess.for_mcp`), the writes only
    with ``allow_writes`` (None: as the settings say, read at every call). Mount it behind
    the listener's bearer-token, Origin, Host and size checks, with
    :meth:`McpHttpApp.lifespan` among the listener's lifespans."""
    return McpHttpApp(app, allow_writes=allow_writes)


class McpHttpApp:
    """MCP over streamable HTTP (stateless, JSON responses) through the SDK's session manager,
    built and started by the first request and stopped when :meth:`lifespan` ends. A start
    that failed (the SDK's import, its task group: a transient lack of file handles) answers
    its waiting requests with the error, and the next request starts it again."""

    def __init__(self, app: BridgeApp, *, allow_writes: bool | None) -> None:
        self.app = app
        self.allow_writes = allow_writes
        self._manager: asyncio.Future[StreamableHTTPSessionManager] | None = None
        self._sse: tuple[Server[Any], SseServerTransport] | None = None
        """The HTTP+SSE transport's server (stateful: it follows notes with
        ``resources/subscribe`` and tells list changes) and transport, once started."""
        self._closing = asyncio.Event()
        self.sse = Endpoint(self._open_sse)
        """The ASGI app of ``GET /sse``."""
        self.messages = Endpoint(self._message)
        """The ASGI app of ``POST /messages``."""
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        manager = await asyncio.shield(self._started())
        await manager.handle_request(scope, receive, send)

    async def _open_sse(self, scope: Scope, receive: Receive, send: Send) -> None:
        """``GET /sse``: one MCP connection of the HTTP+SSE transport, for as long as the
        client holds the stream (its ``endpoint`` event says where to ``POST`` messages)."""
        if scope["method"] != "GET":
            await _not_allowed(send, "GET")
            return
        await asyncio.shield(self._started())  # the SDK imported, off the event loop
        from plugin_bridge.mcp.server import initialization_options, owned

        assert self._sse is not None
        server, transport = self._sse
        owned(scope)
        async with transport.connect_sse(scope, receive, send) as (read, write):
            run = asyncio.ensure_future(server.run(read, write, initialization_options(server)))
            closing = asyncio.ensure_future(self._closing.wait())
            try:
                await asyncio.wait({run, closing}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for task in (run, closing):
                    task.cancel()
                await asyncio.gather(run, closing, return_exceptions=True)
                await write.aclose()  # ends the event stream: the client hears the end

    async def _message(self, scope: Scope, receive: Receive, send: Send) -> None:
        """``POST /messages?session_id=…``: a message of the connection ``GET /sse`` opened,
        taken only with the credential that opened it."""
        await asyncio.shield(self._started())
        from plugin_bridge.mcp.server import owned

        assert self._sse is not None
        owned(scope)
        await self._sse[1].handle_post_message(scope, receive, send)

    def _started(self) -> asyncio.Future[StreamableHTTPSessionManager]:
        if self._failed() and not self._stop.is_set():
            self._manager = None  # a start that failed (out of file handles...) is tried again
        if self._manager is None:
            self._manager = asyncio.get_running_loop().create_future()
            self._task = asyncio.create_task(self._run(self._manager), name="mcp http")
        return self._manager

    async def _run(self, started: asyncio.Future[StreamableHTTPSessionManager]) -> None:
        try:
            await import_early("mcp.server.streamable_http_manager")  # ~1 s, off the loop
            from mcp.server.sse import SseServerTransport

            from plugin_bridge.mcp.server import build_server

            tools = LocalTools(self.app.vault, self.app.access, allow_writes=self.allow_writes)
            server = build_server(tools, self.app.vault.name, stateless=True)
            sse = build_server(tools, self.app.vault.name)
            self._sse = sse, SseServerTransport(MESSAGES_PATH)
            manager = streamable_http_manager.StreamableHTTPSessionManager(
                app=server, json_response=True, stateless=True
            )
            async with manager.run():
                started.set_result(manager)
                await self._stop.wait()
        except BaseException as exc:
            if not started.done():  # a request waiting for it gets the error, never hangs
                started.set_exception(exc)
            if not isinstance(exc, Exception):
                raise
            logging.getLogger(__name__).error("MCP over HTTP stopped", exc_info=exc)

    def _failed(self) -> bool:
        """The session manager failed to start, or stopped on an error."""
        manager = self._manager
        if manager is None or not manager.done():
            return False
        return (
            manager.cancelled()
            or manager.exception() is not None
            or bool(self._task is not None and self._task.done())
        )

    def close_streams(self) -> None:
        """End every ``GET /sse`` connection now (the server stops: the listeners wait for
        responses in flight, and these would never end by themselves)."""
        self._closing.set()

    @contextlib.asynccontextmanager
    async def lifespan(self) -> AsyncIterator[None]:
        """The listener's lifespan for ``/mcp``: :data:`WARM_AFTER` seconds in, the SDK is
        imported unless a request did it already (a client's first request would otherwise
        wait for it: the official client gives its ``server/discover`` probe 10 s, and on a
        busy machine the import can take that long); on exit, the session manager stops."""
        warm = asyncio.get_running_loop().call_later(WARM_AFTER, self._started)
        try:
            yield
        finally:
            warm.cancel()
            self._stop.set()
            if self._task is not None:
                await self._task


class Endpoint:
    """An ASGI app around a coroutine (Starlette's ``Route`` takes a bound method for a
    request handler, not for an ASGI app)."""

    def __init__(self, handle: Callable[[Scope, Receive, Send], Awaitable[None]]) -> None:
        self.handle = handle

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.handle(scope, receive, send)


async def _not_allowed(send: Send, allow: str) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": 405,
            "headers": [(b"allow", allow.encode()), (b"content-length", b"0")],
        }
    )
    await send({"type": "http.response.body", "body": b""})


WARM_AFTER: Final = 5.0
"""Seconds after the listener starts when ``/mcp`` imports the SDK without a request."""
