"""Settings and provider choice: env keys, defaults, and what -32011 tells the user."""

from __future__ import annotations

from pathlib import Path

import pytest

from llm_service.pricing import DEFAULT_MODEL, RECOMMENDED_MODELS
from plugin_bridge.app.config import NO_PROVIDER, BridgeSettings, build_provider, choose_provider


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "AI_BRIDGE_PROVIDER", "AI_BRIDGE_MODEL"):
        monkeypatch.delenv(name, raising=False)


def settings(**values: object) -> BridgeSettings:
    return BridgeSettings(vault=Path("v"), **values)  # type: ignore[arg-type]


def test_no_keys_means_no_provider() -> None:
    """Without keys or --provider chat is unavailable and the message says what to set."""
    choice = choose_provider(settings())
    assert (choice.name, choice.model) == (None, None)
    assert choice.missing == NO_PROVIDER
    assert "ANTHROPIC_API_KEY" in choice.missing
    assert "--provider ollama" in choice.missing


def test_anthropic_key_selects_anthropic_with_the_default_model(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """ANTHROPIC_API_KEY selects anthropic and DEFAULT_MODEL, even when OPENAI_API_KEY is set."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    choice = choose_provider(settings())
    assert (choice.name, choice.model) == ("anthropic", DEFAULT_MODEL)


def test_openai_key_alone_selects_openai(monkeypatch: pytest.MonkeyPatch) -> None:
    """OPENAI_API_KEY alone selects openai with its first recommended model."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    choice = choose_provider(settings())
    assert (choice.name, choice.model) == ("openai", RECOMMENDED_MODELS["openai"][0])


def test_explicit_provider_and_model_win(monkeypatch: pytest.MonkeyPatch) -> None:
    """--provider and --model override the key-based default."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    choice = choose_provider(settings(provider="ollama", model="llama3.1"))
    assert (choice.name, choice.model) == ("ollama", "llama3.1")


@pytest.mark.parametrize(
    ("provider", "needed"), [("anthropic", "ANTHROPIC_API_KEY"), ("openai", "OPENAI_API_KEY")]
)
def test_a_chosen_provider_without_its_key_is_no_provider(provider: str, needed: str) -> None:
    """--provider X without X's key leaves chat off and names the missing variable."""
    choice = choose_provider(settings(provider=provider))
    assert choice.name is None
    assert needed in choice.missing


def test_openai_compatible_servers_need_no_key() -> None:
    """--provider openai with --base-url (LM Studio, vLLM) works without a key."""
    choice = choose_provider(settings(provider="openai", base_url="http://127.0.0.1:1234/v1"))
    assert choice.name == "openai"


def test_keys_never_show_in_reprs(monkeypatch: pytest.MonkeyPatch) -> None:
    """API keys are secrets: repr and str of the settings hide them."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-very-secret")
    loaded = settings()
    assert loaded.anthropic_api_key is not None
    assert loaded.anthropic_api_key.get_secret_value() == "sk-ant-very-secret"
    assert "very-secret" not in repr(loaded)
    assert "very-secret" not in str(loaded)


def test_settings_come_from_prefixed_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """AI_BRIDGE_* variables configure the server; PORT or MODEL alone do not."""
    monkeypatch.setenv("AI_BRIDGE_ALLOWED_ORIGINS", '["app://obsidian.md", "http://x"]')
    monkeypatch.setenv("MODEL", "not-this")
    loaded = settings()
    assert loaded.allowed_origins == ("app://obsidian.md", "http://x")
    assert loaded.model is None


def test_build_provider_makes_the_chosen_class() -> None:
    """build_provider returns the provider instance; no provider for no choice."""
    chosen = settings(provider="ollama")
    provider = build_provider(chosen, choose_provider(chosen))
    assert type(provider).__name__ == "OllamaProvider"
    assert build_provider(settings(), choose_provider(settings())) is None
