"""The first call waits for a warm-up's imports (issue 32, item 8: a warm-up thread and the
first request importing the same SDK at once gave "partially initialized module"), and every
failure the error tables do not know is logged with its traceback."""

from __future__ import annotations

import asyncio
import logging
import time

import pytest

from llm_service import LLMError, OpenAIProvider, ScriptedProvider
from llm_service.connections.anthropic import AnthropicConnection
from llm_service.connections.ollama import OllamaConnection
from llm_service.connections.openai import OpenAIConnection
from llm_service.messages import Message
from llm_service.warmup import import_early, warmed


async def test_a_call_during_the_warm_up_starts_once_it_is_done() -> None:
    finished: list[float] = []
    provider = ScriptedProvider(model="m")
    provider.enqueue_text("hi")

    def slow() -> None:
        time.sleep(0.3)
        finished.append(time.perf_counter())

    warming = asyncio.create_task(import_early("json", then=slow))
    await asyncio.sleep(0.05)  # the warm-up thread is under way
    await provider.chat([Message.user("hello")])
    called = time.perf_counter()
    await warming
    assert finished and called >= finished[0]


async def test_warmed_returns_at_once_without_a_warm_up() -> None:
    async with asyncio.timeout(0.5):
        await warmed()


@pytest.mark.parametrize(
    "connection",
    [OpenAIConnection("sk-test"), AnthropicConnection("sk-ant-test"), OllamaConnection()],
    ids=["openai", "anthropic", "ollama"],
)
def test_an_unexpected_failure_is_logged_with_its_traceback(
    connection: OpenAIConnection | AnthropicConnection | OllamaConnection,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.ERROR)
    try:
        raise AttributeError("partially initialized module 'httpx' has no attribute 'Client'")
    except AttributeError as exc:
        error = connection.convert_error(exc)
    assert error.code == "unknown"
    (record,) = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert record.exc_info is not None and "AttributeError" in record.getMessage()


async def test_the_warm_up_builds_the_client_the_first_call_uses() -> None:
    provider = OpenAIProvider("sk-test", "m", base_url="http://127.0.0.1:9/v1")
    await provider.warm_up()
    client = provider.connection._client
    assert client is not None
    assert provider._sdk() is client
    await provider.aclose()


async def test_a_warm_up_without_a_key_leaves_the_error_to_the_first_call() -> None:
    provider = OpenAIProvider(None, "m")  # OpenAI's own API, and OPENAI_API_KEY is not set
    await provider.warm_up()
    assert provider.connection._client is None
    with pytest.raises(LLMError, match="API key is missing"):
        provider._sdk()
