"""``serve``'s last stage, once it listens: the WebSocket server, the vault index, the HTTP API
and MCP, loaded only after the info file is written (see :mod:`plugin_bridge.cli.serve`), then
served until a signal or the companion ends."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import signal
import socket
import sys
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any

from starlette.routing import BaseRoute, Route

from llm_service.embedders import Embedder
from llm_service.warmup import import_early
from plugin_bridge.app.conversations.usage import Budgets
from plugin_bridge.app.live_settings import SettingsFileWatch
from plugin_bridge.app.settings.config import BridgeSettings
from plugin_bridge.app.settings.providers import ProviderSetup
from plugin_bridge.app.state import BridgeApp
from plugin_bridge.app.turn.confirm import ask_client
from plugin_bridge.chatapps.runner import ChatApps
from plugin_bridge.cli.commandline import command_line, fail
from plugin_bridge.cli.progress import show_progress
from plugin_bridge.handlers import build_router
from plugin_bridge.httpapi.app import build_http_app
from plugin_bridge.httpapi.limits import HttpLimits
from plugin_bridge.httpapi.remote import start_remote
from plugin_bridge.httpapi.server import start_http
from plugin_bridge.mcp import MESSAGES_PATH, SSE_PATH, McpHttpApp, streamable_http_app
from plugin_bridge.vault.errors import VaultError
from plugin_bridge.vault.vault import Vault
from plugin_bridge.wire.server import start_server

if TYPE_CHECKING:
    from plugin_bridge.cli.remote import RemoteListener
    from plugin_bridge.wire.server import BridgeServer

logger = logging.getLogger(__name__)

Companion = Callable[[BridgeApp], Awaitable[None]]
"""Runs beside the server once it serves; the server stops when it returns."""


async def serve(
    vault_root: Path,
    info_file: Path | None,
    sockets: list[socket.socket],
    token: str,
    checked: tuple[BridgeSettings, ProviderSetup, Embedder | None],
    companion: Companion | None,
    remote: RemoteListener | None = None,
) -> int:
    """Serve until a signal or the companion ends (0), or 2 when the vault cannot open. Each
    thing started pushes its close on one exit stack, so a failure part-way (or the end)
    closes what was started, in reverse order."""
    stop = _stop_on_signals()
    settings, providers, embedder = checked
    banner = providers.describe()
    print(banner[:1].upper() + banner[1:], file=sys.stderr, flush=True)
    vault = _vault(vault_root, settings, embedder)
    try:
        await vault.start(sole_writer=True)  # the lock is ours: every temp file is a crash's
    except VaultError as exc:
        return fail(2, str(exc))
    async with contextlib.AsyncExitStack() as stack:
        stack.push_async_callback(vault.close)
        app = BridgeApp(
            vault,
            confirm=ask_client(vault),
            providers=providers,
            token=token,
            budgets=Budgets(settings.daily_budget_usd, settings.monthly_budget_usd),
            settings=settings,
        )
        stack.push_async_callback(app.aclose)
        if vault.semantic is not None:
            show_progress(vault.semantic)
        sock, http_sock = sockets[:2]
        listening = await start_server(
            build_router(),
            app,
            sock=sock,
            allowed_origins=settings.allowed_origins,
            token=app.token,
        )
        server = await stack.enter_async_context(listening)
        app.broadcast = server.broadcast
        await app.use_mcp_servers(settings.mcp)
        await _listen_http(stack, app, server, http_sock, settings, remote)
        print(f"Ready. Try: {chat_hint(vault_root, info_file)}", file=sys.stderr, flush=True)
        tune_gc()
        _in_background(stack, _warm_up(app.providers), "warm-up")
        _in_background(stack, SettingsFileWatch(app).run(), "settings file")
        await _start_bots(stack, app, settings)
        await _until_stopped(stop, None if companion is None else companion(app))
        logger.info("shutting down")
    return 0


def _stop_on_signals() -> asyncio.Event:
    """Set by SIGTERM and SIGINT."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    return stop


def _vault(vault_root: Path, settings: BridgeSettings, embedder: Embedder | None) -> Vault:
    """The vault with the settings' scope and PDF limit, and semantic search when an embedder
    is configured (not started yet)."""
    vault = Vault(vault_root, settings.data_dir, exclude=settings.exclude)
    vault.set_pdf_limit(int(settings.pdf_max_mb * 1024 * 1024))
    if embedder is not None:
        print(f"Semantic search with {embedder.model_id}.", file=sys.stderr, flush=True)
        vault.use_embedder(
            embedder,
            confirm_over_usd=settings.embedder_confirm_over_usd,
            ann_threshold=settings.vector_ann_threshold,
        )
    return vault


async def _listen_http(
    stack: contextlib.AsyncExitStack,
    app: BridgeApp,
    server: BridgeServer[BridgeApp],
    http_sock: socket.socket,
    settings: BridgeSettings,
    remote: RemoteListener | None,
) -> None:
    """The HTTP API with MCP on ``http_sock`` and, with ``--remote``, the remote listener; at
    the end MCP's streams close before each listener (an open ``/sse`` would hold it open)."""
    mcp_app = streamable_http_app(app)  # writes as the access policy says
    mcp_routes = mcp_mounts(mcp_app)
    limits = HttpLimits(timeout=settings.http_timeout)
    http_app = build_http_app(
        app,
        port=http_sock.getsockname()[1],
        allowed_origins=settings.allowed_origins,
        mounts=mcp_routes,
        lifespans=[mcp_app.lifespan],
        budget=server.budget,
        limits=limits,
    )
    http_server = await start_http(http_app, http_sock, limits=limits)
    stack.push_async_callback(http_server.close)
    stack.callback(mcp_app.close_streams)
    if remote is not None:
        remote_server = await start_remote(
            app, server, remote.sock, remote.gate, mounts=mcp_routes, limits=limits, tls=remote.tls
        )
        stack.push_async_callback(remote_server.close)
        stack.callback(mcp_app.close_streams)


def _in_background(
    stack: contextlib.AsyncExitStack, work: Coroutine[Any, Any, None], name: str
) -> None:
    """Run ``work`` as a task, cancelled when ``stack`` closes."""
    task = asyncio.create_task(work, name=name)
    stack.callback(task.cancel)


async def _start_bots(
    stack: contextlib.AsyncExitStack, app: BridgeApp, settings: BridgeSettings
) -> None:
    """The configured chat-app bots, each in the background (``health`` shows their states)."""
    bots = ChatApps(
        settings.telegram,
        settings.discord,
        app.assistant,
        app.vault,
        app.writes.write,
        app.vault.data_dir,
    )
    app.bots = bots.states
    stack.push_async_callback(bots.aclose)
    await bots.start()


def mcp_mounts(mcp_app: McpHttpApp) -> list[BaseRoute]:
    """MCP's routes on an HTTP listener: ``/mcp`` (streamable HTTP) and the HTTP+SSE
    transport's ``/sse`` and ``/messages``."""
    return [
        Route("/mcp", mcp_app),
        Route(SSE_PATH, mcp_app.sse),
        Route(MESSAGES_PATH, mcp_app.messages),
    ]


async def _until_stopped(stop: asyncio.Event, companion: Awaitable[None] | None) -> None:
    """Wait for a signal, or for the companion to end (then a signal cancels it)."""
    waits: list[asyncio.Future[object]] = [asyncio.ensure_future(stop.wait())]
    if companion is not None:
        waits.append(asyncio.ensure_future(companion))
    try:
        done, _ = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in waits:
            task.cancel()
        await asyncio.gather(*waits, return_exceptions=True)
    for task in done:
        if not task.cancelled() and task.exception() is not None:
            logger.error("the companion failed", exc_info=task.exception())


async def _warm_up(providers: ProviderSetup) -> None:
    """Import, in a worker thread, what the first requests would otherwise wait for: httpx
    (runtimes/detect and embedder/download: the setup card of a server without a provider)
    and the providers' SDKs. A request that needs them meanwhile waits for this
    (``llm_service.warmup.warmed``) instead of importing them beside it."""
    await import_early("httpx")
    await providers.warm_up()


GC_GEN0_THRESHOLD = 50_000
"""Allocations between young-generation collections (Python's default is 700)."""


def tune_gc() -> None:
    """Once started: collect, then freeze what start-up loaded (modules, the index, the app)
    so no later collection walks it again, and collect the young generation less often.
    bench/stalls.py measures what this buys."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(GC_GEN0_THRESHOLD, *gc.get_threshold()[1:])


def chat_hint(vault_root: Path, info_file: Path | None) -> str:
    """The chat command for this server, ready to paste (with --info-file when one was given)."""
    extra = ["--info-file", str(info_file.resolve())] if info_file is not None else []
    return command_line("chat", "--vault", str(vault_root.resolve()), *extra)
