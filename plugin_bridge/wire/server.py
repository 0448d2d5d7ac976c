"""The thin WebSocket layer: handshake checks, then frames between websockets and a Connection.

The server owns its live connections (as websockets' own server does). Limits are in
:mod:`plugin_bridge.wire.transport`; a connection that has not completed ``initialize`` within
``init_timeout`` seconds, or within ``init_frames`` frames, is closed with 4408. No client can
hold the event loop: the read loop yields after every frame (each connection gets one frame
per turn of the loop), and what all connections together make the server hold (replies being
built, unsent replies and events) is bounded by ``memory_budget`` (past it the new requests and
large replies of a connection holding at least its share wait for room, then are refused with
-32003 ``busy``, and the connections holding the most are closed with 4429); the HTTP listener
shares that budget (``server.budget``).
"""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import Callable, Collection
from http import HTTPStatus
from typing import TYPE_CHECKING, Any, Final, Generic, Protocol

from websockets.asyncio.server import serve
from websockets.exceptions import ConnectionClosed

from plugin_bridge.wire.budget import DEFAULT_MEMORY_BUDGET, MemoryBudget
from plugin_bridge.wire.connection import OUTGOING_LIMIT, Connection
from plugin_bridge.wire.context import S
from plugin_bridge.wire.models import Notification, ServerProof, dump
from plugin_bridge.wire.protocol import CloseCode
from plugin_bridge.wire.refusals import RefusalLog
from plugin_bridge.wire.security import (
    DEFAULT_ALLOWED_ORIGINS,
    BadNonce,
    bind_socket,
    check_handshake,
    nonce_of,
    quiet_accept_errors,
    server_proof,
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
DEFAULT_INIT_FRAMES: Final = 32
"""A connection that sent this many frames without completing initialize is closed (4408)."""
WS_DRAIN_TIMEOUT: Final = 30.0
STUCK_CLOSE_SECONDS: Final = 1.0
"""A client that reads none of its replies for this long is closed with 4429."""


class FrameSocket(Protocol):
    """What the server uses of an accepted WebSocket: websockets' ``ServerConnection``, or
    the remote listener's ASGI WebSocket behind an adapter (``ConnectionClosed`` once gone)."""

    @property
    def id(self) -> object: ...
    @property
    def request(self) -> Any: ...
    @property
    def transport(self) -> Any: ...
    async def recv(self) -> str | bytes: ...
    async def send(self, message: bytes, *, text: bool = ...) -> None: ...
    async def close(self, code: int = ..., reason: str = ...) -> None: ...


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
        drain_timeout: float = WS_DRAIN_TIMEOUT,
        init_frames: int = DEFAULT_INIT_FRAMES,
        memory_budget: int = DEFAULT_MEMORY_BUDGET,
        token: str | None = None,
    ) -> None:
        self.drain_timeout = drain_timeout
        self.init_frames = init_frames
        self.token = token
        """Proves the server to a client that sends a nonce (None: no proof is sent)."""
        self.budget = MemoryBudget(memory_budget)
        self._refusals = RefusalLog(logger, "WebSocket")
        self._sockets: dict[Connection[S], FrameSocket] = {}
        self._loud_accept_errors: Callable[[], None] | None = None
        self.router = router
        self.app = app
        self.allowed_origins = frozenset(allowed_origins)
        self.init_timeout = init_timeout
        self.connections: set[Connection[S]] = set()
        host, self.port = sock.getsockname()[:2]
        self.url = ws_url(host, self.port)
        self._sock = sock
        self._server: Server | None = None
        self._broadcasts: set[asyncio.Task[None]] = set()

    def broadcast(self, notification: Notification) -> None:
        """Send ``notification`` to every initialized connection (without waiting)."""
        params = dump(notification)
        for connection in list(self.connections):
            if connection.ready:
                task = asyncio.create_task(connection.notify(notification.METHOD, params))
                self._broadcasts.add(task)
                task.add_done_callback(self._sent)

    def _sent(self, task: asyncio.Task[None]) -> None:
        self._broadcasts.discard(task)
        if not task.cancelled() and task.exception() is not None:
            logger.debug("a notification was not delivered: %r", task.exception())

    async def start(self) -> None:
        self._loud_accept_errors = quiet_accept_errors(asyncio.get_running_loop())
        self._server = await serve(
            self._handle,
            sock=self._sock,
            process_request=self._check_handshake,
            max_size=MAX_FRAME_BYTES,
            compression=None,  # loopback: deflate costs CPU per frame and ~300 KB per client
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
        if self._loud_accept_errors is not None:
            self._loud_accept_errors()
            self._loud_accept_errors = None

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
        if reason is not None:
            self._refusals.refused(f"refused a WebSocket handshake: {reason.strip()}")
            return connection.respond(HTTPStatus.FORBIDDEN, reason)
        try:
            nonce_of(request.path)
        except BadNonce as exc:
            self._refusals.refused(f"refused a WebSocket handshake: {str(exc).strip()}")
            return connection.respond(HTTPStatus.BAD_REQUEST, str(exc))
        return None

    def _evict(self, connection: Connection[S]) -> None:
        """Over the memory budget: close the client holding the most (4429)."""
        ws = self._sockets.get(connection)
        if ws is None:
            return
        logger.warning(
            "closing a client that holds %.1f MB of replies: all clients hold %.1f MB, "
            "over the %.0f MB budget",
            self.budget.held(connection) / 1e6,
            self.budget.total / 1e6,
            self.budget.limit / 1e6,
        )
        for work in (connection.connection_lost(), _close_stuck(ws)):  # no more replies
            task = asyncio.create_task(work)
            self._broadcasts.add(task)
            task.add_done_callback(self._broadcasts.discard)

    async def _watch_drain(self, ws: FrameSocket, connection: Connection[S]) -> None:
        """Close a client that leaves more than OUTGOING_LIMIT bytes unread for
        ``drain_timeout`` seconds (4429); the read loop reads nothing from it meanwhile."""
        while True:
            await connection.over_limit()
            try:
                async with asyncio.timeout(self.drain_timeout):
                    await connection.drained()
            except TimeoutError:
                logger.warning(
                    "closing a client that read none of its replies for %.0f s",
                    self.drain_timeout,
                )
                await _close_stuck(ws)
                return

    async def _handle(self, ws: ServerConnection) -> None:
        await self.serve_socket(ws)

    async def serve_socket(self, ws: FrameSocket, caller: object = None) -> None:
        """Serve one accepted WebSocket (this listener's, or the remote listener's at ``/ws``
        with ``caller``: who the connection is before its ``initialize``, and no
        ``$/serverProof``: TLS proves that server)."""

        async def send(data: bytes) -> None:
            try:
                await ws.send(data, text=True)
                close = connection.protocol.close_request
                if close is not None:  # -32001 sent: a key revoked since, or a wrong token
                    await ws.close(close.code, close.reason)
            except ConnectionClosed:
                logger.debug("dropped a message for a closed connection")

        no_delay(ws.transport.get_extra_info("socket"))
        connection: Connection[S] = Connection(
            self.router,
            self.app,
            send,
            peer_name=str(ws.id)[:8],
            account=lambda delta: self.budget.change(connection, delta),
            reserve=lambda size: self.budget.reserve(connection, size),
        )
        connection.caller = caller
        self.budget.join(connection, lambda: self._evict(connection))
        self.connections.add(connection)
        self._sockets[connection] = ws
        watchdog = asyncio.create_task(self._watch_drain(ws, connection))
        deadline = asyncio.get_running_loop().time() + self.init_timeout
        try:
            nonce = nonce_of(ws.request.path) if ws.request is not None else None
            if nonce is not None and self.token is not None and caller is None:
                proof = dump(ServerProof(proof=server_proof(self.token, nonce)))
                await ws.send(
                    connection.protocol.notification(ServerProof.METHOD, proof), text=True
                )
            await self._read_frames(ws, connection, deadline)
        except ConnectionClosed:
            pass
        finally:
            watchdog.cancel()
            await connection.connection_lost()
            self.connections.discard(connection)
            self._sockets.pop(connection, None)
            self.budget.forget(connection)

    async def _read_frames(
        self, ws: FrameSocket, connection: Connection[S], deadline: float
    ) -> None:
        """Hand ``connection`` each frame, one per turn of the loop, until the protocol asks
        to close; a client that has not initialized by ``deadline`` (loop time) or within
        ``init_frames`` frames is closed."""
        loop = asyncio.get_running_loop()
        frames = 0
        while True:
            if connection.outgoing > OUTGOING_LIMIT:
                await connection.drained()  # backpressure: read nothing meanwhile
            if connection.ready:
                frame = await ws.recv()
            else:
                # Frames already queued come back without waiting: check the deadline too.
                if frames >= self.init_frames or loop.time() >= deadline:
                    await _close_stuck(ws, CloseCode.INIT_TIMEOUT, "initialize timeout")
                    return
                try:
                    async with asyncio.timeout_at(deadline):
                        frame = await ws.recv()
                except TimeoutError:
                    await _close_stuck(ws, CloseCode.INIT_TIMEOUT, "initialize timeout")
                    return
                frames += 1
            await connection.handle_frame(frame)
            close = connection.protocol.close_request
            if close is not None:
                await ws.close(close.code, close.reason)
                return
            await asyncio.sleep(0)  # one frame per turn: the others' frames and tasks run


async def _close_stuck(
    ws: FrameSocket,
    code: int = CloseCode.NOT_READING,
    reason: str = "the client does not read its replies",
) -> None:
    """Close a client that may read nothing: its close frame may never get through, so the
    connection is dropped if the closing handshake does not finish within a second."""
    try:
        async with asyncio.timeout(STUCK_CLOSE_SECONDS):
            await ws.close(code, reason)
    except TimeoutError:
        ws.transport.abort()


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
    drain_timeout: float = WS_DRAIN_TIMEOUT,
    init_frames: int = DEFAULT_INIT_FRAMES,
    memory_budget: int = DEFAULT_MEMORY_BUDGET,
    token: str | None = None,
) -> BridgeServer[S]:
    """Serve ``router``'s methods with ``app`` on ``sock`` (listening) or a new ``host:port``;
    with ``token``, a client that sends a nonce gets ``$/serverProof`` first."""
    server = BridgeServer(
        router,
        app,
        sock if sock is not None else bind_socket(host, port),
        allowed_origins=allowed_origins,
        init_timeout=init_timeout,
        drain_timeout=drain_timeout,
        init_frames=init_frames,
        memory_budget=memory_budget,
        token=token,
    )
    await server.start()
    return server
