"""The vault as an MCP server: ``obsidian-ai-bridge mcp`` over stdio (:mod:`plugin_bridge.cli.mcp`)
and ``/mcp`` over streamable HTTP on the bridge's HTTP listener (:func:`streamable_http_app`).

Both offer the model's own vault tools (:mod:`plugin_bridge.mcp.tools`). The SDK takes about a
second to import, so ``/mcp`` imports it on its first request, not when the server starts.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Final

from llm_service import lazy
from llm_service.warmup import import_early
from plugin_bridge.app.vault_tools import HTTP_WRITES_OFF
from plugin_bridge.mcp.tools import LocalTools

if TYPE_CHECKING:
    from mcp.server import streamable_http_manager
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from starlette.types import Receive, Scope, Send

    from plugin_bridge.app.state import BridgeApp
else:
    streamable_http_manager = lazy.module("mcp.server.streamable_http_manager")


def streamable_http_app(app: BridgeApp, *, allow_writes: bool | None = None) -> McpHttpApp:
    """The ASGI app of ``/mcp`` for the server of ``app``: its vault's tools, the writes only
    with ``allow_writes`` (None: while the app's setting ``http_allow_writes`` is on, read at
    every call). Mount it behind the listener's bearer-token, Origin, Host and size checks,
    with :meth:`McpHttpApp.lifespan` among the listener's lifespans."""
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
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        manager = await asyncio.shield(self._started())
        await manager.handle_request(scope, receive, send)

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
            from plugin_bridge.mcp.server import build_server

            tools = LocalTools(
                self.app.vault,
                allow_writes=self._writes_allowed,
                writer=self.app.writes.write,
                writes_off=HTTP_WRITES_OFF,
                reviewed=self.app.assistant.plugin_reviewed_tools,
            )
            server = build_server(tools, self.app.vault.name)
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

    def _writes_allowed(self) -> bool:
        if self.allow_writes is not None:
            return self.allow_writes
        return self.app.config.http_allow_writes

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


WARM_AFTER: Final = 5.0
"""Seconds after the listener starts when ``/mcp`` imports the SDK without a request."""
