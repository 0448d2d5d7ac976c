"""Property: whatever happens in a conversation, its history stays valid and within its limit."""

from __future__ import annotations

import asyncio
import itertools
from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from llm_service import LLMError, LLMResponse, LLMService, Message, ScriptedProvider, ToolCall
from llm_service.history import history_problems, starts_exchange

CALL_KINDS = ["ok", "crash", "unknown", "bad_args", "bad_json", "denied"]


@dataclass(frozen=True)
class Turn:
    rounds: list[list[str]]
    """Each round's calls, by kind; the model then answers with ``final_text``."""
    final_text: str
    fail_at: int | None
    """Index of the provider call that raises an LLMError instead (None: no failure)."""
    stream: bool


turns = st.lists(
    st.builds(
        Turn,
        rounds=st.lists(st.lists(st.sampled_from(CALL_KINDS), min_size=1, max_size=3), max_size=4),
        final_text=st.sampled_from(["", "Here is the answer."]),
        fail_at=st.none() | st.integers(0, 4),
        stream=st.booleans(),
    ),
    min_size=1,
    max_size=8,
)


def _script(turn: Turn, ids: itertools.count[int]) -> ScriptedProvider:
    provider = ScriptedProvider()
    responses: list[Any] = []
    for kinds in turn.rounds:
        calls = [_call(kind, next(ids)) for kind in kinds]
        responses.append(LLMResponse(text="Checking.", tool_calls=calls, stop_reason="tool_use"))
    responses.append(LLMResponse(text=turn.final_text))
    if turn.fail_at is not None and turn.fail_at < len(responses):
        responses[turn.fail_at] = LLMError("Scripted outage.", code="server_error")
    provider.enqueue(*responses)
    return provider


def _call(kind: str, n: int) -> ToolCall:
    call_id = f"call_{n}"
    if kind == "unknown":
        return ToolCall(call_id, "no_such_tool", {})
    if kind == "bad_args":
        return ToolCall(call_id, "ok", {"query": 42})
    if kind == "bad_json":
        return ToolCall(call_id, "ok", {}, parse_error="not JSON")
    return ToolCall(call_id, kind, {"query": "q"})


async def _ok(arguments: dict[str, Any]) -> str:
    return "result"


async def _crash(arguments: dict[str, Any]) -> str:
    raise RuntimeError("boom")


async def _conversation(script: list[Turn], max_history: int, max_rounds: int) -> None:
    svc = LLMService(
        ScriptedProvider(), model="m", max_history=max_history, max_tool_iterations=max_rounds
    )
    schema = {"type": "object", "properties": {"query": {"type": "string"}}}
    svc.register_tool("ok", "d", schema, _ok)
    svc.register_tool("crash", "d", schema, _crash)
    svc.register_tool("denied", "d", schema, _ok, permission="ask")
    ids = itertools.count()
    for number, turn in enumerate(script):
        before = svc.history
        provider = _script(turn, ids)
        svc.provider = provider
        question = Message.user(f"question {number}")
        try:
            if turn.stream:
                async for _ in svc.stream_message(question.text):
                    pass
            else:
                await svc.process_message(question.text)
        except LLMError:
            assert svc.history == before
        else:
            assert [m for m in svc.history if starts_exchange(m)][-1] == question
            assert svc.history[-1].role == "assistant"
        for request in provider.requests:
            assert history_problems(request.messages) == []
            assert request.messages[-1].role == "user"
        assert history_problems(svc.history) == []
        assert len(svc.history) <= max_history


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(script=turns, max_history=st.integers(2, 12), max_rounds=st.integers(0, 3))
def test_history_stays_valid_and_bounded(
    script: list[Turn], max_history: int, max_rounds: int
) -> None:
    """Any mix of turns, tool rounds, tool errors, provider errors, limits and trims keeps a
    history the Anthropic API accepts, never longer than max_history."""
    asyncio.run(_conversation(script, max_history, max_rounds))
