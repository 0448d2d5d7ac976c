"""A forwarded ``mcp`` whose server stopped: a call that finds no server to connect to waits
for the vault's next server (up to its wait: 30 s in the command, short here) and runs there;
past the wait it is lost, saying so."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from llm_service.messages import ToolSpec
from plugin_bridge.app.clients import Caller
from plugin_bridge.app.turn.prompts import Prompt
from plugin_bridge.mcp.forwarded import TAKEOVER_SECONDS, HandoverTools, NotConnected
from plugin_bridge.mcp.tools import Outcome
from plugin_bridge.vault.lexical.listing import ListedNote, NotesPage


class Tools:
    """A :class:`~plugin_bridge.mcp.tools.VaultTools` that answers with its name, or finds no
    server (``gone``)."""

    allow_writes = False
    root = Path(".")

    def __init__(self, name: str, *, gone: bool = False) -> None:
        self.name = name
        self.gone = gone
        self.calls = 0

    def _answer(self) -> str:
        self.calls += 1
        if self.gone:
            raise NotConnected("no bridge server answers")
        return self.name

    async def list_tools(self, caller: Caller | None = None) -> list[ToolSpec]:
        return [ToolSpec(self._answer(), "", {})]

    async def call_tool(
        self, name: str, arguments: dict[str, Any], caller: Caller | None = None
    ) -> Outcome:
        return Outcome(self._answer())

    async def read_text(self, path: str) -> tuple[str, str]:
        return path, self._answer()

    async def notes_page(self, cursor: str | None) -> NotesPage:
        return NotesPage([ListedNote(self._answer(), "", 0)], None)

    async def prompts(self) -> list[Prompt]:
        self._answer()
        return []

    def on_list_changed(self, changed: Callable[[], None]) -> None:
        return None


async def test_a_call_waits_for_the_next_server_and_runs_there() -> None:
    assert TAKEOVER_SECONDS == 30.0  # as docs/mcp.md says
    stopped, taken_over = Tools("stopped", gone=True), Tools("here")
    tools = HandoverTools(stopped, wait=5.0)
    waiting = asyncio.create_task(tools.call_tool("search_notes", {}))
    await asyncio.sleep(0.3)
    assert not waiting.done() and stopped.calls >= 1
    tools.use(taken_over)
    assert (await waiting).content == "here"
    assert (await tools.read_text("A.md")) == ("A.md", "here")


async def test_past_the_wait_a_call_is_lost_saying_so() -> None:
    tools = HandoverTools(Tools("stopped", gone=True), wait=0.3)
    lost = await tools.call_tool("search_notes", {})
    assert lost.is_error and "Lost the bridge server for this vault" in lost.content
    assert "within 0.3 s" in lost.content
    with pytest.raises(ValueError, match="Lost the bridge server"):
        await tools.notes_page(None)
