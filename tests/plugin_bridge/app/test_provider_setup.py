"""Models per purpose across providers: chat on Anthropic, the fast model (titles, summaries)
on Ollama, each through its real SDK or HTTP client against its fake API, usage recorded per
provider and model; the setup's one builder and its errors."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from llm_service import AnthropicProvider, OllamaProvider, Usage
from plugin_bridge.app.settings.config import BridgeSettings, SettingsError
from plugin_bridge.app.settings.providers import build_setup
from tests.fakes import anthropic as fake_anthropic
from tests.fakes import ollama as fake_ollama
from tests.fakes.http import FakeHTTPServer, Reply
from tests.helpers.bridge import running_bridge

CHAT_MODEL = "claude-haiku-5-5"
FAST_MODEL = "qwen3:4b"


def two_providers(tmp_path: Path, anthropic_url: str, ollama_url: str) -> BridgeSettings:
    return BridgeSettings(
        vault=tmp_path,
        provider="anthropic",
        model=CHAT_MODEL,
        base_url=anthropic_url,
        anthropic_api_key="sk-ant-test-1234",  # type: ignore[arg-type]
        anthropic_api_key_host=anthropic_url,
        fast_model=f"ollama:{FAST_MODEL}",
        base_urls={"ollama": ollama_url},
    )


async def test_titles_run_on_ollama_while_chat_runs_on_anthropic(
    tmp_path: Path, fake_http: FakeHTTPServer
) -> None:
    async with FakeHTTPServer() as ollama:
        settings = two_providers(tmp_path, fake_http.url, ollama.url)
        setup = await build_setup(settings)
        assert isinstance(setup.chat and setup.chat.provider, AnthropicProvider)
        fast = setup.route("fast")
        assert fast is not None and isinstance(fast.provider, OllamaProvider)
        assert (fast.name, fast.model, fast.provider.base_url) == ("ollama", FAST_MODEL, ollama.url)
        assert "fast model ollama:qwen3:4b" in setup.describe()
        fake_http.enqueue(fake_anthropic.text_reply("Kafka is a log.", usage=Usage(1000, 100)))
        ollama.enqueue(fake_ollama.text_reply("Kafka notes", stream=False, usage=Usage(50, 4)))
        async with running_bridge(tmp_path, providers=setup, settings=settings) as bridge:
            wire = await bridge.wire()
            result = await wire.result("chat/send", {"text": "What is Kafka?"})
            for _ in range(200):  # the title is asked for in the background
                listed = await wire.result("conversations/list")
                if listed["conversations"][0]["title"] == "Kafka notes":
                    break
                await asyncio.sleep(0.02)
            summary = await wire.result("usage/summary")
            models = await _ollama_models(wire, ollama)
        assert result["text"] == "Kafka is a log."
        assert listed["conversations"][0]["title"] == "Kafka notes"
        assert fake_http.requests[0].headers["authorization"] == "Bearer sk-ant-test-1234"
        title_request = ollama.requests[0]
        assert (title_request.path, title_request.json()["model"]) == ("/api/chat", FAST_MODEL)
        assert "authorization" not in title_request.headers  # the key stays with Anthropic
        rows = {(r["provider"], r["model"]): r for r in summary["today"]["byModel"]}
        assert set(rows) == {("anthropic", CHAT_MODEL), ("ollama", FAST_MODEL)}
        assert rows[("anthropic", CHAT_MODEL)]["costUsd"] > 0
        assert rows[("ollama", FAST_MODEL)]["costUsd"] is None  # local: unknown, never $0
        assert rows[("ollama", FAST_MODEL)]["inputTokens"] == 50
        assert models == ["qwen3:4b", "llama3.1:8b"]


async def _ollama_models(wire: Any, ollama: FakeHTTPServer) -> list[str]:
    """models/list {provider: "ollama"}: the fast model's provider lists its own models."""
    ollama.enqueue(
        Reply.json({"models": [{"name": "qwen3:4b"}, {"name": "llama3.1:8b"}]}),
        Reply.json({"capabilities": ["completion", "tools"]}),
        Reply.json({"capabilities": ["completion"]}),
    )
    listed = await wire.result("models/list", {"provider": "ollama", "refresh": True})
    assert listed["source"] == "api"
    return [model["id"] for model in listed["models"]]


async def test_a_bare_fast_model_runs_on_the_chat_provider(tmp_path: Path) -> None:
    settings = BridgeSettings(
        vault=tmp_path, provider="ollama", model="llama3.1:8b", fast_model="qwen3:4b"
    )
    setup = await build_setup(settings)
    fast = setup.route("fast")
    assert fast is not None and setup.chat is not None
    assert (fast.name, fast.model, fast.provider) == ("ollama", "qwen3:4b", setup.chat.provider)
    assert setup.route("deep") == setup.chat  # none configured: the chat model
    await setup.aclose()


async def test_a_model_on_a_provider_without_a_key_is_one_sentence(tmp_path: Path) -> None:
    settings = BridgeSettings(
        vault=tmp_path, provider="ollama", model="llama3.1:8b", deep_model="anthropic:claude-x"
    )
    with pytest.raises(SettingsError) as caught:
        await build_setup(settings)
    message = str(caught.value)
    assert "anthropic" in message and "ANTHROPIC_API_KEY" in message
    assert message.endswith(".") and message.count(". ") == 0


async def test_a_chat_model_on_another_provider_than_the_provider_is_refused(
    tmp_path: Path,
) -> None:
    settings = BridgeSettings(vault=tmp_path, provider="openai", model="ollama:qwen3:4b")
    setup = await build_setup(settings)
    assert setup.chat is None
    assert "ollama" in setup.missing and "openai" in setup.missing


async def test_settings_update_switches_the_fast_model_to_another_provider(
    tmp_path: Path, fake_http: FakeHTTPServer
) -> None:
    """settings/update {models: {fast}, baseUrls} builds a new setup; the old one is closed."""
    async with FakeHTTPServer() as ollama:
        settings = two_providers(tmp_path, fake_http.url, ollama.url)
        settings = settings.model_copy(update={"fast_model": None, "base_urls": {}})
        setup = await build_setup(settings)
        model = {"type": "model", "id": CHAT_MODEL, "created_at": "2026-01-01T00:00:00Z"}
        page = {"data": [model], "has_more": False, "first_id": CHAT_MODEL, "last_id": CHAT_MODEL}
        fake_http.enqueue(Reply.json(page))  # the cheap check of the chat provider's key
        async with running_bridge(tmp_path, providers=setup, settings=settings) as bridge:
            wire = await bridge.wire()
            updated = await wire.result(
                "settings/update",
                {"models": {"fast": "ollama:qwen3:4b"}, "baseUrls": {"ollama": ollama.url}},
            )
            route = bridge.app.route("fast")
        assert updated["models"]["fast"] == "ollama:qwen3:4b"
        assert updated["baseUrls"] == {"anthropic": None, "openai": None, "ollama": ollama.url}
        assert (route.name, route.model, route.provider.base_url) == (
            "ollama",
            FAST_MODEL,
            ollama.url,
        )
        assert bridge.app.providers is not setup
