"""command/createNote and command/searchSummarize over a real socket."""

from __future__ import annotations

from pathlib import Path

from llm_service import LLMResponse, ScriptedProvider, ToolCall
from llm_service.options import ForcedTool
from plugin_bridge.app.settings.config import NO_PROVIDER_IN_PLUGIN, PLUGIN_CLIENT
from plugin_bridge.handlers.commands import GivenNote, cited_sources
from tests.helpers.bridge import init_params, running_bridge


async def test_create_note_forces_save_note_and_saves_under_folder(tmp_path: Path) -> None:
    """The model must call save_note; its title becomes the file name inside folder."""
    provider = ScriptedProvider()
    provider.enqueue_tool_call(
        "save_note", {"title": "Kite festival", "content": "Saturday on the dunes.\n"}
    )
    async with running_bridge(tmp_path, provider=provider) as bridge:
        wire = await bridge.wire()
        result = await wire.result(
            "command/createNote", {"prompt": "A note about the kite festival", "folder": "Ideas"}
        )
        assert result["path"] == "Ideas/Kite festival.md"
        saved = bridge.vault.root / "Ideas/Kite festival.md"
        assert saved.read_text() == "Saturday on the dunes.\n"
    (request,) = provider.requests
    assert request.tool_choice == ForcedTool("save_note")
    assert [tool.name for tool in request.tools] == ["save_note"]
    assert request.messages[0].text == "A note about the kite festival"


async def test_create_note_never_overwrites(tmp_path: Path) -> None:
    """An existing title gets a numbered name instead."""
    provider = ScriptedProvider()
    provider.enqueue_tool_call("save_note", {"title": "Sleep", "content": "New thoughts.\n"})
    async with running_bridge(tmp_path, provider=provider) as bridge:
        wire = await bridge.wire()
        result = await wire.result(
            "command/createNote", {"prompt": "sleep note", "folder": "Areas/Health"}
        )
        assert result["path"] == "Areas/Health/Sleep 1.md"
        assert "caffeine" in (bridge.vault.root / "Areas/Health/Sleep.md").read_text()


async def test_create_note_falls_back_to_text_when_the_tool_is_ignored(tmp_path: Path) -> None:
    """A model that answers in text (Ollama): first line is the title, the rest the body."""
    provider = ScriptedProvider()
    provider.enqueue_text("# Tea brewing\nGreen tea at 80 °C for two minutes.")
    async with running_bridge(tmp_path, provider=provider) as bridge:
        wire = await bridge.wire()
        result = await wire.result("command/createNote", {"prompt": "tea"})
        assert result["path"] == "Tea brewing.md"
        text = (bridge.vault.root / "Tea brewing.md").read_text()
        assert text == "Green tea at 80 °C for two minutes.\n"


async def test_create_note_with_invalid_tool_arguments_uses_the_text(tmp_path: Path) -> None:
    """save_note arguments that are not strings are not trusted."""
    provider = ScriptedProvider(
        LLMResponse(
            text="Packing list\n- tent",
            tool_calls=[ToolCall("c1", "save_note", {"title": 7, "content": None})],
            stop_reason="tool_use",
        )
    )
    async with running_bridge(tmp_path, provider=provider) as bridge:
        result = await (await bridge.wire()).result("command/createNote", {"prompt": "pack"})
        assert result["path"] == "Packing list.md"


async def test_create_note_with_nothing_usable_is_a_provider_error(tmp_path: Path) -> None:
    """No tool call and no text is -32010 (invalid_response)."""
    provider = ScriptedProvider(LLMResponse(text="", stop_reason="end_turn"))
    async with running_bridge(tmp_path, provider=provider) as bridge:
        error = await (await bridge.wire()).error("command/createNote", {"prompt": "x"})
        assert error["code"] == -32010
        assert error["data"]["code"] == "invalid_response"


async def test_create_note_refuses_a_folder_outside_the_vault(tmp_path: Path) -> None:
    """folder is checked like any path: '..' is -32023."""
    provider = ScriptedProvider()
    provider.enqueue_tool_call("save_note", {"title": "Escape", "content": "x"})
    async with running_bridge(tmp_path, provider=provider) as bridge:
        error = await (await bridge.wire()).error(
            "command/createNote", {"prompt": "x", "folder": "../outside"}
        )
        assert error["code"] == -32023
    assert not (tmp_path / "outside").exists()


async def test_search_summarize_streams_a_summary_with_its_sources(tmp_path: Path) -> None:
    """The summary streams as chat/delta; sources are the given notes it cites."""
    provider = ScriptedProvider()
    provider.enqueue_text(
        "Kafka orders flow through [[Projects/Kafka pipeline]]; see also [[Imaginary note]]."
    )
    async with running_bridge(tmp_path, provider=provider) as bridge:
        wire = await bridge.wire()
        request_id = await wire.request("command/searchSummarize", {"query": "kafka", "limit": 3})
        result = (await wire.reply_to(request_id))["result"]
        assert result["sources"] == ["Projects/Kafka pipeline.md"]
        deltas = wire.notes_of("chat/delta", request_id)
        assert "".join(d["text"] for d in deltas) == result["summary"]
    (request,) = provider.requests
    prompt = request.messages[0].text
    assert "## [[Projects/Kafka pipeline]]" in prompt
    assert "consumer lag" in prompt.lower()


async def test_search_summarize_without_hits_does_not_call_the_model(tmp_path: Path) -> None:
    """No matching notes: a fixed summary and no sources, without a model (or a provider)."""
    async with running_bridge(tmp_path) as bridge:
        result = await (await bridge.wire()).result(
            "command/searchSummarize", {"query": "zeppelinxyz"}
        )
        assert result == {"summary": "No notes match “zeppelinxyz”.", "sources": []}


async def test_search_summarize_with_hits_needs_a_provider(tmp_path: Path) -> None:
    """With matches but no provider the command is -32011."""
    async with running_bridge(tmp_path) as bridge:
        error = await (await bridge.wire()).error("command/searchSummarize", {"query": "kafka"})
        assert error["code"] == -32011


async def test_no_provider_tells_the_plugin_to_use_its_settings(tmp_path: Path) -> None:
    """The client's name goes with each call: the plugin is told to set a provider in its own
    settings, another client what to configure with flags and environment variables."""
    async with running_bridge(tmp_path) as bridge:
        plugin = await bridge.wire(initialize=False)
        params = init_params(bridge.app.token)
        await plugin.result(
            "initialize", {**params, "client": {"name": PLUGIN_CLIENT, "version": "0"}}
        )
        for wire, expected in ((plugin, NO_PROVIDER_IN_PLUGIN), (await bridge.wire(), None)):
            for method, call in (
                ("command/rewrite", {"text": "x", "instruction": "shorter"}),
                ("command/createNote", {"prompt": "x"}),
                ("chat/send", {"text": "hi"}),
            ):
                error = await wire.error(method, call)
                assert error["code"] == -32011
                if expected is None:
                    assert error["message"] != NO_PROVIDER_IN_PLUGIN
                else:
                    assert error["message"] == expected


async def test_search_summarize_keeps_within_the_budget(tmp_path: Path) -> None:
    """A huge note is truncated so the prompt stays near 6,000 tokens (~24,000 characters)."""
    provider = ScriptedProvider()
    provider.enqueue_text("Summary.")
    async with running_bridge(tmp_path, provider=provider) as bridge:
        wire = await bridge.wire()
        await wire.result("note/create", {"path": "Huge.md", "content": "zeppelin " * 4_000})
        result = await wire.result("command/searchSummarize", {"query": "zeppelin"})
        assert result["sources"] == ["Huge.md"]
    prompt = provider.requests[0].messages[0].text
    assert 20_000 < len(prompt) < 26_000
    assert "more characters not shown" in prompt


def test_cited_sources_match_paths_and_names() -> None:
    """A citation by path or by note name counts; without any citation all notes count."""
    notes = [GivenNote("Projects/Kafka pipeline.md", ""), GivenNote("Areas/Health/Sleep.md", "")]
    assert cited_sources("See [[Sleep|sleep notes]].", notes) == ["Areas/Health/Sleep.md"]
    assert cited_sources("See [[projects/kafka pipeline#Design]].", notes) == [
        "Projects/Kafka pipeline.md"
    ]
    assert cited_sources("No links here.", notes) == [n.path for n in notes]
