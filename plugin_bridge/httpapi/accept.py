"""The remote listener's door: what uvicorn creates for each connection it accepts, before
TLS and before a key, so that :class:`~plugin_bridge.app.remote.Connections` counts it from
accept (the rules are the app's; this only applies them).

A connection over a limit is closed at once. Otherwise TLS is started here (with
:data:`~plugin_bridge.app.remote.HANDSHAKE_TIMEOUT`; uvicorn would give asyncio's 60 s), and
the HTTP protocol takes the connection; the same deadline then holds until the first request
head. The count ends when the connection does, or when it becomes a WebSocket (the gate's
slots count those). Refusals are logged through one
:class:`~plugin_bridge.wire.refusals.RefusalLog` (at most a line a second, with a count).
"""

from __future__ import annotations

import asyncio
import logging
import ssl
from typing import TYPE_CHECKING, Any, ClassVar

from plugin_bridge.app.remote import HANDSHAKE_TIMEOUT, Connections
from plugin_bridge.wire.refusals import RefusalLog

if TYPE_CHECKING:
    from plugin_bridge.httpapi.server import _Limits

logger = logging.getLogger(__name__)


class Door(asyncio.Protocol):
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
    inner: type[_Limits], connections: Connections, tls: ssl.SSLContext | None
) -> type[Door]:
    """The :class:`Door` of one listener."""

    class ListenerDoor(Door):
        pass

    ListenerDoor.inner = inner
    ListenerDoor.connections = connections
    ListenerDoor.tls = tls
    ListenerDoor.log = RefusalLog(logger, "Remote")
    return ListenerDoor


def tls_context(cert_file: str, key_file: str) -> ssl.SSLContext:
    """The server side of TLS with the listener's certificate (TLS 1.2 and up)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(cert_file, key_file)
    context.set_alpn_protocols(["http/1.1"])
    return context
