"""MCP servers as the model's tools: ``[mcp.servers.NAME]`` in the settings.

Each configured server has a supervisor task that starts it (a command over stdio, or a
streamable HTTP URL, through the official SDK's client), lists its tools and registers them on
the app's tool registry as ``NAME__tool``, under the server's permission ("ask" by default, so
the user approves each call through ``tool/confirm``, whose params then carry ``server``).

A server that fails to start or dies (a call sees the connection close, or listing its tools,
every :data:`CHECK_SECONDS`, fails) loses its tools: they leave the list offered to the model,
and a call that still names one gets a sentence saying the server is restarting. It is started
again after ``restart_backoff`` seconds, doubled after each failure up to :data:`MAX_BACKOFF`
and back to the base once a start succeeds. ``health`` shows each server's state.

The SDK is imported by the first supervisor, never when no server is configured.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal

from llm_service import lazy
from llm_service.tools import TOOL_NAME_PATTERN, ToolOutput
from llm_service.warmup import import_early

if TYPE_CHECKING:
    import httpx2
    import mcp
    import mcp.shared.exceptions as mcp_exceptions
    import mcp_types
    from mcp import Client
    from mcp.client import streamable_http

    from llm_service.tools import ToolRegistry
    from plugin_bridge.app.settings.config import McpServer, McpSettings
else:
    httpx2 = lazy.module("httpx2")
    mcp = lazy.module("mcp")
    mcp_exceptions = lazy.module("mcp.shared.exceptions")
    mcp_types = lazy.module("mcp_types")
    streamable_http = lazy.module("mcp.client.streamable_http")

logger = logging.getLogger(__name__)

SEPARATOR: Final = "__"
"""Between the server's name and its tool's: ``NAME__tool`` (vault tools never contain it)."""
MAX_BACKOFF: Final = 60.0
CHECK_SECONDS: Final = 5.0
START_SECONDS: Final = 30.0
"""How long a server may take to start and list its tools."""

SourceState = Literal["starting", "running", "failed"]


def server_of(tool_name: str) -> str | None:
    """The MCP server a tool name comes from, or None for the vault's own tools."""
    server, separator, _ = tool_name.partition(SEPARATOR)
    return server if separator else None


@dataclass(frozen=True, slots=True)
class SourceStatus:
    name: str
    state: SourceState
    tools: int
    error: str | None


class ServerDied(Exception):
    """The server's connection closed or stopped answering."""


class McpSources:
    """The supervisors of the configured servers; :meth:`apply` follows the settings."""

    def __init__(self, registry: ToolRegistry) -> None:
        self.registry = registry
        self._servers: dict[str, _Supervisor] = {}

    def status(self) -> list[SourceStatus]:
        return [server.status() for server in self._servers.values()]

    async def apply(self, settings: McpSettings) -> None:
        """Start the servers that are new or changed, stop those removed or changed."""
        for name, server in list(self._servers.items()):
            if settings.servers.get(name) != server.config:
                del self._servers[name]
                await server.stop()
            else:
                server.backoff = settings.restart_backoff
        for name, config in settings.servers.items():
            if name not in self._servers:
                supervisor = _Supervisor(name, config, self.registry, settings.restart_backoff)
                self._servers[name] = supervisor
                supervisor.start()

    async def aclose(self) -> None:
        servers, self._servers = list(self._servers.values()), {}
        for server in servers:
            await server.stop()


class _Supervisor:
    """Keeps one server running and its tools registered while it runs."""

    def __init__(
        self, name: str, config: McpServer, registry: ToolRegistry, backoff: float
    ) -> None:
        self.name = name
        self.config = config
        self.registry = registry
        self.backoff = backoff
        self.state: SourceState = "starting"
        self.error: str | None = None
        self._tools: list[str] = []
        self._client: Client | None = None
        self._died: asyncio.Event = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def status(self) -> SourceStatus:
        return SourceStatus(self.name, self.state, len(self._tools), self.error)

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name=f"mcp server {self.name}")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        self._unregister(None)

    async def _run(self) -> None:
        failures = 0
        while True:
            self.state, self._died = "starting", asyncio.Event()
            try:
                async with self._connected() as client:
                    self._register(await _listed(client))
                    self.state, self.error, failures = "running", None, 0
                    logger.info("MCP server %s running, %d tools", self.name, len(self._tools))
                    await self._watch(client)
            except Exception as exc:  # ExceptionGroups too, from the SDK's task groups
                self._failed(_reason(exc))
            finally:
                self._client = None
            delay = min(self.backoff * 2**failures, MAX_BACKOFF)
            failures += 1
            logger.warning(
                "MCP server %s failed (%s); restarting in %.2g s", self.name, self.error, delay
            )
            await asyncio.sleep(delay)

    @contextlib.asynccontextmanager
    async def _connected(self) -> AsyncIterator[Client]:
        await import_early("mcp")  # ~1 s, off the event loop
        config = self.config
        async with contextlib.AsyncExitStack() as stack:
            if config.command is not None:
                target: Any = mcp.StdioServerParameters(
                    command=config.command, args=list(config.args), env=dict(config.env)
                )
            else:
                assert config.url is not None
                http = await stack.enter_async_context(
                    httpx2.AsyncClient(
                        headers=dict(config.headers), timeout=httpx2.Timeout(30.0, read=300.0)
                    )
                )
                target = streamable_http.streamable_http_client(config.url, http_client=http)
            async with asyncio.timeout(START_SECONDS):
                client = await stack.enter_async_context(mcp.Client(target))
            self._client = client
            yield client

    async def _watch(self, client: Client) -> None:
        """Raise ServerDied once a call finds the server gone or it stops answering: every
        CHECK_SECONDS it lists its tools again (MCP's own ping is gone from the 2026 protocol),
        taking in any change of them."""
        while True:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(CHECK_SECONDS):
                    await self._died.wait()
            if self._died.is_set():
                raise ServerDied("its connection closed")
            try:
                async with asyncio.timeout(CHECK_SECONDS):
                    tools = await _listed(client)
            except Exception as exc:
                raise ServerDied(f"it does not answer: {_reason(exc)}") from exc
            if [tool.name for tool in tools] != [self._own(name) for name in self._tools]:
                self._register(tools)

    def _own(self, name: str) -> str:
        """The server's own name of one of its tools (``NAME__tool`` → ``tool``)."""
        return name.removeprefix(f"{self.name}{SEPARATOR}")

    def _register(self, tools: list[Any]) -> None:
        """Offer ``tools`` (the server's list now) instead of those offered so far."""
        self._unregister(None)
        names = []
        for tool in tools:
            name = f"{self.name}{SEPARATOR}{tool.name}"
            if not TOOL_NAME_PATTERN.match(name):
                logger.warning("MCP server %s: tool %.80r has an unusable name", self.name, name)
                continue
            description = (tool.description or tool.title or tool.name).strip()
            try:
                self.registry.register_tool(
                    name,
                    f"{description} (from the MCP server {self.name!r})",
                    _schema(tool.input_schema),
                    self._handler(tool.name),
                    permission=self.config.permission,
                )
            except ValueError as exc:
                logger.warning("MCP server %s: tool %s skipped: %s", self.name, tool.name, exc)
                continue
            names.append(name)
        self._tools = names

    def _failed(self, error: str) -> None:
        """Down: its tools leave the model's list at once, and a call naming one is told why."""
        if self.state == "failed":
            return
        self.state, self.error, self._client = "failed", error, None
        self._died.set()
        self._unregister(
            f"The MCP server {self.name!r} is not running ({error}); it is being restarted: "
            "try again in a moment, or do without it."
        )

    def _unregister(self, reason: str | None) -> None:
        for name in self._tools:
            self.registry.unregister_tool(name, reason)
        self._tools = []

    def _handler(self, tool: str) -> Any:
        async def call(arguments: dict[str, Any]) -> ToolOutput:
            client = self._client
            if client is None:
                raise RuntimeError(f"the MCP server {self.name!r} is not running; it is restarting")
            try:
                result = await client.call_tool(tool, arguments)
            except mcp_exceptions.MCPError as exc:
                if exc.error.code != mcp_types.CONNECTION_CLOSED:
                    raise RuntimeError(exc.error.message) from exc
                self._failed(f"it stopped while running {tool}")
                raise RuntimeError(
                    f"the MCP server {self.name!r} stopped while running {tool}; it is being "
                    "restarted: try again in a moment"
                ) from exc
            text = _text(result)
            if result.is_error:
                raise RuntimeError(text or "the server reported an error without a message")
            return text

        return call


async def _listed(client: Client) -> list[Any]:
    """Every tool the server lists now (following its pages, at most 20)."""
    tools: list[Any] = []
    cursor = None
    for _ in range(20):
        page = await client.list_tools(cursor=cursor, cache_mode="bypass")
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
    return tools


def _schema(schema: dict[str, Any]) -> dict[str, Any]:
    """An MCP tool's input schema as the providers take it: an object schema, without the
    ``$schema`` marker some APIs refuse."""
    translated = {key: value for key, value in schema.items() if key != "$schema"}
    translated["type"] = "object"
    translated.setdefault("properties", {})
    return translated


def _text(result: Any) -> str:
    """A tool result as the model reads it: its text blocks, or its structured content."""
    parts = []
    for block in result.content:
        text = getattr(block, "text", None)
        parts.append(text if isinstance(text, str) else f"[{getattr(block, 'type', 'content')}]")
    if not parts and result.structured_content is not None:
        return json.dumps(result.structured_content, ensure_ascii=False)
    return "\n".join(parts)


def _reason(exc: BaseException) -> str:
    """One line for health and the log; the first leaf of an exception group."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, TimeoutError):
        return f"it did not start within {START_SECONDS:g} s"
    message = str(exc).strip() or type(exc).__name__
    return message[:300]
