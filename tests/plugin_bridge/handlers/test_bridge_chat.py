"""chat/send, chat/clear, tool notifications, tool/confirm and cancellation over a real socket."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from pathlib import Path

import pytest

from llm_service import (
    LLMError,
    LLMResponse,
    ResponseComplete,
    ScriptedProvider,
    StreamEvent,
    TextDelta,
    Usage,
)
from llm_service.providers.base import ChatRequest
from tests.helpers.bridge import WAIT, Wire, running_bridge, wait_for


class Gate:
    """A scripted model answer that waits until released, recording cancellation."""

    def __init__(self, text: str = "released") -> None:
        self.text = text
        self.entered = asyncio.Event()
        self.release = asyncio.Event()
        self.cancelled = asyncio.Event()

    async def __call__(self, request: ChatRequest) -> LLMResponse:
        self.entered.set()
        try:
            await self.release.wait()
        except asyncio.CancelledError:
            self.cancelled.set()
            raise
        return LLMResponse(text=self.text, model="scripted")


async def echo(request: ChatRequest) -> LLMResponse:
    """Answers every question with a text that names it."""
    question = request.messages[-1].text
    await asyncio.sleep(0)
    return LLMResponse(text=f"You asked: {question} and here is a longer answer.", model="m")


async def test_chat_streams_deltas_that_add_up_to_the_reply(tmp_path: Path) -> None:
    """chat/delta notifications carry the request id and concatenate to the final text."""
    provider = ScriptedProvider()
    provider.enqueue_text(
        "Kafka is described in [[Projects/Kafka pipeline]].", usage=Usage(120, 14, 100, 0)
    )
    async with running_bridge(tmp_path, provider=provider) as bridge:
        wire = await bridge.wire()
        request_id = await wire.request("chat/send", {"text": "What is Kafka used for?"})
        result = (await wire.reply_to(request_id))["result"]
        deltas = wire.notes_of("chat/delta", request_id)
        assert deltas and "".join(d["text"] for d in deltas) == result["text"]
        assert result["text"] == "Kafka is described in [[Projects/Kafka pipeline]]."
        assert result["stopReason"] == "end_turn"
        assert result["usage"] == {
            "inputTokens": 120,
            "outputTokens": 14,
            "cacheReadTokens": 100,
            "cacheWriteTokens": 0,
        }
        assert "costUsd" in result
        assert result["conversationId"]
    (request,) = provider.requests
    assert request.system is not None
    assert "Obsidian vault named “vault”" in request.system
    assert "[[wikilink]]" in request.system
    assert {tool.name for tool in request.tools} >= {"search_notes", "read_note", "create_note"}


async def test_a_conversation_keeps_its_history(tmp_path: Path) -> None:
    """A second chat/send with the conversationId sends the earlier exchange along."""
    provider = ScriptedProvider()
    provider.enqueue_text("First answer.")
    provider.enqueue_text("Second answer.")
    async with running_bridge(tmp_path, provider=provider) as bridge:
        wire = await bridge.wire()
        first = await wire.result("chat/send", {"text": "one"})
        second = await wire.result(
            "chat/send", {"text": "two", "conversationId": first["conversationId"]}
        )
        assert second["conversationId"] == first["conversationId"]
    assert [m.text for m in provider.requests[1].messages] == ["one", "First answer.", "two"]


async def test_chat_clear_forgets_the_messages(tmp_path: Path) -> None:
    """After chat/clear the next message starts from an empty history."""
    provider = ScriptedProvider()
    provider.enqueue_text("First answer.")
    provider.enqueue_text("Fresh answer.")
    async with running_bridge(tmp_path, provider=provider) as bridge:
        wire = await bridge.wire()
        conversation = (await wire.result("chat/send", {"text": "one"}))["conversationId"]
        assert await wire.result("chat/clear", {"conversationId": conversation}) == {}
        await wire.result("chat/send", {"text": "two", "conversationId": conversation})
    assert [m.text for m in provider.requests[1].messages] == ["two"]


async def test_unknown_conversations_are_invalid_params(tmp_path: Path) -> None:
    """An unknown conversationId is -32602 for chat/send and chat/clear."""
    async with running_bridge(tmp_path, provider=ScriptedProvider()) as bridge:
        wire = await bridge.wire()
        for method, params in [
            ("chat/send", {"text": "hi", "conversationId": "nope"}),
            ("chat/clear", {"conversationId": "nope"}),
        ]:
            error = await wire.error(method, params)
            assert error["code"] == -32602
            assert "nope" in error["message"]


async def test_conversations_past_the_memory_cap_come_back_from_the_store(tmp_path: Path) -> None:
    """Past max_conversations the least recently used leaves memory, not the store: the next
    message to it continues with its history."""
    provider = ScriptedProvider()
    for _ in range(5):
        provider.enqueue_text("ok")
    async with running_bridge(tmp_path, provider=provider, max_conversations=2) as bridge:
        wire = await bridge.wire()
        first = (await wire.result("chat/send", {"text": "a"}))["conversationId"]
        second = (await wire.result("chat/send", {"text": "b"}))["conversationId"]
        await wire.result("chat/send", {"text": "c", "conversationId": first})
        await wire.result("chat/send", {"text": "d"})
        assert len(bridge.app.conversations) == 2
        await wire.result("chat/send", {"text": "e", "conversationId": second})
        assert [m.text for m in provider.requests[-1].messages] == ["b", "ok", "e"]
        unknown = await wire.error("chat/clear", {"conversationId": "no-such-id"})
        assert unknown["code"] == -32602


async def test_tool_rounds_are_announced_with_call_and_result(tmp_path: Path) -> None:
    """A search_notes round sends chat/toolCall then chat/toolResult, then the final text."""
    provider = ScriptedProvider()
    provider.enqueue_tool_call("search_notes", {"query": "sourdough"}, call_id="call_1")
    provider.enqueue_text("Feed the starter daily, see [[Areas/Cooking/Sourdough]].")
    async with running_bridge(tmp_path, provider=provider) as bridge:
        wire = await bridge.wire()
        request_id = await wire.request("chat/send", {"text": "How do I keep my starter?"})
        result = (await wire.reply_to(request_id))["result"]
        order = [n["method"] for n in wire.notifications if n["method"] != "chat/delta"]
        assert order == ["chat/toolCall", "chat/toolResult"]
        (call,) = wire.notes_of("chat/toolCall", request_id)
        assert call == {
            "requestId": request_id,
            "id": "call_1",
            "name": "search_notes",
            "arguments": {"query": "sourdough"},
        }
        (tool_result,) = wire.notes_of("chat/toolResult", request_id)
        assert tool_result["id"] == "call_1"
        assert tool_result["isError"] is False
        assert "Sourdough" in tool_result["content"]
        assert result["text"].endswith("[[Areas/Cooking/Sourdough]].")
    results = provider.requests[1].messages[-1].tool_results_blocks
    assert results[0].tool_call_id == "call_1"


@pytest.mark.parametrize("approved", [True, False])
async def test_writes_ask_the_client_first(tmp_path: Path, approved: bool) -> None:
    """create_note from the model sends tool/confirm (with a diff) to the chatting client."""
    provider = ScriptedProvider()
    provider.enqueue_tool_call("create_note", {"path": "Ideas/Kites.md", "content": "Kites!\n"})
    provider.enqueue_text("Done." if approved else "Not saved.")
    async with running_bridge(tmp_path, provider=provider) as bridge:
        wire = await bridge.wire()
        request_id = await wire.request("chat/send", {"text": "Make a note about kites"})
        reply = await wire.reply_to(request_id, answer=lambda m, p: {"approved": approved})
        assert "result" in reply
        (confirm,) = wire.server_requests
        assert confirm["method"] == "tool/confirm"
        assert confirm["params"]["tool"] == "create_note"
        assert confirm["params"]["arguments"] == {"path": "Ideas/Kites.md", "content": "Kites!\n"}
        assert "+Kites!" in confirm["params"]["preview"]
        assert (bridge.vault.root / "Ideas/Kites.md").exists() is approved
        (tool_result,) = wire.notes_of("chat/toolResult", request_id)
        assert tool_result["isError"] is not approved


async def test_approving_with_edited_arguments_writes_exactly_those(tmp_path: Path) -> None:
    """An approval carrying `arguments` (some hunks dropped) writes those; invalid ones write
    nothing and the model is told why."""
    provider = ScriptedProvider()
    asked = {"path": "Ideas/Kites.md", "content": "Kites!\nAnd drones.\n"}
    provider.enqueue_tool_call("create_note", asked)
    provider.enqueue_tool_call("create_note", {"path": "Bad.md", "content": "x"})
    provider.enqueue_text("Done.")
    kept = {"path": "Ideas/Kites.md", "content": "Kites!\n"}
    answers = iter([{"approved": True, "arguments": kept}, {"approved": True, "arguments": {}}])
    async with running_bridge(tmp_path, provider=provider) as bridge:
        wire = await bridge.wire()
        request_id = await wire.request("chat/send", {"text": "Make a note about kites"})
        reply = await wire.reply_to(request_id, answer=lambda m, p: next(answers))
        assert "result" in reply
        assert (bridge.vault.root / "Ideas/Kites.md").read_text() == "Kites!\n"
        assert not (bridge.vault.root / "Bad.md").exists()
        first, second = wire.notes_of("chat/toolResult", request_id)
        assert first["isError"] is False
        assert second["isError"] is True and "arguments the user approved" in second["content"]


async def test_an_unanswered_confirmation_is_a_denial(tmp_path: Path) -> None:
    """No tool/confirm answer within confirm_timeout means denied; the turn completes."""
    provider = ScriptedProvider()
    provider.enqueue_tool_call("create_note", {"path": "Late.md", "content": "x"})
    provider.enqueue_text("It was not approved.")
    async with running_bridge(tmp_path, provider=provider, confirm_timeout=0.2) as bridge:
        wire = await bridge.wire()
        request_id = await wire.request("chat/send", {"text": "write it"})
        result = (await wire.reply_to(request_id))["result"]
        assert result["text"] == "It was not approved."
        assert len(wire.server_requests) == 1
        assert not (bridge.vault.root / "Late.md").exists()
        (tool_result,) = wire.notes_of("chat/toolResult", request_id)
        assert tool_result["isError"] is True


async def test_cancel_request_ends_with_32800_and_stops_the_model(tmp_path: Path) -> None:
    """$/cancelRequest makes the request fail with -32800 and cancels the model call."""
    gate = Gate()
    async with running_bridge(tmp_path, provider=ScriptedProvider(gate)) as bridge:
        wire = await bridge.wire()
        request_id = await wire.request("chat/send", {"text": "a long question"})
        await asyncio.wait_for(gate.entered.wait(), WAIT)
        await wire.send(
            {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": request_id}}
        )
        reply = await wire.reply_to(request_id)
        assert reply["error"] == {"code": -32800, "message": "Request cancelled."}
        await asyncio.wait_for(gate.cancelled.wait(), WAIT)
        assert (await wire.result("health"))["status"] == "ok"


async def test_cancelling_an_unknown_request_is_ignored(tmp_path: Path) -> None:
    """$/cancelRequest for nothing running changes nothing."""
    async with running_bridge(tmp_path) as bridge:
        wire = await bridge.wire()
        await wire.send({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 12345}})
        await wire.send({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": "junk"})
        assert (await wire.result("health"))["status"] == "ok"


async def test_a_vanished_client_stops_its_work_and_others_are_served(tmp_path: Path) -> None:
    """A client dropping mid-chat cancels its model call; other clients keep being served."""
    gate = Gate()
    provider = ScriptedProvider(gate)
    provider.enqueue_text("Still here.")
    async with running_bridge(tmp_path, provider=provider) as bridge:
        leaving = await bridge.wire()
        staying = await bridge.wire()
        await leaving.request("chat/send", {"text": "long"})
        await asyncio.wait_for(gate.entered.wait(), WAIT)
        leaving.ws.transport.abort()
        await asyncio.wait_for(gate.cancelled.wait(), WAIT)
        assert (await staying.result("chat/send", {"text": "hi"}))["text"] == "Still here."
        await wait_for(lambda: len(bridge.server.connections) == 1)


async def test_fifty_concurrent_streaming_chats_each_get_their_own_text(tmp_path: Path) -> None:
    """50 chats at once over 10 connections: each reply and its deltas belong to its question."""
    provider = ScriptedProvider(*([echo] * 50))
    async with running_bridge(tmp_path, provider=provider) as bridge:
        wires = [await bridge.wire() for _ in range(10)]

        async def five_chats(wire: Wire, n: int) -> None:
            ids = {
                await wire.request("chat/send", {"text": f"q{n}-{i}"}): f"q{n}-{i}"
                for i in range(5)
            }
            for request_id, question in ids.items():
                text = (await wire.reply_to(request_id))["result"]["text"]
                assert text == f"You asked: {question} and here is a longer answer."
                deltas = wire.notes_of("chat/delta", request_id)
                assert "".join(d["text"] for d in deltas) == text

        await asyncio.gather(*(five_chats(wire, n) for n, wire in enumerate(wires)))
    assert provider.pending == 0


async def test_provider_errors_are_32010_with_data(tmp_path: Path) -> None:
    """An LLMError ends chat/send with -32010, its message and {code, retryable, retryAfter}."""
    provider = ScriptedProvider(
        LLMError(
            "Anthropic is overloaded (529); try again shortly.", code="overloaded", retry_after=2.0
        )
    )
    provider.enqueue_text("Recovered.")
    async with running_bridge(tmp_path, provider=provider) as bridge:
        wire = await bridge.wire()
        error = await wire.error("chat/send", {"text": "hi"})
        assert error["code"] == -32010
        assert error["message"].startswith("Anthropic is overloaded")
        assert error["data"] == {"code": "overloaded", "retryable": True, "retryAfter": 2.0}
        assert (await wire.result("chat/send", {"text": "hi"}))["text"] == "Recovered."


class _Paced(ScriptedProvider):
    """Streams 'one ', 'two ', 'three' and waits for ``go`` after the first piece."""

    def __init__(self) -> None:
        super().__init__()
        self.go = asyncio.Event()

    async def _stream_once(self, request: ChatRequest) -> AsyncGenerator[StreamEvent, None]:
        yield TextDelta("one ")
        await self.go.wait()
        yield TextDelta("two ")
        yield TextDelta("three")
        yield ResponseComplete(LLMResponse(text="one two three", model="m"))


async def test_deltas_are_coalesced_but_never_held_back(tmp_path: Path) -> None:
    """A delta goes out while the model is still thinking; deltas that arrive together go out
    as one chat/delta; the text and its order are kept."""
    provider = _Paced()
    async with running_bridge(tmp_path, provider=provider, model="m") as bridge:
        wire = await bridge.wire()
        request_id = await wire.request("chat/send", {"text": "Count."})
        first = await wire.recv()
        assert first["method"] == "chat/delta" and first["params"]["text"] == "one "
        provider.go.set()
        result = (await wire.reply_to(request_id))["result"]
    rest = wire.notes_of("chat/delta", request_id)
    assert [d["text"] for d in rest] == ["two three"]
    assert result["text"] == "one two three"
