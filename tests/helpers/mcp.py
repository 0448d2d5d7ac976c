"""A real MCP client (the official SDK) for tests that share it across a module (no tests here).

The SDK's ``Client`` is an anyio context: it must be entered and left in one task, while
pytest-asyncio runs a fixture's set-up and tear-down in different ones. :class:`HeldClient` keeps
it open in a task of its own; its calls work from any task.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
import mcp_types as types
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from tests.conftest import REPO_ROOT
from tests.helpers.serve import START_WAIT


class HeldClient:
    """An MCP ``Client`` open in its own task until :meth:`close`."""

    def __init__(self, server: StdioServerParameters | Any, **options: Any) -> None:
        self._server = server
        self._options = options
        self._ready = asyncio.Event()
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._client: Client | None = None
        self._error: BaseException | None = None

    async def open(self) -> HeldClient:
        self._task = asyncio.create_task(self._hold())
        async with asyncio.timeout(START_WAIT):
            await self._ready.wait()
        if self._error is not None:
            raise self._error
        return self

    async def _hold(self) -> None:
        try:
            async with Client(self._server, **self._options) as client:
                self._client = client
                self._ready.set()
                await self._stop.wait()
        except BaseException as exc:
            self._error = exc
            self._ready.set()

    @property
    def client(self) -> Client:
        assert self._client is not None
        return self._client

    async def tools(self) -> dict[str, types.Tool]:
        return {tool.name: tool for tool in (await self.client.list_tools()).tools}

    async def call(self, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        async with asyncio.timeout(START_WAIT):
            result = await self.client.call_tool(name, arguments)
        assert isinstance(result, types.CallToolResult)
        return result

    async def close(self) -> None:
        self._stop.set()
        if self._task is not None:
            await self._task


@asynccontextmanager
async def http_client(url: str, token: str, **options: Any) -> AsyncIterator[HeldClient]:
    """The SDK's client on ``url`` (a server's /mcp) with ``token`` as the bearer token."""
    headers = {"Authorization": f"Bearer {token}"}
    # the first /mcp request imports the SDK (about a second, more on a loaded machine)
    async with httpx2.AsyncClient(headers=headers, timeout=START_WAIT) as http:
        transport: Any = streamable_http_client(url, http_client=http)
        client = await HeldClient(transport, **options).open()
        try:
            yield client
        finally:
            await client.close()


def text_of(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


def json_of(result: types.CallToolResult) -> dict[str, Any]:
    assert not result.is_error, text_of(result)
    data: dict[str, Any] = json.loads(text_of(result))
    return data


def mcp_command(
    vault: Path, data_dir: Path, env: dict[str, str], *args: str
) -> StdioServerParameters:
    """``obsidian-ai-bridge mcp`` on ``vault`` as an MCP client starts it (this venv's Python)."""
    return StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "plugin_bridge",
            "mcp",
            "--vault",
            str(vault),
            "--data-dir",
            str(data_dir),
            *args,
        ],
        env=env,
        cwd=str(REPO_ROOT),
    )


def child_pids() -> list[int]:
    """The pids of this process's children (Linux: read from /proc)."""
    me = os.getpid()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == me:
            found.append(int(entry.name))
    return found


def open_files(pid: int) -> list[str]:
    """What the process ``pid`` has open (Linux: /proc/PID/fd)."""
    names = []
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            names.append(os.readlink(fd))
        except OSError:
            continue
    return names
