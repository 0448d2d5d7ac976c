"""``mcp``: the vault as an MCP server over stdio, for the MCP clients that start a command
(Claude Desktop, Claude Code, Cursor, LM Studio).

One server per vault, one index, one writer:

- when a bridge server already runs for the vault (the vault's lock names its info file, or
  the info file given names a live process that accepts its token), every MCP call is forwarded
  to it over the WebSocket, whatever ``--data-dir`` this command was given; when that server
  stops, this process takes the vault's lock and becomes the server itself (with this
  command's settings), and the MCP session goes on against it;
- otherwise this process becomes that server, as ``serve`` would (the vault lock, the WebSocket,
  the info file), and serves MCP beside it: a plugin started later connects to it. It stops when
  the MCP client closes stdin or sends SIGTERM.

stdout is the MCP channel: every other line goes to stderr.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Final

from plugin_bridge.cli.lock import (
    ServerLock,
    ServerRunning,
    acquire,
    holder,
    process_alive,
    running_info_file,
)
from plugin_bridge.cli.serve import ServeOptions, lock_problem, serve_here
from plugin_bridge.cli.serve import run as serve
from plugin_bridge.mcp.forwarded import ForwardedTools, HandoverTools
from plugin_bridge.mcp.server import build_server, serve_stdio
from plugin_bridge.mcp.tools import LocalTools
from plugin_bridge.vault.semantic.vectors import single_threaded_blas
from plugin_bridge.wire.client import BridgeClient
from plugin_bridge.wire.infofile import InfoFileError, InfoRecord, read_info_file

if TYPE_CHECKING:
    from plugin_bridge.app.state import BridgeApp
    from plugin_bridge.mcp.forwarded import ForwardedTools, HandoverTools
    from plugin_bridge.mcp.tools import LocalTools
    from plugin_bridge.wire.client import BridgeClient

START_WAIT: Final = 30.0
"""How long to wait for a server that holds the vault's lock to write its info file."""
CLIENT_NAME: Final = "obsidian-ai-bridge mcp"


def run(options: ServeOptions, *, allow_writes: bool) -> int:
    """Serve MCP on stdio until stdin closes; the process exit code."""
    single_threaded_blas()  # this process may become the server: before numpy is imported
    vault = options.vault.expanduser()
    deadline = time.monotonic() + START_WAIT
    while True:
        info_path = running_info_file(vault, options.info_file)
        if _live(info_path) is not None:
            code = asyncio.run(_forward(options, info_path, allow_writes))
            if code is not None:
                return code
        try:
            lock = acquire(vault)
        except ServerRunning as exc:  # starting up: its info file comes next
            if time.monotonic() > deadline:
                return _fail(1, f"{exc} It does not answer: stop it, then start again.")
            time.sleep(0.1)
            continue
        except OSError as exc:
            return _fail(2, lock_problem(exc))
        return serve(options, lock=lock, companion=_stdio_companion(allow_writes))


def _live(info_path: Path) -> InfoRecord | None:
    """The info file's record when its process is alive (not whether it answers)."""
    try:
        record = read_info_file(info_path)
    except InfoFileError:
        return None
    if record.pid == os.getpid() or not process_alive(record.pid):
        return None
    return record


def _stdio_companion(allow_writes: bool) -> Callable[[BridgeApp], Awaitable[None]]:
    async def companion(app: BridgeApp) -> None:
        await serve_stdio(build_server(_local_tools(app, allow_writes), app.vault.name))

    return companion


def _local_tools(app: BridgeApp, allow_writes: bool) -> LocalTools:
    return LocalTools(
        app.vault,
        app.access,
        allow_writes=allow_writes,
        prompts_folder=lambda: app.config.prompts_folder,
    )


async def _forward(options: ServeOptions, info_path: Path, allow_writes: bool) -> int | None:
    """Serve MCP by forwarding to the running server, and take over from it when it stops;
    None when it does not answer."""
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    vault = options.vault.expanduser()
    given = options.info_file

    async def connect(tools: ForwardedTools) -> BridgeClient:
        return await _connect(running_info_file(vault, given), tools)

    forwarded = ForwardedTools(connect, allow_writes=allow_writes, root=vault.resolve())
    try:
        await forwarded.start()
    except ConnectionError:
        return None
    print(f"Forwarding MCP to the server in {info_path}", file=sys.stderr, flush=True)
    tools = HandoverTools(forwarded)
    stdio = asyncio.create_task(serve_stdio(build_server(tools, vault.name)))
    takeover = asyncio.create_task(_take_over(options, forwarded, tools, stdio, allow_writes))
    try:
        with contextlib.suppress(asyncio.CancelledError):
            await stdio
    finally:
        if not takeover.done() and not tools.serving:
            takeover.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await takeover
        await forwarded.aclose()
    return 0


async def _take_over(
    options: ServeOptions,
    forwarded: ForwardedTools,
    tools: HandoverTools,
    stdio: asyncio.Task[None],
    allow_writes: bool,
) -> None:
    """When the server forwarded to stops, become the vault's server and hand the MCP session
    to it; while another server holds the vault's lock, keep forwarding to that one."""
    vault = options.vault.expanduser()
    while True:
        await forwarded.wait_lost()
        lock = await _lock_when_free(vault)
        if lock is not None:
            break
        await asyncio.sleep(0.5)  # another server took the vault: forward to it
    tools.hand_over()
    print("The vault's server stopped: serving the vault here.", file=sys.stderr, flush=True)

    async def companion(app: BridgeApp) -> None:
        tools.use(_local_tools(app, allow_writes))
        await asyncio.shield(stdio)  # until the MCP client closes stdin

    tools.serving = True
    try:
        await serve_here(options, lock, companion)
    finally:
        tools.serving = False
        tools.use(forwarded)  # calls still in flight say the server is gone
        if not stdio.done():  # stopped by a signal, or it could not start (said on stderr)
            stdio.cancel()  # either way this process ends with it


async def _lock_when_free(vault: Path) -> ServerLock | None:
    """The vault's lock once the stopping server let it go; None when another one holds it."""
    deadline = time.monotonic() + START_WAIT
    stopping = holder(vault)
    while True:
        try:
            return acquire(vault)
        except ServerRunning as exc:
            if stopping is None or exc.record.pid != stopping.pid:
                return None
            if time.monotonic() > deadline:
                return None
        except OSError as exc:
            print(lock_problem(exc), file=sys.stderr, flush=True)
            return None
        await asyncio.sleep(0.1)


async def _connect(info_path: Path, tools: ForwardedTools) -> BridgeClient:
    """A connection to the server the info file names, or ConnectionError saying why not."""
    try:
        record = read_info_file(info_path)
        return await BridgeClient.connect(
            record.url, record.token, client_name=CLIENT_NAME, on_request=tools.answer
        )
    except Exception as exc:  # the info file, the socket, the handshake or the token
        raise ConnectionError(f"no bridge server answers ({exc})") from exc


def _fail(code: int, message: str) -> int:
    print(message, file=sys.stderr)
    return code
