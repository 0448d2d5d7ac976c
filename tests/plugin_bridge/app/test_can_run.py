"""Whether a provider can run is one answer, from its profile row: the settings declare one key
and one bound origin per keyed provider (read through ``key_of`` / ``key_host_of``), and
:func:`can_run` applies the profile's key rule to the key that may go to an address. Choosing
the chat provider, building any provider, routing a client's model id and checking the embedder
all ask it, so they never disagree."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from pydantic import AliasChoices, SecretStr

from llm_service.profiles import KEYED, PROFILES, PROVIDER_NAMES, ProviderName
from plugin_bridge.app.model_routes import routable
from plugin_bridge.app.settings.config import (
    BridgeSettings,
    build_embedder,
    choose_provider,
    embedder_problem,
)
from plugin_bridge.app.settings.keys import HOST_FIELDS, KEY_FIELDS, can_run
from plugin_bridge.app.settings.providers import build_named

ROOT = Path(__file__).resolve().parents[3]
GATEWAY = "http://127.0.0.1:4000"
LM_STUDIO = "http://127.0.0.1:1234/v1"


def settings(**values: object) -> BridgeSettings:
    return BridgeSettings(**values)  # type: ignore[arg-type]


def test_the_settings_declare_one_key_and_one_origin_per_keyed_provider() -> None:
    """``NAME_api_key`` (also read from the profile's key variable) and ``NAME_api_key_host``
    for exactly the keyed profiles: a provider added to ``KEYED`` fails here until its two
    fields are declared, and a field left behind fails too."""
    keys = {name for name in BridgeSettings.model_fields if name.endswith("_api_key")}
    hosts = {name for name in BridgeSettings.model_fields if name.endswith("_api_key_host")}
    assert keys == {f"{p.name}_api_key" for p in KEYED} == set(KEY_FIELDS.values())
    assert hosts == {f"{p.name}_api_key_host" for p in KEYED} == set(HOST_FIELDS.values())
    for profile in KEYED:
        field = BridgeSettings.model_fields[KEY_FIELDS[profile.name]]
        assert field.annotation == SecretStr | None
        alias = field.validation_alias
        assert isinstance(alias, AliasChoices)
        assert alias.choices == [KEY_FIELDS[profile.name], profile.key_variable]


def test_key_of_and_key_host_of_read_each_providers_own_fields() -> None:
    given = {
        **{KEY_FIELDS[p.name]: f"sk-{p.name}-0123456789" for p in KEYED},
        **{HOST_FIELDS[p.name]: f"http://127.0.0.1:{9000 + i}" for i, p in enumerate(KEYED)},
    }
    read = settings(**given)
    for i, profile in enumerate(KEYED):
        key = read.key_of(profile.name)
        assert key is not None and key.get_secret_value() == f"sk-{profile.name}-0123456789"
        assert read.key_host_of(profile.name) == f"http://127.0.0.1:{9000 + i}"
    for name in PROVIDER_NAMES:
        if PROFILES[name].key_variable is None:
            assert (read.key_of(name), read.key_host_of(name)) == (None, None)


def test_no_module_reads_a_key_by_its_field_name() -> None:
    """Keys are read through ``key_of`` / ``key_host_of``, never ``getattr(settings,
    KEY_FIELDS[...])``, and the settings class is declared, not generated."""
    pattern = re.compile(r"getattr\([^)]*(KEY_FIELDS|HOST_FIELDS|_api_key)")
    for path in sorted((ROOT / "plugin_bridge").rglob("*.py")):
        assert not pattern.search(path.read_text(encoding="utf-8")), path
    config = ast.parse((ROOT / "plugin_bridge/app/settings/config.py").read_text("utf-8"))
    assert "BridgeSettings" in {node.name for node in config.body if isinstance(node, ast.ClassDef)}


@pytest.mark.parametrize(
    ("name", "values", "url", "runs"),
    [
        ("anthropic", {}, None, False),
        ("anthropic", {"anthropic_api_key": "sk-ant-0123456789"}, None, True),
        # a gateway passes the key on: the key bound to the default host does not go there
        ("anthropic", {"anthropic_api_key": "sk-ant-0123456789"}, GATEWAY, False),
        (
            "anthropic",
            {"anthropic_api_key": "sk-ant-0123456789", "anthropic_api_key_host": GATEWAY},
            GATEWAY,
            True,
        ),
        ("openai", {}, None, False),
        ("openai", {}, LM_STUDIO, True),  # a compatible server needs no key
        ("openai", {"openai_api_key": "  "}, None, False),  # a blank key is none
        ("ollama", {}, None, True),  # a local runtime takes no key
    ],
)
def test_can_run_applies_the_profiles_key_rule_to_the_key_for_that_address(
    name: ProviderName, values: dict[str, object], url: str | None, runs: bool
) -> None:
    assert can_run(settings(**values), name, url) is runs


@pytest.mark.parametrize(
    "values",
    [
        {"provider": "anthropic"},
        {"provider": "anthropic", "anthropic_api_key": "sk-ant-0123456789"},
        {"provider": "anthropic", "anthropic_api_key": "sk-ant-0123456789", "base_url": GATEWAY},
        {"provider": "openai", "model": "m"},
        {"provider": "openai", "model": "m", "base_url": LM_STUDIO},
        {"provider": "ollama"},
    ],
)
def test_choosing_and_building_the_chat_provider_agree_with_can_run(
    values: dict[str, object],
) -> None:
    chosen = settings(**values)
    name = chosen.provider
    assert name is not None
    url = chosen.base_url or PROFILES[name].default_base_url
    runs = can_run(chosen, name, url)
    assert (choose_provider(chosen).name is not None) is runs
    assert (build_named(chosen, name, chat=name) is not None) is runs


def test_a_provider_besides_the_chat_one_is_routable_where_it_can_run() -> None:
    """Client model ids reach another provider when it can run at its address; a local runtime
    only once its address is given (its default one is not tried unasked)."""
    chat_only = settings(provider="ollama")
    assert [routable(chat_only, name) for name in ("anthropic", "openai")] == [False, False]
    keyed = settings(anthropic_api_key="sk-ant-0123456789", openai_api_key="sk-0123456789")
    assert routable(keyed, "anthropic") and routable(keyed, "openai")
    assert not routable(keyed, "ollama")
    assert routable(settings(base_urls={"ollama": "http://127.0.0.1:11434"}), "ollama")
    assert routable(settings(ollama_host="127.0.0.1:7"), "ollama")
    # LM Studio as OpenAI's base URL needs no key, as it does for a fast model there
    assert routable(settings(base_urls={"openai": LM_STUDIO}), "openai")
    # a key bound to a gateway does not go to Anthropic's own API
    bound = settings(anthropic_api_key="sk-ant-0123456789", anthropic_api_key_host=GATEWAY)
    assert not routable(bound, "anthropic")
    assert routable(bound.model_copy(update={"base_urls": {"anthropic": GATEWAY}}), "anthropic")


def test_the_embedder_check_asks_the_same_rule() -> None:
    """An OpenAI embedder at OpenAI's API needs the key; at a compatible server it does not;
    an Ollama one never does."""
    keyless = settings(embedder="openai:text-embedding-3-small")
    problem = embedder_problem(keyless, build_embedder(keyless))
    assert problem is not None and "needs OPENAI_API_KEY" in problem
    local = settings(embedder="openai:e", embedder_base_url=LM_STUDIO)
    assert embedder_problem(local, build_embedder(local)) is None
    keyed = settings(embedder="openai:e", openai_api_key="sk-0123456789")
    assert embedder_problem(keyed, build_embedder(keyed)) is None
    ollama = settings(embedder="ollama:bge-m3")
    assert embedder_problem(ollama, build_embedder(ollama)) is None
