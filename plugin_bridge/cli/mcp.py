"""``mcp``: the vault as an MCP server over stdio, for the MCP clients that start a command
(Claude Desktop, Claude Code, Cursor, LM Studio).

One server per vault, one index, one writer:

- when a bridge server already runs for the vault (its info file names a live process that
  accepts its token), every MCP call is forwarded to it over the WebSocket;
- otherwise this process becomes that server, as ``serve`` would (the vault lock, the WebSocket,
  the info file), and serves MCP beside it: a plugin started later connects to it. It stops when
  the MCP client closes stdin or sends SIGTERM.

stdout is the MCP channel: every other line goes to stderr.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Final

from plugin_bridge.cli.lock import ServerRunning, acquire
from plugin_bridge.cli.serve import ServeOptions, data_dir_problem
from plugin_bridge.cli.serve import run as serve
from plugin_bridge.vault.datadir import data_dir_for
from plugin_bridge.wire.infofile import InfoFileError, InfoRecord, default_info_file, read_info_file

if TYPE_CHECKING:
    from pathlib import Path

    from plugin_bridge.app.state import BridgeApp
    from plugin_bridge.mcp.tools import ForwardedTools
    from plugin_bridge.wire.client import BridgeClient

START_WAIT: Final = 30.0
"""How long to wait for a server that holds the vault's lock to write its info file."""
CLIENT_NAME: Final = "obsidian-ai-bridge mcp"


def run(options: ServeOptions, *, allow_writes: bool) -> int:
    """Serve MCP on stdio until stdin closes; the process exit code."""
    vault = options.vault.expanduser()
    info_path = options.info_file or default_info_file(vault)
    data_dir = data_dir_for(vault, options.data_dir)
    deadline = time.monotonic() + START_WAIT
    while True:
        if _live(info_path) is not None:
            code = asyncio.run(_forward(info_path, vault.name, allow_writes))
            if code is not None:
                return code
        try:
            lock = acquire(data_dir)
        except ServerRunning as exc:  # starting up: its info file comes next
            if time.monotonic() > deadline:
                return _fail(1, f"{exc} It does not answer: stop it, then start again.")
            time.sleep(0.1)
            continue
        except OSError as exc:
            return _fail(2, data_dir_problem(exc))
        return serve(options, lock=lock, companion=_stdio_companion(allow_writes))


def _live(info_path: Path) -> InfoRecord | None:
    """The info file's record when its process is alive (not whether it answers)."""
    try:
        record = read_info_file(info_path)
    except InfoFileError:
        return None
    if record.pid == os.getpid():
        return None
    if sys.platform == "win32":  # os.kill would end the process there: the connection decides
        return record
    try:
        os.kill(record.pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        pass  # alive, another user's
    return record


def _stdio_companion(allow_writes: bool) -> Callable[[BridgeApp], Awaitable[None]]:
    async def companion(app: BridgeApp) -> None:
        from plugin_bridge.mcp.server import build_server, serve_stdio
        from plugin_bridge.mcp.tools import LocalTools

        tools = LocalTools(app.vault, allow_writes=allow_writes, writer=app.writes.write)
        await serve_stdio(build_server(tools, app.vault.name))

    return companion


async def _forward(info_path: Path, vault_name: str, allow_writes: bool) -> int | None:
    """Serve MCP by forwarding to the running server; None when it does not answer."""
    from plugin_bridge.mcp.server import build_server, serve_stdio
    from plugin_bridge.mcp.tools import ForwardedTools

    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)

    async def connect(tools: ForwardedTools) -> BridgeClient:
        return await _connect(info_path, tools)

    tools = ForwardedTools(connect, allow_writes=allow_writes)
    try:
        await tools.start()
    except ConnectionError:
        return None
    print(f"Forwarding MCP to the server in {info_path}", file=sys.stderr, flush=True)
    try:
        await serve_stdio(build_server(tools, vault_name))
    finally:
        await tools.aclose()
    return 0


async def _connect(info_path: Path, tools: ForwardedTools) -> BridgeClient:
    """A connection to the server the info file names, or ConnectionError saying why not."""
    from plugin_bridge.wire.client import BridgeClient

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
