"""The remote listener (``serve --remote HOST:PORT``): the HTTP routes and the WebSocket at
``/ws`` on one address, over TLS (or plain HTTP when the user asked for it).

It only translates: the rules (Host, Origin, client keys only, failed authentications per
address) are :class:`plugin_bridge.app.remote.RemoteGate`'s, applied by the HTTP guard to
requests and handshakes alike; a WebSocket accepted here is served by the WebSocket server's
own loop (:meth:`plugin_bridge.wire.server.BridgeServer.serve_socket`) as a
:class:`~plugin_bridge.app.clients.RemotePeer` until its ``initialize``.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from starlette.routing import BaseRoute, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect, WebSocketState
from websockets.exceptions import ConnectionClosed

from plugin_bridge.app.clients import remote_peer
from plugin_bridge.app.remote import MAX_SOCKETS, SOCKET_PROTOCOL, connection_cap, open_files
from plugin_bridge.httpapi.app import Lifespan, build_http_app
from plugin_bridge.httpapi.limits import HttpLimits
from plugin_bridge.httpapi.server import HttpServer, start_http

if TYPE_CHECKING:
    import socket
    from pathlib import Path

    from plugin_bridge.app.remote import RemoteGate
    from plugin_bridge.app.state import BridgeApp
    from plugin_bridge.wire.server import BridgeServer

logger = logging.getLogger(__name__)

WS_PATH = "/ws"


class _Path:
    def __init__(self, path: str) -> None:
        self.path = path


class _NoTransport:
    """ASGI hides the socket: TCP_NODELAY is set by the HTTP protocol already, and a stuck
    client is dropped by the WebSocket protocol's ping timeout."""

    def get_extra_info(self, name: str) -> None:
        return None

    def abort(self) -> None:
        return None


class AsgiSocket:
    """An accepted ASGI WebSocket as the WebSocket server's loop uses a websockets one."""

    def __init__(self, websocket: WebSocket) -> None:
        self._ws = websocket
        self.id = uuid.uuid4()
        query = websocket.scope.get("query_string", b"").decode("latin-1")
        self.request = _Path(websocket.scope["path"] + (f"?{query}" if query else ""))
        self.transport = _NoTransport()

    async def recv(self) -> str | bytes:
        try:
            message = await self._ws.receive()
        except (RuntimeError, OSError) as exc:
            raise ConnectionClosed(None, None) from exc
        if message["type"] == "websocket.disconnect":
            raise ConnectionClosed(None, None)
        text: str | None = message.get("text")
        return text if text is not None else bytes(message.get("bytes") or b"")

    async def send(self, message: bytes, *, text: bool = True) -> None:
        try:
            if text:
                await self._ws.send_text(message.decode())
            else:
                await self._ws.send_bytes(message)
        except (RuntimeError, OSError, WebSocketDisconnect) as exc:
            raise ConnectionClosed(None, None) from exc

    async def close(self, code: int = 1000, reason: str = "") -> None:
        if self._ws.application_state is WebSocketState.DISCONNECTED:
            return
        try:
            await self._ws.close(code, reason)
        except (RuntimeError, OSError):
            return


def websocket_route(server: BridgeServer[Any], gate: RemoteGate) -> WebSocketRoute:
    """``/ws``: the guard has checked the handshake and its key (a browser's offered as
    a subprotocol: ``oab`` is selected); ``initialize`` brings the key again."""

    refusals = gate.refusals

    async def endpoint(websocket: WebSocket) -> None:
        if not gate.admit():
            refusals.refused(f"refused a WebSocket: {MAX_SOCKETS} open on this listener")
            await websocket.close(1013, "too many connections")  # before accept: HTTP 403
            return
        try:
            offered = websocket.scope.get("subprotocols") or []
            await websocket.accept(SOCKET_PROTOCOL if SOCKET_PROTOCOL in offered else None)
            address = websocket.client.host if websocket.client is not None else ""
            peer = remote_peer(address, gate.failures.failed)
            await server.serve_socket(AsgiSocket(websocket), peer)
        finally:
            gate.leave()

    return WebSocketRoute(WS_PATH, endpoint)


async def start_remote(
    bridge: BridgeApp,
    server: BridgeServer[Any],
    sock: socket.socket,
    gate: RemoteGate,
    *,
    mounts: Sequence[BaseRoute] = (),
    lifespans: Sequence[Lifespan] = (),
    limits: HttpLimits | None = None,
    tls: tuple[Path, Path] | None = None,
) -> HttpServer:
    """Serve the HTTP routes and ``/ws`` on the listening ``sock`` with ``gate``'s rules."""
    limits = limits or HttpLimits()
    gate.connections.cap = connection_cap(*open_files())
    app = build_http_app(
        bridge,
        port=gate.port,
        allowed_origins=gate.allowed_origins,
        mounts=[*mounts, websocket_route(server, gate)],
        lifespans=lifespans,
        budget=server.budget,
        limits=limits,
        remote=gate,
    )
    return await start_http(
        app,
        sock,
        limits=limits,
        tls=tls,
        websocket=True,
        connections=gate.connections,
        refusals=gate.refusals,
    )
