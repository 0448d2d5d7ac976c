"""Conversations saved as notes as they happen (setting conversations_folder): one note per
conversation, rewritten after every turn through the safe write layer, never over the user's
own edits."""

from __future__ import annotations

import tomllib
from pathlib import Path

from llm_service import ScriptedProvider
from plugin_bridge.app.settings.config import BridgeSettings, config_file
from tests.helpers.bridge import running_bridge

FOLDER = "Assistant/Conversations"


async def test_each_turn_updates_the_conversations_note_until_the_user_edits_it(
    tmp_path: Path,
) -> None:
    """Turned on over the wire: the first turn creates the note, the second rewrites the same
    note; after the user edits it, the third turn starts a new note and the edit stays."""
    provider = ScriptedProvider()
    for answer in ("Feed it daily.", "Keep it cool.", "Bake on Sunday."):
        provider.enqueue_text(answer)
    async with running_bridge(tmp_path, provider=provider, settings=BridgeSettings()) as bridge:
        wire = await bridge.wire()
        updated = await wire.result("settings/update", {"conversationsFolder": FOLDER})
        first = await wire.result("chat/send", {"text": "Sourdough starter care?"})
        settled = bridge.app.conversations.settled  # the note follows the reply
        await settled()
        conversation = {"conversationId": first["conversationId"]}
        folder = bridge.vault.root / FOLDER
        (note,) = folder.iterdir()
        after_first = note.read_text(encoding="utf-8")
        await wire.result("chat/send", {"text": "In summer?", **conversation})
        await settled()
        after_second = note.read_text(encoding="utf-8")
        note.write_text(after_second + "\nMy own remark.\n", encoding="utf-8")
        await wire.result("chat/send", {"text": "When to bake?", **conversation})
        await settled()
        audit = await wire.result("audit/list", {"limit": 10})
    assert updated["conversationsFolder"] == FOLDER
    assert tomllib.loads(config_file().read_text())["conversations_folder"] == FOLDER
    assert note.name == "Sourdough starter care.md"
    assert after_first == "**You:** Sourdough starter care?\n\n**Assistant:** Feed it daily.\n"
    assert after_second.startswith(after_first) and "**Assistant:** Keep it cool." in after_second
    assert note.read_text(encoding="utf-8").endswith("My own remark.\n")
    (newer,) = [path for path in folder.iterdir() if path != note]
    assert "**Assistant:** Bake on Sunday." in newer.read_text(encoding="utf-8")
    assert {entry["origin"] for entry in audit["entries"]} == {"conversation"}


async def test_without_the_setting_no_note_is_written(tmp_path: Path) -> None:
    """The default is off: a turn leaves the vault as it was."""
    provider = ScriptedProvider()
    provider.enqueue_text("Hello.")
    async with running_bridge(tmp_path, provider=provider, settings=BridgeSettings()) as bridge:
        before = sorted(p for p in bridge.vault.root.rglob("*"))
        await (await bridge.wire()).result("chat/send", {"text": "hi"})
        await bridge.app.conversations.settled()
        after = sorted(p for p in bridge.vault.root.rglob("*"))
    assert after == before
