"""Stored conversations: list, get, rename, delete over the wire, and a conversation that
survives the server being killed with SIGKILL in the middle of a turn."""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
from pathlib import Path

from llm_service import ScriptedProvider
from plugin_bridge.app.conversations.store import ConversationStore
from plugin_bridge.wire.client import BridgeClient
from tests.fakes import ollama
from tests.fakes.http import HANG, FakeHTTPServer, Reply
from tests.helpers.bridge import running_bridge, wait_for
from tests.helpers.serve import START_WAIT, start_serve


async def test_list_get_rename_delete(tmp_path: Path) -> None:
    """Two conversations: newest first, paged; the transcript has the tool round; rename and
    delete stick."""
    provider = ScriptedProvider()
    provider.enqueue_tool_call("search_notes", {"query": "sourdough"})
    provider.enqueue_text("Feed it daily.")
    provider.enqueue_text("Kafka is a log.")
    async with running_bridge(tmp_path, provider=provider) as bridge:
        wire = await bridge.wire()
        bread = await wire.result("chat/send", {"text": "How do I keep my starter?"})
        kafka = await wire.result("chat/send", {"text": "What is Kafka?"})
        page = await wire.result("conversations/list", {"limit": 1})
        assert [c["id"] for c in page["conversations"]] == [kafka["conversationId"]]
        rest = await wire.result("conversations/list", {"limit": 1, "cursor": page["nextCursor"]})
        assert [c["title"] for c in rest["conversations"]] == ["How do I keep my starter?"]
        assert rest["nextCursor"] is None
        got = await wire.result("conversations/get", {"id": bread["conversationId"]})
        kinds = [[block["type"] for block in m["content"]] for m in got["messages"]]
        assert kinds == [["text"], ["tool_use"], ["tool_result"], ["text"]]
        assert got["messages"][-1]["content"][0]["text"] == "Feed it daily."
        await wire.result("conversations/rename", {"id": bread["conversationId"], "title": "Bread"})
        await wire.result("conversations/delete", {"id": kafka["conversationId"]})
        titles = [c["title"] for c in (await wire.result("conversations/list"))["conversations"]]
        assert titles == ["Bread"]
        gone = await wire.error("conversations/get", {"id": kafka["conversationId"]})
        assert gone["code"] == -32602
        bad = await wire.error("conversations/list", {"cursor": "not-a-cursor"})
        assert bad["code"] == -32602


async def _start(
    tmp_path: Path, vault: Path, model_url: str, info_file: Path
) -> asyncio.subprocess.Process:
    served = await start_serve(
        tmp_path,
        "--info-file",
        str(info_file),
        "--provider",
        "ollama",
        "--base-url",
        model_url,
        "--model",
        ollama.MODEL,
        vault=vault,
        stderr=asyncio.subprocess.DEVNULL,
    )
    return served.process


async def _client(info_file: Path) -> BridgeClient:
    info = json.loads(await asyncio.to_thread(info_file.read_text))
    return await BridgeClient.connect(info["url"], info["token"])


async def test_a_completed_turn_survives_kill_9_and_the_conversation_goes_on(
    tmp_path: Path, fake_http: FakeHTTPServer
) -> None:
    """SIGKILL during a second turn: after a restart the conversation lists its completed first
    turn (not the half one) and the next message continues it with that history."""
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "Note.md").write_text("# Note\n", encoding="utf-8")
    info_file = tmp_path / "info.json"
    fake_http.enqueue(
        ollama.text_reply("Kafka is a log."),
        Reply.stream([*ollama.hanging_reply("Half an"), HANG], ollama.NDJSON),
    )
    server = await _start(tmp_path, vault, fake_http.url, info_file)
    client = await _client(info_file)
    first = await client.request("chat/send", {"text": "What is Kafka?"})
    conversation = first["conversationId"]
    half = await client.begin("chat/send", {"text": "Tell me more", "conversationId": conversation})
    await wait_for(lambda: len(fake_http.requests) == 2)
    server.send_signal(signal.SIGKILL)
    await server.wait()
    with contextlib.suppress(ConnectionError):
        await half.reply
    await client.close()
    info_file.unlink()
    fake_http.enqueue(ollama.text_reply("It keeps events in order."))
    server = await _start(tmp_path, vault, fake_http.url, info_file)
    try:
        client = await _client(info_file)
        listed = (await client.request("conversations/list"))["conversations"]
        assert [(c["id"], c["title"]) for c in listed] == [(conversation, "What is Kafka?")]
        stored = await client.request("conversations/get", {"id": conversation})
        assert [m["content"][0]["text"] for m in stored["messages"]] == [
            "What is Kafka?",
            "Kafka is a log.",
        ]
        third = await client.request(
            "chat/send", {"text": "And ordering?", "conversationId": conversation}
        )
        assert third["text"] == "It keeps events in order."
        sent = [m["content"] for m in fake_http.requests[-1].json()["messages"]]
        assert sent[1:] == ["What is Kafka?", "Kafka is a log.", "And ordering?"]
        await client.close()
    finally:
        server.send_signal(signal.SIGTERM)
        async with asyncio.timeout(START_WAIT):
            await server.wait()


async def test_export_writes_a_new_markdown_note_with_the_transcript(tmp_path: Path) -> None:
    """The conversation becomes a note named after it, questions, answers and tool calls."""
    provider = ScriptedProvider()
    provider.enqueue_tool_call("search_notes", {"query": "sourdough"})
    provider.enqueue_text("Feed it daily.")
    async with running_bridge(tmp_path, provider=provider) as bridge:
        wire = await bridge.wire()
        chat = await wire.result("chat/send", {"text": "How do I keep my starter?"})
        first = await wire.result("conversations/export", {"id": chat["conversationId"]})
        again = await wire.result("conversations/export", {"id": chat["conversationId"]})
        assert first["path"] == "Assistant/Conversations/How do I keep my starter.md"
        assert again["path"] == "Assistant/Conversations/How do I keep my starter 1.md"
        text = (bridge.vault.root / first["path"]).read_text(encoding="utf-8")
        assert "**You:** How do I keep my starter?" in text
        assert '> Tool `search_notes` {"query": "sourdough"}' in text
        assert "**Assistant:** Feed it daily." in text


async def test_a_turn_is_stored_after_its_reply_and_before_anything_reads_it(
    tmp_path: Path,
) -> None:
    """chat/send answers before its turn is written; a read of the store right after (on
    another connection too) and the next turn see it, and shutdown waits for it."""
    provider = ScriptedProvider()
    for answer in ("One.", "Two."):
        provider.enqueue_text(answer)
    async with running_bridge(tmp_path, provider=provider) as bridge:
        first = await (await bridge.wire()).result("chat/send", {"text": "First?"})
        conversation = first["conversationId"]
        stored = await (await bridge.wire()).result("conversations/get", {"id": conversation})
        assert [m["role"] for m in stored["messages"]] == ["user", "assistant"]
        await (await bridge.wire()).result(
            "chat/send", {"text": "Second?", "conversationId": conversation}
        )
    # running_bridge closed the app: the second turn was stored before the store closed
    reopened = ConversationStore(tmp_path / "data")
    texts = await reopened.execute(lambda store: [m.text for m in store.messages(conversation)])
    await reopened.execute(ConversationStore.close)
    assert texts == ["First?", "One.", "Second?", "Two."]
