"""Ollama models without tool support: tools described in text, the model's ```tool blocks run
like native calls (validated, results fed back), end to end through the Ollama fake."""

from __future__ import annotations

import json
from typing import Any

import pytest

from llm_service import LLMService, TextDelta
from llm_service.messages import LLMResponse
from llm_service.providers.text_tools import parse_reply
from tests.fakes import ollama as fake
from tests.fakes.http import FakeHTTPServer

REFUSAL = "registry.ollama.ai/library/gemma3:1b does not support tools"


def _tool_block(name: str, arguments: dict[str, Any]) -> str:
    return f"Let me look.\n```tool\n{json.dumps({'name': name, 'arguments': arguments})}\n```"


@pytest.mark.parametrize("stream", [False, True])
async def test_a_model_without_tools_gets_them_in_text_and_its_calls_run(
    fake_http: FakeHTTPServer, stream: bool
) -> None:
    """Ollama refuses tools (400): the same turn goes on in text; the tool runs; its result
    goes back as text; later calls skip the refused attempt; no tool block reaches the user."""
    fake_http.enqueue(
        fake.error_reply(400, REFUSAL),
        fake.text_reply(_tool_block("add", {"a": 2, "b": 40}), stream=False),
        fake.text_reply("It is 42.", stream=False),
    )
    svc = LLMService(fake.make_provider(fake_http), model="gemma3:1b")
    svc.register_tool(
        "add",
        "Add two numbers",
        {
            "type": "object",
            "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
            "required": ["a", "b"],
        },
        lambda args: str(args["a"] + args["b"]),
    )
    if stream:
        shown = [e.text async for e in svc.stream_message("2 + 40?") if isinstance(e, TextDelta)]
        assert "```tool" not in "".join(shown)
    reply = await svc.process_message("2 + 40?") if not stream else None
    bodies = [r.json() for r in fake_http.requests]
    assert "tools" in bodies[0] and all("tools" not in body for body in bodies[1:])
    assert "To call one, answer with only a block" in bodies[1]["messages"][0]["content"]
    last = bodies[2]["messages"]
    assert last[-1]["role"] == "user" and last[-1]["content"] == "Tool result (ok):\n42"
    assert '"name": "add"' in last[-2]["content"]
    assert len(fake_http.requests) == 3
    if reply is not None:
        assert reply.text == "Let me look.\n\nIt is 42."  # every round's text, as with native tools


def test_a_malformed_tool_block_becomes_a_call_with_a_parse_error() -> None:
    """Broken JSON or a block without a name is fed back to the model, never run."""
    broken = parse_reply(LLMResponse(text="```tool\n{not json\n```"))
    nameless = parse_reply(LLMResponse(text='```tool\n{"arguments": {}}\n```'))
    plain = parse_reply(LLMResponse(text="No tools needed."))
    assert broken.tool_calls[0].parse_error and nameless.tool_calls[0].parse_error
    assert broken.stop_reason == "tool_use" and plain.tool_calls == []
