"""The call shapes the design documents show, each as written, through the real SDKs against
the fake APIs (beside the keyword forms the other tests use)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import llm_service
from llm_service import LLMService, Message, ToolSpec
from tests.fakes import anthropic as fake
from tests.fakes import openai as fake_openai
from tests.fakes.http import FakeHTTPServer


@pytest.fixture(autouse=True)
async def _close_providers() -> AsyncIterator[None]:
    """The Anthropic providers a test made are closed on the test's own event loop."""
    yield
    await fake.close_providers()


SCHEMA = {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}


def search(args: dict[str, Any]) -> str:
    return f"found {args['query']}"


@pytest.mark.parametrize(
    "definition",
    [
        {
            "name": "search_notes",
            "description": "Search.",
            "input_schema": SCHEMA,
            "execute": search,
        },
        SimpleNamespace(
            name="search_notes", description="Search.", input_schema=SCHEMA, execute=search
        ),
        {
            "tool": {"name": "search_notes", "description": "Search.", "input_schema": SCHEMA},
            "execute": search,
        },
    ],
    ids=["dict", "object", "handler-form"],
)
async def test_register_tool_takes_each_documented_shape(
    fake_http: FakeHTTPServer, definition: object
) -> None:
    """The tool registered from a definition runs in a turn like a keyword-registered one;
    get_registered_tools returns names, tool_specs the specs."""
    service = LLMService(fake.make_provider(fake_http), model=fake.MODEL)
    service.register_tool(definition, permission="allow")
    assert service.get_registered_tools() == ["search_notes"]
    assert service.tool_specs() == [ToolSpec("search_notes", "Search.", SCHEMA)]
    fake_http.enqueue(
        fake.tool_reply(
            [("toolu_1", "search_notes", {"query": "kafka"})], text="Looking.", stream=False
        ),
        fake.text_reply("Kafka is a log.", stream=False),
    )
    reply = await service.process_message("What is Kafka?")
    assert [(b.type, b.text, b.name, b.input, b.id) for b in reply.content] == [
        ("text", "Looking.", "", {}, ""),
        ("tool_use", "", "search_notes", {"query": "kafka"}, "toolu_1"),
        ("text", "Kafka is a log.", "", {}, ""),
    ]
    assert reply.stop_reason == "end_turn"
    sent = fake_http.requests[1].json()["messages"][-1]["content"][0]
    assert sent == {
        "type": "tool_result",
        "tool_use_id": "toolu_1",
        "content": "found kafka",
        "is_error": False,
    }


def test_a_definition_missing_a_field_names_it() -> None:
    service = LLMService(llm_service.ScriptedProvider([]), model="m")
    with pytest.raises(ValueError, match="missing: execute"):
        service.register_tool({"name": "x", "description": "d", "input_schema": SCHEMA})


async def test_provider_chat_takes_tools_and_system_prompt_by_position(
    fake_http: FakeHTTPServer,
) -> None:
    provider = fake.make_provider(fake_http, model=fake.MODEL)
    fake_http.enqueue(fake.text_reply("Hi.", stream=False))
    tools = [{"name": "search_notes", "description": "Search.", "input_schema": SCHEMA}]
    reply = await provider.chat([Message.user("Hello")], tools, "Be brief.")
    assert reply.text == "Hi."
    body = fake_http.requests[0].json()
    assert body["system"][0]["text"] == "Be brief."
    assert [tool["name"] for tool in body["tools"]] == ["search_notes"]
    assert [(b.type, b.text) for b in reply.content] == [("text", "Hi.")]


async def test_provider_complete_answers_one_question(fake_http: FakeHTTPServer) -> None:
    provider = fake_openai.make_provider(fake_http, model=fake_openai.MODEL)
    fake_http.enqueue(fake_openai.text_reply("Paris.", stream=False))
    assert await provider.complete("Capital of France?") == "Paris."
    assert fake_http.requests[0].json()["messages"] == [
        {"role": "user", "content": "Capital of France?"}
    ]


@pytest.mark.parametrize(
    "messages",
    [[{"role": "user", "content": "hi"}], "hi"],
    ids=["openai-dicts", "a-string"],
)
async def test_openai_style_messages_are_a_clear_error(
    fake_http: FakeHTTPServer, messages: Any
) -> None:
    """Not 'unknown ... see the server log': the error names the type to use; nothing is sent."""
    provider = fake.make_provider(fake_http, model=fake.MODEL)
    with pytest.raises(TypeError, match=r"llm_service\.Message") as caught:
        await provider.chat(messages)
    assert "Message.user(text)" in str(caught.value)
    assert fake_http.requests == []


async def test_validate_key_says_true_or_false(fake_http: FakeHTTPServer) -> None:
    """As a script calls it (blocking; here from a thread, while the fake API runs on the
    test's loop), and as async code awaits it."""
    url = fake_http.url + "/v1"
    fake_http.enqueue(fake_openai.models_reply("gpt-6-luna"))
    good = await asyncio.to_thread(llm_service.validate_key, "openai", "sk-good", base_url=url)
    assert good is True
    fake_http.enqueue(fake_openai.error_reply(401, "Incorrect API key provided"))
    assert await llm_service.avalidate_key("openai", "sk-bad", base_url=url) is False
    assert fake_http.requests[1].headers["authorization"] == "Bearer sk-bad"


async def test_validate_key_raises_when_the_answer_says_nothing_of_the_key(
    fake_http: FakeHTTPServer,
) -> None:
    fake_http.enqueue(*[fake_openai.error_reply(503, "down")] * 3)
    with pytest.raises(llm_service.LLMError) as caught:
        await llm_service.avalidate_key("openai", "sk-x", base_url=fake_http.url + "/v1")
    assert caught.value.code == "server_error"


async def test_discover_models_caches_for_a_day_in_the_given_folder(
    fake_http: FakeHTTPServer, tmp_path: Path
) -> None:
    url = fake_http.url + "/v1"
    fake_http.enqueue(fake_openai.models_reply("gpt-6-luna", "text-embedding-3-small"))
    discover = llm_service.discover_models  # blocking, as scripts call it: run from a thread
    models = await asyncio.to_thread(discover, "openai", "sk-x", base_url=url, cache_dir=tmp_path)
    assert [m.id for m in models] == ["gpt-6-luna", "text-embedding-3-small"]
    again = await llm_service.adiscover_models("openai", "sk-x", base_url=url, cache_dir=tmp_path)
    assert again == models and len(fake_http.requests) == 1  # the cache answered
    cached = json.loads((tmp_path / "models.json").read_text())
    assert list(cached) == [f"openai:{url}"]
    fake_http.enqueue(fake_openai.models_reply("gpt-6-sol"))
    fresh = await llm_service.adiscover_models(
        "openai", "sk-x", base_url=url, cache_dir=tmp_path, refresh=True
    )
    assert [m.id for m in fresh] == ["gpt-6-sol"]


async def test_discover_models_uses_the_user_cache_folder_by_default(
    fake_http: FakeHTTPServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    fake_http.enqueue(fake_openai.models_reply("gpt-6-luna"))
    await llm_service.adiscover_models("openai", "sk-x", base_url=fake_http.url + "/v1")
    assert (tmp_path / "llm-service" / "models.json").exists()
