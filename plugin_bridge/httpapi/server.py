"""uvicorn, in the server's own event loop, on a socket ``serve`` bound before anything loaded.

uvicorn's own signal handling is left out (``serve`` owns SIGTERM / SIGINT), and so is its
logging set-up (the server's logging stays as configured). HTTP is parsed by httptools (C, as
``uvicorn[standard]`` does), not h11. Accepted connections get TCP_NODELAY, as the WebSocket's
do: streamed chunks go out at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Final

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from plugin_bridge.wire.security import http_url
from plugin_bridge.wire.server import no_delay

if TYPE_CHECKING:
    from starlette.types import ASGIApp

DEFAULT_DRAIN_TIMEOUT: Final = 5
"""Seconds responses still streaming at shutdown get to finish before they are cancelled."""


class _NoDelayHttpTools(HttpToolsProtocol):
    def connection_made(self, transport: Any) -> None:
        no_delay(transport.get_extra_info("socket"))
        super().connection_made(transport)


class HttpServer:
    """A running HTTP listener; ``await server.close()`` stops it."""

    def __init__(self, app: ASGIApp, sock: socket.socket, drain_timeout: int) -> None:
        import uvicorn

        class Server(uvicorn.Server):
            @contextlib.contextmanager
            def capture_signals(self) -> Iterator[None]:
                yield  # serve owns the signals

        config = uvicorn.Config(
            app,
            lifespan="on",
            log_config=None,
            log_level="warning",
            access_log=False,
            server_header=False,
            date_header=False,
            http=_NoDelayHttpTools,
            timeout_graceful_shutdown=drain_timeout,
        )
        host, self.port = sock.getsockname()[:2]
        self.url = http_url(host, self.port)
        self._server = Server(config)
        self._sock = sock
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self._task = asyncio.create_task(self._server.serve(sockets=[self._sock]), name="http")
        while not self._server.started:
            if self._task.done():
                with contextlib.suppress(SystemExit):  # uvicorn's answer to a failed start-up
                    self._task.result()
                raise RuntimeError("the HTTP listener did not start (see the log)")
            await asyncio.sleep(0.005)

    async def close(self) -> None:
        """Stop accepting; let responses in flight finish (at most the drain timeout)."""
        if self._task is None:
            return
        self._server.should_exit = True
        await self._task


async def start_http(
    app: ASGIApp, sock: socket.socket, *, drain_timeout: int = DEFAULT_DRAIN_TIMEOUT
) -> HttpServer:
    """Serve ``app`` on the listening ``sock``; returns once it accepts requests."""
    server = HttpServer(app, sock, drain_timeout)
    await server.start()
    return server
