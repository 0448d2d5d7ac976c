"""settings/get and settings/update: keys masked and write-only, a change checked, saved to
the settings file and in effect from the next request (the model switched between two turns)."""

from __future__ import annotations

import asyncio
import tomllib
from pathlib import Path

import pytest

from llm_service import OpenAIProvider
from plugin_bridge.app.settings.config import BridgeSettings, config_file
from tests.fakes import openai as fake
from tests.fakes.http import FakeHTTPServer
from tests.helpers.bridge import running_bridge


def _settings(fake_http: FakeHTTPServer) -> BridgeSettings:
    return BridgeSettings(provider="openai", base_url=fake_http.url + "/v1", model="first-model")


async def test_update_switches_the_model_between_two_turns_and_saves_it(
    tmp_path: Path, fake_http: FakeHTTPServer
) -> None:
    """models.chat changes: the next turn of the same conversation uses the new model, the
    file holds it, settings/get shows it; the key stays masked."""
    fake_http.enqueue(fake.text_reply("one"), fake.text_reply("two"))
    provider = OpenAIProvider("sk-test-1234567890", base_url=fake_http.url + "/v1")
    settings = _settings(fake_http)
    async with running_bridge(
        tmp_path, provider=provider, provider_name="openai", model="first-model", settings=settings
    ) as bridge:
        wire = await bridge.wire()
        first = await wire.result("chat/send", {"text": "hi"})
        updated = await wire.result("settings/update", {"models": {"chat": "second-model"}})
        await wire.result("chat/send", {"text": "again", "conversationId": first["conversationId"]})
        got = await wire.result("settings/get")
    assert [r.json()["model"] for r in fake_http.requests] == ["first-model", "second-model"]
    assert updated["models"]["chat"] == got["models"]["chat"] == "second-model"
    assert tomllib.loads(config_file().read_text())["model"] == "second-model"
    assert got["provider"] == "openai" and got["configFile"] == str(config_file())


async def test_a_new_key_is_checked_before_it_is_stored_and_never_read_back(
    tmp_path: Path, fake_http: FakeHTTPServer
) -> None:
    """A refused key is -32010 and changes nothing; an accepted one is saved 0600, masked."""
    fake_http.enqueue(
        fake.error_reply(401, "Incorrect API key provided"), fake.models_reply("gpt-x")
    )
    async with running_bridge(tmp_path, settings=_settings(fake_http)) as bridge:
        wire = await bridge.wire()
        refused = await wire.error("settings/update", {"openaiApiKey": "sk-wrong-000000000"})
        assert refused["code"] == -32010 and refused["data"]["code"] == "auth_error"
        assert not config_file().exists()
        accepted = await wire.result("settings/update", {"openaiApiKey": "sk-right-123456789"})
    assert accepted["keys"]["openai"] == "sk-r…89"
    assert "sk-right-123456789" not in str(accepted)
    assert config_file().stat().st_mode & 0o777 == 0o600
    assert tomllib.loads(config_file().read_text())["openai_api_key"] == "sk-right-123456789"


@pytest.mark.parametrize(
    ("params", "field"),
    [({"dailyBudgetUsd": -1}, "dailyBudgetUsd"), ({"models": {"cheap": "x"}}, "cheap")],
)
async def test_invalid_updates_are_32602_naming_the_field(
    tmp_path: Path, params: dict[str, object], field: str
) -> None:
    """Validation happens before anything is saved."""
    async with running_bridge(tmp_path) as bridge:
        error = await (await bridge.wire()).error("settings/update", params)
    assert error["code"] == -32602 and field in error["message"]
    assert not config_file().exists()


async def test_the_fast_model_titles_a_new_conversation_and_deep_turns_use_the_deep_model(
    tmp_path: Path,
) -> None:
    """After the first turn the fast model names the conversation (in the background, its cost
    recorded); purpose deep runs that turn on the deep model."""
    from llm_service import ScriptedProvider
    from tests.helpers.bridge import WAIT, wait_for

    provider = ScriptedProvider()
    provider.enqueue_text("Sourdough needs daily feeding.")
    provider.enqueue_text('"Keeping a sourdough starter"')
    provider.enqueue_text("A deeper answer.")
    settings = BridgeSettings(model="chat-m", fast_model="fast-m", deep_model="deep-m")
    async with running_bridge(
        tmp_path, provider=provider, model="chat-m", settings=settings
    ) as bridge:
        wire = await bridge.wire()
        first = await wire.result("chat/send", {"text": "How do I keep my starter alive?"})
        await wait_for(lambda: len(provider.requests) == 2)
        await wire.result(
            "chat/send",
            {
                "text": "And in winter?",
                "conversationId": first["conversationId"],
                "purpose": "deep",
            },
        )
        store = bridge.app.conversations.store
        async with asyncio.timeout(WAIT):  # the title is stored in the background
            while True:
                row = await store.execute(lambda s: s.get(first["conversationId"]))
                if row is not None and row.title.startswith("Keeping"):
                    break
                await asyncio.sleep(0.01)
        listed = (await wire.result("conversations/list"))["conversations"]
        summary = await wire.result("usage/summary")
    assert [r.model for r in provider.requests] == ["chat-m", "fast-m", "deep-m"]
    assert listed[0]["title"] == "Keeping a sourdough starter"
    assert {row["model"] for row in summary["today"]["byModel"]} == {"chat-m", "fast-m", "deep-m"}


async def test_a_turn_named_model_answers_that_turn_only_and_the_result_names_it(
    tmp_path: Path,
) -> None:
    """chat/send {model} (the panel's switcher) runs that turn on the model named, the
    settings unchanged; the result names the model and provider that answered."""
    from llm_service import ScriptedProvider

    provider = ScriptedProvider()
    provider.enqueue_text("From the small one.")
    provider.enqueue_text("From the default.")
    async with running_bridge(tmp_path, provider=provider, model="chat-m") as bridge:
        wire = await bridge.wire()
        switched = await wire.result("chat/send", {"text": "hi", "model": "small-m"})
        default = await wire.result(
            "chat/send", {"text": "again", "conversationId": switched["conversationId"]}
        )
    assert [r.model for r in provider.requests] == ["small-m", "chat-m"]
    assert (switched["model"], default["model"]) == ("small-m", "chat-m")


async def test_updating_the_exclusions_changes_search_at_once_and_is_saved(tmp_path: Path) -> None:
    """settings/update {exclude}: search drops the folder after the incremental scan; the file
    keeps the list; settings/get shows it."""
    from tests.helpers.bridge import wait_for

    async with running_bridge(tmp_path, settings=BridgeSettings()) as bridge:
        wire = await bridge.wire()
        before = await wire.result("vault/search", {"query": "path:Journal"})
        assert before["results"]
        updated = await wire.result("settings/update", {"exclude": ["Journal"]})
        await bridge.vault.index.wait_until_idle(15)
        await wait_for(lambda: not bridge.vault.index.search("path:Journal").hits)
        listed = await wire.result("tools/execute", {"calls": [{"name": "list_notes"}]})
    assert updated["exclude"] == ["Journal"]
    assert "Journal" not in listed["results"][0]["content"]
    assert tomllib.loads(config_file().read_text())["exclude"] == ["Journal"]


async def test_answer_settings_apply_to_the_next_turn_and_are_saved(
    tmp_path: Path, fake_http: FakeHTTPServer
) -> None:
    """maxTokens and temperature set over the wire reach the provider's next request."""
    fake_http.enqueue(fake.text_reply("one"), fake.text_reply("two"))
    provider = OpenAIProvider("sk-test-1234567890", base_url=fake_http.url + "/v1")
    async with running_bridge(
        tmp_path,
        provider=provider,
        provider_name="openai",
        model="first-model",
        settings=_settings(fake_http),
    ) as bridge:
        wire = await bridge.wire()
        await wire.result("chat/send", {"text": "hi"})
        updated = await wire.result(
            "settings/update", {"maxTokens": 300, "temperature": 0.3, "timeout": 20}
        )
        await wire.result("chat/send", {"text": "again"})
    first, second = (r.json() for r in fake_http.requests)
    assert first["max_tokens"] == 4096 and "temperature" not in first
    assert second["max_tokens"] == 300 and second["temperature"] == 0.3
    assert (updated["maxTokens"], updated["temperature"], updated["timeout"]) == (300, 0.3, 20)
    saved = tomllib.loads(config_file().read_text())
    assert (saved["max_tokens"], saved["temperature"], saved["timeout"]) == (300, 0.3, 20)
