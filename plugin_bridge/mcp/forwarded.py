"""Where the ``mcp`` command's calls run while another server owns the vault, and the hand-over
when that server stops.

- :class:`ForwardedTools`: every call goes to the vault's server over the WebSocket
  (``tools/list``, ``tools/execute``, ``vault/list``, ``note/read``, ``prompts/list``), so
  there is one index and one writer;
- :class:`HandoverTools`: what the ``mcp`` command serves while it forwards. When the server
  forwarded to stops, the command becomes the vault's server and hands every later call to
  that server's :class:`~plugin_bridge.mcp.tools.LocalTools`; a call that finds no server
  meanwhile waits for the next one (up to :data:`TAKEOVER_SECONDS`).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TypeVar

from llm_service.messages import ToolSpec
from plugin_bridge.app.turn.prompts import BadPrompt, Prompt, prompt_from_note
from plugin_bridge.app.vault_tools import WRITE_TOOL_NAMES
from plugin_bridge.mcp.tools import MCP_PAGE, Outcome, VaultTools, offered, refusal, unknown_tool
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

if TYPE_CHECKING:
    from plugin_bridge.app.clients import Caller
    from plugin_bridge.wire.client import BridgeClient

T = TypeVar("T")
TAKEOVER_SECONDS: Final = 30.0
"""How long a forwarded call waits for the vault's next server when the one it forwarded to
stopped."""
RETRY_SECONDS: Final = 0.25
"""How often such a call tries again meanwhile (another server may have taken the vault)."""


class NotConnected(ConnectionError):
    """No server answered the connection: the request was not sent (safe to send again)."""


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
        a new connection when the old one broke. :class:`NotConnected` when no server answers
        the connection (nothing was sent)."""
        for attempt in (1, 2):
            if self._client is not None and self._client.ws.close_code is not None:
                self._client = None  # closed already (the server stopped): nothing goes out
            if self._client is None:
                try:
                    self._client = await self._connect(self)
                except ConnectionError as exc:
                    raise NotConnected(str(exc)) from exc
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
        refused = await unknown_tool(name, self, caller) or refusal(name, self.allow_writes)
        if refused is not None:
            return refused
        calls = ToolsExecuteParams(calls=[ToolCallParams(name=name, arguments=arguments)])
        try:
            done = await self._call(TOOLS_EXECUTE, calls, retry=name not in WRITE_TOOL_NAMES)
        except RpcCallError as exc:
            return Outcome(exc.message, is_error=True)
        except NotConnected:
            raise  # nothing sent: the caller may wait for the vault's next server
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
        except NotConnected:
            raise
        except (RpcCallError, ConnectionError) as exc:
            raise ValueError(getattr(exc, "message", str(exc))) from exc
        return note.path, note.content

    async def notes_page(self, cursor: str | None) -> NotesPage:
        try:
            params = VaultListParams(cursor=cursor, limit=MCP_PAGE)
            page = await self._call(VAULT_LIST, params, retry=True)
        except NotConnected:
            raise
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

    def on_list_changed(self, changed: Callable[[], None]) -> None:
        """Not told: the server forwarded to keeps the list (its ``vault/list``)."""


class HandoverTools:
    """The tools of :class:`ForwardedTools` until :meth:`use` hands them to another
    :class:`VaultTools` (this process's, once it serves the vault). A call that finds no server
    to connect to (the one forwarded to stopped; nothing was sent) waits up to ``wait``
    seconds for the vault's next server (this process taking over, or another one) and runs
    there; so do calls made between :meth:`hand_over` and :meth:`use`."""

    def __init__(self, first: VaultTools, *, wait: float = TAKEOVER_SECONDS) -> None:
        self.allow_writes = first.allow_writes
        self.root = first.root
        self.wait = wait
        self._first = first
        self.serving = False
        """True while this process serves the vault in place of the server it forwarded to."""
        self._target = first
        self._ready = asyncio.Event()
        self._ready.set()
        self._switched = asyncio.Event()
        self._changed: Callable[[], None] | None = None

    def hand_over(self) -> None:
        """Calls from now on wait for :meth:`use`."""
        self._ready.clear()

    def use(self, target: VaultTools) -> None:
        self._target = target
        self._ready.set()
        self._switched.set()
        self._switched = asyncio.Event()
        if self._changed is not None and target is not self._first:
            target.on_list_changed(self._changed)
            self._changed()  # another server's list: read it again

    async def _run(self, use: Callable[[VaultTools], Awaitable[T]]) -> T:
        """``use(target)`` on the current target, waiting (up to :attr:`wait` s in all) for
        the vault's next server while none answers."""
        deadline = time.monotonic() + self.wait
        while True:
            left = deadline - time.monotonic()
            try:
                async with asyncio.timeout(max(left, 0)):
                    await self._ready.wait()
            except TimeoutError:
                raise ConnectionError(self._gone()) from None
            switched = self._switched
            try:
                return await use(self._target)
            except NotConnected:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise ConnectionError(self._gone()) from None
            with contextlib.suppress(TimeoutError):  # then try again (another server?)
                async with asyncio.timeout(min(left, RETRY_SECONDS)):
                    await switched.wait()

    def _gone(self) -> str:
        return f"no server for this vault answered within {self.wait:g} s"

    async def _reading(self, use: Callable[[VaultTools], Awaitable[T]]) -> T:
        """:meth:`_run`, its failure as the ValueError the readers raise."""
        try:
            return await self._run(use)
        except ConnectionError as exc:
            raise ValueError(f"Lost the bridge server for this vault ({exc}).") from exc

    async def list_tools(self, caller: Caller | None = None) -> list[ToolSpec]:
        return await self._run(lambda target: target.list_tools(caller))

    async def call_tool(
        self, name: str, arguments: dict[str, Any], caller: Caller | None = None
    ) -> Outcome:
        try:
            return await self._run(lambda target: target.call_tool(name, arguments, caller))
        except ConnectionError as exc:
            return Outcome(f"Lost the bridge server for this vault ({exc}): try again.", True)

    async def read_text(self, path: str) -> tuple[str, str]:
        return await self._reading(lambda target: target.read_text(path))

    async def notes_page(self, cursor: str | None) -> NotesPage:
        return await self._reading(lambda target: target.notes_page(cursor))

    async def prompts(self) -> list[Prompt]:
        return await self._run(lambda target: target.prompts())

    def on_list_changed(self, changed: Callable[[], None]) -> None:
        self._changed = changed
        self._target.on_list_changed(changed)
