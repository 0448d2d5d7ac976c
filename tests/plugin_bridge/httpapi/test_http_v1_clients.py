"""Clients nobody here wrote, over real sockets, get what they ask for from /v1 and /chat: the
``openai`` SDK and LangChain's ``ChatOpenAI`` with their default retry settings against the
bridge, which calls the fake Anthropic and OpenAI APIs through their real SDKs.

Structured output (json_schema, strict; Anthropic by a forced tool), tool_choice required and
named, an unknown model (404, no chat request), a provider 500 (at most the bridge's 3 calls),
one model on every streamed chunk, vendor-prefix routing, and the LLM proxy's two block shapes
in a two-round exchange."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import openai
import pytest
import pytest_asyncio
from langchain_openai import ChatOpenAI
from pydantic import BaseModel

from tests.fakes import anthropic as anthropic_fake
from tests.fakes import openai as openai_fake
from tests.plugin_bridge.httpapi.conftest import CHAT_MODEL, Served

pytestmark = pytest.mark.asyncio(loop_scope="module")

QUESTION = [{"role": "user", "content": "Weather in Oslo?"}]
WEATHER = {
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


class Forecast(BaseModel):
    city: str
    celsius: int


FORECAST_SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "celsius": {"type": "integer"}},
    "required": ["city", "celsius"],
    "additionalProperties": False,
}
STRICT = {
    "type": "json_schema",
    "json_schema": {"name": "Forecast", "schema": FORECAST_SCHEMA, "strict": True},
}


@pytest_asyncio.fixture(loop_scope="module")
async def client(served: Served) -> AsyncIterator[openai.AsyncOpenAI]:
    """The SDK as clients use it: its default max_retries (2), where conftest's has none."""
    sdk = openai.AsyncOpenAI(
        api_key=served.bridge.app.token, base_url=served.bridge.http_url + "/v1"
    )
    served.anthropic.requests.clear()
    served.openai.requests.clear()
    served.anthropic.replies.clear()
    served.openai.replies.clear()
    served.forget_models()
    yield sdk
    await sdk.close()


def langchain(served: Served, model: str) -> ChatOpenAI:
    return ChatOpenAI(
        model=model,
        api_key=served.bridge.app.token,  # type: ignore[arg-type]
        base_url=served.bridge.http_url + "/v1",
    )


# -- structured output ---------------------------------------------------------------------


async def test_json_schema_passes_through_to_openai(
    served: Served, client: openai.AsyncOpenAI
) -> None:
    served.openai.enqueue(openai_fake.text_reply('{"city":"Oslo","celsius":4}', stream=False))
    completion = await client.chat.completions.create(
        model="openai/gpt-5.4-mini",
        messages=QUESTION,  # type: ignore[arg-type]
        response_format=STRICT,  # type: ignore[arg-type]
    )
    assert json.loads(completion.choices[0].message.content or "") == {"city": "Oslo", "celsius": 4}
    sent = served.chats(served.openai)[0].json()
    assert sent["response_format"] == STRICT


async def test_langchain_structured_output_against_openai(
    served: Served, client: openai.AsyncOpenAI
) -> None:
    served.openai.enqueue(openai_fake.text_reply('{"city":"Oslo","celsius":4}', stream=False))
    structured = langchain(served, "openai/gpt-5.4-mini").with_structured_output(Forecast)
    answer = await structured.ainvoke("Weather in Oslo?")
    assert answer == Forecast(city="Oslo", celsius=4)
    sent = served.chats(served.openai)[0].json()["response_format"]
    assert sent["type"] == "json_schema" and sent["json_schema"]["name"] == "Forecast"


async def test_anthropic_answers_a_schema_through_a_forced_tool(
    served: Served, client: openai.AsyncOpenAI
) -> None:
    served.anthropic.enqueue(
        anthropic_fake.tool_reply(
            [("toolu_f", "Forecast", {"city": "Oslo", "celsius": 4})], stream=False
        )
    )
    structured = langchain(served, CHAT_MODEL).with_structured_output(Forecast)
    answer = await structured.ainvoke("Weather in Oslo?")
    assert answer == Forecast(city="Oslo", celsius=4)
    sent = served.chats(served.anthropic)[0].json()
    assert sent["tool_choice"] == {"type": "tool", "name": "Forecast"}
    tool = next(t for t in sent["tools"] if t["name"] == "Forecast")
    assert tool["input_schema"]["required"] == ["city", "celsius"]


async def test_anthropic_streams_the_schema_answer_as_text(
    served: Served, client: openai.AsyncOpenAI
) -> None:
    served.anthropic.enqueue(
        anthropic_fake.tool_reply([("toolu_f", "Forecast", {"city": "Oslo", "celsius": 4})])
    )
    stream = await client.chat.completions.create(
        model=CHAT_MODEL,
        messages=QUESTION,  # type: ignore[arg-type]
        response_format={
            "type": "json_schema",
            "json_schema": {"name": "Forecast", "schema": FORECAST_SCHEMA},
        },  # type: ignore[typeddict-item]
        stream=True,
    )
    text, calls = "", []
    async for chunk in stream:
        if chunk.choices:
            text += chunk.choices[0].delta.content or ""
            calls += chunk.choices[0].delta.tool_calls or []
    assert json.loads(text) == {"city": "Oslo", "celsius": 4}
    assert not calls


async def test_strict_schema_is_asked_again_once_then_502(
    served: Served, client: openai.AsyncOpenAI
) -> None:
    wrong = anthropic_fake.tool_reply(
        [("toolu_f", "Forecast", {"city": "Oslo", "celsius": "cold"})], stream=False
    )
    served.anthropic.enqueue(wrong, wrong)
    with pytest.raises(openai.APIStatusError) as caught:
        await client.chat.completions.create(
            model=CHAT_MODEL,
            messages=QUESTION,  # type: ignore[arg-type]
            response_format=STRICT,  # type: ignore[arg-type]
        )
    assert caught.value.status_code == 502
    assert "does not match the schema 'Forecast'" in caught.value.message
    assert len(served.chats(served.anthropic)) == 2  # no SDK retry: x-should-retry: false
    second = served.chats(served.anthropic)[1].json()["messages"][-1]
    assert "does not match the JSON Schema" in json.dumps(second)


async def test_strict_schema_second_answer_that_fits_is_the_answer(
    served: Served, client: openai.AsyncOpenAI
) -> None:
    served.anthropic.enqueue(
        anthropic_fake.tool_reply([("t1", "Forecast", {"city": "Oslo"})], stream=False),
        anthropic_fake.tool_reply(
            [("t2", "Forecast", {"city": "Oslo", "celsius": 4})], stream=False
        ),
    )
    completion = await client.chat.completions.create(
        model=CHAT_MODEL,
        messages=QUESTION,  # type: ignore[arg-type]
        response_format=STRICT,  # type: ignore[arg-type]
    )
    assert json.loads(completion.choices[0].message.content or "") == {"city": "Oslo", "celsius": 4}


# -- tool choice ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sent", "anthropic_choice"),
    [
        ("required", {"type": "any"}),
        ("any", {"type": "any"}),
        (
            {"type": "function", "function": {"name": "get_weather"}},
            {"type": "tool", "name": "get_weather"},
        ),
    ],
)
async def test_tool_choice_reaches_anthropic_in_its_form(
    served: Served, client: openai.AsyncOpenAI, sent: Any, anthropic_choice: dict[str, str]
) -> None:
    served.anthropic.enqueue(
        anthropic_fake.tool_reply([("toolu_1", "get_weather", {"city": "Oslo"})], stream=False)
    )
    body = {"model": CHAT_MODEL, "messages": QUESTION, "tools": [WEATHER], "tool_choice": sent}
    completion = await client.chat.completions.create(**body)
    assert completion.choices[0].finish_reason == "tool_calls"
    assert served.chats(served.anthropic)[0].json()["tool_choice"] == anthropic_choice


async def test_langchain_forces_a_tool_on_openai(
    served: Served, client: openai.AsyncOpenAI
) -> None:
    served.openai.enqueue(
        openai_fake.tool_reply([("call_1", "get_weather", {"city": "Oslo"})], stream=False)
    )
    model = langchain(served, "openai/gpt-5.4-mini").bind_tools([WEATHER], tool_choice="any")
    message = await model.ainvoke("Weather in Oslo?")
    assert message.tool_calls[0]["name"] == "get_weather"  # type: ignore[attr-defined]
    assert served.chats(served.openai)[0].json()["tool_choice"] == "required"


async def test_a_tool_choice_naming_no_tool_is_400(
    served: Served, client: openai.AsyncOpenAI
) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        await client.chat.completions.create(
            model=CHAT_MODEL,
            messages=QUESTION,  # type: ignore[arg-type]
            tools=[WEATHER],  # type: ignore[list-item]
            tool_choice={"type": "function", "function": {"name": "nope"}},
        )
    assert "'nope'" in caught.value.message
    assert not served.chats(served.anthropic)


async def test_a_value_out_of_range_is_400_in_one_sentence(
    served: Served, client: openai.AsyncOpenAI
) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        await client.chat.completions.create(
            model=CHAT_MODEL,
            messages=QUESTION,  # type: ignore[arg-type]
            max_tokens=10**30,
        )
    body = caught.value.body
    assert isinstance(body, dict)
    assert body["message"] == (
        "Invalid body: 'max_tokens': Input should be less than or equal to 1000000."
    )
    assert not served.chats(served.anthropic)


async def test_tool_choice_none_without_tools_sends_none(
    served: Served, client: openai.AsyncOpenAI
) -> None:
    served.anthropic.enqueue(anthropic_fake.text_reply("Hi.", stream=False))
    await client.chat.completions.create(
        model=CHAT_MODEL,
        messages=QUESTION,  # type: ignore[arg-type]
        tool_choice="none",
    )
    assert "tool_choice" not in served.chats(served.anthropic)[0].json()


# -- errors that stop retry storms -------------------------------------------------------------


async def test_an_unknown_model_is_404_with_no_chat_request(
    served: Served, client: openai.AsyncOpenAI
) -> None:
    for model in ("claude-nonexistent-9", "openai/gpt-nonexistent", "anthropic/no-such-model"):
        with pytest.raises(openai.NotFoundError) as caught:
            await client.chat.completions.create(model=model, messages=QUESTION)  # type: ignore[arg-type]
        assert caught.value.code == "model_not_found"
        assert model in caught.value.message
    assert not served.chats(served.anthropic) and not served.chats(served.openai)
    lists = [r for r in [*served.anthropic.requests, *served.openai.requests]]
    # each provider's list read once for the first id it lacks, and Anthropic's once more for
    # the third (the list kept from an earlier request is read again before a refusal)
    assert len(lists) == 3


async def test_chat_refuses_an_unknown_model_too(
    served: Served, client: openai.AsyncOpenAI
) -> None:
    async with served.http() as http:
        response = await http.post(
            "/chat", json={"model": "claude-no-such-model", "messages": QUESTION}
        )
    assert response.status_code == 404
    assert response.json()["error"] == "model_not_found"
    assert not served.chats(served.anthropic)


async def test_a_provider_500_costs_at_most_three_calls(
    served: Served, client: openai.AsyncOpenAI
) -> None:
    provider = served.bridge.app.providers.provider("openai")
    assert provider.max_attempts == 3
    provider.backoff_base = 0.001  # the bridge's own retries, without their waits
    served.openai.enqueue(*[openai_fake.error_reply(500, "boom") for _ in range(9)])
    with pytest.raises(openai.InternalServerError) as caught:
        await client.chat.completions.create(model="openai/gpt-5.4-mini", messages=QUESTION)  # type: ignore[arg-type]
    assert caught.value.status_code == 502
    assert caught.value.response.headers["x-should-retry"] == "false"
    assert len(served.chats(served.openai)) == 3


@pytest.mark.parametrize(
    ("status", "answered", "error"),
    [
        (429, 429, openai.RateLimitError),
        (500, 502, openai.InternalServerError),
        (503, 502, openai.InternalServerError),
        (529, 502, openai.InternalServerError),
    ],
)
async def test_a_provider_that_always_refuses_costs_at_most_three_calls(
    served: Served,
    client: openai.AsyncOpenAI,
    status: int,
    answered: int,
    error: type[openai.APIStatusError],
) -> None:
    """The bridge's 3 attempts are all one client request costs, whatever the SDK's retries:
    the answer says not to retry (x-should-retry) and when to try again (the bridge's next
    backoff, as this provider said no wait)."""
    provider = served.bridge.app.providers.provider("openai")
    provider.backoff_base = 0.001  # the bridge's own retries, without their waits
    served.openai.enqueue(*[openai_fake.error_reply(status, "slow down") for _ in range(9)])
    with pytest.raises(error) as caught:
        await client.chat.completions.create(model="openai/gpt-5.4-mini", messages=QUESTION)  # type: ignore[arg-type]
    assert len(served.chats(served.openai)) == 3
    headers = caught.value.response.headers
    assert caught.value.status_code == answered
    assert (headers["x-should-retry"], headers["retry-after"]) == ("false", "1")


async def test_langchain_with_its_default_retries_costs_three_calls_too(
    served: Served, client: openai.AsyncOpenAI
) -> None:
    provider = served.bridge.app.providers.provider("openai")
    provider.backoff_base = 0.001
    served.openai.enqueue(*[openai_fake.error_reply(429, "slow down") for _ in range(9)])
    with pytest.raises(openai.RateLimitError):
        await langchain(served, "openai/gpt-5.4-mini").ainvoke("Weather in Oslo?")
    assert len(served.chats(served.openai)) == 3


async def test_the_llm_proxy_says_the_same_after_a_rate_limit(
    served: Served, client: openai.AsyncOpenAI
) -> None:
    provider = served.bridge.app.providers.provider("openai")
    provider.backoff_base = 0.001
    served.openai.enqueue(*[openai_fake.error_reply(429, "slow down") for _ in range(3)])
    async with served.http() as http:
        response = await http.post(
            "/chat", json={"model": "openai/gpt-5.4-mini", "messages": QUESTION}
        )
    assert (response.status_code, response.json()["error"]) == (429, "rate_limit")
    assert response.headers["x-should-retry"] == "false"
    assert response.headers["retry-after"] == "1"
    assert len(served.chats(served.openai)) == 3


@pytest.mark.parametrize(
    ("status", "error"), [(400, openai.BadRequestError), (404, openai.NotFoundError)]
)
async def test_provider_refusals_keep_their_status(
    served: Served, client: openai.AsyncOpenAI, status: int, error: type[openai.APIStatusError]
) -> None:
    served.openai.enqueue(openai_fake.error_reply(status, "no"))
    with pytest.raises(error):
        await client.chat.completions.create(model="openai/gpt-5.4-mini", messages=QUESTION)  # type: ignore[arg-type]
    assert len(served.chats(served.openai)) == 1


async def test_a_rate_limit_keeps_its_retry_after(
    served: Served, client: openai.AsyncOpenAI
) -> None:
    served.anthropic.enqueue(
        anthropic_fake.error_reply(429, "slow down", headers={"retry-after": "7"})
    )
    async with served.http() as http:
        response = await http.post("/v1/chat/completions", json={"messages": QUESTION})
    assert response.status_code == 429
    assert response.headers["retry-after"] == "7"  # the provider's own
    assert response.headers["x-should-retry"] == "false"


# -- streaming, routing ------------------------------------------------------------------------


async def test_every_streamed_chunk_names_the_same_model(
    served: Served, client: openai.AsyncOpenAI
) -> None:
    served.openai.enqueue(
        openai_fake.text_reply("Four words come here.", model="gpt-4o-2024-08-06")
    )
    stream = await client.chat.completions.create(
        model="gpt-4o",
        messages=QUESTION,  # type: ignore[arg-type]
        stream=True,
        stream_options={"include_usage": True},
    )
    models = {chunk.model async for chunk in stream}
    assert models == {"gpt-4o"}


async def test_bare_ids_route_by_vendor_prefix_unless_the_chat_provider_lists_them(
    served: Served, client: openai.AsyncOpenAI
) -> None:
    served.openai.enqueue(openai_fake.text_reply("From OpenAI.", stream=False))
    await client.chat.completions.create(model="gpt-4o", messages=QUESTION)  # type: ignore[arg-type]
    assert served.chats(served.openai)[0].json()["model"] == "gpt-4o"
    served.anthropic_models.append("gpt-oss:20b")  # as Ollama's list holds it
    served.forget_models()
    try:
        served.anthropic.enqueue(anthropic_fake.text_reply("From the chat provider.", stream=False))
        await client.chat.completions.create(model="gpt-oss:20b", messages=QUESTION)  # type: ignore[arg-type]
    finally:
        served.anthropic_models.remove("gpt-oss:20b")
    assert served.chats(served.anthropic)[0].json()["model"] == "gpt-oss:20b"
    assert len(served.chats(served.openai)) == 1


# -- the LLM proxy's thin client ---------------------------------------------------------------


def sse_events(text: str) -> list[dict[str, Any]]:
    """The JSON ``data:`` payloads of an SSE body."""
    lines = [line.removeprefix("data: ") for line in text.split("\n\n") if line]
    return [json.loads(line) for line in lines if line != "[DONE]"]


ANTHROPIC_ROUND_2 = [
    {
        "role": "assistant",
        "content": [
            {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Oslo"}},
        ],
    },
    {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "sunny"},
        ],
    },
]
RUST_ROUND_2 = [
    {
        "role": "assistant",
        "content": [
            {
                "type": "tool_use",
                "tool_calls": [
                    {
                        "id": "toolu_1",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city":"Oslo"}'},
                    }
                ],
            },
        ],
    },
    {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "sunny"},
        ],
    },
]


@pytest.mark.parametrize("round_2", [ANTHROPIC_ROUND_2, RUST_ROUND_2], ids=["anthropic", "rust"])
@pytest.mark.parametrize("path", ["/chat", "/chat/stream"])
async def test_chat_takes_both_block_shapes_in_two_rounds(
    served: Served, client: openai.AsyncOpenAI, round_2: list[Any], path: str
) -> None:
    stream = path.endswith("stream")
    served.anthropic.enqueue(
        anthropic_fake.tool_reply([("toolu_1", "get_weather", {"city": "Oslo"})], stream=False),
        anthropic_fake.text_reply("Sunny in Oslo.", stream=stream),
    )
    async with served.http() as http:
        first = await http.post("/chat", json={"messages": QUESTION, "tools": [WEATHER]})
        assert first.status_code == 200, first.text
        assert first.json()["tool_calls"][0]["function"]["name"] == "get_weather"
        body = {"messages": [*QUESTION, *round_2], "tools": [WEATHER]}
        second = await http.post(path, json=body)
    assert second.status_code == 200, second.text
    if stream:
        assert "".join(e.get("content", "") for e in sse_events(second.text)) == "Sunny in Oslo."
    else:
        answer = second.json()
        assert answer["content"] == "Sunny in Oslo."
        assert set(answer) == {"content", "tool_calls", "usage", "model", "finish_reason"}
    sent = served.chats(served.anthropic)[1].json()["messages"]
    assert sent[1]["content"][0] == {
        "type": "tool_use",
        "id": "toolu_1",
        "name": "get_weather",
        "input": {"city": "Oslo"},
    }
    assert sent[2]["content"][0]["type"] == "tool_result"
    assert sent[2]["content"][0]["tool_use_id"] == "toolu_1"


async def test_the_local_llm_health_answers_as_health(
    served: Served, client: openai.AsyncOpenAI
) -> None:
    async with served.http() as http:
        local = await http.get("/api/local-llm/health")
        plain = await http.get("/health")
    assert local.status_code == plain.status_code == 200
    assert local.json().keys() == plain.json().keys()
