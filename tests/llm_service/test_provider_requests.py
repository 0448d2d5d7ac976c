"""What each provider puts on the wire, and the API quirks each one translates."""

from __future__ import annotations

import json
from typing import Any

import pytest

from llm_service import (
    AnthropicProvider,
    LLMError,
    Message,
    OpenAIProvider,
    ToolCall,
    ToolResultBlock,
    Usage,
)
from tests.fakes import anthropic as anthropic_wire
from tests.fakes import ollama as ollama_wire
from tests.fakes import openai as openai_wire
from tests.fakes.http import FakeHTTPServer, Reply
from tests.fakes.specs import READ, SEARCH

CALL_A = ToolCall("call_a", "search_notes", {"query": "kafka"})
CALL_B = ToolCall("call_b", "read_note", {"path": "a.md"})
HISTORY = [
    Message.user("What do my notes say about kafka?"),
    Message.assistant("Let me look.", [CALL_A, CALL_B]),
    Message.tool_results(
        [ToolResultBlock("call_a", '["a.md"]'), ToolResultBlock("call_b", "gone", is_error=True)]
    ),
]


async def test_anthropic_request_body(fake_http: FakeHTTPServer) -> None:
    """System and tools carry cache_control; a round's tool results share one user message."""
    fake_http.enqueue(anthropic_wire.text_reply("Done.", stream=False))
    provider = anthropic_wire.make_provider(fake_http)
    await provider.chat(HISTORY, model="claude-x", system="Be brief.", tools=[SEARCH, READ])
    body = fake_http.requests[0].json()
    headers = fake_http.requests[0].headers
    assert "sk-ant-test" in headers.get("x-api-key", headers.get("authorization", ""))
    assert body["system"] == [
        {"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}
    ]
    assert body["tools"][0] == {
        "name": "search_notes",
        "description": "Search the vault",
        "input_schema": SEARCH.input_schema,
    }
    assert "cache_control" not in body["tools"][0]
    assert body["tools"][1]["cache_control"] == {"type": "ephemeral"}
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    assert body["messages"][1]["content"][1] == {
        "type": "tool_use",
        "id": "call_a",
        "name": "search_notes",
        "input": {"query": "kafka"},
    }
    assert body["messages"][2]["content"] == [
        {"type": "tool_result", "tool_use_id": "call_a", "content": '["a.md"]', "is_error": False},
        {"type": "tool_result", "tool_use_id": "call_b", "content": "gone", "is_error": True},
    ]
    assert body["max_tokens"] == 4096 and "stream" not in body


async def test_anthropic_usage_counts_cache_and_replaces_on_message_delta(
    fake_http: FakeHTTPServer,
) -> None:
    """Cache tokens are reported; message_delta's cumulative output count replaces, not adds."""
    usage = Usage(input_tokens=30, output_tokens=42, cache_read_tokens=900, cache_write_tokens=120)
    fake_http.enqueue(anthropic_wire.text_reply("cached", usage=usage))
    events = [e async for e in anthropic_wire.make_provider(fake_http).stream(HISTORY, model="m")]
    assert events[-1].response.usage == usage


async def test_anthropic_bad_tool_json_becomes_a_parse_error(fake_http: FakeHTTPServer) -> None:
    """Unparseable streamed tool input is reported on the call, not raised."""
    events = anthropic_wire.stream_events(
        [{"type": "tool_use", "id": "t1", "name": "search_notes", "input": {"q": 1}}],
        "tool_use",
        Usage(1, 1),
    )
    broken = [e for e in events if b'"partial_json": "}"' not in e]  # drop the closing brace
    fake_http.enqueue(Reply.stream(broken))
    provider = anthropic_wire.make_provider(fake_http)
    events_out = [e async for e in provider.stream(HISTORY, model="m")]
    call = events_out[-1].response.tool_calls[0]
    assert call.parse_error and call.arguments == {}


async def test_anthropic_missing_key_fails_before_any_request(
    fake_http: FakeHTTPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without a key the user is told which variable to set, and nothing is sent."""
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    provider = AnthropicProvider(base_url=fake_http.url)
    with pytest.raises(LLMError) as caught:
        await provider.chat(HISTORY, model="m")
    assert caught.value.code == "auth_error" and "ANTHROPIC_API_KEY" in str(caught.value)
    assert fake_http.requests == []


async def test_anthropic_error_keeps_request_id(fake_http: FakeHTTPServer) -> None:
    """The provider's request id is kept on the error and in its sentence."""
    fake_http.enqueue(anthropic_wire.error_reply(401, "invalid x-api-key"))
    with pytest.raises(LLMError) as caught:
        await anthropic_wire.make_provider(fake_http).chat(HISTORY, model="m")
    err = caught.value
    assert err.request_id == anthropic_wire.REQUEST_ID and err.request_id in str(err)
    assert str(err).startswith("Anthropic rejected the API key (401)")
    assert "ANTHROPIC_API_KEY" in str(err) and "sk-ant-test" not in str(err)


async def test_openai_request_body(fake_http: FakeHTTPServer) -> None:
    """System first, tool calls as JSON strings, one tool message per result, usage requested."""
    fake_http.enqueue(openai_wire.text_reply("Done."))
    provider = openai_wire.make_provider(fake_http)
    _ = [
        e async for e in provider.stream(HISTORY, model="gpt-x", system="Be brief.", tools=[SEARCH])
    ]
    request = fake_http.requests[0]
    body = request.json()
    assert request.path == "/v1/chat/completions"
    assert body["messages"][0] == {"role": "system", "content": "Be brief."}
    assert body["messages"][2]["tool_calls"][0] == {
        "id": "call_a",
        "type": "function",
        "function": {"name": "search_notes", "arguments": json.dumps({"query": "kafka"})},
    }
    assert body["messages"][3:] == [
        {"role": "tool", "tool_call_id": "call_a", "content": '["a.md"]'},
        {"role": "tool", "tool_call_id": "call_b", "content": "Error: gone"},
    ]
    assert body["tools"] == [OpenAIProvider.format_tool(SEARCH)]
    assert body["stream_options"] == {"include_usage": True}
    assert body["max_tokens"] == 4096  # a compatible server: the widely known field


async def test_openai_cached_tokens_are_split_from_input(fake_http: FakeHTTPServer) -> None:
    """prompt_tokens includes cached ones; we report them apart."""
    fake_http.enqueue(openai_wire.text_reply("x", usage=Usage(100, 7, 400, 0), stream=False))
    reply = await openai_wire.make_provider(fake_http).chat(HISTORY, model="m")
    assert reply.usage == Usage(input_tokens=100, output_tokens=7, cache_read_tokens=400)


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize("raw", ['{"query": "kafka"', "[1, 2]", "not json"])
async def test_openai_malformed_arguments_become_parse_errors(
    fake_http: FakeHTTPServer, raw: str, stream: bool
) -> None:
    """Arguments that are not a JSON object never crash: the call carries the reason."""
    fake_http.enqueue(openai_wire.tool_reply([("c1", "search_notes", raw)], stream=stream))
    provider = openai_wire.make_provider(fake_http)
    if stream:
        reply = [e async for e in provider.stream(HISTORY, model="m")][-1].response
    else:
        reply = await provider.chat(HISTORY, model="m")
    call = reply.tool_calls[0]
    assert call.name == "search_notes" and call.arguments == {} and call.parse_error


async def test_openai_tool_calls_reported_even_when_finish_reason_is_stop(
    fake_http: FakeHTTPServer,
) -> None:
    """Some compatible servers end tool calls with 'stop'; we still say tool_use."""
    fake_http.enqueue(
        openai_wire.reply("", [("", "search_notes", {"query": "q"})], "stop", stream=True)
    )
    reply = [e async for e in openai_wire.make_provider(fake_http).stream(HISTORY, model="m")][-1]
    call = reply.response.tool_calls[0]
    assert reply.response.stop_reason == "tool_use" and call.id.startswith("call_")


async def test_openai_official_api_uses_max_completion_tokens(fake_http: FakeHTTPServer) -> None:
    """Without a base_url the newer token-limit field is sent (checked on the built request)."""
    provider = OpenAIProvider(api_key="sk-test")
    from llm_service.providers.base import ChatRequest

    params = provider._params(ChatRequest(HISTORY, "gpt-5.4", max_tokens=50))
    assert params["max_completion_tokens"] == 50 and "max_tokens" not in params


async def test_ollama_request_body(fake_http: FakeHTTPServer) -> None:
    """Ollama gets object arguments, tool messages named after their call, and num_predict."""
    fake_http.enqueue(ollama_wire.text_reply("Done."))
    provider = ollama_wire.make_provider(fake_http)
    _ = [
        e
        async for e in provider.stream(
            HISTORY, model="llama3.1", system="Be brief.", tools=[SEARCH]
        )
    ]
    request = fake_http.requests[0]
    body = request.json()
    assert request.path == "/api/chat" and body["stream"] is True
    assert body["options"] == {"num_predict": 4096}
    assert body["messages"][0] == {"role": "system", "content": "Be brief."}
    assert body["messages"][2]["tool_calls"][0] == {
        "function": {"name": "search_notes", "arguments": {"query": "kafka"}}
    }
    assert body["messages"][3:] == [
        {"role": "tool", "content": '["a.md"]', "tool_name": "search_notes"},
        {"role": "tool", "content": "Error: gone", "tool_name": "read_note"},
    ]


async def test_ollama_generates_unique_call_ids(fake_http: FakeHTTPServer) -> None:
    """Tool calls without ids get distinct generated ones."""
    calls = [("", "search_notes", {"query": "a"}), ("", "search_notes", {"query": "b"})]
    fake_http.enqueue(ollama_wire.tool_reply(calls))
    reply = [e async for e in ollama_wire.make_provider(fake_http).stream(HISTORY, model="m")][-1]
    ids = [c.id for c in reply.response.tool_calls]
    assert len(set(ids)) == 2 and all(i.startswith("call_") for i in ids)
    assert reply.response.stop_reason == "tool_use"


async def test_ollama_unreachable_says_how_to_start_it() -> None:
    """A refused connection names the URL and the command that fixes it."""
    provider = ollama_wire.OllamaProvider(base_url="http://127.0.0.1:9", max_attempts=1)
    with pytest.raises(LLMError) as caught:
        await provider.chat(HISTORY, model="m")
    assert caught.value.code == "network_error"
    assert str(caught.value) == (
        "Ollama is not reachable at http://127.0.0.1:9: start it with `ollama serve`."
    )


async def test_ollama_missing_model_says_to_pull_it(fake_http: FakeHTTPServer) -> None:
    """A 404 for an unknown model tells the user to pull it."""
    fake_http.enqueue(ollama_wire.error_reply(404, "model 'qwen9' not found"))
    with pytest.raises(LLMError) as caught:
        await ollama_wire.make_provider(fake_http).chat(HISTORY, model="qwen9")
    assert caught.value.code == "invalid_request" and "ollama pull" in str(caught.value)


async def test_list_models_reads_each_api(fake_http: FakeHTTPServer) -> None:
    """models/list sources: Ollama's /api/tags (with /api/show for each model's capabilities
    and context length) and the OpenAI models endpoint."""
    llama_info = {"general.architecture": "llama", "llama.context_length": 131072}
    fake_http.enqueue(
        Reply.json({"models": [{"name": "llama3.1:8b"}, {"name": "qwen3:4b"}]}),
        Reply.json({"capabilities": ["completion", "tools"], "model_info": llama_info}),
        Reply.json({"error": "model 'qwen3:4b' not found"}, status=404),
        Reply.json(
            {
                "object": "list",
                "data": [
                    {"id": "gpt-b", "object": "model", "created": 1, "owned_by": "x"},
                    {"id": "gpt-a", "object": "model", "created": 1, "owned_by": "x"},
                ],
            }
        ),
    )
    ollama_models = await ollama_wire.make_provider(fake_http).list_models()
    openai_models = await openai_wire.make_provider(fake_http).list_models()
    assert [m.id for m in ollama_models] == ["llama3.1:8b", "qwen3:4b"]
    llama, qwen = ollama_models
    assert (llama.supports_tools, llama.context_window) == (True, 131072)
    assert (qwen.supports_tools, qwen.context_window) == (None, None)  # /api/show failed
    assert fake_http.requests[1].json() == {"model": "llama3.1:8b"}
    assert [m.id for m in openai_models] == ["gpt-a", "gpt-b"]


def test_the_second_positional_argument_is_the_default_model() -> None:
    """AnthropicProvider(key, model) and OpenAIProvider(key, model); the rest is keyword-only."""
    anthropic = AnthropicProvider("sk-ant-test", "claude-haiku-5-5")
    openai = OpenAIProvider("sk-test", "gpt-5-mini", base_url="http://127.0.0.1:1/v1")
    assert (anthropic.model, anthropic.base_url) == ("claude-haiku-5-5", None)
    assert (openai.model, openai.base_url) == ("gpt-5-mini", "http://127.0.0.1:1/v1")
    with pytest.raises(TypeError):
        AnthropicProvider("sk-ant-test", "claude-haiku-5-5", "http://127.0.0.1:1")  # type: ignore[misc]
    with pytest.raises(TypeError):
        ollama_wire.OllamaProvider("http://127.0.0.1:11434")  # type: ignore[misc]
    assert ollama_wire.OllamaProvider(model="qwen3:8b").model == "qwen3:8b"


@pytest.mark.parametrize("wire", [anthropic_wire, openai_wire, ollama_wire])
async def test_temperature_reaches_each_api_only_when_set(
    fake_http: FakeHTTPServer, wire: Any
) -> None:
    """A set temperature is sent where the API takes one; Anthropic's current API refuses it."""
    fake_http.enqueue(wire.text_reply("a", stream=False))
    fake_http.enqueue(wire.text_reply("b", stream=False))
    provider = wire.make_provider(fake_http)
    await provider.chat([Message.user("hi")], model="m", temperature=0.2)
    await provider.chat([Message.user("hi")], model="m")
    first, second = (r.json() for r in fake_http.requests)
    if wire is ollama_wire:
        first, second = first["options"], second["options"]
    assert "temperature" not in second
    assert first.get("temperature") == (None if wire is anthropic_wire else 0.2)


async def test_a_call_without_a_model_uses_the_providers_default(fake_http: FakeHTTPServer) -> None:
    """provider.chat(messages) sends the model the provider was made with; none is a clear error."""
    fake_http.enqueue(openai_wire.text_reply("a", stream=False))
    provider = OpenAIProvider("sk-test", "gpt-default", base_url=fake_http.url + "/v1")
    await provider.chat([Message.user("hi")])
    assert fake_http.requests[0].json()["model"] == "gpt-default"
    with pytest.raises(ValueError, match="No model named"):
        await OpenAIProvider("sk-test", base_url=fake_http.url + "/v1").chat([Message.user("hi")])
