"""The vault's own instructions: the context note (Assistant.md unless configured) and custom
prompts (in Assistant/Prompts/ unless configured), both read at every request so edits apply to
the next message; a prompt may name the model purpose it runs on."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from llm_service import ScriptedProvider
from plugin_bridge.app.settings.config import BridgeSettings
from tests.helpers.bridge import running_bridge, wait_for
from tests.helpers.notes import hostile_prompts

TRANSLATE = """---
name: Translate to French
description: Rewrites the selection in French
insert: selection
---
Translate the selected text into French.
"""


async def test_the_context_note_goes_to_every_turn_and_its_edits_apply_next(
    tmp_path: Path,
) -> None:
    """Assistant.md is in the system prompt; after an edit the next message has the new text."""
    provider = ScriptedProvider()
    provider.enqueue_text("a")
    provider.enqueue_text("b")
    async with running_bridge(tmp_path, provider=provider) as bridge:
        note = bridge.vault.root / "Assistant.md"
        note.write_text("I write in British English.\n", encoding="utf-8")
        wire = await bridge.wire()
        first = await wire.result("chat/send", {"text": "hello"})
        note.write_text("I am learning Japanese.\n", encoding="utf-8")
        await wire.result("chat/send", {"text": "again", "conversationId": first["conversationId"]})
    systems = [request.system or "" for request in provider.requests]
    assert "I write in British English." in systems[0] and "[[Assistant]]" in systems[0]
    assert "I am learning Japanese." in systems[1] and "British" not in systems[1]


async def test_prompts_are_listed_and_run_with_the_users_text_after_them(
    tmp_path: Path,
) -> None:
    """prompts/list shows the note's name, description and insert; chat/send promptId sends its
    instruction (then the text); an edit shows at once; an unknown prompt is -32020."""
    provider = ScriptedProvider()
    provider.enqueue_text("Bonjour.")
    async with running_bridge(tmp_path, provider=provider) as bridge:
        folder = bridge.vault.root / "Assistant" / "Prompts"
        folder.mkdir(parents=True)
        (folder / "Translate.md").write_text(TRANSLATE, encoding="utf-8")
        (folder / "Plain.md").write_text(
            "Summarise this note in three bullets.\n", encoding="utf-8"
        )
        wire = await bridge.wire()
        listed = (await wire.result("prompts/list"))["prompts"]
        assert [(p["name"], p["insert"]) for p in listed] == [
            ("Plain", "none"),
            ("Translate to French", "selection"),
        ]
        translate = listed[1]
        assert translate["id"] == "Assistant/Prompts/Translate.md"
        assert translate["description"] == "Rewrites the selection in French"
        await wire.result(
            "chat/send",
            {"promptId": translate["id"], "context": [{"note": "Welcome.md", "selection": "Hi"}]},
        )
        (folder / "Plain.md").write_text("---\nname: Bullets\n---\nThree bullets.\n")
        renamed = [p["name"] for p in (await wire.result("prompts/list"))["prompts"]]
        missing = await wire.error("chat/send", {"promptId": "Assistant/Prompts/Gone.md"})
        outside = await wire.error("chat/send", {"promptId": "Welcome.md"})
        empty = await wire.error("chat/send", {"text": "  "})
    (question,) = provider.requests[0].messages
    assert question.content[0].text == "Translate the selected text into French."  # type: ignore[union-attr]
    assert "Hi" in question.content[1].text  # type: ignore[union-attr]
    assert renamed == ["Bullets", "Translate to French"]
    assert missing["code"] == outside["code"] == -32020
    assert empty["code"] == -32602 and "'text'" in empty["message"]


async def test_the_context_note_and_prompts_folder_are_settings(tmp_path: Path) -> None:
    """contextNote and promptsFolder move both elsewhere; the default Assistant.md is then
    ignored; settings/get shows them."""
    provider = ScriptedProvider()
    provider.enqueue_text("a")
    settings = BridgeSettings(context_note="Me/About me.md", prompts_folder="Me/Prompts")
    async with running_bridge(tmp_path, provider=provider, settings=settings) as bridge:
        root = bridge.vault.root
        (root / "Me" / "Prompts").mkdir(parents=True)
        (root / "Me" / "About me.md").write_text("I keep bees.\n", encoding="utf-8")
        (root / "Assistant.md").write_text("Ignored now.\n", encoding="utf-8")
        (root / "Me" / "Prompts" / "Haiku.md").write_text("Answer in a haiku.\n")
        wire = await bridge.wire()
        listed = (await wire.result("prompts/list"))["prompts"]
        await wire.result("chat/send", {"promptId": listed[0]["id"]})
        got = await wire.result("settings/get")
    system = provider.requests[0].system or ""
    assert "I keep bees." in system and "Ignored now." not in system
    assert [p["id"] for p in listed] == ["Me/Prompts/Haiku.md"]
    assert (got["contextNote"], got["promptsFolder"]) == ("Me/About me.md", "Me/Prompts")


async def test_a_prompts_purpose_chooses_the_model_unless_the_client_names_one(
    tmp_path: Path,
) -> None:
    """Front matter purpose: fast runs the prompt on the fast model; a purpose the client sends
    wins; a prompt without one uses the chat model."""
    provider = ScriptedProvider()
    for answer in ("short", "Typos (the title)", "deep", "plain"):
        provider.enqueue_text(answer)
    settings = BridgeSettings(model="chat-m", fast_model="fast-m", deep_model="deep-m")
    async with running_bridge(
        tmp_path, provider=provider, model="chat-m", settings=settings
    ) as bridge:
        folder = bridge.vault.root / "Assistant" / "Prompts"
        folder.mkdir(parents=True)
        (folder / "Tidy.md").write_text("---\npurpose: fast\n---\nFix the typos.\n")
        (folder / "Plain.md").write_text("Say it plainly.\n")
        wire = await bridge.wire()
        listed = {p["name"]: p for p in (await wire.result("prompts/list"))["prompts"]}
        tidy, plain = listed["Tidy"]["id"], listed["Plain"]["id"]
        first = await wire.result("chat/send", {"promptId": tidy, "text": "teh cat"})
        await wait_for(lambda: len(provider.requests) == 2)  # the fast model's title
        conversation = {"conversationId": first["conversationId"]}
        await wire.result(
            "chat/send", {"promptId": tidy, "text": "teh", "purpose": "deep", **conversation}
        )
        await wire.result("chat/send", {"promptId": plain, "text": "x", **conversation})
    assert listed["Tidy"]["purpose"] == "fast" and listed["Plain"]["purpose"] is None
    assert [r.model for r in provider.requests] == ["fast-m", "fast-m", "deep-m", "chat-m"]


async def test_hostile_prompt_notes_are_skipped_with_one_line_each_and_the_others_listed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A prompt note with 5,000-deep front matter or a YAML alias bomb is left out of
    prompts/list with one log line; the normal prompts are still listed, and running the bad
    one by id says what to fix."""
    async with running_bridge(tmp_path, provider=ScriptedProvider()) as bridge:
        folder = bridge.vault.root / "Assistant" / "Prompts"
        folder.mkdir(parents=True)
        (folder / "Translate.md").write_text(TRANSLATE, encoding="utf-8")
        for name, text in hostile_prompts().items():
            (folder / name).write_text(text, encoding="utf-8")
        wire = await bridge.wire()
        with caplog.at_level(logging.WARNING):
            listed = (await wire.result("prompts/list"))["prompts"]
        assert [p["name"] for p in listed] == ["Translate to French"]
        skipped = sorted(r.getMessage() for r in caplog.records if "skipped" in r.getMessage())
        assert skipped == [
            "Prompt note Assistant/Prompts/Bomb.md is skipped: refused by the front matter "
            "limits: an alias repeats a list or map (an alias bomb).",
            "Prompt note Assistant/Prompts/Deep.md is skipped: refused by the front matter "
            "limits: lists and maps are nested more than 16 deep.",
        ]
        assert len([r for r in caplog.records if r.levelno >= logging.WARNING]) == 2
        bad = await wire.error("chat/send", {"text": "x", "promptId": "Assistant/Prompts/Bomb.md"})
        assert "front matter that cannot be read" in bad["message"]
