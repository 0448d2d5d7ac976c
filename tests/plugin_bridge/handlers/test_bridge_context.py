"""chat/send context: the open note, a selection, @-mentioned folders and tags go with one
message; sources name the notes given and read."""

from __future__ import annotations

from pathlib import Path

from llm_service import ScriptedProvider
from tests.helpers.bridge import running_bridge


async def test_context_goes_with_the_message_and_sources_name_given_and_read_notes(
    tmp_path: Path,
) -> None:
    """A selection, a folder and a tag reach the model with citable paths; a note it reads
    during the turn is a source too."""
    provider = ScriptedProvider()
    provider.enqueue_tool_call("read_note", {"path": "Areas/Cooking/Sourdough.md"})
    provider.enqueue_text("Use the starter from [[Areas/Cooking/Sourdough]].")
    async with running_bridge(tmp_path, provider=provider) as bridge:
        wire = await bridge.wire()
        result = await wire.result(
            "chat/send",
            {
                "text": "What should I cook?",
                "context": [
                    {"note": "Areas/Cooking/Miso soup.md", "selection": "dashi first"},
                    {"folder": "Areas/Cooking"},
                    {"tag": "project"},
                ],
            },
        )
    first = provider.requests[0].messages[-1]
    assert first.content[0].text == "What should I cook?"  # type: ignore[union-attr]
    context = first.content[1].text  # type: ignore[union-attr]
    assert "The user selected this in [[Areas/Cooking/Miso soup]]:\ndashi first" in context
    assert "Notes in the folder Areas/Cooking: [[Areas/Cooking/Miso soup]]" in context
    assert "Notes tagged #project:" in context
    assert result["sources"] == ["Areas/Cooking/Miso soup.md", "Areas/Cooking/Sourdough.md"]


async def test_the_open_note_is_given_whole_within_the_budget(tmp_path: Path) -> None:
    """Without a selection the note's text goes in; a huge note is cut with a marker."""
    provider = ScriptedProvider()
    provider.enqueue_text("ok")
    provider.enqueue_text("ok")
    async with running_bridge(tmp_path, provider=provider) as bridge:
        (bridge.vault.root / "Huge.md").write_text("word " * 20_000, encoding="utf-8")
        wire = await bridge.wire()
        await wire.result("chat/send", {"text": "sum up", "context": [{"note": "Welcome.md"}]})
        await wire.result("chat/send", {"text": "sum up", "context": [{"note": "Huge.md"}]})
    welcome = (bridge.vault.root / "Welcome.md").read_text(encoding="utf-8")
    assert welcome.strip() in provider.requests[0].messages[-1].content[1].text  # type: ignore[union-attr]
    huge = provider.requests[1].messages[-1].content[1].text  # type: ignore[union-attr]
    assert "more characters not shown" in huge and len(huge) < 30_000


async def test_a_missing_note_in_the_context_is_a_clear_error(tmp_path: Path) -> None:
    """The message is not sent to the model; the error names the note."""
    provider = ScriptedProvider()
    async with running_bridge(tmp_path, provider=provider) as bridge:
        wire = await bridge.wire()
        error = await wire.error("chat/send", {"text": "hi", "context": [{"note": "Gone.md"}]})
        bad = await wire.error("chat/send", {"text": "hi", "context": [{"nope": "x"}]})
    assert error["code"] == -32020 and "Gone.md" in error["message"]
    assert bad["code"] == -32602
    assert provider.requests == []
