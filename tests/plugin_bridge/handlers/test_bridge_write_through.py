"""Writes through Obsidian (note/apply), the review's title and changes (tool/confirm), and
command/rewrite, over a real socket with the scripted model."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from websockets.asyncio.client import connect

from llm_service.providers.scripted import ScriptedProvider
from plugin_bridge.app.settings.config import PLUGIN_CLIENT, BridgeSettings
from tests.helpers.bridge import Bridge, Wire, running_bridge, wait_for


def wire_edits(*edits: dict[str, str]) -> list[dict[str, str]]:
    """note/edit's camelCase form of edit_note's edits."""
    return [{"oldText": e["old_text"], "newText": e["new_text"]} for e in edits]


PLAN = "".join(f"Step {n}: do thing {n}.\n" for n in range(1, 21))
FOUR_EDITS = [
    {"old_text": f"Step {n}: do thing {n}.", "new_text": f"Step {n}: done."} for n in (2, 7, 12, 17)
]


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


async def plugin_wire(bridge: Bridge) -> Wire:
    """A connection that introduces itself as the Obsidian plugin."""
    ws = await connect(bridge.url)
    wire = Wire(ws)
    client = {"name": PLUGIN_CLIENT, "version": "0"}
    await wire.result(
        "initialize", {"token": bridge.app.token, "protocolVersion": 1, "client": client}
    )
    return wire


async def read_request(wire: Wire, method: str) -> dict[str, Any]:
    """The next server request ``method`` on a connection that is otherwise idle."""
    while True:
        message = await wire.recv()
        if message.get("method") == method and "id" in message:
            return message


async def test_a_plugin_applies_a_chat_write_and_the_server_keeps_undo_and_audit(
    tmp_path: Path,
) -> None:
    """The plugin gets note/apply with before, after and the hash; it writes (as Obsidian's
    editor would), answers applied with the new hash; the server does not write, but audit and
    undo work as for its own writes."""
    provider = ScriptedProvider()
    provider.enqueue_tool_call("edit_note", {"path": "Plan.md", "edits": FOUR_EDITS[:1]})
    provider.enqueue_text("Done.")
    async with running_bridge(tmp_path, provider=provider) as bridge:
        note = bridge.vault.root / "Plan.md"
        note.write_text(PLAN, encoding="utf-8")
        wire = await plugin_wire(bridge)
        applied: list[dict[str, Any]] = []

        def answer(method: str, params: dict[str, Any]) -> dict[str, Any]:
            if method == "tool/confirm":
                return {"approved": True}
            applied.append(params)
            note.write_text(params["after"], encoding="utf-8")  # Obsidian saves the editor
            return {"applied": True, "hash": sha(params["after"])}

        reply = await wire.call("chat/send", {"text": "tidy the plan"}, answer=answer)
        assert "result" in reply
        after = PLAN.replace("Step 2: do thing 2.", "Step 2: done.")
        assert applied == [
            {"path": "Plan.md", "before": PLAN, "after": after, "expectedHash": sha(PLAN)}
        ]
        (entry, *_) = (await wire.result("audit/list", {"limit": 1}))["entries"]
        assert (entry["path"], entry["action"], entry["origin"]) == ("Plan.md", "edit", "model")
        assert (entry["oldHash"], entry["newHash"]) == (sha(PLAN), sha(after))
        await wire.result("note/undo", {"path": "Plan.md"})
        assert note.read_text(encoding="utf-8") == PLAN


async def test_a_note_not_open_or_an_unanswered_apply_is_written_by_the_server(
    tmp_path: Path,
) -> None:
    """{applied: false} and silence past the timeout both leave the write to the server; the
    newest plugin connection is the one asked, and a closed one is skipped."""
    async with running_bridge(tmp_path, apply_timeout=0.3) as bridge:
        note = bridge.vault.root / "Plan.md"
        note.write_text(PLAN, encoding="utf-8")
        chat = await bridge.wire()
        older = await plugin_wire(bridge)
        newer = await plugin_wire(bridge)

        edit = {"path": "Plan.md", "edits": wire_edits(*FOUR_EDITS[:1]), "expectedHash": sha(PLAN)}
        request_id = await chat.request("note/edit", edit)
        asked = await read_request(newer, "note/apply")
        await newer.send({"jsonrpc": "2.0", "id": asked["id"], "result": {"applied": False}})
        written = (await chat.reply_to(request_id))["result"]
        first = PLAN.replace("Step 2: do thing 2.", "Step 2: done.")
        assert note.read_text(encoding="utf-8") == first and written["hash"] == sha(first)

        edit = {
            "path": "Plan.md",
            "edits": wire_edits(*FOUR_EDITS[1:2]),
            "expectedHash": sha(first),
        }
        written = await chat.result("note/edit", edit)  # newer never answers: 0.3 s, then
        second = first.replace("Step 7: do thing 7.", "Step 7: done.")
        assert note.read_text(encoding="utf-8") == second and written["hash"] == sha(second)
        assert (await read_request(newer, "note/apply"))["params"]["before"] == first

        await newer.ws.close()
        await wait_for(lambda: len(bridge.server.connections) == 2)
        edit = {
            "path": "Plan.md",
            "edits": wire_edits(*FOUR_EDITS[2:3]),
            "expectedHash": sha(second),
        }
        request_id = await chat.request("note/edit", edit)
        asked = await read_request(older, "note/apply")
        assert asked["params"]["before"] == second
        await older.send({"jsonrpc": "2.0", "id": asked["id"], "result": {"applied": False}})
        assert "result" in await chat.reply_to(request_id)


async def test_a_conflict_in_the_editor_writes_nothing_and_says_so(tmp_path: Path) -> None:
    """-32022 from the plugin (the open note has overlapping unsaved changes): nothing is
    written, the user's write fails with -32022, and a model's write reports it to the model."""
    provider = ScriptedProvider()
    provider.enqueue_tool_call("edit_note", {"path": "Plan.md", "edits": FOUR_EDITS[:1]})
    provider.enqueue_text("It changed.")
    async with running_bridge(tmp_path, provider=provider) as bridge:
        note = bridge.vault.root / "Plan.md"
        note.write_text(PLAN, encoding="utf-8")
        chat = await bridge.wire()
        plugin = await plugin_wire(bridge)
        conflict = {"code": -32022, "message": "Plan.md has changes in Obsidian."}

        edit = {"path": "Plan.md", "edits": wire_edits(*FOUR_EDITS[:1]), "expectedHash": sha(PLAN)}
        request_id = await chat.request("note/edit", edit)
        asked = await read_request(plugin, "note/apply")
        await plugin.send({"jsonrpc": "2.0", "id": asked["id"], "error": conflict})
        error = (await chat.reply_to(request_id))["error"]
        assert error["code"] == -32022 and "Plan.md" in error["message"]
        assert note.read_text(encoding="utf-8") == PLAN

        request_id = await plugin.request("chat/send", {"text": "edit the plan"})
        confirm = await read_request(plugin, "tool/confirm")
        await plugin.send({"jsonrpc": "2.0", "id": confirm["id"], "result": {"approved": True}})
        asked = await read_request(plugin, "note/apply")
        await plugin.send({"jsonrpc": "2.0", "id": asked["id"], "error": conflict})
        assert "result" in await plugin.reply_to(request_id)
        (tool_result,) = plugin.notes_of("chat/toolResult", request_id)
        assert tool_result["isError"] is True and "nothing was written" in tool_result["content"]
        assert note.read_text(encoding="utf-8") == PLAN


async def test_confirm_carries_title_and_changes_and_kept_changes_write_exactly_those(
    tmp_path: Path,
) -> None:
    """Four close edits: tool/confirm says "Edit Plan.md: 4 changes" with the note before and
    after; an answer keeping two of them writes exactly those two."""
    provider = ScriptedProvider()
    provider.enqueue_tool_call("edit_note", {"path": "Plan.md", "edits": FOUR_EDITS}, call_id="c1")
    provider.enqueue_text("Done.")
    async with running_bridge(tmp_path, provider=provider) as bridge:
        note = bridge.vault.root / "Plan.md"
        note.write_text(PLAN, encoding="utf-8")
        wire = await bridge.wire()
        kept = PLAN.replace("Step 2: do thing 2.", "Step 2: done.").replace(
            "Step 17: do thing 17.", "Step 17: done."
        )
        confirms: list[dict[str, Any]] = []

        def answer(method: str, params: dict[str, Any]) -> dict[str, Any]:
            confirms.append(params)
            return {"approved": True, "changes": [{"path": "Plan.md", "after": kept}]}

        assert "result" in await wire.call("chat/send", {"text": "edit"}, answer=answer)
        (params,) = confirms
        assert params["title"] == "Edit Plan.md: 4 changes"
        assert params["callId"] == "c1"
        (change,) = params["changes"]
        assert change["path"] == "Plan.md" and change["before"] == PLAN
        assert change["after"].count("done.") == 4
        assert note.read_text(encoding="utf-8") == kept


async def test_kept_changes_for_a_note_that_changed_during_the_review_write_nothing(
    tmp_path: Path,
) -> None:
    """The kept text is written only while the note is still as reviewed; the model is told."""
    provider = ScriptedProvider()
    provider.enqueue_tool_call("edit_note", {"path": "Plan.md", "edits": FOUR_EDITS})
    provider.enqueue_text("Not done.")
    async with running_bridge(tmp_path, provider=provider) as bridge:
        note = bridge.vault.root / "Plan.md"
        note.write_text(PLAN, encoding="utf-8")
        wire = await bridge.wire()

        def answer(method: str, params: dict[str, Any]) -> dict[str, Any]:
            note.write_text(PLAN + "Typed meanwhile.\n", encoding="utf-8")
            return {"approved": True, "changes": [{"path": "Plan.md", "after": "x\n"}]}

        request_id = await wire.request("chat/send", {"text": "edit"})
        assert "result" in await wire.reply_to(request_id, answer=answer)
        assert note.read_text(encoding="utf-8") == PLAN + "Typed meanwhile.\n"
        (tool_result,) = wire.notes_of("chat/toolResult", request_id)
        assert tool_result["isError"] is True and "changed while" in tool_result["content"]


async def test_rewrite_streams_on_the_fast_model_and_answers_text_and_usage(
    tmp_path: Path,
) -> None:
    """command/rewrite: chat/delta with its request id, {text, usage, costUsd}; the fast model;
    the text around the selection is in the prompt."""
    provider = ScriptedProvider()
    provider.enqueue_text("Kites fly high.")
    provider.enqueue_text("And then it rained.")
    settings = BridgeSettings(model="chat-m", fast_model="fast-m")
    async with running_bridge(
        tmp_path, provider=provider, model="chat-m", settings=settings
    ) as bridge:
        wire = await bridge.wire()
        params = {
            "text": "Kites are flying very high up.",
            "instruction": "shorter",
            "before": "# Kites\n",
            "after": "\nThe end.",
        }
        request_id = await wire.request("command/rewrite", params)
        result = (await wire.reply_to(request_id))["result"]
        assert result["text"] == "Kites fly high."
        assert "".join(d["text"] for d in wire.notes_of("chat/delta", request_id)) == result["text"]
        assert result["usage"]["inputTokens"] >= 0 and "costUsd" in result
        prompt = provider.requests[0].messages[-1].text
        assert "# Kites" in prompt and "The end." in prompt and "shorter" in prompt
        more = await wire.result("command/rewrite", {"text": "", "instruction": "Continue writing"})
        assert more["text"] == "And then it rained."
    assert [r.model for r in provider.requests] == ["fast-m", "fast-m"]


async def test_conversations_are_found_by_title_or_text(tmp_path: Path) -> None:
    """conversations/list {query}: every word must be in the title or the messages."""
    provider = ScriptedProvider()
    provider.enqueue_text("Sourdough needs a starter.")
    provider.enqueue_text("Kafka keeps a log.")
    async with running_bridge(tmp_path, provider=provider) as bridge:
        wire = await bridge.wire()
        await wire.result("chat/send", {"text": "Tell me about bread"})
        await wire.result("chat/send", {"text": "And streams?"})

        async def titles(query: str) -> list[str]:
            found = await wire.result("conversations/list", {"query": query})
            return [c["title"] for c in found["conversations"]]

        assert await titles("starter") == ["Tell me about bread"]
        assert await titles("KAFKA log") == ["And streams?"]
        assert await titles("bread kafka") == []
        assert len(await titles("")) == 2
        assert json.dumps(await titles("100%_")) == "[]"
