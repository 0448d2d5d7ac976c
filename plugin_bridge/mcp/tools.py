"""Which vault tools MCP clients get, and where their calls run.

The tools are the model's own (:mod:`plugin_bridge.app.vault_tools`): the same names, JSON
schemas, path rules, hash checks, audit log and undo. Reads are always offered; the writes as
the access policy says (:meth:`~plugin_bridge.app.access.ToolAccess.mcp_writes`: stdio's
``--allow-writes``, the setting over HTTP); related_notes while the vault has an embedder. Two
places run them:

- :class:`LocalTools`: this process serves the vault (the tools the access policy gives);
- :class:`~plugin_bridge.mcp.forwarded.ForwardedTools`: another server owns the vault, and
  every call goes to it over the WebSocket (``tools/list``, ``tools/execute``), so there is
  one index and one writer (:mod:`plugin_bridge.mcp.forwarded`, with the hand-over to this
  process when that server stops).
"""

from __future__ import annotations

import asyncio
import itertools
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Protocol

from llm_service.messages import ToolSpec
from plugin_bridge.app.access import STDIO_WRITES_OFF, write_refusal
from plugin_bridge.app.clients import ForbiddenScope
from plugin_bridge.app.turn.prompts import Prompt, list_prompts
from plugin_bridge.app.vault_tools import RELATED_TOOL, VAULT_TOOL_NAMES, WRITE_TOOL_NAMES
from plugin_bridge.vault.errors import VaultError
from plugin_bridge.vault.lexical.listing import NotesPage

MCP_PAGE: Final = 200
"""Notes per resources/list page: each page is answered well within 100 ms on a busy machine
(bench/mcp_resources.py); the SDK's parsing of each resource, on both sides, is most of it."""

if TYPE_CHECKING:
    from plugin_bridge.app.access import ToolAccess
    from plugin_bridge.app.clients import Caller
    from plugin_bridge.vault.vault import Vault


WHOLE_POLL_SECONDS: Final = 0.1
"""How often the first indexing is checked for its end (while it runs)."""

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

    def on_list_changed(self, changed: Callable[[], None]) -> None:
        """Call ``changed`` (from any thread) whenever :meth:`notes_page`'s list may have
        changed."""
        ...


def offered(specs: list[ToolSpec], allow_writes: bool) -> list[ToolSpec]:
    """The vault tools of ``specs`` that MCP offers: reads, and the writes when allowed."""
    return [
        spec
        for spec in specs
        if spec.name in MCP_TOOL_NAMES and (allow_writes or spec.name not in WRITE_TOOL_NAMES)
    ]


def refusal(name: str, allow_writes: bool) -> Outcome | None:
    """The error for a write the ``mcp`` command does not forward while its writes are off."""
    if name in WRITE_TOOL_NAMES and not allow_writes:
        return Outcome(write_refusal(name, STDIO_WRITES_OFF), is_error=True)
    return None


async def unknown_tool(name: str, tools: VaultTools, caller: Caller | None) -> Outcome | None:
    """The error for a call naming no vault tool: it names the tools ``caller`` may use (those
    ``tools/list`` gives it), never the others."""
    if name in MCP_TOOL_NAMES:
        return None
    known = ", ".join(sorted(spec.name for spec in await tools.list_tools(caller))) or "none"
    return Outcome(f"Unknown tool {name!r}. Available: {known}.", is_error=True)


class LocalTools:
    """The vault tools of this process's vault as the access policy gives them to MCP clients
    (:meth:`~plugin_bridge.app.access.ToolAccess.for_mcp`): writes run without asking here
    (the MCP client is the one that asks its user), made through Obsidian for an open note,
    recorded in the audit log with undo; a ``write`` key's over HTTP reviewed by the plugin
    while it is open. ``allow_writes``: stdio's ``--allow-writes``; None: over HTTP, the
    setting decides (read at every call)."""

    def __init__(
        self,
        vault: Vault,
        access: ToolAccess,
        *,
        allow_writes: bool | None,
        prompts_folder: Callable[[], str] = lambda: "Assistant/Prompts",
    ) -> None:
        self.vault = vault
        self.root = vault.root
        self.changes = vault.index
        """The index's change feed: followed notes are told of changes from it."""
        self.prompts_folder = prompts_folder
        self.access = access
        self._switch = allow_writes
        self._ids = itertools.count(1)
        self._whole: asyncio.Task[None] | None = None

    @property
    def allow_writes(self) -> bool:
        return self.access.mcp_writes(None, self._switch)

    async def list_tools(self, caller: Caller | None = None) -> list[ToolSpec]:
        tools = self.access.for_mcp(caller, self._switch)
        usable = set(tools.usable())
        return [
            spec
            for spec in tools.registry.tool_specs()
            if spec.name in MCP_TOOL_NAMES and spec.name in usable
        ]

    async def call_tool(
        self, name: str, arguments: dict[str, Any], caller: Caller | None = None
    ) -> Outcome:
        unknown = await unknown_tool(name, self, caller)
        if unknown is not None:
            return unknown
        tools = self.access.for_mcp(caller, self._switch)
        try:
            ran = await tools.run([(name, arguments)], id_prefix=f"mcp-{next(self._ids)}")
        except ForbiddenScope as refused:  # a key without write calling a write tool
            return Outcome(refused.message, is_error=True)
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

    def on_list_changed(self, changed: Callable[[], None]) -> None:
        """``changed`` after each index write that changed notes, and once the first indexing
        is done (the list then comes from the index, with titles)."""
        self.vault.index.add_listener(changed)
        if not self.vault.listed_whole:
            self._whole = asyncio.create_task(self._when_whole(changed), name="mcp list whole")

    async def _when_whole(self, changed: Callable[[], None]) -> None:
        while not self.vault.listed_whole:  # noqa: ASYNC110 - the indexer thread's state
            await asyncio.sleep(WHOLE_POLL_SECONDS)
        changed()
