"""LLMService conversation state: history limits, prompts, usage and cost, models, serialisation."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from llm_service import LLMResponse, LLMService, Message, ResponseComplete, ScriptedProvider, Usage
from llm_service.history import history_problems, starts_exchange
from llm_service.pricing import DEFAULT_MODEL, cost_usd
from llm_service.providers.base import ChatRequest
from llm_service.tools import ToolRegistry


def _service(provider: ScriptedProvider, **kw: Any) -> LLMService:
    svc = LLMService(provider, model=kw.pop("model", DEFAULT_MODEL), **kw)
    svc.register_tool("lookup", "Look up.", {"type": "object"}, lambda a: "found")
    return svc


# -- history --------------------------------------------------------------------------------


async def test_history_is_trimmed_to_max_history_by_whole_exchanges() -> None:
    """After each turn at most max_history messages remain, starting with user text."""
    provider = ScriptedProvider()
    svc = _service(provider, max_history=6)
    for turn in range(6):
        if turn % 2:
            provider.enqueue_tool_call("lookup", {})
        provider.enqueue_text(f"answer {turn}")
        await svc.process_message(f"question {turn}")
        assert len(svc.history) <= 6
        assert starts_exchange(svc.history[0]) and history_problems(svc.history) == []
    assert svc.history[-1] == Message.assistant("answer 5")
    assert [m.text for m in svc.history if starts_exchange(m)] == ["question 4", "question 5"]


async def test_requests_carry_the_trimmed_history() -> None:
    """The provider never receives more than max_history messages for a short exchange."""
    provider = ScriptedProvider()
    svc = _service(provider, max_history=4)
    for turn in range(5):
        provider.enqueue_text(f"a{turn}")
        await svc.process_message(f"q{turn}")
    assert all(len(r.messages) <= 4 for r in provider.requests)
    assert provider.requests[-1].messages == [
        Message.user("q3"),
        Message.assistant("a3"),
        Message.user("q4"),
    ]


async def test_an_oversized_exchange_is_whole_during_the_turn_and_compacted_after() -> None:
    """A turn longer than max_history is sent whole, then stored as question plus reply."""
    provider = ScriptedProvider()
    provider.enqueue_text("first answer")
    for _ in range(3):
        provider.enqueue_tool_call("lookup", {}, text="looking")
    provider.enqueue_text("final")
    svc = _service(provider, max_history=4)
    await svc.process_message("warm up")
    reply = await svc.process_message("big job")
    last = provider.requests[-1].messages
    assert len(last) == 7 and last[0] == Message.user("big job")
    assert history_problems(last) == []
    assert svc.history == [
        Message.user("warm up"),
        Message.assistant("first answer"),
        Message.user("big job"),
        Message.assistant(reply.text),
    ]
    assert reply.text == "looking\n\nlooking\n\nlooking\n\nfinal"


def test_max_history_must_hold_an_exchange() -> None:
    """max_history below 2, negative iteration limits or max_tokens < 1 are refused."""
    provider = ScriptedProvider()
    with pytest.raises(ValueError, match="max_history"):
        LLMService(provider, model="m", max_history=1)
    with pytest.raises(ValueError, match="max_tool_iterations"):
        LLMService(provider, model="m", max_tool_iterations=-1)
    with pytest.raises(ValueError, match="max_tokens"):
        LLMService(provider, model="m", max_tokens=0)


async def test_the_provider_default_model_is_used_when_the_service_names_none() -> None:
    """LLMService(provider) calls the provider's default model; model= overrides it."""
    provider = ScriptedProvider(model="default-model")
    provider.enqueue_text("a")
    provider.enqueue_text("b")
    await LLMService(provider).process_message("q")
    await LLMService(provider, model="chosen").process_message("q")
    assert [request.model for request in provider.requests] == ["default-model", "chosen"]


def test_a_service_without_any_model_is_one_clear_error() -> None:
    """Neither the service nor the provider naming a model is refused with one sentence."""
    with pytest.raises(ValueError, match="No model to use: pass model="):
        LLMService(ScriptedProvider())


async def test_history_property_returns_a_copy() -> None:
    """Mutating svc.history does not change the conversation."""
    provider = ScriptedProvider()
    provider.enqueue_text("a")
    svc = _service(provider)
    await svc.process_message("q")
    svc.history.clear()
    assert len(svc.history) == 2


async def test_clear_conversation_keeps_tools_and_prompts() -> None:
    """clear_conversation empties history and usage; tools, prompt and context stay."""
    provider = ScriptedProvider()
    provider.enqueue_text("a", usage=Usage(5, 5))
    provider.enqueue_text("b")
    svc = _service(provider)
    svc.set_system_prompt("Be brief.")
    svc.set_conversation_context("Open note: Ideas.md")
    await svc.process_message("q1")
    svc.clear_conversation()
    assert svc.history == [] and svc.usage == Usage()
    await svc.process_message("q2")
    request = provider.requests[-1]
    assert request.messages == [Message.user("q2")]
    assert request.system == "Be brief.\n\nOpen note: Ideas.md"
    assert [t.name for t in request.tools] == ["lookup"]


# -- system prompt and context --------------------------------------------------------------


async def _system_sent(svc: LLMService, provider: ScriptedProvider) -> str | None:
    provider.enqueue_text("ok")
    await svc.process_message("q")
    return provider.requests[-1].system


async def test_system_prompt_and_context_are_combined_with_a_blank_line() -> None:
    """The context follows the prompt after a blank line, on every call, outside the history."""
    provider = ScriptedProvider()
    svc = _service(provider)
    assert await _system_sent(svc, provider) is None
    svc.set_system_prompt("You live in the vault.")
    assert await _system_sent(svc, provider) == "You live in the vault."
    svc.set_conversation_context("Selected text: kafka")
    assert await _system_sent(svc, provider) == "You live in the vault.\n\nSelected text: kafka"
    svc.set_conversation_context("Selected text: flink")
    assert await _system_sent(svc, provider) == "You live in the vault.\n\nSelected text: flink"
    svc.set_conversation_context(None)
    assert await _system_sent(svc, provider) == "You live in the vault."
    svc.set_conversation_context("Only context")
    svc.set_system_prompt("")
    assert await _system_sent(svc, provider) == "Only context"
    assert all(m.role in ("user", "assistant") for m in svc.history)
    assert not any("vault" in m.text for m in svc.history)


async def test_system_text_goes_to_every_call_of_a_turn() -> None:
    """Tool rounds repeat the same system text."""
    provider = ScriptedProvider()
    provider.enqueue_tool_call("lookup", {})
    provider.enqueue_text("done")
    svc = _service(provider)
    svc.set_system_prompt("P")
    await svc.process_message("q")
    assert [r.system for r in provider.requests] == ["P", "P"]


# -- usage and cost -------------------------------------------------------------------------


async def test_reply_usage_and_cost_cover_every_call_of_the_turn() -> None:
    """reply.usage sums the turn's calls; reply.cost_usd prices that sum."""
    provider = ScriptedProvider()
    provider.enqueue_tool_call("lookup", {})
    provider.enqueue_text("done", usage=Usage(1000, 200, 3000, 400))
    svc = _service(provider, model="claude-sonnet-4-6")
    reply = await svc.process_message("q")
    assert reply.usage == Usage(1010, 205, 3000, 400)
    expected = (1010 * 3.0 + 205 * 15.0 + 3000 * 0.30 + 400 * 3.75) / 1e6
    assert reply.cost_usd == pytest.approx(expected)


async def test_conversation_usage_and_cost_accumulate() -> None:
    """svc.usage and svc.cost_usd add up over turns."""
    provider = ScriptedProvider()
    provider.enqueue_text("a", usage=Usage(100, 10))
    provider.enqueue_text("b", usage=Usage(200, 20))
    svc = _service(provider)
    assert svc.cost_usd == 0.0
    first = await svc.process_message("1")
    second = await svc.process_message("2")
    assert svc.usage == Usage(300, 30)
    assert first.cost_usd is not None and second.cost_usd is not None
    assert svc.cost_usd == pytest.approx(first.cost_usd + second.cost_usd)
    assert svc.cost_usd == pytest.approx(cost_usd(DEFAULT_MODEL, Usage(300, 30)) or -1)


async def test_unpriced_models_report_no_cost() -> None:
    """Local and unknown models give cost_usd None, per reply and cumulatively."""
    provider = ScriptedProvider()
    provider.enqueue_text("a", usage=Usage(100, 10))
    svc = _service(provider, model="llama3.1:8b")
    assert svc.cost_usd is None
    reply = await svc.process_message("q")
    assert reply.cost_usd is None and svc.cost_usd is None
    assert svc.usage == Usage(100, 10)


async def test_tokens_of_failed_turns_still_count() -> None:
    """Provider calls that succeeded before a turn failed are in svc.usage."""
    from llm_service import LLMError

    provider = ScriptedProvider()
    provider.enqueue_tool_call("lookup", {})
    provider.enqueue(LLMError("Scripted overloaded.", code="overloaded"))
    svc = _service(provider)
    with pytest.raises(LLMError):
        await svc.process_message("q")
    assert svc.usage == Usage(10, 5)


async def test_reply_carries_model_and_request_id() -> None:
    """The reply names the model that answered and the last request id."""
    provider = ScriptedProvider(LLMResponse(text="x", model="claude-x-2026", request_id="req_9"))
    reply = await _service(provider).process_message("q")
    assert (reply.model, reply.request_id) == ("claude-x-2026", "req_9")


# -- models ---------------------------------------------------------------------------------


def test_a_deprecated_model_logs_its_retirement_date(caplog: pytest.LogCaptureFixture) -> None:
    """Constructing with, or switching to, a deprecated model warns with the retirement date."""
    with caplog.at_level(logging.WARNING, logger="llm_service.service"):
        svc = LLMService(ScriptedProvider(), model="claude-sonnet-4-5")
    assert [r.levelno for r in caplog.records] == [logging.WARNING]
    assert "November 30th, 2026" in caplog.records[0].getMessage()
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="llm_service.service"):
        svc.model = DEFAULT_MODEL
        assert caplog.records == []
        svc.model = "claude-mythos-preview"
    assert "June 30th, 2026" in caplog.records[0].getMessage()
    assert svc.model == "claude-mythos-preview"


async def test_a_deprecated_model_still_works() -> None:
    """The warning does not stop the model from being used."""
    provider = ScriptedProvider()
    provider.enqueue_text("still here")
    svc = _service(provider, model="claude-sonnet-4-5-20250929")
    assert (await svc.process_message("q")).text == "still here"
    assert provider.requests[0].model == "claude-sonnet-4-5-20250929"


async def test_model_can_be_switched_between_turns() -> None:
    """svc.model is read at the start of each turn."""
    provider = ScriptedProvider()
    provider.enqueue_text("a")
    provider.enqueue_text("b")
    svc = _service(provider)
    await svc.process_message("1")
    svc.model = "gpt-6.1-sol"
    await svc.process_message("2")
    assert [r.model for r in provider.requests] == [DEFAULT_MODEL, "gpt-6.1-sol"]


# -- one conversation at a time -------------------------------------------------------------


async def _streamed_text(svc: LLMService, text: str) -> str:
    events = [event async for event in svc.stream_message(text)]
    final = events[-1]
    assert isinstance(final, ResponseComplete)
    return final.response.text


async def test_concurrent_turns_are_serialised_not_interleaved() -> None:
    """Two concurrent messages: exchange A completes fully before B's first request."""
    a_started = asyncio.Event()
    release_a = asyncio.Event()

    async def slow_answer(request: ChatRequest) -> LLMResponse:
        a_started.set()
        await release_a.wait()
        return LLMResponse(text="answer A")

    provider = ScriptedProvider()
    provider.enqueue_tool_call("lookup", {}, text="A looks")
    provider.enqueue(slow_answer)
    provider.enqueue_text("answer B")
    svc = _service(provider)
    task_a = asyncio.create_task(svc.process_message("question A"))
    await asyncio.wait_for(a_started.wait(), 5)
    task_b = asyncio.create_task(_streamed_text(svc, "question B"))
    for _ in range(20):
        await asyncio.sleep(0)
    assert len(provider.requests) == 2  # B is waiting for A
    release_a.set()
    reply_a, reply_b = await asyncio.wait_for(asyncio.gather(task_a, task_b), 5)
    assert (reply_a.text, reply_b) == ("A looks\n\nanswer A", "answer B")
    assert [m.text for m in svc.history if starts_exchange(m)] == ["question A", "question B"]
    assert svc.history[3:] == [
        Message.assistant("answer A"),
        Message.user("question B"),
        Message.assistant("answer B"),
    ]
    assert provider.requests[2].messages[-1] == Message.user("question B")


def test_services_can_share_one_tool_registry() -> None:
    """tools= shares a registry (and its confirm) between services; confirm= with it is refused."""
    shared = ToolRegistry()
    shared.register_tool("echo", "d", {"type": "object"}, lambda a: "ok")
    first = LLMService(ScriptedProvider(model="m"), tools=shared)
    second = LLMService(ScriptedProvider(model="m"), tools=shared)
    assert first.tools is second.tools is shared
    assert second.get_registered_tools() == ["echo"]

    async def approve(call: object) -> bool:
        return True

    with pytest.raises(ValueError, match="confirm= or tools="):
        LLMService(ScriptedProvider(model="m"), tools=shared, confirm=approve)
