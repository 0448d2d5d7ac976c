"""Which vault tools MCP clients get, and where their calls run.

The tools are the model's own (:mod:`plugin_bridge.app.vault_tools`): the same names, JSON
schemas, path rules, hash checks, audit log and undo. Reads are always offered; the writes only
with ``--allow-writes``; related_notes while the vault has an embedder. Two places run them:

- :class:`LocalTools`: this process serves the vault (its own registry over the app's vault);
- :class:`ForwardedTools`: another server owns the vault, and every call goes to it over the
  WebSocket (``tools/list``, ``tools/execute``), so there is one index and one writer.

:class:`HandoverTools` is the one the ``mcp`` command serves while it forwards: when the server
it forwards to stops, the command becomes the vault's server and hands every later call to
that server's :class:`LocalTools` (calls made meanwhile wait for it).
"""

from __future__ import annotations

import asyncio
import itertools
import sqlite3
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Protocol

from llm_service.messages import ToolSpec
from llm_service.tools import ToolRegistry
from plugin_bridge.app.tools import Tools
from plugin_bridge.app.turn.prompts import BadPrompt, Prompt, list_prompts, prompt_from_note
from plugin_bridge.app.vault_tools import (
    RELATED_TOOL,
    STDIO_WRITES_OFF,
    VAULT_TOOL_NAMES,
    WRITE_TOOL_NAMES,
    Writer,
    offer_related,
    register_vault_tools,
    write_refusal,
)
from plugin_bridge.vault.errors import VaultError
from plugin_bridge.vault.lexical.listing import ListedNote, NotesPage
from plugin_bridge.wire.client import RpcCallError
from plugin_bridge.wire.models import (
    NOTE_READ,
    PROMPTS_LIST,
    TOOL_CONFIRM,
    TOOLS_EXECUTE,
    TOOLS_LIST,
    VAULT_LIST,
    ClientRequest,
    Empty,
    NoteReadParams,
    ToolCallParams,
    ToolConfirmResult,
    ToolsExecuteParams,
    ToolsListParams,
    VaultListParams,
    dump,
)
from plugin_bridge.wire.models.base import ParamsT, ResultT

MCP_PAGE: Final = 200
"""Notes per resources/list page: each page is answered well within 100 ms on a busy machine
(bench/mcp_resources.py); the SDK's parsing of each resource, on both sides, is most of it."""

if TYPE_CHECKING:
    from llm_service.tools import ToolRegistry
    from plugin_bridge.app.clients import Caller
    from plugin_bridge.vault.vault import Vault
    from plugin_bridge.wire.client import BridgeClient


MCP_TOOL_NAMES: Final = frozenset({*VAULT_TOOL_NAMES, RELATED_TOOL})
"""Every vault tool MCP may offer (never the model's MCP-sourced ``NAME__tool`` ones)."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """A tool call's result text (JSON for the vault tools) and whether it is an error."""

    content: str
    is_error: bool = False


class VaultTools(Protocol):
    """What the MCP server needs: the tools on offer now and a way to run one, the notes and
    the custom prompts."""

    @property
    def allow_writes(self) -> bool:
        """Whether the write tools are offered and run (now)."""
        ...

    root: Path
    """The vault folder (followed notes are checked there)."""

    async def list_tools(self, caller: Caller | None = None) -> list[ToolSpec]:
        """The tools ``caller`` may run (see :meth:`call_tool`)."""
        ...

    async def call_tool(
        self, name: str, arguments: dict[str, Any], caller: Caller | None = None
    ) -> Outcome:
        """Run one tool; ``caller``: the client key behind an HTTP session (None: stdio's,
        the user's own)."""
        ...

    async def read_text(self, path: str) -> tuple[str, str]:
        """A note's path (as the vault spells it) and whole text; ValueError saying why not."""
        ...

    async def notes_page(self, cursor: str | None) -> NotesPage:
        """A page of the vault's notes (see :mod:`plugin_bridge.vault.lexical.listing`);
        ValueError saying why not (a cursor it did not give)."""
        ...

    async def prompts(self) -> list[Prompt]:
        """The custom prompts, read now."""
        ...


def offered(specs: list[ToolSpec], allow_writes: bool) -> list[ToolSpec]:
    """The vault tools of ``specs`` that MCP offers: reads, and the writes when allowed."""
    return [
        spec
        for spec in specs
        if spec.name in MCP_TOOL_NAMES and (allow_writes or spec.name not in WRITE_TOOL_NAMES)
    ]


def refusal(name: str, allow_writes: bool, writes_off: str = STDIO_WRITES_OFF) -> Outcome | None:
    """The error for a call MCP never runs (a write while writes are off, ``writes_off`` saying
    which switch allows them; not a vault tool)."""
    if name in WRITE_TOOL_NAMES and not allow_writes:
        return Outcome(write_refusal(name, writes_off), is_error=True)
    if name not in MCP_TOOL_NAMES:
        known = ", ".join(sorted(MCP_TOOL_NAMES - (set() if allow_writes else WRITE_TOOL_NAMES)))
        return Outcome(f"Unknown tool {name!r}. Available: {known}.", is_error=True)
    return None


class LocalTools:
    """The vault tools of this process's vault; writes run without asking (the MCP client is
    the one that asks its user), made by ``writer`` (the app's: through Obsidian for an open
    note), recorded in the audit log as the model's with undo. ``allow_writes``: a bool, or a
    function read at every call (``/mcp`` follows the setting ``http_allow_writes``)."""

    def __init__(
        self,
        vault: Vault,
        *,
        allow_writes: bool | Callable[[], bool],
        writer: Writer | None = None,
        writes_off: str = STDIO_WRITES_OFF,
        prompts_folder: Callable[[], str] = lambda: "Assistant/Prompts",
        reviewed: Callable[[Caller], ToolRegistry | None] | None = None,
    ) -> None:
        self.vault = vault
        self.root = vault.root
        self.prompts_folder = prompts_folder
        self._allow_writes = allow_writes
        self.writes_off = writes_off
        self.reviewed = reviewed
        """The tools a client key's writes run through when the local plugin reviews them
        (``/mcp``: a ``write`` key while the plugin is open); None: ``allow_writes`` decides."""
        self.registry: ToolRegistry = ToolRegistry()
        register_vault_tools(
            self.registry,
            vault,
            write_permission="allow",  # offered and run only while allow_writes says so
            writer=writer,
        )
        self._ids = itertools.count(1)

    @property
    def allow_writes(self) -> bool:
        allow = self._allow_writes
        return allow() if callable(allow) else allow

    async def list_tools(self, caller: Caller | None = None) -> list[ToolSpec]:
        offer_related(self.registry, self.vault)  # the embedder may have changed
        if caller is not None and not caller.allows("write"):
            writes = False
        else:
            writes = self.allow_writes or self._reviewed(caller) is not None
        return offered(self.registry.tool_specs(), writes)

    def _reviewed(self, caller: Caller | None) -> ToolRegistry | None:
        if caller is None or self.reviewed is None:
            return None
        return self.reviewed(caller)

    async def call_tool(
        self, name: str, arguments: dict[str, Any], caller: Caller | None = None
    ) -> Outcome:
        # a write key's write while the plugin is open: its review decides, not the setting
        registry = self._reviewed(caller) if name in WRITE_TOOL_NAMES else None
        if registry is None:
            refused = refusal(name, self.allow_writes, self.writes_off)
            if refused is not None:
                return refused
            registry = self.registry
            offer_related(registry, self.vault)
        ran = await Tools(registry).run([(name, arguments)], id_prefix=f"mcp-{next(self._ids)}")
        if ran.invalid_calls:
            return Outcome(ran.invalid_calls[0].reason, is_error=True)
        (result,) = ran.results
        return Outcome(result.content, result.is_error)

    async def read_text(self, path: str) -> tuple[str, str]:
        try:
            note = await self.vault.run(self.vault.notes.read, path)
        except VaultError as exc:
            raise ValueError(str(exc)) from exc
        return note.path, note.content

    async def notes_page(self, cursor: str | None) -> NotesPage:
        try:
            return await self.vault.notes_page(cursor, MCP_PAGE)
        except sqlite3.Error as exc:
            raise ValueError(
                "The vault's index is being rebuilt: list the notes again in a moment."
            ) from exc

    async def prompts(self) -> list[Prompt]:
        vault, folder = self.vault, self.prompts_folder()
        return await vault.notes.execute(lambda _: list_prompts(vault, folder))


class ForwardedTools:
    """The vault tools of the server that owns the vault, over its WebSocket. That server asks
    before each write (``tool/confirm``); this client answers yes only with --allow-writes."""

    def __init__(
        self,
        connect: Callable[[ForwardedTools], Awaitable[BridgeClient]],
        *,
        allow_writes: bool,
        root: Path,
    ) -> None:
        self._connect = connect
        self.allow_writes = allow_writes
        self.root = root
        self._client: BridgeClient | None = None

    async def start(self) -> None:
        """Connect now (ConnectionError when the server does not answer)."""
        self._client = await self._connect(self)

    async def _call(
        self, request: ClientRequest[ParamsT, ResultT], params: ParamsT, *, retry: bool
    ) -> ResultT:
        """``request`` on the server, connecting (again) when needed; a read is retried once on
        a new connection when the old one broke."""
        for attempt in (1, 2):
            if self._client is None:
                self._client = await self._connect(self)
            try:
                return await self._client.call(request, params)
            except ConnectionError:
                self._client = None
                if not retry or attempt == 2:
                    raise
        raise AssertionError("unreachable")

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()

    async def wait_lost(self) -> None:
        """Return once the server's connection is gone (at once when none can be made)."""
        try:
            if self._client is None:
                self._client = await self._connect(self)
        except ConnectionError:
            return
        await self._client.ws.wait_closed()

    async def answer(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """The server's requests to this client: ``tool/confirm`` only."""
        return dump(ToolConfirmResult(approved=self.allow_writes and method == TOOL_CONFIRM.method))

    async def list_tools(self, caller: Caller | None = None) -> list[ToolSpec]:
        listed = await self._call(TOOLS_LIST, ToolsListParams(format="anthropic"), retry=True)
        specs = [
            ToolSpec(tool["name"], tool.get("description", ""), tool["input_schema"])
            for tool in listed.tools
        ]
        return offered(specs, self.allow_writes)

    async def call_tool(
        self, name: str, arguments: dict[str, Any], caller: Caller | None = None
    ) -> Outcome:
        refused = refusal(name, self.allow_writes)
        if refused is not None:
            return refused
        calls = ToolsExecuteParams(calls=[ToolCallParams(name=name, arguments=arguments)])
        try:
            done = await self._call(TOOLS_EXECUTE, calls, retry=name not in WRITE_TOOL_NAMES)
        except RpcCallError as exc:
            return Outcome(exc.message, is_error=True)
        except ConnectionError as exc:
            then = (
                "read the note to see whether the write happened, then try again"
                if name in WRITE_TOOL_NAMES
                else "try again, and restart the MCP client if it persists"
            )
            return Outcome(
                f"Lost the bridge server for this vault during {name} ({exc}): {then}.",
                is_error=True,
            )
        for invalid in done.invalid_calls:
            return Outcome(invalid.reason, is_error=True)
        result = done.results[0]
        return Outcome(result.content, result.is_error)

    async def read_text(self, path: str) -> tuple[str, str]:
        try:
            note = await self._call(NOTE_READ, NoteReadParams(path=path), retry=True)
        except (RpcCallError, ConnectionError) as exc:
            raise ValueError(getattr(exc, "message", str(exc))) from exc
        return note.path, note.content

    async def notes_page(self, cursor: str | None) -> NotesPage:
        try:
            params = VaultListParams(cursor=cursor, limit=MCP_PAGE)
            page = await self._call(VAULT_LIST, params, retry=True)
        except (RpcCallError, ConnectionError) as exc:
            raise ValueError(getattr(exc, "message", str(exc))) from exc
        notes = [ListedNote(n.path, n.title, n.size) for n in page.notes]
        return NotesPage(notes, page.next_cursor)

    async def prompts(self) -> list[Prompt]:
        """The server's prompts/list, each prompt's note read for its instruction."""
        listed = await self._call(PROMPTS_LIST, Empty(), retry=True)
        found = []
        for item in listed.prompts:
            try:
                path, content = await self.read_text(item.id)
            except ValueError:
                continue  # removed since it was listed
            try:
                found.append(prompt_from_note(path, content))
            except BadPrompt:
                continue  # broken since it was listed (the server logs it)
        return found


class HandoverTools:
    """The tools of :class:`ForwardedTools` until :meth:`use` hands them to another
    :class:`VaultTools` (this process's, once it serves the vault); between
    :meth:`hand_over` and :meth:`use`, calls wait up to ``wait`` seconds."""

    def __init__(self, first: VaultTools, *, wait: float = 30.0) -> None:
        self.allow_writes = first.allow_writes
        self.root = first.root
        self.wait = wait
        self.serving = False
        """True while this process serves the vault in place of the server it forwarded to."""
        self._target = first
        self._ready = asyncio.Event()
        self._ready.set()

    def hand_over(self) -> None:
        """Calls from now on wait for :meth:`use`."""
        self._ready.clear()

    def use(self, target: VaultTools) -> None:
        self._target = target
        self._ready.set()

    async def _current(self) -> VaultTools:
        try:
            async with asyncio.timeout(self.wait):
                await self._ready.wait()
        except TimeoutError:
            raise ConnectionError("the vault's new server did not start in time") from None
        return self._target

    async def _reading(self) -> VaultTools:
        """:meth:`_current`, its failure as the ValueError the readers raise."""
        try:
            return await self._current()
        except ConnectionError as exc:
            raise ValueError(f"Lost the bridge server for this vault ({exc}).") from exc

    async def list_tools(self, caller: Caller | None = None) -> list[ToolSpec]:
        return await (await self._current()).list_tools(caller)

    async def call_tool(
        self, name: str, arguments: dict[str, Any], caller: Caller | None = None
    ) -> Outcome:
        try:
            target = await self._current()
        except ConnectionError as exc:
            return Outcome(f"Lost the bridge server for this vault ({exc}): try again.", True)
        return await target.call_tool(name, arguments, caller)

    async def read_text(self, path: str) -> tuple[str, str]:
        return await (await self._reading()).read_text(path)

    async def notes_page(self, cursor: str | None) -> NotesPage:
        return await (await self._reading()).notes_page(cursor)

    async def prompts(self) -> list[Prompt]:
        return await (await self._current()).prompts()
