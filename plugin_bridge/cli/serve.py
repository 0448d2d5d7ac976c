"""``serve``: check every setting, listen, then load everything else.

Start-up order: check the arguments and every setting (the settings file, each value, the
embedder, a local model server that must answer, a hosted provider's key), so that a server
that cannot work stops with one sentence before it says it listens; then bind the ports, write
the info file (the server is now reachable: TCP connections queue in the backlog), and only
then load the WebSocket server and the vault index. Requests are answered once that is done;
indexing continues in the background and the provider SDK is imported on the first model call.
bench/startup.py measures both moments.

One server per vault, whatever the data folder: ``serve`` first takes the vault's lock (see
:mod:`plugin_bridge.cli.lock`); a second one exits 2 naming the running server.

SIGTERM / SIGINT: stop accepting, cancel in-flight work, close connections with 1001, remove the
info file, exit 0. A companion (the ``mcp`` command's stdio session) runs beside the server and
stops it the same way when it ends.
"""

from __future__ import annotations

import os
import secrets
import signal
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from plugin_bridge import PROTOCOL_VERSION
from plugin_bridge.cli.lock import ServerLock, ServerRunning, acquire
from plugin_bridge.cli.ports import PortTaken, bind_ports
from plugin_bridge.vault.datadir import data_dir_for
from plugin_bridge.wire.infofile import (
    InfoRecord,
    default_info_file,
    remove_info_file,
    write_info_file,
)
from plugin_bridge.wire.security import (
    bind_host,
    http_url,
    is_loopback_host,
    ws_url,
)

if TYPE_CHECKING:
    import asyncio
    import socket

    from llm_service.embedders import Embedder
    from plugin_bridge.app.settings.config import BridgeSettings
    from plugin_bridge.app.settings.providers import ProviderSetup
    from plugin_bridge.app.state import BridgeApp
    from plugin_bridge.cli.remote import RemoteListener

Companion = Callable[["BridgeApp"], Awaitable[None]]
"""Runs beside the server once it serves; the server stops when it returns."""


class ServeOptions(NamedTuple):
    """The ``serve`` command line (a NamedTuple: dataclasses cost start-up time)."""

    vault: Path
    host: str = "127.0.0.1"
    port: int | None = None
    """None: the vault's saved port (see :mod:`plugin_bridge.cli.ports`); 0: a free one."""
    http_port: int | None = None
    info_file: Path | None = None
    provider: str | None = None
    model: str | None = None
    base_url: str | None = None
    data_dir: Path | None = None
    daily_budget_usd: float | None = None
    monthly_budget_usd: float | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    timeout: float | None = None
    embedder: str | None = None
    embedder_base_url: str | None = None
    remote_listen: str | None = None
    """``--remote HOST:PORT``: the listener for other machines (see :mod:`.remote`)."""
    tls_cert: Path | None = None
    tls_key: Path | None = None
    remote_insecure_http: bool | None = None


class _Interrupted(Exception):
    """SIGTERM arrived before the event loop took over signal handling."""


def run(
    options: ServeOptions, *, lock: ServerLock | None = None, companion: Companion | None = None
) -> int:
    """Run the server until SIGTERM / SIGINT (or until ``companion`` returns); the process exit
    code. ``lock``: the vault's lock when the caller took it already."""
    from plugin_bridge.vault.semantic.vectors import single_threaded_blas

    single_threaded_blas()  # before anything imports numpy
    vault = options.vault.expanduser()
    if not is_loopback_host(options.host):
        return _fail(
            2,
            f"Refusing to listen on {options.host}: the bridge serves this machine only; "
            "use --host 127.0.0.1, ::1 or localhost.",
        )
    data_dir = data_dir_for(vault, options.data_dir)
    options = options._replace(data_dir=data_dir)  # the lock's record and the index agree
    try:
        lock = lock or acquire(vault)
    except ServerRunning as exc:
        return _fail(2, str(exc))
    except OSError as exc:
        return _fail(2, lock_problem(exc))
    try:
        data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:
        lock.release()
        return _fail(2, data_dir_problem(exc))
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        import asyncio

        return asyncio.run(_start(options, vault, lock, companion))
    except (_Interrupted, KeyboardInterrupt):
        return 0
    except Exception as exc:
        import logging

        logging.getLogger(__name__).error("the server failed", exc_info=exc)
        return _fail(1, f"The server stopped on an error ({type(exc).__name__}: {exc}).")
    finally:
        signal.signal(signal.SIGTERM, previous)
        lock.release()


async def serve_here(options: ServeOptions, lock: ServerLock, companion: Companion) -> int:
    """Run the server in the running event loop (``mcp`` taking over from the server it
    forwarded to) until ``companion`` returns or a signal comes; the lock is released after."""
    vault = options.vault.expanduser()
    options = options._replace(data_dir=data_dir_for(vault, options.data_dir))
    try:
        return await _start(options, vault, lock, companion)
    finally:
        lock.release()


async def _start(
    options: ServeOptions, vault_root: Path, lock: ServerLock, companion: Companion | None
) -> int:
    """Check every setting, then listen (bind, info file, "Listening"), then serve."""
    import logging

    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    info_path = options.info_file or default_info_file(vault_root)
    checked = await _checked(options, vault_root, info_path)
    if isinstance(checked, str):
        return _fail(2, checked[:1].upper() + checked[1:])
    host = bind_host(options.host)
    assert options.data_dir is not None  # run() resolved it
    try:
        sockets = bind_ports(host, options.data_dir, (options.port, options.http_port))
    except PortTaken as exc:
        await checked[1].aclose()
        return _fail(1, str(exc))
    remote: RemoteListener | None = None
    if checked[0].remote_listen is not None:
        from plugin_bridge.cli.remote import open_remote  # cryptography: only when asked

        opened = open_remote(checked[0], options.data_dir)
        if isinstance(opened, str):
            for bound in sockets:
                bound.close()
            await checked[1].aclose()
            return _fail(2, opened)
        remote = opened
        sockets.append(remote.sock)
    sock, http_sock = sockets[:2]
    token = secrets.token_urlsafe(32)
    url = ws_url(host, sock.getsockname()[1])
    http = http_url(host, http_sock.getsockname()[1])
    try:
        lock.announce(url, options.data_dir or data_dir_for(vault_root), info_path)
        write_info_file(info_path, InfoRecord(url, token, os.getpid(), PROTOCOL_VERSION, http))
        print(f"Listening on {url}", file=sys.stderr, flush=True)
        print(f"Info file: {info_path}", file=sys.stderr, flush=True)
        print(f"HTTP API on {http}", file=sys.stderr, flush=True)
        for line in remote.lines if remote is not None else ():
            print(line, file=sys.stderr, flush=True)
        return await _serve(options, vault_root, sockets, token, checked, companion, remote)
    finally:
        remove_info_file(info_path, token)
        for bound in sockets:
            bound.close()


async def _checked(
    options: ServeOptions, vault_root: Path, info_path: Path
) -> tuple[BridgeSettings, ProviderSetup, Embedder | None] | str:
    """The settings, providers and embedder, or why ``serve`` must not start (one sentence):
    an invalid value or settings file, the embedder, a local server that does not answer, a
    refused key, an OpenAI-compatible server without a loaded model."""
    import asyncio

    from plugin_bridge.app.settings.config import (
        SettingsError,
        build_embedder,
        choose_provider,
        embedder_problem,
        load_settings,
        startup_problem,
    )
    from plugin_bridge.app.settings.providers import build_setup, key_problem

    given = {key: value for key, value in options._asdict().items() if value is not None}
    try:
        settings = load_settings(**{**given, "vault": vault_root, "info_file": info_path})
    except SettingsError as exc:
        return str(exc)
    choice = choose_provider(settings)
    problem = await startup_problem(settings, choice)
    embedder = build_embedder(settings)
    problem = problem or await asyncio.to_thread(embedder_problem, settings, embedder)
    problem = problem or await key_problem(settings, choice)
    if problem is not None:
        return problem
    try:
        return settings, await build_setup(settings), embedder
    except SettingsError as exc:
        return str(exc)


def data_dir_problem(exc: OSError) -> str:
    return f"Cannot use the data folder ({exc}): pass a writable --data-dir."


def lock_problem(exc: OSError) -> str:
    return (
        f"Cannot take the vault's lock in the state folder ({exc}): make it writable, or set "
        "XDG_STATE_HOME to a writable folder."
    )


async def _serve(
    options: ServeOptions,
    vault_root: Path,
    sockets: list[socket.socket],
    token: str,
    checked: tuple[BridgeSettings, ProviderSetup, Embedder | None],
    companion: Companion | None,
    remote: RemoteListener | None = None,
) -> int:
    import asyncio
    import logging

    logger = logging.getLogger(__name__)
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    from starlette.routing import Route

    from plugin_bridge.app.conversations.usage import Budgets
    from plugin_bridge.app.live_settings import SettingsFileWatch
    from plugin_bridge.app.state import BridgeApp
    from plugin_bridge.app.turn.confirm import ask_client
    from plugin_bridge.cli.progress import show_progress
    from plugin_bridge.handlers import build_router
    from plugin_bridge.httpapi.app import build_http_app
    from plugin_bridge.httpapi.limits import HttpLimits
    from plugin_bridge.httpapi.remote import start_remote
    from plugin_bridge.httpapi.server import start_http
    from plugin_bridge.mcp import streamable_http_app
    from plugin_bridge.vault.errors import VaultError
    from plugin_bridge.vault.notes.vault import Vault
    from plugin_bridge.wire.server import start_server

    settings, providers, embedder = checked
    banner = providers.describe()
    print(banner[:1].upper() + banner[1:], file=sys.stderr, flush=True)
    vault = Vault(vault_root, settings.data_dir, exclude=settings.exclude)
    vault.set_pdf_limit(int(settings.pdf_max_mb * 1024 * 1024))
    if embedder is not None:
        print(f"Semantic search with {embedder.model_id}.", file=sys.stderr, flush=True)
        vault.use_embedder(
            embedder,
            confirm_over_usd=settings.embedder_confirm_over_usd,
            ann_threshold=settings.vector_ann_threshold,
        )
    try:
        await vault.start(sole_writer=True)  # the lock is ours: every temp file is a crash's
    except VaultError as exc:
        return _fail(2, str(exc))
    app = BridgeApp(
        vault,
        confirm=ask_client(vault),
        providers=providers,
        token=token,
        budgets=Budgets(settings.daily_budget_usd, settings.monthly_budget_usd),
        settings=settings,
    )
    if vault.semantic is not None:
        show_progress(vault.semantic)
    sock, http_sock = sockets[:2]
    try:
        async with await start_server(
            build_router(),
            app,
            sock=sock,
            allowed_origins=settings.allowed_origins,
            token=app.token,
        ) as server:
            app.broadcast = server.broadcast
            await app.use_mcp_servers(settings.mcp)
            mcp_app = streamable_http_app(app)  # writes while http_allow_writes is on
            http_limits = HttpLimits(timeout=settings.http_timeout)
            http_app = build_http_app(
                app,
                port=http_sock.getsockname()[1],
                allowed_origins=settings.allowed_origins,
                mounts=[Route("/mcp", mcp_app)],
                lifespans=[mcp_app.lifespan],
                budget=server.budget,
                limits=http_limits,
            )
            http_server = await start_http(http_app, http_sock, limits=http_limits)
            remote_server = (
                None
                if remote is None
                else await start_remote(
                    app,
                    server,
                    remote.sock,
                    remote.gate,
                    mounts=[Route("/mcp", mcp_app)],
                    limits=http_limits,
                    tls=remote.tls,
                )
            )
            print(
                f"Ready. Try: {chat_hint(vault_root, options.info_file)}",
                file=sys.stderr,
                flush=True,
            )
            tune_gc()
            warming = asyncio.create_task(_warm_up(app.providers))
            following = asyncio.create_task(SettingsFileWatch(app).run(), name="settings file")
            await _until_stopped(stop, None if companion is None else companion(app))
            warming.cancel()
            following.cancel()
            logger.info("shutting down")
            await http_server.close()
            if remote_server is not None:
                await remote_server.close()
    finally:
        await app.aclose()
        await vault.close()
    return 0


async def _until_stopped(stop: asyncio.Event, companion: Awaitable[None] | None) -> None:
    """Wait for a signal, or for the companion to end (then a signal cancels it)."""
    import asyncio
    import logging

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
            logging.getLogger(__name__).error("the companion failed", exc_info=task.exception())


async def _warm_up(providers: ProviderSetup) -> None:
    """Import, in a worker thread, what the first requests would otherwise wait for: httpx
    (runtimes/detect and embedder/download: the setup card of a server without a provider)
    and the providers' SDKs. A request that needs them meanwhile waits for this
    (``llm_service.warmup.warmed``) instead of importing them beside it."""
    from llm_service.warmup import import_early

    await import_early("httpx")
    await providers.warm_up()


GC_GEN0_THRESHOLD = 50_000
"""Allocations between young-generation collections (Python's default is 700)."""


def tune_gc() -> None:
    """Once started: collect, then freeze what start-up loaded (modules, the index, the app)
    so no later collection walks it again, and collect the young generation less often.
    bench/stalls.py measures what this buys."""
    import gc

    gc.collect()
    gc.freeze()
    gc.set_threshold(GC_GEN0_THRESHOLD, *gc.get_threshold()[1:])


def chat_hint(vault_root: Path, info_file: Path | None) -> str:
    """The chat command for this server, ready to paste (with --info-file when one was given)."""
    from plugin_bridge.cli.commandline import command_line

    extra = ["--info-file", str(info_file.resolve())] if info_file is not None else []
    return command_line("chat", "--vault", str(vault_root.resolve()), *extra)


def _interrupt(signum: int, frame: object) -> None:
    raise _Interrupted


def _fail(code: int, message: str) -> int:
    print(message, file=sys.stderr)
    return code
