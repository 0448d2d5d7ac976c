"""uvicorn, in the server's own event loop, on a socket ``serve`` bound before anything loaded.

uvicorn's own signal handling is left out (``serve`` owns SIGTERM / SIGINT), and so is its
logging set-up (the server's logging stays as configured). HTTP is parsed by httptools (C, as
``uvicorn[standard]`` does), not h11. Accepted connections get TCP_NODELAY, as the WebSocket's
do: streamed chunks go out at once.

uvicorn closes a connection idle *after* a response (``timeout_keep_alive``) but bounds nothing
before: a connection that sends nothing, a request head or body sent a byte at a time, or
requests pipelined without reading the answers (uvicorn reads on after each answer, so the
queue grew by every read: 866 MB in 3 s). :class:`_Limits` adds, per :class:`~.limits.HttpLimits`:

- a connection idle, or slow to send a request's head or body, for ``timeout`` s is dropped;
- a head larger than ``max_head_bytes`` drops the connection;
- more than ``max_pipelined`` requests queued on a connection, or ``max_pipelined_all`` over
  all of them, drop the connection that queues one more; nothing more is read from a
  connection while requests are queued on it;
- past ``max_connections`` open connections, new ones are closed at once.

Each drop is logged through one :class:`~.limits.RefusalLog` (at most a line a second).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Final

import uvicorn
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from plugin_bridge.httpapi.limits import DRAIN_KEY, DROP_KEY, HttpLimits
from plugin_bridge.wire.refusals import RefusalLog
from plugin_bridge.wire.security import http_url
from plugin_bridge.wire.server import no_delay
from plugin_bridge.wire.transport import MAX_FRAME_BYTES, PING_INTERVAL, PING_TIMEOUT

if TYPE_CHECKING:
    from pathlib import Path

    from starlette.types import ASGIApp

HTTP_DRAIN_TIMEOUT: Final = 5
"""Seconds responses still streaming at shutdown get to finish before they are cancelled."""


logger = logging.getLogger(__name__)


class _Shared:
    """What the connections of one listener count together."""

    def __init__(self, limits: HttpLimits) -> None:
        self.limits = limits
        self.open = 0
        self.pipelined = 0
        self.log = RefusalLog(logger)


class _Limits(HttpToolsProtocol):
    """uvicorn's httptools protocol with the bounds of the module docstring."""

    shared: _Shared

    def connection_made(self, transport: Any) -> None:
        no_delay(transport.get_extra_info("socket"))
        super().connection_made(transport)
        self._dropped = False
        self._in_message = False
        self._head = 0
        self._queued = 0
        self._deadline: asyncio.TimerHandle | None = None
        self.shared.open += 1
        if self.shared.open > self.shared.limits.max_connections:
            self._drop("too many open connections")
            return
        self._arm("idle")

    def connection_lost(self, exc: Exception | None) -> None:
        self.shared.open -= 1
        self.shared.pipelined -= self._queued
        self._queued = 0
        self._disarm()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if not self._dropped:
            super().data_received(data)

    def on_message_begin(self) -> None:
        if self._dropped:
            return
        self._in_message = True
        self._head = 0
        self._arm("slow head")
        super().on_message_begin()
        state = self.scope.setdefault("state", {})  # ASGI's per-request state (typed, open)
        state[DROP_KEY] = self._drop  # the memory budget's way to drop this connection
        state[DRAIN_KEY] = self.flow.drain  # a response's bytes count until the client took them

    def handle_websocket_upgrade(self) -> None:
        """The remote listener's ``/ws``: the WebSocket protocol (with its own frame and ping
        limits) owns the connection from here."""
        self._disarm()
        self.shared.open -= 1
        super().handle_websocket_upgrade()

    def on_url(self, url: bytes) -> None:
        self._count_head(len(url))
        if not self._dropped:
            super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        self._count_head(len(name) + len(value))
        if not self._dropped:
            super().on_header(name, value)

    def on_headers_complete(self) -> None:
        if self._dropped:
            return
        queued = len(self.pipeline)
        super().on_headers_complete()
        if len(self.pipeline) > queued:  # queued behind the request being answered
            self._queued += 1
            self.shared.pipelined += 1
            limits = self.shared.limits
            if self._queued > limits.max_pipelined:
                self._drop(f"more than {limits.max_pipelined} requests queued on a connection")
                return
            if self.shared.pipelined > limits.max_pipelined_all:
                self._drop(f"more than {limits.max_pipelined_all} requests queued in all")
                return
        self._arm("slow body")

    def on_body(self, body: bytes) -> None:
        if not self._dropped:
            super().on_body(body)

    def on_message_complete(self) -> None:
        if self._dropped:
            return
        self._in_message = False
        self._disarm()  # the app has the whole request: its own limits apply
        super().on_message_complete()

    def on_response_complete(self) -> None:
        if self.pipeline:
            self._queued -= 1
            self.shared.pipelined -= 1
        super().on_response_complete()
        if self.pipeline:
            self.flow.pause_reading()  # read no more while requests wait their turn
        elif not self._in_message and not self.transport.is_closing():
            self._arm("idle")

    def _count_head(self, size: int) -> None:
        self._head += size
        if not self._dropped and self._head > self.shared.limits.max_head_bytes:
            self._drop(f"a request head over {self.shared.limits.max_head_bytes} bytes")

    def _arm(self, why: str) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(self.shared.limits.timeout, self._expired, why)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expired(self, why: str) -> None:
        self._deadline = None
        if why != "slow body" and self.cycle is not None and not self.cycle.response_complete:
            self._arm(why)  # an answer is still being written: the connection is not idle
            return
        self._drop(f"{why} for {self.shared.limits.timeout:g} s")

    def _drop(self, why: str) -> None:
        """Close the connection at once (its queued requests and unread answers go too)."""
        if self._dropped:
            return
        self._dropped = True
        self._disarm()
        self.shared.log.refused(f"dropped a connection: {why}")
        if self.cycle is not None and not self.cycle.response_complete:
            self.cycle.disconnected = True
        self.transport.abort()


class HttpServer:
    """A running HTTP listener; ``await server.close()`` stops it."""

    def __init__(
        self,
        app: ASGIApp,
        sock: socket.socket,
        drain_timeout: int,
        limits: HttpLimits,
        tls: tuple[Path, Path] | None = None,
        websocket: bool = False,
    ) -> None:
        class Protocol(_Limits):
            shared = _Shared(limits)

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
            http=Protocol,
            timeout_graceful_shutdown=drain_timeout,
            timeout_keep_alive=max(1, int(limits.timeout)),
            backlog=128,  # connections accepted per turn of the loop, at most
            ssl_certfile=None if tls is None else tls[0],
            ssl_keyfile=None if tls is None else tls[1],
            **_websocket_options(websocket),
        )
        host, self.port = sock.getsockname()[:2]
        self.url = http_url(host, self.port)
        if tls is not None:
            self.url = "https" + self.url.removeprefix("http")
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


def _websocket_options(websocket: bool) -> dict[str, Any]:
    """uvicorn's WebSocket settings: the bridge's frame and ping limits, or no WebSockets."""
    if not websocket:
        return {}
    return {
        "ws": "websockets-sansio",
        "ws_max_size": MAX_FRAME_BYTES,
        "ws_ping_interval": PING_INTERVAL,
        "ws_ping_timeout": PING_TIMEOUT,
        "ws_per_message_deflate": False,
    }


async def start_http(
    app: ASGIApp,
    sock: socket.socket,
    *,
    drain_timeout: int = HTTP_DRAIN_TIMEOUT,
    limits: HttpLimits | None = None,
    tls: tuple[Path, Path] | None = None,
    websocket: bool = False,
) -> HttpServer:
    """Serve ``app`` on the listening ``sock``; returns once it accepts requests. ``tls``:
    the certificate and key files (HTTPS); ``websocket``: the app has WebSocket routes."""
    server = HttpServer(app, sock, drain_timeout, limits or HttpLimits(), tls, websocket)
    await server.start()
    return server
