"""The thin WebSocket layer: handshake checks, then frames between websockets and a Connection.

Limits: frames over 4 MiB close the connection with 1009 (websockets ``max_size``); keepalive
pings every 20 s (a peer silent for 20 s more is dropped); a connection that has not completed
``initialize`` within ``app.init_timeout`` seconds is closed with 4408.
"""

from __future__ import annotations

import asyncio
import logging
from http import HTTPStatus
from typing import TYPE_CHECKING, Final

from plugin_bridge.connection import Connection
from plugin_bridge.protocol import CLOSE_INIT_TIMEOUT
from plugin_bridge.security import bind_socket, check_handshake, ws_url

if TYPE_CHECKING:
    import socket
    from types import TracebackType

    from websockets.asyncio.server import Server, ServerConnection
    from websockets.http11 import Request, Response

    from plugin_bridge.app import BridgeApp

logger = logging.getLogger("plugin_bridge.server")

MAX_FRAME_BYTES: Final = 4 * 1024 * 1024
PING_INTERVAL: Final = 20.0
PING_TIMEOUT: Final = 20.0


def quiet_websockets_logger(name: str) -> logging.Logger:
    """A logger for websockets that never logs frames: they carry the token and note text."""
    ws_logger = logging.getLogger(name)
    ws_logger.setLevel(logging.INFO)
    return ws_logger


class BridgeServer:
    """A running server; ``async with await start_server(app) as server: server.url``."""

    def __init__(self, app: BridgeApp, sock: socket.socket) -> None:
        self.app = app
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
        await self.app.shutdown_connections()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    async def __aenter__(self) -> BridgeServer:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    def _check_handshake(self, connection: ServerConnection, request: Request) -> Response | None:
        reason = check_handshake(request.headers, self.port, self.app.allowed_origins)
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

        connection = Connection(self.app, send, peer_name=str(ws.id)[:8])
        self.app.connections.add(connection)
        deadline = asyncio.get_running_loop().time() + self.app.init_timeout
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
            self.app.connections.discard(connection)


async def start_server(
    app: BridgeApp, *, host: str = "127.0.0.1", port: int = 0, sock: socket.socket | None = None
) -> BridgeServer:
    """Serve ``app`` on ``sock`` (already listening) or a new socket on ``host:port``."""
    server = BridgeServer(app, sock if sock is not None else bind_socket(host, port))
    await server.start()
    return server
