"""An approval covers the version of the note the user reviewed: a note changed while
tool/confirm is pending is not written (conflict, -32022), and the model is told."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from llm_service import ScriptedProvider
from tests.helpers.bridge import running_bridge


async def test_a_note_changed_during_the_review_is_not_written(tmp_path: Path) -> None:
    provider = ScriptedProvider()
    provider.enqueue_tool_call("append_to_note", {"path": "Inbox.md", "content": "model line"})
    provider.enqueue_text("Done.")
    async with running_bridge(tmp_path, provider=provider) as bridge:
        note = bridge.vault.root / "Inbox.md"
        wire = await bridge.wire()

        def approve_after_an_edit(method: str, params: dict[str, Any]) -> dict[str, Any]:
            note.write_text(note.read_text(encoding="utf-8") + "\nthe user's edit\n")
            return {"approved": True}

        request = await wire.request("chat/send", {"text": "add a line"})
        reply = await wire.reply_to(request, answer=approve_after_an_edit)
    (result,) = wire.notes_of("chat/toolResult", request)
    assert "result" in reply
    assert result["isError"] and "changed while the user was reviewing" in result["content"]
    text = note.read_text(encoding="utf-8")
    assert "the user's edit" in text and "model line" not in text
    told = provider.requests[1].messages[-1]
    assert "changed while the user was reviewing" in str(told)


async def test_an_unchanged_note_is_written_as_approved(tmp_path: Path) -> None:
    provider = ScriptedProvider()
    provider.enqueue_tool_call("append_to_note", {"path": "Inbox.md", "content": "model line"})
    provider.enqueue_text("Done.")
    async with running_bridge(tmp_path, provider=provider) as bridge:
        wire = await bridge.wire()
        request = await wire.request("chat/send", {"text": "add a line"})
        await wire.reply_to(request, answer=lambda m, p: {"approved": True})
        text = (bridge.vault.root / "Inbox.md").read_text(encoding="utf-8")
    (result,) = wire.notes_of("chat/toolResult", request)
    assert not result["isError"] and "model line" in text
