"""The thin WebSocket layer: handshake checks, then frames between websockets and a Connection.

The server owns its live connections (as websockets' own server does). Limits are in
:mod:`plugin_bridge.wire.transport`; a connection that has not completed ``initialize`` within
``init_timeout`` seconds is closed with 4408.
"""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import Collection
from http import HTTPStatus
from typing import TYPE_CHECKING, Final, Generic, TypeVar

from plugin_bridge.wire.connection import Connection
from plugin_bridge.wire.protocol import CLOSE_INIT_TIMEOUT
from plugin_bridge.wire.security import (
    DEFAULT_ALLOWED_ORIGINS,
    bind_socket,
    check_handshake,
    ws_url,
)
from plugin_bridge.wire.transport import (
    MAX_FRAME_BYTES,
    PING_INTERVAL,
    PING_TIMEOUT,
    quiet_websockets_logger,
)

if TYPE_CHECKING:
    from types import TracebackType

    from websockets.asyncio.server import Server, ServerConnection
    from websockets.http11 import Request, Response

    from plugin_bridge.wire.rpc import Router

logger = logging.getLogger(__name__)

DEFAULT_INIT_TIMEOUT: Final = 10.0
S = TypeVar("S")


class BridgeServer(Generic[S]):
    """A running server; ``async with await start_server(router, app) as server: server.url``."""

    def __init__(
        self,
        router: Router[S],
        app: S,
        sock: socket.socket,
        *,
        allowed_origins: Collection[str] = DEFAULT_ALLOWED_ORIGINS,
        init_timeout: float = DEFAULT_INIT_TIMEOUT,
    ) -> None:
        self.router = router
        self.app = app
        self.allowed_origins = frozenset(allowed_origins)
        self.init_timeout = init_timeout
        self.connections: set[Connection[S]] = set()
        host, self.port = sock.getsockname()[:2]
        self.url = ws_url(host, self.port)
        self._sock = sock
        self._server: Server | None = None

    async def start(self) -> None:
        from websockets.asyncio.server import serve

        self._server = await serve(
            self._handle,
            sock=self._sock,
            process_request=self._check_handshake,
            max_size=MAX_FRAME_BYTES,
            ping_interval=PING_INTERVAL,
            ping_timeout=PING_TIMEOUT,
            logger=quiet_websockets_logger("plugin_bridge.websockets"),
        )

    async def close(self) -> None:
        """Stop accepting, cancel in-flight work, close connections with 1001 (going away)."""
        await asyncio.gather(*(c.connection_lost() for c in list(self.connections)))
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    async def __aenter__(self) -> BridgeServer[S]:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    def _check_handshake(self, connection: ServerConnection, request: Request) -> Response | None:
        reason = check_handshake(request.headers, self.port, self.allowed_origins)
        if reason is None:
            return None
        logger.warning("refused a WebSocket handshake: %s", reason.strip())
        return connection.respond(HTTPStatus.FORBIDDEN, reason)

    async def _handle(self, ws: ServerConnection) -> None:
        from websockets.exceptions import ConnectionClosed

        async def send(data: bytes) -> None:
            try:
                await ws.send(data, text=True)
            except ConnectionClosed:
                logger.debug("dropped a message for a closed connection")

        no_delay(ws.transport.get_extra_info("socket"))
        connection = Connection(self.router, self.app, send, peer_name=str(ws.id)[:8])
        self.connections.add(connection)
        deadline = asyncio.get_running_loop().time() + self.init_timeout
        try:
            while True:
                if connection.ready:
                    frame = await ws.recv()
                else:
                    try:
                        async with asyncio.timeout_at(deadline):
                            frame = await ws.recv()
                    except TimeoutError:
                        await ws.close(CLOSE_INIT_TIMEOUT, "initialize timeout")
                        return
                await connection.handle_frame(frame)
                close = connection.protocol.close_request
                if close is not None:
                    await ws.close(close.code, close.reason)
                    return
        except ConnectionClosed:
            pass
        finally:
            await connection.connection_lost()
            self.connections.discard(connection)


def no_delay(sock: socket.socket | None) -> None:
    """Send small frames at once (TCP_NODELAY). asyncio sets it only on sockets whose protocol
    is IPPROTO_TCP, and an accepted socket of ``socket.create_server`` says 0: Nagle then held
    each small notification back for up to 40 ms."""
    if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


async def start_server(
    router: Router[S],
    app: S,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    sock: socket.socket | None = None,
    allowed_origins: Collection[str] = DEFAULT_ALLOWED_ORIGINS,
    init_timeout: float = DEFAULT_INIT_TIMEOUT,
) -> BridgeServer[S]:
    """Serve ``router``'s methods with ``app`` on ``sock`` (listening) or a new ``host:port``."""
    server = BridgeServer(
        router,
        app,
        sock if sock is not None else bind_socket(host, port),
        allowed_origins=allowed_origins,
        init_timeout=init_timeout,
    )
    await server.start()
    return server
