"""The official openai SDK against /v1: chat, streaming, tools, usage, routing by model to two
providers (fake Anthropic and OpenAI APIs through their real SDKs), the ``vault`` model, and
errors in OpenAI's shape with their status codes."""

from __future__ import annotations

import json
from typing import Any

import openai
import pytest

from tests.fakes import anthropic as anthropic_fake
from tests.fakes import openai as openai_fake
from tests.plugin_bridge.httpapi.conftest import CHAT_MODEL, Served

pytestmark = pytest.mark.asyncio(loop_scope="module")

QUESTION = [{"role": "user", "content": "Hello?"}]
WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}


async def test_a_bare_model_goes_to_the_configured_provider(
    served: Served, client: openai.AsyncOpenAI
) -> None:
    served.anthropic.enqueue(anthropic_fake.text_reply("Hi there.", stream=False))
    completion = await client.chat.completions.create(
        model=CHAT_MODEL,
        messages=[{"role": "system", "content": "Be brief."}, *QUESTION],  # type: ignore[list-item]
    )
    assert completion.choices[0].message.content == "Hi there."
    assert completion.choices[0].finish_reason == "stop"
    assert completion.usage is not None
    assert (completion.usage.prompt_tokens, completion.usage.completion_tokens) == (25, 12)
    sent = served.chats(served.anthropic)[0].json()
    assert sent["model"] == CHAT_MODEL
    assert "Be brief." in json.dumps(sent["system"])
    assert sent["messages"][-1]["content"][0]["text"] == "Hello?"


@pytest.mark.parametrize("spec", ["openai/gpt-5.4-mini", "openai:gpt-5.4-mini"])
async def test_provider_prefixes_route_to_that_provider(
    served: Served, client: openai.AsyncOpenAI, spec: str
) -> None:
    served.openai.enqueue(openai_fake.text_reply("From OpenAI.", stream=False))
    completion = await client.chat.completions.create(model=spec, messages=QUESTION)  # type: ignore[arg-type]
    assert completion.choices[0].message.content == "From OpenAI."
    assert served.chats(served.openai)[0].json()["model"] == "gpt-5.4-mini"
    assert not served.chats(served.anthropic)


async def test_an_unknown_prefix_goes_whole_to_the_configured_provider(
    served: Served, client: openai.AsyncOpenAI
) -> None:
    """LM Studio's ids look like ``qwen/qwen3-4b``: qwen is no provider, so nothing is split."""
    served.anthropic_models.append("qwen/qwen3-4b")
    served.forget_models()
    served.anthropic.enqueue(anthropic_fake.text_reply("ok", stream=False))
    await client.chat.completions.create(model="qwen/qwen3-4b", messages=QUESTION)  # type: ignore[arg-type]
    assert served.chats(served.anthropic)[0].json()["model"] == "qwen/qwen3-4b"


async def test_a_known_but_unconfigured_provider_is_400_naming_the_configured(
    served: Served, client: openai.AsyncOpenAI
) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        await client.chat.completions.create(model="ollama/llama3.1", messages=QUESTION)  # type: ignore[arg-type]
    assert caught.value.status_code == 400
    message = caught.value.message
    assert "ollama" in message and "anthropic, openai" in message
    assert not served.chats(served.anthropic) and not served.chats(served.openai)


async def test_streaming_ends_with_finish_reason_and_usage(
    served: Served, client: openai.AsyncOpenAI
) -> None:
    served.openai.enqueue(openai_fake.text_reply("One two three four."))
    stream = await client.chat.completions.create(
        model="openai/gpt-5.4-mini",
        messages=QUESTION,  # type: ignore[arg-type]
        stream=True,
        stream_options={"include_usage": True},
    )
    text, finish, usage = "", None, None
    async for chunk in stream:
        if chunk.choices:
            text += chunk.choices[0].delta.content or ""
            finish = chunk.choices[0].finish_reason or finish
        if chunk.usage is not None:
            usage = chunk.usage
    assert text == "One two three four."
    assert finish == "stop"
    assert usage is not None and usage.completion_tokens == 12


async def test_tools_come_back_as_tool_calls(served: Served, client: openai.AsyncOpenAI) -> None:
    served.anthropic.enqueue(
        anthropic_fake.tool_reply([("toolu_1", "get_weather", {"city": "Oslo"})], stream=False)
    )
    completion = await client.chat.completions.create(
        model=CHAT_MODEL,
        messages=QUESTION,  # type: ignore[arg-type]
        tools=[WEATHER_TOOL],  # type: ignore[list-item]
    )
    choice = completion.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.tool_calls is not None
    call = choice.message.tool_calls[0]
    assert (call.id, call.function.name) == ("toolu_1", "get_weather")  # type: ignore[union-attr]
    assert json.loads(call.function.arguments) == {"city": "Oslo"}  # type: ignore[union-attr]
    assert served.chats(served.anthropic)[0].json()["tools"][0]["name"] == "get_weather"

    # the client runs the tool and sends the result back
    served.anthropic.enqueue(anthropic_fake.text_reply("It is sunny in Oslo.", stream=False))
    history: list[Any] = [
        *QUESTION,
        choice.message.model_dump(exclude_none=True),
        {"role": "tool", "tool_call_id": "toolu_1", "content": "sunny"},
    ]
    answer = await client.chat.completions.create(
        model=CHAT_MODEL,
        messages=history,
        tools=[WEATHER_TOOL],  # type: ignore[list-item]
    )
    assert answer.choices[0].message.content == "It is sunny in Oslo."
    last = served.chats(served.anthropic)[1].json()["messages"][-1]
    assert last["content"][0]["type"] == "tool_result"
    assert last["content"][0]["tool_use_id"] == "toolu_1"


async def test_streamed_tool_calls_assemble_in_the_sdk(
    served: Served, client: openai.AsyncOpenAI
) -> None:
    served.openai.enqueue(openai_fake.tool_reply([("call_1", "get_weather", {"city": "Rome"})]))
    stream = await client.chat.completions.create(
        model="openai/gpt-5.4-mini",
        messages=QUESTION,  # type: ignore[arg-type]
        tools=[WEATHER_TOOL],  # type: ignore[list-item]
        stream=True,
    )
    arguments, name, finish = "", None, None
    async for chunk in stream:
        for delta in chunk.choices[0].delta.tool_calls or [] if chunk.choices else []:
            name = (delta.function.name if delta.function else None) or name
            arguments += (delta.function.arguments if delta.function else "") or ""
        if chunk.choices:
            finish = chunk.choices[0].finish_reason or finish
    assert name == "get_weather"
    assert json.loads(arguments) == {"city": "Rome"}
    assert finish == "tool_calls"


async def test_the_vault_model_runs_vault_tools_here(
    served: Served, client: openai.AsyncOpenAI
) -> None:
    served.anthropic.enqueue(
        anthropic_fake.tool_reply([("toolu_s", "search_notes", {"query": "sourdough"})]),
        anthropic_fake.text_reply("See [[Areas/Cooking/Sourdough]]."),
    )
    stream = await client.chat.completions.create(
        model="vault", messages=[{"role": "user", "content": "How do I bake bread?"}], stream=True
    )
    chunks = [chunk async for chunk in stream]
    text = "".join([c.choices[0].delta.content or "" for c in chunks if c.choices])
    assert text == "See [[Areas/Cooking/Sourdough]]."
    assert {chunk.model for chunk in chunks} == {"vault"}
    first, second = (r.json() for r in served.chats(served.anthropic))
    assert first["model"] == CHAT_MODEL
    assert "Obsidian vault" in json.dumps(first["system"])
    assert {tool["name"] for tool in first["tools"]} >= {"search_notes", "read_note"}
    result = second["messages"][-1]["content"][0]
    assert result["type"] == "tool_result" and "Sourdough" in json.dumps(result["content"])


async def test_the_vault_model_refuses_writes_over_http(
    served: Served, client: openai.AsyncOpenAI
) -> None:
    served.anthropic.enqueue(
        anthropic_fake.tool_reply(
            [("toolu_w", "create_note", {"path": "Pwned.md", "content": "x"})], stream=False
        ),
        anthropic_fake.text_reply("I could not write it.", stream=False),
    )
    completion = await client.chat.completions.create(
        model="vault", messages=[{"role": "user", "content": "Write a note."}]
    )
    assert completion.choices[0].message.content == "I could not write it."
    assert completion.model == "vault"
    result = served.chats(served.anthropic)[1].json()["messages"][-1]["content"][0]
    assert result["is_error"] is True
    assert not (served.bridge.vault.root / "Pwned.md").exists()


@pytest.mark.parametrize("path", ["/chat", "/v1/chat/completions"])
async def test_the_vault_models_answer_names_vault(served: Served, path: str) -> None:
    served.anthropic.enqueue(anthropic_fake.text_reply("Bread needs time.", stream=False))
    async with served.http() as http:
        response = await http.post(path, json={"model": "vault", "messages": QUESTION})
    assert response.status_code == 200, response.text
    assert response.json()["model"] == "vault"
    assert served.chats(served.anthropic)[0].json()["model"] == CHAT_MODEL


@pytest.mark.parametrize(
    ("reply", "error", "status"),
    [
        (anthropic_fake.error_reply(401, "invalid x-api-key"), openai.AuthenticationError, 401),
        (anthropic_fake.quota_reply(), openai.APIStatusError, 402),
        (anthropic_fake.error_reply(429, "slow down"), openai.RateLimitError, 429),
        (anthropic_fake.error_reply(500, "boom"), openai.APIStatusError, 502),
    ],
)
async def test_provider_errors_keep_openais_shape(
    served: Served, client: openai.AsyncOpenAI, reply: Any, error: type[Exception], status: int
) -> None:
    served.anthropic.enqueue(reply)
    with pytest.raises(error) as caught:
        await client.chat.completions.create(model=CHAT_MODEL, messages=QUESTION)  # type: ignore[arg-type]
    assert isinstance(caught.value, openai.APIStatusError)
    assert caught.value.status_code == status
    body = caught.value.body
    assert isinstance(body, dict) and {"message", "type", "code"} <= set(body)


async def test_a_failure_mid_stream_reaches_the_sdk(
    served: Served, client: openai.AsyncOpenAI
) -> None:
    served.anthropic.enqueue(anthropic_fake.midstream_error_reply("Half an ans"))
    stream = await client.chat.completions.create(
        model=CHAT_MODEL,
        messages=QUESTION,  # type: ignore[arg-type]
        stream=True,
    )
    with pytest.raises(openai.APIError):
        async for _ in stream:
            pass


async def test_models_lists_only_what_the_providers_serve(
    served: Served, client: openai.AsyncOpenAI
) -> None:
    """``vault``, the configured model, the chat provider's listed models as they are, and the
    other configured providers' as ``provider/model``: no model a request could not use."""
    ids = [model.id async for model in client.models.list()]
    assert ids[:2] == ["vault", CHAT_MODEL]
    assert set(ids) == {
        "vault",
        *served.anthropic_models,
        *(f"openai/{model}" for model in served.openai_models),
    }


async def test_a_wrong_token_is_an_authentication_error(served: Served) -> None:
    sdk = openai.AsyncOpenAI(
        api_key="wrong", base_url=served.bridge.http_url + "/v1", max_retries=0
    )
    with pytest.raises(openai.AuthenticationError) as caught:
        await sdk.chat.completions.create(model=CHAT_MODEL, messages=QUESTION)  # type: ignore[arg-type]
    await sdk.close()
    assert "missing or wrong client key" in caught.value.message
    assert "info file" not in caught.value.message
