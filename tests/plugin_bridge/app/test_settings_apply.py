"""Settings applied as one transaction (``BridgeApp.apply``), keys given at launch bound to the
base URL given beside them, and messages about keys that name where the key came from.

Providers are the real SDKs against the fakes of tests/fakes."""

from __future__ import annotations

import importlib
import tomllib
from pathlib import Path
from typing import Any

import pytest

from llm_service import OpenAIProvider
from plugin_bridge.app import live_settings
from plugin_bridge.app.settings.config import (
    BridgeSettings,
    choose_provider,
    config_file,
    load_settings,
    save_config,
)
from plugin_bridge.app.settings.keys import origin
from plugin_bridge.app.settings.providers import ProviderSetup, build_setup
from tests.fakes import anthropic as fake_anthropic
from tests.fakes import openai as fake
from tests.fakes.http import FakeHTTPServer, Reply
from tests.helpers.bridge import running_bridge

KEY = "sk-test-0123456789abcdef"


@pytest.fixture
def no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (
        "ANTHROPIC_API_KEY",
        "OPENAI_API_KEY",
        "ANTHROPIC_BASE_URL",
        "OPENAI_BASE_URL",
        "AI_BRIDGE_PROVIDER",
        "AI_BRIDGE_MODEL",
        "AI_BRIDGE_BASE_URL",
    ):
        monkeypatch.delenv(name, raising=False)


def _local(fake_http: FakeHTTPServer, model: str = "first-model") -> BridgeSettings:
    return BridgeSettings(provider="openai", base_url=fake_http.url + "/v1", model=model)


@pytest.mark.parametrize(
    ("step", "says"),
    [("write", "settings file cannot be written"), ("embedder", "model2vec embedder")],
)
async def test_a_later_failure_changes_nothing_and_closes_the_new_providers(
    tmp_path: Path,
    fake_http: FakeHTTPServer,
    monkeypatch: pytest.MonkeyPatch,
    no_keys: None,
    step: str,
    says: str,
) -> None:
    """A new key is checked (a new ProviderSetup is built), then a later step fails (the
    settings file cannot be written; the embedder sent with it cannot work): -32602 saying
    so, the settings and providers in use stay, the file too, and the new setup's client is
    closed."""
    built: list[ProviderSetup] = []

    async def spy(settings: BridgeSettings, *, check_key: bool = False) -> ProviderSetup:
        built.append(await build_setup(settings, check_key=check_key))
        return built[-1]

    monkeypatch.setattr(live_settings, "build_setup", spy)
    params: dict[str, Any] = {"openaiApiKey": KEY}
    if step == "write":
        blocker = tmp_path / "a-file"
        blocker.write_text("not a folder")
        monkeypatch.setenv("AI_BRIDGE_CONFIG", str(blocker / "config.toml"))
    else:
        params["embedder"] = f"model2vec:{tmp_path / 'no-model-here'}"
    fake_http.enqueue(fake.models_reply("first-model"))
    settings = _local(fake_http)
    async with running_bridge(tmp_path, settings=settings) as bridge:
        before = bridge.app.providers
        error = await (await bridge.wire()).error("settings/update", params)
        assert error["code"] == -32602 and says in error["message"]
        assert bridge.app.settings is settings and bridge.app.providers is before
    assert len(built) == 1 and built[0] is not before
    chat = built[0].chat
    assert chat is not None and isinstance(chat.provider, OpenAIProvider)
    assert chat.provider.connection._client is None  # closed after its check
    assert not config_file().exists()


async def test_apply_swaps_everything_at_once_and_saves_only_what_it_is_told(
    tmp_path: Path, fake_http: FakeHTTPServer, no_keys: None
) -> None:
    """apply(settings, save=()) (settings read from the file) puts them in effect without
    writing; the default saves the fields that changed, durably and 0600."""
    settings = _local(fake_http)
    async with running_bridge(tmp_path, settings=settings) as bridge:
        app = bridge.app
        old = app.providers
        newer = settings.model_copy(update={"model": "second-model", "daily_budget_usd": 2.0})
        await app.apply(newer, save=())
        assert not config_file().exists()
        assert app.settings is newer and app.providers is not old
        assert app.providers.model == "second-model" and app.spending.budgets.daily_usd == 2.0
        await app.apply(newer.model_copy(update={"max_tokens": 100}))
    assert tomllib.loads(config_file().read_text()) == {"max_tokens": 100}
    assert config_file().stat().st_mode & 0o777 == 0o600


async def test_anthropic_base_url_and_key_in_one_update_are_accepted(
    tmp_path: Path, fake_http: FakeHTTPServer, no_keys: None
) -> None:
    """{provider: anthropic, baseUrl, anthropicApiKey} in one call: the key is bound to that
    URL, checked there, saved, and the next chat goes there with it (as for OpenAI)."""
    importlib.import_module("anthropic")  # before the waits start: slow on a loaded machine
    page = {"data": [], "has_more": False, "first_id": None, "last_id": None}
    fake_http.enqueue(Reply.json(page), fake_anthropic.text_reply("Hello from the gateway."))
    async with running_bridge(tmp_path, settings=BridgeSettings()) as bridge:
        wire = await bridge.wire()
        updated = await wire.result(
            "settings/update",
            {"provider": "anthropic", "baseUrl": fake_http.url, "anthropicApiKey": KEY},
        )
        reply = await wire.result("chat/send", {"text": "hi"})
    assert updated["provider"] == "anthropic" and reply["text"] == "Hello from the gateway."
    headers = [r.headers for r in fake_http.requests]
    sent = [h.get("x-api-key") or h.get("authorization") or "" for h in headers]
    assert [KEY in value for value in sent] == [True, True]
    saved = tomllib.loads(config_file().read_text())
    assert saved["anthropic_api_key_host"] == origin(fake_http.url)


async def test_a_base_url_without_its_key_over_the_wire_asks_for_the_key_again(
    tmp_path: Path, fake_http: FakeHTTPServer, no_keys: None
) -> None:
    """Only over the wire must the key come with the URL: the message says so."""
    settings = BridgeSettings(provider="anthropic", anthropic_api_key=KEY)  # type: ignore[arg-type]
    async with running_bridge(tmp_path, settings=settings) as bridge:
        error = await (await bridge.wire()).error("settings/update", {"baseUrl": fake_http.url})
    assert error["code"] == -32602
    assert "send it again together with that base URL" in error["message"]
    assert fake_http.requests == [] and not config_file().exists()


@pytest.mark.parametrize("source", ["file", "env"])
async def test_a_refused_key_names_where_it_came_from(
    tmp_path: Path,
    fake_http: FakeHTTPServer,
    monkeypatch: pytest.MonkeyPatch,
    no_keys: None,
    source: str,
) -> None:
    """A 401 in chat: a key saved by setup says to run setup or open the setup card; a key
    from OPENAI_API_KEY says to export a valid one (never the other place)."""
    url = fake_http.url + "/v1"
    if source == "file":
        save_config({"openai_api_key": KEY, "openai_api_key_host": origin(url)})
    else:
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
    settings = load_settings(provider="openai", base_url=url, model="gpt-x")
    setup = await build_setup(settings)
    fake_http.enqueue(fake.error_reply(401, "Incorrect API key provided"))
    async with running_bridge(tmp_path, providers=setup, settings=settings) as bridge:
        error = await (await bridge.wire()).error("chat/send", {"text": "hi"})
    message = error["message"]
    assert fake_http.requests[0].headers["authorization"] == f"Bearer {KEY}"
    if source == "file":
        assert "run `obsidian-ai-bridge setup` or open the setup card" in message
        assert "OPENAI_API_KEY" not in message
    else:
        assert "the key comes from OPENAI_API_KEY: export a valid one" in message
        assert "setup" not in message


def test_an_environment_key_beside_a_launch_base_url_is_bound_to_it(
    monkeypatch: pytest.MonkeyPatch, no_keys: None
) -> None:
    """--base-url (a flag) or ANTHROPIC_BASE_URL beside ANTHROPIC_API_KEY: the key goes there
    for this run; a base URL from the settings file never gets the environment's key."""
    gateway = "http://127.0.0.1:9/anthropic"
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    flagged = load_settings(provider="anthropic", base_url=gateway)
    assert flagged.anthropic_api_key_host == origin(gateway)
    assert choose_provider(flagged).name == "anthropic"

    monkeypatch.setenv("ANTHROPIC_BASE_URL", gateway)
    from_sdk_variable = load_settings(provider="anthropic")
    assert from_sdk_variable.base_urls == {"anthropic": gateway}
    assert choose_provider(from_sdk_variable).name == "anthropic"
    assert not config_file().exists()  # nothing of the launch is saved

    monkeypatch.delenv("ANTHROPIC_BASE_URL")
    save_config({"provider": "anthropic", "base_url": gateway})
    from_file = choose_provider(load_settings())
    assert from_file.name is None
    assert "the Anthropic key from ANTHROPIC_API_KEY is for https://api.anthropic.com" in (
        from_file.missing
    )
    assert f"not for {gateway} from the settings file" in from_file.missing


def test_a_key_from_the_file_keeps_its_own_binding(
    monkeypatch: pytest.MonkeyPatch, no_keys: None
) -> None:
    """A key saved by setup is not moved by a launch base URL: it stays with its host."""
    save_config({"anthropic_api_key": KEY})
    settings = load_settings(provider="anthropic", base_url="http://127.0.0.1:9")
    assert settings.anthropic_api_key_host is None
    missing = choose_provider(settings).missing
    assert "the Anthropic key from the settings file" in missing
    assert "from --base-url" in missing and "export ANTHROPIC_API_KEY" in missing


@pytest.mark.parametrize(
    ("flags", "file", "says"),
    [
        ({"provider": "anthropic"}, {}, "Anthropic (chosen by --provider anthropic)"),
        ({}, {"provider": "anthropic"}, "Anthropic (chosen by the settings file)"),
        ({}, {}, "run `obsidian-ai-bridge setup`, or export ANTHROPIC_API_KEY"),
    ],
)
def test_no_provider_names_setup_and_where_the_choice_came_from(
    no_keys: None, flags: dict[str, Any], file: dict[str, Any], says: str
) -> None:
    if file:
        save_config(file)
    missing = choose_provider(load_settings(**flags)).missing
    assert says in missing and "setup" in missing


async def test_the_settings_tabs_model_list_marks_embedding_models(
    tmp_path: Path, fake_http: FakeHTTPServer
) -> None:
    """models/list on Ollama: a model whose capabilities say embedding (bge-m3) and one named
    so (nomic-embed-text) are marked ``embedding`` (the chat lists leave them out, the
    embedder list offers them); chat models are not."""
    settings = BridgeSettings(provider="ollama", base_url=fake_http.url, model="qwen3:4b")
    fake_http.enqueue(
        Reply.json({"models": [{"name": n} for n in ("qwen3:4b", "bge-m3", "nomic-embed-text")]}),
        Reply.json({"capabilities": ["completion", "tools"]}),
        Reply.json({"capabilities": ["embedding"]}),
        Reply.json({"capabilities": ["completion"]}),
    )
    async with running_bridge(
        tmp_path, providers=await build_setup(settings), settings=settings
    ) as bridge:
        listed = await (await bridge.wire()).result("models/list", {"refresh": True})
    marked = {model["id"]: model["embedding"] for model in listed["models"]}
    assert marked == {"qwen3:4b": False, "bge-m3": True, "nomic-embed-text": True}


def test_a_key_host_variable_is_the_users_binding(
    monkeypatch: pytest.MonkeyPatch, no_keys: None
) -> None:
    """AI_BRIDGE_ANTHROPIC_API_KEY_HOST beside the key: kept, whatever else the launch gives."""
    gateway = "http://127.0.0.1:9"
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("AI_BRIDGE_ANTHROPIC_API_KEY_HOST", gateway)
    settings = load_settings(provider="anthropic", base_urls={"anthropic": gateway + "/v1"})
    assert settings.anthropic_api_key_host == gateway
    assert choose_provider(settings).name == "anthropic"
