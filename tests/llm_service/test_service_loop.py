"""LLMService's tool loop over ScriptedProvider: rounds, results, limits, errors, streaming."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from llm_service import (
    LLMResponse,
    LLMService,
    Message,
    ResponseComplete,
    ScriptedProvider,
    TextDelta,
    ToolCall,
    ToolCallStarted,
    ToolResult,
    ToolResultBlock,
    Usage,
)
from llm_service.history import NO_TEXT_REPLY, history_problems
from llm_service.messages import StopReason
from llm_service.providers.base import ChatRequest
from llm_service.tools import ToolRegistry

SEARCH_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"query": {"type": "string"}},
    "required": ["query"],
}


def _service(provider: ScriptedProvider, **kw: Any) -> LLMService:
    svc = LLMService(provider, model="claude-sonnet-5-5", **kw)
    svc.register_tool(
        "search_notes", "Search notes.", SEARCH_SCHEMA, lambda a: f"hits for {a['query']}"
    )
    return svc


def _results(request: ChatRequest) -> list[ToolResultBlock]:
    """The tool results in the last message of a request."""
    return request.messages[-1].tool_results_blocks


async def test_a_text_reply_ends_the_turn() -> None:
    """Without tool calls the model's answer is the reply and one exchange is recorded."""
    provider = ScriptedProvider()
    provider.enqueue_text("Hello there.", usage=Usage(12, 3))
    svc = _service(provider)
    reply = await svc.process_message("Hi")
    assert (reply.text, reply.stop_reason, reply.tool_calls) == ("Hello there.", "end_turn", [])
    assert reply.usage == Usage(12, 3)
    assert svc.history == [Message.user("Hi"), Message.assistant("Hello there.")]
    assert provider.requests[0].messages == [Message.user("Hi")]


async def test_tool_calls_run_and_their_results_go_back_in_one_message() -> None:
    """All calls of a round run, and every result returns to the model in one user message."""
    provider = ScriptedProvider()
    provider.enqueue_tool_calls(
        [("search_notes", {"query": "kafka"}), ("search_notes", {"query": "flink"})],
        text="Let me look.",
        call_ids=["a", "b"],
    )
    provider.enqueue_text("Kafka is in [[Reading list]].")
    svc = _service(provider)
    reply = await svc.process_message("Where is Kafka?")
    second = provider.requests[1].messages
    assert second[1] == Message.assistant(
        "Let me look.",
        [
            ToolCall("a", "search_notes", {"query": "kafka"}),
            ToolCall("b", "search_notes", {"query": "flink"}),
        ],
    )
    assert second[2] == Message.tool_results(
        [ToolResultBlock("a", "hits for kafka"), ToolResultBlock("b", "hits for flink")]
    )
    assert reply.text == "Let me look.\n\nKafka is in [[Reading list]]."
    assert reply.tool_calls == [] and reply.stop_reason == "end_turn"
    assert svc.history == [*second, Message.assistant("Kafka is in [[Reading list]].")]


async def test_calls_run_sequentially_in_the_given_order() -> None:
    """A round's calls run one at a time, in the order the model gave them."""
    log: list[str] = []

    async def slow(arguments: dict[str, Any]) -> str:
        log.append(f"start {arguments['n']}")
        await asyncio.sleep(0)
        log.append(f"end {arguments['n']}")
        return "ok"

    provider = ScriptedProvider()
    provider.enqueue_tool_calls([("step", {"n": i}) for i in range(3)])
    provider.enqueue_text("done")
    svc = LLMService(provider, model="m")
    svc.register_tool("step", "d", {"type": "object"}, slow)
    await svc.process_message("go")
    assert log == ["start 0", "end 0", "start 1", "end 1", "start 2", "end 2"]
    assert [r.tool_call_id for r in _results(provider.requests[1])] == [
        c.id for c in provider.requests[1].messages[1].tool_calls
    ]


async def test_several_rounds_sum_usage_and_join_text() -> None:
    """Every provider call's usage is summed; texts of the rounds are joined by a blank line."""
    provider = ScriptedProvider()
    for query in ("a", "b"):
        provider.enqueue_tool_call("search_notes", {"query": query}, text=f"Searching {query}.")
    provider.enqueue_text("Found both.", usage=Usage(100, 20, 5, 7))
    svc = _service(provider)
    reply = await svc.process_message("find a and b")
    assert len(provider.requests) == 3
    assert reply.usage == Usage(10, 5) + Usage(10, 5) + Usage(100, 20, 5, 7)
    assert reply.text == "Searching a.\n\nSearching b.\n\nFound both."
    assert history_problems(svc.history) == []
    assert len(svc.history) == 6


@pytest.mark.parametrize("stop", ["max_tokens", "stop_sequence", "refusal"])
async def test_other_stop_reasons_end_the_turn_as_given(stop: StopReason) -> None:
    """max_tokens, stop_sequence and refusal end the turn with that stop_reason."""
    provider = ScriptedProvider()
    provider.enqueue_text("Cut off", stop_reason=stop)
    reply = await _service(provider).process_message("long answer please")
    assert reply.stop_reason == stop


async def test_tool_use_without_calls_is_reported_as_end_turn() -> None:
    """A response claiming tool_use but carrying no calls ends the turn as end_turn."""
    provider = ScriptedProvider(LLMResponse(text="odd", stop_reason="tool_use"))
    reply = await _service(provider).process_message("hi")
    assert reply.stop_reason == "end_turn"


async def test_an_empty_final_answer_keeps_the_history_valid() -> None:
    """An empty final response is recorded with a placeholder; the reply text stays empty."""
    provider = ScriptedProvider()
    provider.enqueue_text("")
    svc = _service(provider)
    reply = await svc.process_message("hi")
    assert reply.text == ""
    assert svc.history[-1] == Message.assistant(NO_TEXT_REPLY)
    assert history_problems(svc.history) == []


async def test_tool_round_limit_stops_with_max_tool_iterations() -> None:
    """After max_tool_iterations rounds the next calls are not run and the turn stops."""
    ran: list[str] = []
    provider = ScriptedProvider()
    for i in range(4):
        provider.enqueue_tool_call("search_notes", {"query": str(i)}, text=f"round {i}")
    svc = _service(provider, max_tool_iterations=3)
    svc.register_tool("search_notes", "d", SEARCH_SCHEMA, lambda a: ran.append(a["query"]) or "x")
    reply = await svc.process_message("loop forever")
    assert reply.stop_reason == "max_tool_iterations"
    assert reply.text == "round 0\n\nround 1\n\nround 2\n\nround 3"
    assert ran == ["0", "1", "2"] and len(provider.requests) == 4
    assert svc.history[-1] == Message.assistant("round 3")
    assert history_problems(svc.history) == []


async def test_limit_without_text_records_a_note_and_the_next_turn_works() -> None:
    """A textless final tool response becomes a note; the conversation continues validly."""
    provider = ScriptedProvider()
    provider.enqueue_tool_call("search_notes", {"query": "x"})
    provider.enqueue_tool_call("search_notes", {"query": "y"})
    provider.enqueue_text("Sorry, I got stuck.")
    svc = _service(provider, max_tool_iterations=1)
    first = await svc.process_message("search")
    assert (first.text, first.stop_reason) == ("", "max_tool_iterations")
    assert svc.history[-1] == Message.assistant(
        "(Stopped: the limit of 1 tool rounds for one message was reached.)"
    )
    await svc.process_message("try again")
    assert provider.requests[-1].messages[-1] == Message.user("try again")
    assert history_problems(provider.requests[-1].messages) == []
    assert history_problems(svc.history) == []


async def test_zero_tool_iterations_never_runs_tools() -> None:
    """max_tool_iterations=0 answers a tool request with an immediate stop."""
    provider = ScriptedProvider()
    provider.enqueue_tool_call("search_notes", {"query": "x"}, text="I'd search.")
    svc = _service(provider, max_tool_iterations=0)
    reply = await svc.process_message("q")
    assert (reply.stop_reason, reply.text, len(provider.requests)) == (
        "max_tool_iterations",
        "I'd search.",
        1,
    )


async def test_default_limit_is_ten_rounds() -> None:
    """Without max_tool_iterations the loop allows 10 rounds (11 provider calls)."""
    provider = ScriptedProvider()
    for i in range(12):
        provider.enqueue_tool_call("search_notes", {"query": str(i)})
    reply = await _service(provider).process_message("q")
    assert reply.stop_reason == "max_tool_iterations"
    assert len(provider.requests) == 11


async def test_model_mistakes_become_error_results_fed_back() -> None:
    """Unknown tools, bad arguments, bad JSON, crashes, timeouts and denials go back as errors."""

    def crash(arguments: dict[str, Any]) -> str:
        raise RuntimeError("disk on fire")

    async def hang(arguments: dict[str, Any]) -> str:
        await asyncio.Event().wait()
        return "never"

    calls = [
        ToolCall("1", "nope", {}),
        ToolCall("2", "search_notes", {"limit": 3}),
        ToolCall("3", "search_notes", {}, parse_error="not valid JSON: '{\"query'"),
        ToolCall("4", "crash", {}),
        ToolCall("5", "hang", {}),
        ToolCall("6", "forbidden", {}),
        ToolCall("7", "ask_me", {}),
    ]
    provider = ScriptedProvider(LLMResponse(tool_calls=calls, stop_reason="tool_use"))
    provider.enqueue_text("I will correct myself.")
    svc = _service(provider)
    svc.register_tool("crash", "d", {"type": "object"}, crash)
    svc.register_tool("hang", "d", {"type": "object"}, hang, timeout=0.05)
    svc.register_tool("forbidden", "d", {"type": "object"}, crash, permission="deny")
    svc.register_tool("ask_me", "d", {"type": "object"}, crash, permission="ask")
    reply = await svc.process_message("do many things")
    results = _results(provider.requests[1])
    assert all(r.is_error for r in results)
    assert [r.content for r in results] == [
        "Unknown tool 'nope'. Available: search_notes, crash, hang, forbidden, ask_me.",
        "Invalid arguments for 'search_notes': 'query' is a required property.",
        "Invalid arguments for 'search_notes': not valid JSON: '{\"query'; "
        "send the arguments as one JSON object.",
        "Tool 'crash' failed: disk on fire",
        "Tool 'hang' timed out after 0.05 s.",
        "Tool 'forbidden' is not allowed in this conversation; not run.",
        "Tool 'ask_me' needs approval and this conversation has no way to ask; not run.",
    ]
    assert reply.text == "I will correct myself."


async def test_confirm_given_to_the_service_gates_ask_tools() -> None:
    """The confirm callback of the constructor decides "ask" tools; it can be replaced later."""
    asked: list[str] = []

    async def deny(call: ToolCall) -> bool:
        asked.append(call.id)
        return False

    provider = ScriptedProvider()
    provider.enqueue_tool_call("write", {}, call_id="w1")
    provider.enqueue_text("ok")
    svc = LLMService(provider, model="m", confirm=deny)
    svc.register_tool("write", "d", {"type": "object"}, lambda a: "written", permission="ask")
    await svc.process_message("write it")
    assert asked == ["w1"] and _results(provider.requests[1])[0].is_error

    async def approve(call: ToolCall) -> bool:
        return True

    svc.confirm = approve
    assert svc.tools.confirm is approve
    provider.enqueue_tool_call("write", {}, call_id="w2")
    provider.enqueue_text("done")
    await svc.process_message("again")
    assert _results(provider.requests[-1]) == [ToolResultBlock("w2", "written")]


async def test_registered_tools_are_sent_with_every_call() -> None:
    """The provider receives the registered ToolSpecs and max_tokens on each call."""
    provider = ScriptedProvider()
    provider.enqueue_tool_call("search_notes", {"query": "x"})
    provider.enqueue_text("ok")
    svc = _service(provider, max_tokens=321)
    await svc.process_message("q")
    for request in provider.requests:
        assert request.tools == svc.tool_specs()
        assert request.max_tokens == 321
        assert request.model == "claude-sonnet-5-5"


async def test_the_registry_is_public_and_delegated_to() -> None:
    """svc.tools is the ToolRegistry; validate_tool_call and run_tool_call delegate to it."""
    svc = _service(ScriptedProvider())
    assert isinstance(svc.tools, ToolRegistry)
    assert svc.tools.tool_specs() == svc.tool_specs()
    assert svc.validate_tool_call(ToolCall("c", "search_notes", {"query": "q"})) is None
    assert (
        svc.validate_tool_call(ToolCall("c", "x", {}))
        == "Unknown tool 'x'. Available: search_notes."
    )
    result = await svc.run_tool_call(ToolCall("c", "search_notes", {"query": "q"}))
    assert result == ToolResultBlock("c", "hits for q")


# -- streaming ------------------------------------------------------------------------------


class _StreamOnly(ScriptedProvider):
    """Fails loudly if the non-streaming API is used."""

    async def chat(self, *args: Any, **kwargs: Any) -> LLMResponse:
        raise AssertionError("stream_message must use provider.stream")


class _ChatOnly(ScriptedProvider):
    """Fails loudly if the streaming API is used."""

    def stream(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("process_message must use provider.chat")


async def test_process_message_uses_chat() -> None:
    """process_message goes through provider.chat."""
    provider = _ChatOnly()
    provider.enqueue_text("fine")
    assert (await _service(provider).process_message("q")).text == "fine"


async def test_stream_message_yields_deltas_tool_events_and_the_reply() -> None:
    """Deltas as they stream, a started/result pair per tool, then ResponseComplete last."""
    provider = _StreamOnly()
    provider.enqueue_tool_call(
        "search_notes", {"query": "kafka"}, text="Let me look.", call_id="c1"
    )
    provider.enqueue_text("It is in [[Reading list]].")
    svc = _service(provider)
    events = [event async for event in svc.stream_message("Where is Kafka?")]
    kinds = [type(e).__name__ for e in events]
    runs = [kind for i, kind in enumerate(kinds) if i == 0 or kinds[i - 1] != kind]
    assert runs == ["TextDelta", "ToolCallStarted", "ToolResult", "TextDelta", "ResponseComplete"]
    assert kinds.count("TextDelta") > 4  # the provider's deltas are passed on one by one
    assert "ToolCallDelta" not in kinds  # the provider emitted some; they stay inside
    first = kinds.index("ToolCallStarted")
    started, result, separator = events[first : first + 3]
    assert separator == TextDelta("\n\n")
    assert isinstance(started, ToolCallStarted)
    assert started.call == ToolCall("c1", "search_notes", {"query": "kafka"})
    assert result == ToolResult("c1", "search_notes", "hits for kafka", False)
    final = events[-1]
    assert isinstance(final, ResponseComplete)
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert text == final.response.text == "Let me look.\n\nIt is in [[Reading list]]."
    assert final.response.stop_reason == "end_turn" and final.response.tool_calls == []
    assert svc.history[-1] == Message.assistant("It is in [[Reading list]].")


async def test_stream_reports_failed_tools_as_error_results() -> None:
    """A failing tool shows up as a ToolResult with is_error set."""
    provider = _StreamOnly()
    provider.enqueue_tool_call("missing", {}, call_id="m1")
    provider.enqueue_text("ok")
    events = [e async for e in _service(provider).stream_message("q")]
    results = [e for e in events if isinstance(e, ToolResult)]
    assert results == [
        ToolResult("m1", "missing", "Unknown tool 'missing'. Available: search_notes.", True)
    ]


async def test_streamed_and_chat_replies_match() -> None:
    """The same script gives the same reply and history via chat and via stream."""

    def script() -> ScriptedProvider:
        provider = ScriptedProvider()
        provider.enqueue_tool_call("search_notes", {"query": "q"}, text="one", call_id="c")
        provider.enqueue_text("two three")
        return provider

    chat_svc, stream_svc = _service(script()), _service(script())
    chat_reply = await chat_svc.process_message("q")
    events = [e async for e in stream_svc.stream_message("q")]
    assert isinstance(events[-1], ResponseComplete)
    assert events[-1].response == chat_reply
    assert stream_svc.history == chat_svc.history


async def test_max_tokens_is_capped_by_the_models_own_limit() -> None:
    """A max_tokens above what the model can write is cut to its limit where it is known."""
    provider = ScriptedProvider()
    provider.enqueue_text("a")
    provider.enqueue_text("b")
    await LLMService(provider, model="gpt-4o", max_tokens=100_000).process_message("q")
    await LLMService(provider, model="my-local-model", max_tokens=100_000).process_message("q")
    assert [r.max_tokens for r in provider.requests] == [16_384, 100_000]
