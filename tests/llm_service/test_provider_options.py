"""tool_choice and response_format in each provider's own form, through the real SDKs (and
Ollama's httpx) against the fake APIs."""

from __future__ import annotations

import json

import pytest

from llm_service import ForcedTool, ResponseComplete, ResponseFormat, TextDelta, ToolCallDelta
from tests.fakes import anthropic as anthropic_fake
from tests.fakes import ollama as ollama_fake
from tests.fakes import openai as openai_fake
from tests.fakes.http import FakeHTTPServer
from tests.fakes.specs import HELLO, SEARCH

SCHEMA = {"type": "object", "properties": {"celsius": {"type": "integer"}}, "required": ["celsius"]}
FORMAT = ResponseFormat(SCHEMA, "Weather", strict=True)


@pytest.mark.parametrize(
    ("choice", "wire"),
    [
        ("auto", {"type": "auto"}),
        ("none", {"type": "none"}),
        ("required", {"type": "any"}),
        (ForcedTool("search_notes"), {"type": "tool", "name": "search_notes"}),
    ],
)
async def test_anthropic_tool_choice(
    fake_http: FakeHTTPServer, choice: object, wire: object
) -> None:
    fake_http.enqueue(anthropic_fake.text_reply("ok", stream=False))
    provider = anthropic_fake.make_provider(fake_http)
    await provider.chat(HELLO, [SEARCH], model="m", tool_choice=choice)  # type: ignore[arg-type]
    assert fake_http.requests[0].json()["tool_choice"] == wire


async def test_anthropic_format_is_a_forced_tool_answered_as_text(
    fake_http: FakeHTTPServer,
) -> None:
    fake_http.enqueue(anthropic_fake.tool_reply([("t1", "Weather", {"celsius": 4})], stream=False))
    reply = await anthropic_fake.make_provider(fake_http).chat(
        HELLO, model="m", response_format=FORMAT
    )
    assert json.loads(reply.text) == {"celsius": 4}
    assert (reply.tool_calls, reply.stop_reason) == ([], "end_turn")
    sent = fake_http.requests[0].json()
    assert sent["tool_choice"] == {"type": "tool", "name": "Weather"}
    assert sent["tools"][-1]["input_schema"] == SCHEMA


async def test_anthropic_format_beside_tools_streams_text_and_renumbers_calls(
    fake_http: FakeHTTPServer,
) -> None:
    """With the client's tools the model must call one of them or the format's; a streamed
    answer's JSON arrives as text, the other calls keep their indexes without it."""
    fake_http.enqueue(
        anthropic_fake.tool_reply(
            [("t1", "Weather", {"celsius": 4}), ("t2", "search_notes", {"query": "x"})]
        )
    )
    provider = anthropic_fake.make_provider(fake_http)
    events = [e async for e in provider.stream(HELLO, [SEARCH], model="m", response_format=FORMAT)]
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert json.loads(text) == {"celsius": 4}
    deltas = [e for e in events if isinstance(e, ToolCallDelta)]
    assert {d.index for d in deltas} == {0} and deltas[0].name == "search_notes"
    final = events[-1]
    assert isinstance(final, ResponseComplete)
    assert [c.name for c in final.response.tool_calls] == ["search_notes"]
    assert fake_http.requests[0].json()["tool_choice"] == {"type": "any"}


async def test_openai_takes_both_as_they_are(fake_http: FakeHTTPServer) -> None:
    fake_http.enqueue(openai_fake.text_reply("{}", stream=False))
    provider = openai_fake.make_provider(fake_http)
    await provider.chat(
        HELLO, [SEARCH], model="m", tool_choice="required", response_format=ResponseFormat()
    )
    sent = fake_http.requests[0].json()
    assert (sent["tool_choice"], sent["response_format"]) == ("required", {"type": "json_object"})


async def test_ollama_cannot_force_a_call_and_takes_format(fake_http: FakeHTTPServer) -> None:
    provider = ollama_fake.make_provider(fake_http)
    assert not provider.forces_tools("m")
    fake_http.enqueue(ollama_fake.text_reply("{}", stream=False))
    await provider.chat(HELLO, [SEARCH], model="m", tool_choice="none", response_format=FORMAT)
    sent = fake_http.requests[0].json()
    assert "tools" not in sent  # "none": no tools at all
    assert sent["format"] == SCHEMA


async def test_required_needs_tools(fake_http: FakeHTTPServer) -> None:
    with pytest.raises(ValueError, match="needs tools"):
        await openai_fake.make_provider(fake_http).chat(HELLO, model="m", tool_choice="required")
