"""``serve``: check every setting, listen, then load everything else.

Start-up order: check the arguments and every setting (the settings file, each value, the
embedder, a local model server that must answer, a hosted provider's key), so that a server
that cannot work stops with one sentence before it says it listens; then bind the ports, write
the info file (the server is now reachable: TCP connections queue in the backlog), and only
then load the WebSocket server and the vault index. Requests are answered once that is done;
indexing continues in the background and the provider SDK is imported on the first model call.
bench/startup.py measures both moments. The stages are modules, each imported when it is reached:
this one (no pydantic), :mod:`~plugin_bridge.cli.serve_checks` (the settings), then
:mod:`~plugin_bridge.cli.serving` (the rest).

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
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from plugin_bridge import PROTOCOL_VERSION
from plugin_bridge.cli.commandline import fail
from plugin_bridge.cli.lock import ServerLock, ServerRunning, acquire
from plugin_bridge.cli.ports import PortTaken, bind_ports
from plugin_bridge.vault.datadir import data_dir_for, default_info_file, private_folder
from plugin_bridge.vault.locking import UnsafeLockFile
from plugin_bridge.vault.semantic.vectors import single_threaded_blas
from plugin_bridge.wire.infofile import (
    InfoRecord,
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
    from plugin_bridge.cli.remote import RemoteListener
    from plugin_bridge.cli.serving import Companion


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
    single_threaded_blas()  # before anything imports numpy
    vault = options.vault.expanduser()
    if not is_loopback_host(options.host):
        return fail(
            2,
            f"Refusing to listen on {options.host}: the bridge serves this machine only; "
            "use --host 127.0.0.1, ::1 or localhost.",
        )
    data_dir = data_dir_for(vault, options.data_dir)
    options = options._replace(data_dir=data_dir)  # the lock's record and the index agree
    try:
        lock = lock or acquire(vault)
    except ServerRunning as exc:
        return fail(2, str(exc))
    except OSError as exc:
        return fail(2, lock_problem(exc))
    try:
        private_folder(data_dir)
    except OSError as exc:
        lock.release()
        return fail(2, data_dir_problem(exc))
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        import asyncio

        return asyncio.run(_start(options, vault, lock, companion))
    except (_Interrupted, KeyboardInterrupt):
        return 0
    except Exception as exc:
        import logging

        logging.getLogger(__name__).error("the server failed", exc_info=exc)
        return fail(1, f"The server stopped on an error ({type(exc).__name__}: {exc}).")
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
    from plugin_bridge.cli.serve_checks import checked as check  # pydantic, the settings

    given = {key: value for key, value in options._asdict().items() if value is not None}
    checked = await check(given, vault_root, info_path)
    if isinstance(checked, str):
        return fail(2, checked[:1].upper() + checked[1:])
    host = bind_host(options.host)
    assert options.data_dir is not None  # run() resolved it
    try:
        sockets = bind_ports(host, options.data_dir, (options.port, options.http_port))
    except PortTaken as exc:
        await checked[1].aclose()
        return fail(1, str(exc))
    remote: RemoteListener | None = None
    if checked[0].remote_listen is not None:
        from plugin_bridge.cli.remote import open_remote  # cryptography: only when asked

        opened = open_remote(checked[0], options.data_dir)
        if isinstance(opened, str):
            for bound in sockets:
                bound.close()
            await checked[1].aclose()
            return fail(2, opened)
        remote = opened
        sockets.append(remote.sock)
    sock, http_sock = sockets[:2]
    token = secrets.token_urlsafe(32)
    url = ws_url(host, sock.getsockname()[1])
    http = http_url(host, http_sock.getsockname()[1])
    try:
        lock.announce(url, options.data_dir or data_dir_for(vault_root), info_path)
        record = InfoRecord(url, token, os.getpid(), PROTOCOL_VERSION, http)
        if remote is not None:  # for 'clients add --pair' (see cli/clients.py)
            record = record._replace(remote_url=remote.url, remote_fingerprint=remote.fingerprint)
        write_info_file(info_path, record)
        print(f"Listening on {url}", file=sys.stderr, flush=True)
        print(f"Info file: {info_path}", file=sys.stderr, flush=True)
        print(f"HTTP API on {http}", file=sys.stderr, flush=True)
        for line in remote.lines if remote is not None else ():
            print(line, file=sys.stderr, flush=True)
        from plugin_bridge.cli.serving import serve  # the server, index, HTTP API and MCP

        return await serve(
            vault_root, options.info_file, sockets, token, checked, companion, remote
        )
    finally:
        remove_info_file(info_path, token)
        for bound in sockets:
            bound.close()


def data_dir_problem(exc: OSError) -> str:
    return f"Cannot use the data folder ({exc}): pass a writable --data-dir."


def lock_problem(exc: OSError) -> str:
    if isinstance(exc, UnsafeLockFile):
        return str(exc)
    return (
        f"Cannot take the vault's lock in the state folder ({exc}): make it writable, or set "
        "XDG_STATE_HOME to a writable folder."
    )


def _interrupt(signum: int, frame: object) -> None:
    raise _Interrupted
