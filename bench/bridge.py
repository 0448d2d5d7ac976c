"""The bridge the benchmarks talk to, started the way ``serve`` starts it
(plugin_bridge/cli/serving.py): one ``BridgeApp`` on the vault, confirming through the
client, its WebSocket server (with the server proof) whose notifications the app broadcasts,
optionally the HTTP listener on the same loop sharing the server's memory budget, and
``BridgeApp.aclose`` at the end (which also closes the providers)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from plugin_bridge.app.settings.providers import ProviderSetup
from plugin_bridge.app.state import BridgeApp
from plugin_bridge.app.turn.confirm import ask_client
from plugin_bridge.handlers import build_router
from plugin_bridge.httpapi.app import build_http_app
from plugin_bridge.httpapi.server import HttpServer, start_http
from plugin_bridge.vault.vault import Vault
from plugin_bridge.wire.security import bind_socket
from plugin_bridge.wire.server import BridgeServer, start_server


@dataclass(frozen=True)
class Served:
    """What :func:`serving` started: the app, its WebSocket server, the HTTP listener if asked."""

    app: BridgeApp
    server: BridgeServer[BridgeApp]
    http: HttpServer | None


@asynccontextmanager
async def serving(
    vault: Vault, providers: ProviderSetup, *, http: bool = False
) -> AsyncIterator[Served]:
    """Serve ``vault`` with ``providers`` on free loopback ports until the block ends; with
    ``http``, the HTTP API too (``Served.http.url``)."""
    app = BridgeApp(vault, confirm=ask_client(vault), providers=providers)
    try:
        async with await start_server(build_router(), app, token=app.token) as server:
            app.broadcast = server.broadcast
            listener = None
            if http:
                sock = bind_socket("127.0.0.1", 0)
                asgi = build_http_app(
                    app, port=sock.getsockname()[1], allowed_origins=(), budget=server.budget
                )
                listener = await start_http(asgi, sock)
            try:
                yield Served(app, server, listener)
            finally:
                if listener is not None:
                    await listener.close()
    finally:
        await app.aclose()
