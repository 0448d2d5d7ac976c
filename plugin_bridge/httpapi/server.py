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

The remote listener's door (:class:`AcceptDoor`): what uvicorn creates for each connection it
accepts there, before TLS and before a key, so that
:class:`~plugin_bridge.app.remote.Connections` counts it from accept (the rules are the app's;
this only applies them). A connection over a limit is closed at once. Otherwise TLS is started
here (with :data:`~plugin_bridge.app.remote.HANDSHAKE_TIMEOUT`; uvicorn would leave asyncio's
60 s), and the HTTP protocol takes the connection; the same deadline then holds until the first
request head. The count ends when the connection does, or when it becomes a WebSocket (the
gate's slots count those).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import ssl
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, ClassVar, Final

import uvicorn
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from plugin_bridge.app.remote import HANDSHAKE_TIMEOUT, KEYED, Connections
from plugin_bridge.httpapi.limits import DRAIN_KEY, DROP_KEY, HttpLimits
from plugin_bridge.wire.refusals import RefusalLog
from plugin_bridge.wire.security import http_url
from plugin_bridge.wire.server import no_delay
from plugin_bridge.wire.transport import MAX_FRAME_BYTES, PING_INTERVAL, PING_TIMEOUT

if TYPE_CHECKING:
    from pathlib import Path

    from starlette.types import ASGIApp

    from plugin_bridge.app.remote import Connections

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
    door: AcceptDoor | None = None
    """The remote listener's count of this connection since accept (None elsewhere)."""
    _made = False
    _early = b""
    """Bytes TLS decrypted before ``connection_made`` (the door starts TLS, then hands over)."""

    def connection_made(self, transport: Any) -> None:
        self._made = True
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
        if self._early:
            early, self._early = self._early, b""
            self.data_received(early)

    def connection_lost(self, exc: Exception | None) -> None:
        if self.door is not None:
            self.door.ended()
        if not self._made:  # its TLS handshake failed: it never was an HTTP connection
            return
        self.shared.open -= 1
        self.shared.pipelined -= self._queued
        self._queued = 0
        self._disarm()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if not self._made:
            self._early += data  # one TLS read, at most: connection_made comes next
            return
        if not self._dropped:
            super().data_received(data)

    def on_message_begin(self) -> None:
        if self._dropped:
            return
        self._in_message = True
        self._head = 0
        if self.door is not None:
            self.door.head_received()
        self._arm("slow head")
        super().on_message_begin()
        state = self.scope.setdefault("state", {})  # ASGI's per-request state (typed, open)
        state[DROP_KEY] = self._drop  # the memory budget's way to drop this connection
        state[DRAIN_KEY] = self.flow.drain  # a response's bytes count until the client took them
        if self.door is not None:
            state[KEYED] = self.door.authenticated

    def handle_websocket_upgrade(self) -> None:
        """The remote listener's ``/ws``: the WebSocket protocol (with its own frame and ping
        limits) owns the connection from here."""
        self._disarm()
        self.shared.open -= 1
        if self.door is not None:
            self.door.ended()  # the gate's WebSocket slots count it from here
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


class AcceptDoor(asyncio.Protocol):
    """One accepted connection until the HTTP protocol (``inner``) has it."""

    inner: ClassVar[type[_Limits]]
    connections: ClassVar[Connections]
    tls: ClassVar[ssl.SSLContext | None]
    log: ClassVar[RefusalLog]

    def __init__(self, **uvicorn: Any) -> None:
        self._http = self.inner(**uvicorn)
        self._http.door = self
        self.address = ""
        self.counted = False
        self.keyed = False
        self._deadline: asyncio.TimerHandle | None = None
        self._transport: asyncio.Transport | None = None
        self._starting: asyncio.Task[None] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        peer = transport.get_extra_info("peername")
        self.address = str(peer[0]) if peer else ""
        refused = self.connections.admit(self.address)
        if refused is not None:
            self.log.refused(f"closed a connection at once: {refused}")
            transport.abort()
            return
        self.counted = True
        self._transport = transport
        loop = asyncio.get_running_loop()
        self._deadline = loop.call_later(HANDSHAKE_TIMEOUT, self._expired)
        if self.tls is None:
            transport.set_protocol(self._http)
            self._http.connection_made(transport)
            return
        transport.pause_reading()
        self._starting = loop.create_task(self._start_tls(transport, self.tls))

    async def _start_tls(self, transport: asyncio.Transport, tls: ssl.SSLContext) -> None:
        loop = asyncio.get_running_loop()
        try:
            secured = await loop.start_tls(
                transport,
                self._http,
                tls,
                server_side=True,
                ssl_handshake_timeout=HANDSHAKE_TIMEOUT,
            )
        except (OSError, ssl.SSLError, TimeoutError, ConnectionError, RuntimeError) as exc:
            self.log.refused(f"closed a connection: TLS handshake failed ({type(exc).__name__})")
            transport.abort()
            self.ended()  # the HTTP protocol never had it
            return
        if secured is None:  # the transport closed meanwhile
            self.ended()
            return
        self._http.connection_made(secured)

    def head_received(self) -> None:
        """The first request head is in: the handshake deadline is met."""
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def authenticated(self) -> None:
        """A request on this connection showed a valid key."""
        if self.counted and not self.keyed:
            self.keyed = True
            self.connections.authenticated(self.address)

    def ended(self) -> None:
        """The connection is closed, or handed to the WebSocket protocol: its count ends."""
        self.head_received()
        if self.counted:
            self.counted = False
            self.connections.leave(self.address, authenticated=self.keyed)

    def _expired(self) -> None:
        self._deadline = None
        self.log.refused(f"closed a connection: no request within {HANDSHAKE_TIMEOUT:g} s")
        if self._transport is not None:
            self._transport.abort()
        if self._starting is not None and not self._starting.done():
            self._starting.cancel()
            self.ended()

    def connection_lost(self, exc: Exception | None) -> None:
        """Only before the HTTP protocol took the connection (a refusal, or during TLS)."""
        if self._starting is None or self._starting.done():
            self.ended()


def door_class(
    inner: type[_Limits], connections: Connections, tls: ssl.SSLContext | None, log: RefusalLog
) -> type[AcceptDoor]:
    """The :class:`AcceptDoor` of one listener."""

    class ListenerDoor(AcceptDoor):
        pass

    ListenerDoor.inner = inner
    ListenerDoor.connections = connections
    ListenerDoor.tls = tls
    ListenerDoor.log = log
    return ListenerDoor


def tls_context(cert_file: str, key_file: str) -> ssl.SSLContext:
    """The server side of TLS with the listener's certificate (TLS 1.2 and up)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(cert_file, key_file)
    context.set_alpn_protocols(["http/1.1"])
    return context


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
        connections: Connections | None = None,
        refusals: RefusalLog | None = None,
    ) -> None:
        class Protocol(_Limits):
            shared = _Shared(limits)

        http: type[asyncio.Protocol] = Protocol
        if connections is not None:  # the remote listener: counted from accept, TLS here
            context = None if tls is None else tls_context(str(tls[0]), str(tls[1]))
            http = door_class(Protocol, connections, context, refusals or RefusalLog(logger))

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
            http=http,
            timeout_graceful_shutdown=drain_timeout,
            timeout_keep_alive=max(1, int(limits.timeout)),
            backlog=128,  # connections accepted per turn of the loop, at most
            ssl_certfile=None if tls is None or connections is not None else tls[0],
            ssl_keyfile=None if tls is None or connections is not None else tls[1],
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


class _DenialsLoggedOnce(logging.Filter):
    """uvicorn's sans-io WebSocket logs an ERROR for every handshake the app refused with an
    HTTP answer ("returned without completing handshake"): each refusal is already counted
    by a :class:`~plugin_bridge.wire.refusals.RefusalLog`, at most a line a second."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage() != "ASGI callable returned without completing handshake."


_DENIALS = _DenialsLoggedOnce()


def _websocket_options(websocket: bool) -> dict[str, Any]:
    """uvicorn's WebSocket settings: the bridge's frame and ping limits, or no WebSockets."""
    if not websocket:
        return {}
    logging.getLogger("uvicorn.error").addFilter(_DENIALS)  # the same filter: added once
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
    connections: Connections | None = None,
    refusals: RefusalLog | None = None,
) -> HttpServer:
    """Serve ``app`` on the listening ``sock``; returns once it accepts requests. ``tls``:
    the certificate and key files (HTTPS); ``websocket``: the app has WebSocket routes;
    ``connections``: the remote listener's count from accept (:class:`AcceptDoor`), whose
    refusals go to ``refusals``."""
    server = HttpServer(
        app, sock, drain_timeout, limits or HttpLimits(), tls, websocket, connections, refusals
    )
    await server.start()
    return server
