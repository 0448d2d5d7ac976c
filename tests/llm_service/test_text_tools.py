"""Models without tool support (Ollama's, and OpenAI-compatible servers that refuse tools):
tools described in text, the model's ```tool blocks run like native calls (validated, results
fed back), end to end through the real SDKs against the fakes."""

from __future__ import annotations

import json
from typing import Any

import pytest

from llm_service import LLMError, LLMService, TextDelta
from llm_service.messages import LLMResponse
from llm_service.providers.text_tools import parse_reply, refuses_tools
from tests.fakes import ollama as fake
from tests.fakes import openai as openai_fake
from tests.fakes.http import FakeHTTPServer, Reply

REFUSAL = "registry.ollama.ai/library/gemma3:1b does not support tools"
VLLM_REFUSAL = Reply.json(
    {
        "object": "error",
        "message": '"auto" tool choice requires --enable-auto-tool-choice and '
        "--tool-call-parser to be set",
        "type": "BadRequestError",
        "param": None,
        "code": 400,
    },
    status=400,
)
"""vLLM started without --enable-auto-tool-choice (its error body has no ``error`` wrapper)."""
LLAMA_CPP_REFUSAL = Reply.json(
    {
        "error": {
            "code": 400,
            "message": "tools param requires --jinja flag",
            "type": "invalid_request_error",
        }
    },
    status=400,
)
"""llama.cpp's server started without --jinja."""
ADD_SCHEMA = {
    "type": "object",
    "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
    "required": ["a", "b"],
}


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
    svc.register_tool("add", "Add two numbers", ADD_SCHEMA, lambda args: str(args["a"] + args["b"]))
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


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("refusal", [VLLM_REFUSAL, LLAMA_CPP_REFUSAL], ids=["vllm", "llama.cpp"])
async def test_an_openai_compatible_server_that_refuses_tools_gets_them_in_text(
    fake_http: FakeHTTPServer, stream: bool, refusal: Reply
) -> None:
    """Through the openai SDK: the 400 refusal is not shown; the turn goes on with the tools in
    the system prompt; the tool runs; the next turn of that model skips the refused attempt."""
    fake_http.enqueue(
        refusal,
        openai_fake.text_reply(_tool_block("add", {"a": 2, "b": 40}), stream=False),
        openai_fake.text_reply("It is 42.", stream=False),
        openai_fake.text_reply("Still 42.", stream=False),
    )
    svc = LLMService(openai_fake.make_provider(fake_http), model="qwen3-8b")
    svc.register_tool("add", "Add two numbers", ADD_SCHEMA, lambda args: str(args["a"] + args["b"]))
    if stream:
        shown = [e.text async for e in svc.stream_message("2 + 40?") if isinstance(e, TextDelta)]
        answer = "".join(shown)
    else:
        answer = (await svc.process_message("2 + 40?")).text
    assert answer == "Let me look.\n\nIt is 42."  # the tool block never reaches the user
    again = await svc.process_message("And now?")
    bodies = [r.json() for r in fake_http.requests]
    assert "tools" in bodies[0] and all("tools" not in body for body in bodies[1:])
    assert bodies[1]["messages"][0]["role"] == "system"
    assert "To call one, answer with only a block" in bodies[1]["messages"][0]["content"]
    assert bodies[2]["messages"][-1] == {"role": "user", "content": "Tool result (ok):\n42"}
    assert again.text == "Still 42." and len(bodies) == 4


async def test_a_400_about_something_else_is_an_error_not_a_fallback(
    fake_http: FakeHTTPServer,
) -> None:
    """A bad request that says nothing about tools stays an invalid_request error, not retried."""
    fake_http.enqueue(openai_fake.error_reply(400, "Invalid value for 'temperature'"))
    svc = LLMService(openai_fake.make_provider(fake_http), model="qwen3-8b")
    svc.register_tool("add", "Add two numbers", ADD_SCHEMA, lambda args: "0")
    with pytest.raises(LLMError) as caught:
        await svc.process_message("2 + 40?")
    assert caught.value.code == "invalid_request" and len(fake_http.requests) == 1


@pytest.mark.parametrize(
    ("text", "refused"),
    [
        ("registry.ollama.ai/library/gemma3:1b does not support tools", True),
        ("tools param requires --jinja flag", True),
        ('"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser', True),
        ("This model doesn't support function calling", True),
        ("Tool calling is not supported for this model", True),
        ("Invalid schema for function 'add': 'format' is not supported", False),
        ("tool_call_id call_1 not found in the messages", False),
    ],
)
def test_refusals_are_told_apart_from_other_bad_requests(text: str, refused: bool) -> None:
    """The servers' ways of saying 'no tools' are recognised; other 400 texts are not."""
    assert refuses_tools(text) is refused


async def test_an_ollama_model_listed_without_tools_gets_them_in_text_from_the_first_call(
    fake_http: FakeHTTPServer,
) -> None:
    """/api/show capabilities without "tools": list_models says so, and the first chat with
    tools already describes them in text (no refused request)."""
    fake_http.enqueue(
        Reply.json({"models": [{"name": "gemma3:1b"}]}),
        Reply.json({"capabilities": ["completion", "vision"]}),
        fake.text_reply("No tool needed.", stream=False),
    )
    provider = fake.make_provider(fake_http)
    (listed,) = await provider.list_models()
    svc = LLMService(provider, model="gemma3:1b")
    svc.register_tool("add", "Add two numbers", ADD_SCHEMA, lambda args: "0")
    reply = await svc.process_message("Hello")
    chat = fake_http.requests[-1].json()
    assert listed.supports_tools is False and reply.text == "No tool needed."
    assert len(fake_http.requests) == 3 and "tools" not in chat
    assert "To call one, answer with only a block" in chat["messages"][0]["content"]
