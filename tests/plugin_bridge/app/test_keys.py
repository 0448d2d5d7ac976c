"""Keys go only where the user sent them: a capture server on 127.0.0.1 set as a base URL (or
an embedder base URL) over the wire receives no key, in the cheap check or after it; a key
sent together with a base URL is bound to it; only http(s) URLs are accepted."""

from __future__ import annotations

from pathlib import Path

import pytest

from llm_service.profiles import KEYED, PROVIDER_NAMES
from plugin_bridge.app.settings.config import BridgeSettings, read_config
from plugin_bridge.app.settings.keys import may_send, origin, rebound
from plugin_bridge.wire.models import BaseUrls, BaseUrlsUpdate, KeysModel, SettingsUpdateParams
from tests.fakes import embeddings
from tests.fakes import openai as fake
from tests.fakes.http import FakeHTTPServer, Recorded
from tests.helpers.bridge import running_bridge, wait_for

SECRET = "sk-secret-0123456789abcdef"


def _keys_seen(requests: list[Recorded]) -> list[str]:
    return [
        value
        for r in requests
        for name, value in r.headers.items()
        if name in ("authorization", "x-api-key") or SECRET in value
    ]


async def test_a_new_base_url_gets_no_key_and_the_key_is_dropped(
    tmp_path: Path, fake_http: FakeHTTPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """OPENAI_API_KEY is bound to api.openai.com: settings/update {baseUrl: capture} makes the
    cheap check and the next chat go there without it, and the stored key is dropped."""
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    fake_http.enqueue(fake.models_reply("local-model"), fake.text_reply("hello"))
    settings = BridgeSettings(provider="openai", model="gpt-x")
    async with running_bridge(tmp_path, settings=settings) as bridge:
        wire = await bridge.wire()
        updated = await wire.result("settings/update", {"baseUrl": fake_http.url + "/v1"})
        await wire.result("chat/send", {"text": "hi"})
    assert [r.path for r in fake_http.requests] == ["/v1/models", "/v1/chat/completions"]
    assert _keys_seen(fake_http.requests) == []
    assert updated["keys"]["openai"] is None
    assert "openai_api_key" not in read_config()


async def test_an_embedder_base_url_gets_no_key(tmp_path: Path, fake_http: FakeHTTPServer) -> None:
    """{embedder: openai:…, embedderBaseUrl: capture}: the embeddings go there without the key
    bound to api.openai.com."""
    fake_http.enqueue(*[embeddings.openai_reply([[1.0, 0.0]] * 256)] * 3)
    settings = BridgeSettings(openai_api_key=SECRET)
    async with running_bridge(tmp_path, settings=settings) as bridge:
        wire = await bridge.wire()
        await wire.result(
            "settings/update",
            {"embedder": "openai:nomic-embed-text", "embedderBaseUrl": fake_http.url + "/v1"},
        )
        await wait_for(lambda: len(fake_http.requests) > 0)
    assert {r.path for r in fake_http.requests} == {"/v1/embeddings"}
    assert _keys_seen(fake_http.requests) == []


async def test_a_key_sent_with_its_base_url_goes_there_and_nowhere_else(
    tmp_path: Path, fake_http: FakeHTTPServer
) -> None:
    """Key and base URL in one update: bound to that server, which gets it; then a base URL
    of another server (without a key) gets none, and the key is dropped."""
    fake_http.enqueue(fake.models_reply("m"))
    async with (
        FakeHTTPServer() as other,
        running_bridge(tmp_path, settings=BridgeSettings(provider="openai", model="m")) as bridge,
    ):
        other.enqueue(fake.models_reply("m"))
        wire = await bridge.wire()
        await wire.result(
            "settings/update", {"baseUrl": fake_http.url + "/v1", "openaiApiKey": SECRET}
        )
        moved = await wire.result("settings/update", {"baseUrl": other.url + "/v1"})
        assert _keys_seen(other.requests) == []
    assert fake_http.requests[0].headers["authorization"] == f"Bearer {SECRET}"
    assert moved["keys"]["openai"] is None
    assert "openai_api_key" not in read_config() and "openai_api_key_host" not in read_config()


async def test_a_per_provider_base_url_gets_no_key_and_drops_it(
    tmp_path: Path, fake_http: FakeHTTPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """baseUrls.openai set to another origin: the same rule as baseUrl."""
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    fake_http.enqueue(*[fake.models_reply("local-model")] * 3)
    settings = BridgeSettings(provider="openai", model="gpt-x")
    async with running_bridge(tmp_path, settings=settings) as bridge:
        wire = await bridge.wire()
        updated = await wire.result(
            "settings/update", {"baseUrls": {"openai": fake_http.url + "/v1"}}
        )
    assert _keys_seen(fake_http.requests) == []
    assert updated["keys"]["openai"] is None


@pytest.mark.parametrize("field", ["baseUrl", "embedderBaseUrl"])
@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://127.0.0.1/v1", "127.0.0.1:1234"])
async def test_only_http_urls_are_accepted(tmp_path: Path, field: str, url: str) -> None:
    async with running_bridge(tmp_path, settings=BridgeSettings()) as bridge:
        error = await (await bridge.wire()).error("settings/update", {field: url})
    assert error["code"] == -32602 and f"'{field}'" in error["message"]
    assert read_config() == {}


def test_the_binding_rule() -> None:
    """Origins compare scheme, host and port (default ports written out); a key sent binds to
    the base URL sent with it; a base URL of another origin drops the chat provider's key."""
    assert origin("HTTPS://API.openai.com/v1") == "https://api.openai.com:443"
    assert may_send("openai", None, "https://api.openai.com:443/v1")
    assert not may_send("openai", None, "http://api.openai.com/v1")
    assert not may_send("openai", "http://127.0.0.1:1234", "http://127.0.0.1:1235/v1")
    current = BridgeSettings.model_construct(
        openai_api_key_host=None, anthropic_api_key_host=None, base_urls={}
    )
    assert rebound(current, {"base_url": "http://127.0.0.1:9/v1"}, "openai") == {
        "openai_api_key": None,
        "openai_api_key_host": None,
    }
    assert rebound(current, {"base_url": "http://h:9/v1", "openai_api_key": "k"}, "openai") == {
        "openai_api_key_host": "http://h:9"
    }
    assert rebound(current, {"anthropic_api_key": "k"}, "openai") == {
        "anthropic_api_key_host": None
    }
    assert rebound(current, {"embedder_base_url": "http://h:9/v1"}, "openai") == {}
    assert rebound(current, {"base_urls": {"openai": "http://h:9/v1"}}, "anthropic") == {
        "openai_api_key": None,
        "openai_api_key_host": None,
    }
    sent_together = {"base_urls": {"openai": "http://h:9/v1"}, "openai_api_key": "k"}
    assert rebound(current, sent_together, None) == {"openai_api_key_host": "http://h:9"}


async def test_per_provider_base_urls_are_http_only(tmp_path: Path) -> None:
    async with running_bridge(tmp_path, settings=BridgeSettings()) as bridge:
        error = await (await bridge.wire()).error(
            "settings/update", {"baseUrls": {"openai": "file:///etc/passwd"}}
        )
    assert error["code"] == -32602 and "'baseUrls" in error["message"]
    assert read_config() == {}


def test_every_profile_gets_its_settings_and_wire_fields(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fields spelled per provider match the profiles: a base URL per provider, a key
    (read from the profile's variable too) and its bound origin per keyed one, the masked key
    in settings/get and NAMEApiKey in settings/update; nothing else is accepted."""
    assert set(BaseUrls.model_fields) == set(BaseUrlsUpdate.model_fields) == set(PROVIDER_NAMES)
    assert set(KeysModel.model_fields) == {profile.name for profile in KEYED}
    for profile in KEYED:
        assert profile.key_variable is not None
        monkeypatch.setenv(profile.key_variable, f"{SECRET}-{profile.name}")
        params = SettingsUpdateParams.model_validate({f"{profile.name}ApiKey": "k"})
        assert getattr(params, f"{profile.name}_api_key") == "k"
    settings = BridgeSettings(**{f"{p.name}_api_key_host": "http://127.0.0.1:9" for p in KEYED})
    for profile in KEYED:
        key = getattr(settings, f"{profile.name}_api_key")
        assert key.get_secret_value() == f"{SECRET}-{profile.name}"
        assert getattr(settings, f"{profile.name}_api_key_host") == "http://127.0.0.1:9"
    with pytest.raises(ValueError, match="Extra inputs are not permitted"):
        SettingsUpdateParams.model_validate({"giveAKey": "k"})
    with pytest.raises(ValueError, match="http"):
        BridgeSettings(**{f"{KEYED[0].name}_api_key_host": "ftp://x"})
