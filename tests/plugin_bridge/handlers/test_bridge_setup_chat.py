"""The setup conversation (chat/send with setup): its own system prompt and the complete_setup
tool, whose write of the context note is reviewed (tool/confirm with the note's path and a
diff), undoable and audited; later turns are ordinary chat carrying the note."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from llm_service import ScriptedProvider
from plugin_bridge.app.settings.config import BridgeSettings
from tests.helpers.bridge import Bridge, running_bridge

NOTE = "# About me\n\nThis vault is for my garden.\n"


def _tool_names(provider: ScriptedProvider, turn: int) -> list[str]:
    return [tool.name for tool in provider.requests[turn].tools]


async def _setup_turns(bridge: Bridge, approve: Any) -> tuple[list[dict[str, Any]], Any]:
    """Start the setup conversation with empty text, answer once; the confirmations asked."""
    wire = await bridge.wire()
    first = await wire.result("chat/send", {"setup": True, "text": ""})
    second_id = await wire.request(
        "chat/send",
        {"setup": True, "text": "It's for my garden.", "conversationId": first["conversationId"]},
    )
    reply = await wire.reply_to(second_id, answer=lambda m, p: approve)
    assert "result" in reply, reply
    return wire.server_requests, wire


async def test_setup_asks_then_writes_the_context_note_after_review(tmp_path: Path) -> None:
    provider = ScriptedProvider()
    provider.enqueue_text("What is this vault for?")
    provider.enqueue_tool_call("complete_setup", {"content": NOTE})
    provider.enqueue_text("Thank you!")
    provider.enqueue_text("Your garden notes say…")
    async with running_bridge(tmp_path, provider=provider) as bridge:
        asked, wire = await _setup_turns(bridge, {"approved": True})
        (confirm,) = asked
        assert confirm["params"]["tool"] == "complete_setup"
        assert confirm["params"]["arguments"] == {"path": "Assistant.md", "content": NOTE}
        assert "+This vault is for my garden." in confirm["params"]["preview"]
        assert (bridge.vault.root / "Assistant.md").read_text() == NOTE
        audit = await wire.result("audit/list", {})
        assert audit["entries"][0]["path"] == "Assistant.md"
        await wire.result("chat/send", {"text": "What grows best?"})  # an ordinary chat
        await wire.result("note/undo", {"path": "Assistant.md"})
        assert not (bridge.vault.root / "Assistant.md").exists()
    first, _second, _third, later = provider.requests
    assert first.messages[0].text.startswith("Hello!")  # empty text starts the conversation
    assert "getting to know its user" in (first.system or "")
    assert "complete_setup" in _tool_names(provider, 0)
    assert "complete_setup" not in _tool_names(provider, 3)
    assert "getting to know" not in (later.system or "")
    assert "This vault is for my garden." in (later.system or "")  # later chats carry the note


async def test_setup_starts_from_the_current_note_and_a_denied_write_keeps_it(
    tmp_path: Path,
) -> None:
    provider = ScriptedProvider()
    provider.enqueue_text("Has anything changed?")
    provider.enqueue_tool_call("complete_setup", {"content": "# About me\n\nNow: birds.\n"})
    provider.enqueue_text("Kept it as it was.")
    settings = BridgeSettings(context_note="Notes about me.md")
    async with running_bridge(tmp_path, provider=provider, settings=settings) as bridge:
        (bridge.vault.root / "Notes about me.md").write_text(NOTE)
        asked, _wire = await _setup_turns(bridge, {"approved": False})
        assert asked[0]["params"]["arguments"]["path"] == "Notes about me.md"
        assert "-This vault is for my garden." in asked[0]["params"]["preview"]
        assert (bridge.vault.root / "Notes about me.md").read_text() == NOTE
    system = provider.requests[0].system or ""
    assert "start from it" in system and "This vault is for my garden." in system
