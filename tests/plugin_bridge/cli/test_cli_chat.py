"""The terminal chat client against an in-process server: streaming, tools, y/n, /clear."""

from __future__ import annotations

import asyncio
import io
from collections.abc import Iterator
from pathlib import Path

from llm_service import LLMResponse, ScriptedProvider
from llm_service.providers.base import ChatRequest
from plugin_bridge.cli.chat import Interrupts, ReadLine, chat
from plugin_bridge.wire.infofile import InfoRecord, write_info_file
from tests.helpers.bridge import WAIT, running_bridge


def scripted_input(lines: list[str]) -> tuple[list[str], ReadLine]:
    """An ``ask`` that answers with ``lines`` in order (then end of input), recording prompts."""
    prompts: list[str] = []
    answers: Iterator[str] = iter(lines)

    async def ask(prompt: str) -> str | None:
        prompts.append(prompt)
        return next(answers, None)

    return prompts, ask


async def test_chat_shows_text_tools_and_asks_before_writing(tmp_path: Path) -> None:
    """A turn with a write: the tool call, the diff, the y/n prompt, the result and usage."""
    provider = ScriptedProvider()
    provider.enqueue_tool_call("create_note", {"path": "Kites.md", "content": "Kites fly.\n"})
    provider.enqueue_text("Saved [[Kites]].")
    provider.enqueue_text("Fresh start.")
    async with running_bridge(tmp_path, provider=provider) as bridge:
        info_file = tmp_path / "server.json"
        write_info_file(info_file, InfoRecord(bridge.url, bridge.app.token, 1, 1))
        prompts, ask = scripted_input(["write a kite note", "y", "/clear", "again", "/quit"])
        out = io.StringIO()
        assert await chat(info_file, out, ask) == 0
        assert (bridge.vault.root / "Kites.md").read_text() == "Kites fly.\n"
    text = out.getvalue()
    assert "Connected to vault vault (16 notes)" in text
    assert '[tool] create_note {"path": "Kites.md", "content": "Kites fly.\\n"}' in text
    assert "+Kites fly." in text
    assert "[result]" in text
    assert "Saved [[Kites]]." in text
    assert "(new conversation)" in text
    assert "Fresh start." in text
    assert "tokens" in text
    assert prompts == ["you> ", "  Allow? [y/N] ", "you> ", "you> ", "you> "]
    assert [m.text for m in provider.requests[2].messages] == ["again"]


async def test_chat_declines_a_write_on_anything_but_yes(tmp_path: Path) -> None:
    """Answering anything but y/yes denies the write."""
    provider = ScriptedProvider()
    provider.enqueue_tool_call("create_note", {"path": "No.md", "content": "x"})
    provider.enqueue_text("Not saved.")
    async with running_bridge(tmp_path, provider=provider) as bridge:
        info_file = tmp_path / "server.json"
        write_info_file(info_file, InfoRecord(bridge.url, bridge.app.token, 1, 1))
        _, ask = scripted_input(["write", "maybe"])
        out = io.StringIO()
        assert await chat(info_file, out, ask) == 0
        assert not (bridge.vault.root / "No.md").exists()
    assert "[error]" in out.getvalue()


async def test_chat_reports_a_wrong_token(tmp_path: Path) -> None:
    """A stale info file (old token) exits 1 with a sentence, not a traceback."""
    async with running_bridge(tmp_path) as bridge:
        info_file = tmp_path / "server.json"
        write_info_file(info_file, InfoRecord(bridge.url, "stale-token", 1, 1))
        _, ask = scripted_input([])
        assert await chat(info_file, io.StringIO(), ask) == 1


async def test_slash_commands_are_handled_here_and_never_reach_the_model(tmp_path: Path) -> None:
    """/help, /model and an unknown /command answer locally; the model sees none of them."""
    provider = ScriptedProvider()
    async with running_bridge(tmp_path, provider=provider, provider_name="anthropic") as bridge:
        info_file = tmp_path / "server.json"
        write_info_file(info_file, InfoRecord(bridge.url, bridge.app.token, 1, 1))
        _, ask = scripted_input(["/help", "/model", "/frobnicate now", "/new"])
        out = io.StringIO()
        assert await chat(info_file, out, ask) == 0
    text = out.getvalue()
    assert "/new starts a new conversation" in text
    assert "anthropic: test-model" in text
    assert "Unknown command /frobnicate: /help lists the commands." in text
    assert provider.requests == []


async def test_ctrl_c_during_an_answer_stops_it_on_the_server(tmp_path: Path) -> None:
    """Ctrl-C while the model answers cancels that request; the next question still works."""
    entered = asyncio.Event()

    async def slow(request: ChatRequest) -> LLMResponse:
        entered.set()
        await asyncio.sleep(WAIT)
        raise AssertionError("not cancelled")

    provider = ScriptedProvider(slow)
    provider.enqueue_text("Second answer.")
    interrupts = Interrupts()
    lines = iter(["a long question", "a short one"])

    async def ask(prompt: str) -> str | None:
        return next(lines, None)

    async def press_ctrl_c_once_answering() -> None:
        await asyncio.wait_for(entered.wait(), WAIT)
        interrupts.fire()

    async with running_bridge(tmp_path, provider=provider) as bridge:
        info_file = tmp_path / "server.json"
        write_info_file(info_file, InfoRecord(bridge.url, bridge.app.token, 1, 1))
        out = io.StringIO()
        pressing = asyncio.create_task(press_ctrl_c_once_answering())
        assert await chat(info_file, out, ask, interrupts) == 0
        await pressing
    text = out.getvalue()
    assert "(stopped)" in text and "Second answer." in text


async def test_context_command_sends_notes_with_each_message(tmp_path: Path) -> None:
    """/context NOTE adds a note to every next message; /context lists; clear drops them."""
    provider = ScriptedProvider()
    provider.enqueue_text("first")
    provider.enqueue_text("second")
    async with running_bridge(tmp_path, provider=provider) as bridge:
        info_file = tmp_path / "server.json"
        write_info_file(info_file, InfoRecord(bridge.url, bridge.app.token, 1, 1))
        lines = ["/context Welcome.md", "/context", "what is this?", "/context clear", "and now?"]
        _, ask = scripted_input(lines)
        out = io.StringIO()
        assert await chat(info_file, out, ask) == 0
    text = out.getvalue()
    assert "Context: Welcome.md" in text and "sources: Welcome.md" in text
    with_note, without = (request.messages[-1] for request in provider.requests)
    assert len(with_note.content) == 2 and len(without.content) == 1
