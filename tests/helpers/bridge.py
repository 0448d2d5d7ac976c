"""Shared helpers of the bridge tests (no tests here): an in-process server and a raw client.

``async with running_bridge(tmp_path, provider=...) as bridge`` serves a copy of examples/vault on
127.0.0.1 with a free port; ``await bridge.wire()`` opens a raw websockets connection (already
initialized unless told otherwise) that speaks JSON-RPC frame by frame.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import shutil
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starlette.routing import BaseRoute
from websockets.asyncio.client import ClientConnection, connect

from llm_service import Provider, ProviderName
from llm_service.embedders import Embedder
from plugin_bridge.app.settings.providers import ProviderSetup, Route
from plugin_bridge.app.state import BridgeApp
from plugin_bridge.app.turn.confirm import DEFAULT_CONFIRM_TIMEOUT, ask_client
from plugin_bridge.handlers import build_router
from plugin_bridge.httpapi.app import Lifespan, build_http_app
from plugin_bridge.httpapi.limits import HttpLimits
from plugin_bridge.httpapi.server import HttpServer, start_http
from plugin_bridge.vault.vault import Vault
from plugin_bridge.wire.security import DEFAULT_ALLOWED_ORIGINS, bind_socket
from plugin_bridge.wire.server import (
    DEFAULT_INIT_TIMEOUT,
    WS_DRAIN_TIMEOUT,
    BridgeServer,
    start_server,
)
from tests.conftest import REPO_ROOT

EXAMPLE_VAULT = REPO_ROOT / "examples" / "vault"
WAIT = 15.0
"""Upper bound of every wait for a frame in these tests."""

RequestAnswer = Callable[[str, dict[str, Any]], Awaitable[Any] | Any]


def copy_example_vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    shutil.copytree(EXAMPLE_VAULT, root)
    return root


@dataclass
class Wire:
    """A raw client connection: send any frame, read JSON replies, collect notifications."""

    ws: ClientConnection
    notifications: list[dict[str, Any]] = field(default_factory=list)
    server_requests: list[dict[str, Any]] = field(default_factory=list)
    replies: dict[Any, dict[str, Any]] = field(default_factory=dict)
    """Replies read while waiting for another one (replies may come in any order)."""
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(100))

    async def send(self, message: dict[str, Any] | str | bytes) -> None:
        await self.ws.send(json.dumps(message) if isinstance(message, dict) else message)

    async def recv(self, wait: float = WAIT) -> dict[str, Any]:
        async with asyncio.timeout(wait):
            frame = await self.ws.recv()
        assert isinstance(frame, str), "the server sends text frames only"
        message: dict[str, Any] = json.loads(frame)
        return message

    async def request(self, method: str, params: Any = None, *, id: Any = None) -> Any:
        """Send a request; its id."""
        request_id = next(self._ids) if id is None else id
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        await self.send(message)
        return request_id

    async def reply_to(
        self, request_id: Any, *, answer: RequestAnswer | None = None, wait: float = WAIT
    ) -> dict[str, Any]:
        """Read frames until the reply to ``request_id``; notifications and server requests are
        kept, and server requests answered with ``answer(method, params)``."""
        if request_id in self.replies:
            return self.replies.pop(request_id)
        while True:
            message = await self.recv(wait)
            if "method" not in message and message.get("id") == request_id:
                return message
            if "method" not in message:
                self.replies[message.get("id")] = message
            if "method" in message and "id" in message:
                self.server_requests.append(message)
                if answer is not None:
                    result = answer(message["method"], message["params"])
                    if asyncio.iscoroutine(result):
                        result = await result
                    await self.send({"jsonrpc": "2.0", "id": message["id"], "result": result})
            elif "method" in message:
                self.notifications.append(message)

    async def call(
        self, method: str, params: Any = None, *, answer: RequestAnswer | None = None
    ) -> dict[str, Any]:
        """Request and await the whole reply (``result`` or ``error``)."""
        return await self.reply_to(await self.request(method, params), answer=answer)

    async def result(self, method: str, params: Any = None, **kw: Any) -> Any:
        reply = await self.call(method, params, **kw)
        assert "result" in reply, reply
        return reply["result"]

    async def error(self, method: str, params: Any = None, **kw: Any) -> dict[str, Any]:
        reply = await self.call(method, params, **kw)
        assert "error" in reply, reply
        error: dict[str, Any] = reply["error"]
        return error

    def notes_of(self, method: str, request_id: Any = None) -> list[dict[str, Any]]:
        return [
            n["params"]
            for n in self.notifications
            if n["method"] == method
            and (request_id is None or n["params"]["requestId"] == request_id)
        ]


@dataclass
class Bridge:
    app: BridgeApp
    server: BridgeServer[BridgeApp]
    vault: Vault
    http: HttpServer | None = None
    """The HTTP listener (``running_bridge(http=True)``)."""

    @property
    def http_url(self) -> str:
        assert self.http is not None, "start the bridge with http=True"
        return self.http.url

    @property
    def url(self) -> str:
        return self.server.url

    async def wire(
        self,
        *,
        initialize: bool = True,
        token: str | None = None,
        headers: dict[str, str] | None = None,
        **connect_kw: Any,
    ) -> Wire:
        ws = await connect(self.url, additional_headers=headers, open_timeout=WAIT, **connect_kw)
        wire = Wire(ws)
        if initialize:
            await wire.result("initialize", init_params(token or self.app.token))
        return wire


def init_params(token: str, version: int = 1) -> dict[str, Any]:
    return {"token": token, "protocolVersion": version, "client": {"name": "test", "version": "0"}}


@asynccontextmanager
async def running_bridge(
    tmp_path: Path,
    *,
    provider: Provider | None = None,
    model: str | None = "test-model",
    provider_name: ProviderName | None = None,
    providers: ProviderSetup | None = None,
    watch: bool = False,
    confirm_timeout: float = DEFAULT_CONFIRM_TIMEOUT,
    allowed_origins: Collection[str] = DEFAULT_ALLOWED_ORIGINS,
    init_timeout: float = DEFAULT_INIT_TIMEOUT,
    drain_timeout: float = WS_DRAIN_TIMEOUT,
    embedder: Embedder | None = None,
    vault_root: Path | None = None,
    semantic_options: dict[str, Any] | None = None,
    server_options: dict[str, Any] | None = None,
    http: bool = False,
    http_mounts: Sequence[BaseRoute] = (),
    http_lifespans: Sequence[Lifespan] = (),
    http_limits: HttpLimits | None = None,
    **app_kw: Any,
) -> AsyncIterator[Bridge]:
    """Serve a copy of examples/vault (or ``vault_root``), fully indexed, in this process;
    with ``embedder``, fully embedded too; with ``http``, the HTTP API too (with these extra
    mounts, lifespans and limits)."""
    root = vault_root or copy_example_vault(tmp_path)
    vault = Vault(root, tmp_path / "data", watch=watch)
    if embedder is not None:
        vault.use_embedder(embedder, **(semantic_options or {}))
    await vault.start()
    await vault.index.wait_until_idle(WAIT)
    if vault.semantic is not None:
        await vault.semantic.wait_until_idle(WAIT)
    app = BridgeApp(
        vault,
        confirm=ask_client(vault, timeout=confirm_timeout),
        providers=providers
        or ProviderSetup(
            None if provider is None or model is None else Route(provider_name, provider, model),
            settings=app_kw.get("settings"),
        ),
        **app_kw,
    )
    server = await start_server(
        build_router(),
        app,
        allowed_origins=allowed_origins,
        init_timeout=init_timeout,
        drain_timeout=drain_timeout,
        token=app.token,
        **(server_options or {}),
    )
    app.broadcast = server.broadcast
    await app.use_mcp_servers(app.config.mcp)
    listener = None
    if http:
        sock = bind_socket("127.0.0.1", 0)
        asgi = build_http_app(
            app,
            port=sock.getsockname()[1],
            allowed_origins=allowed_origins,
            mounts=http_mounts,
            lifespans=http_lifespans,
            budget=server.budget,
            limits=http_limits,
        )
        listener = await start_http(asgi, sock, drain_timeout=1, limits=http_limits)
    try:
        yield Bridge(app, server, vault, listener)
    finally:
        if listener is not None:
            await listener.close()
        await server.close()
        await app.aclose()
        await vault.close()


async def wait_for(predicate: Callable[[], bool], wait: float = WAIT) -> None:
    """Poll ``predicate`` until it holds (TimeoutError after ``wait`` s)."""
    async with asyncio.timeout(wait):
        while True:
            if predicate():
                return
            await asyncio.sleep(0.01)
