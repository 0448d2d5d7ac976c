"""Settings and provider choice: env keys, defaults, and what -32011 tells the user."""

from __future__ import annotations

from pathlib import Path

import pytest

from llm_service.pricing import DEFAULT_MODEL, RECOMMENDED_MODELS
from plugin_bridge.app.settings.config import (
    NO_PROVIDER,
    BridgeSettings,
    choose_provider,
)
from plugin_bridge.app.settings.providers import build_provider


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


def test_flags_beat_the_environment_which_beats_the_file_which_beats_defaults(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same keys from every source: the first that has one wins."""
    from plugin_bridge.app.settings.config import load_settings

    config = tmp_path / "config.toml"
    config.write_text(
        'provider = "ollama"\nmodel = "from-file"\nbase_url = "http://127.0.0.1:1"\n'
        "daily_budget_usd = 3.0\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("AI_BRIDGE_CONFIG", str(config))
    monkeypatch.setenv("AI_BRIDGE_MODEL", "from-env")
    monkeypatch.setenv("AI_BRIDGE_DAILY_BUDGET_USD", "2.0")
    settings = load_settings(daily_budget_usd=1.0)
    assert settings.provider == "ollama"  # file
    assert settings.model == "from-env"  # env over file
    assert settings.daily_budget_usd == 1.0  # flag over env
    assert settings.monthly_budget_usd is None  # default


@pytest.mark.parametrize(
    ("content", "key"),
    [("daily_budget_usd = -5\n", "daily_budget_usd"), ('provder = "ollama"\n', "provder")],
)
def test_an_invalid_setting_is_one_sentence_naming_the_key_and_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, content: str, key: str
) -> None:
    """A bad value or an unknown key in the file: SettingsError naming both."""
    from plugin_bridge.app.settings.config import SettingsError, load_settings

    config = tmp_path / "config.toml"
    config.write_text(content, encoding="utf-8")
    monkeypatch.setenv("AI_BRIDGE_CONFIG", str(config))
    with pytest.raises(SettingsError) as caught:
        load_settings()
    message = str(caught.value)
    assert f"'{key}'" in message and str(config) in message and "\n" not in message


async def test_config_commands_show_the_path_and_mask_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """config path prints the file; config show prints the effective settings, keys masked;
    an invalid file makes serve and config show exit 2."""
    from tests.helpers.serve import cli_env, run_cli

    config = tmp_path / "config.toml"
    config.write_text('model = "claude-haiku-5-5"\n', encoding="utf-8")
    env = {"AI_BRIDGE_CONFIG": str(config), "ANTHROPIC_API_KEY": "sk-ant-secret-value-1234"}
    monkeypatch.setattr("tests.helpers.serve.cli_env", lambda tmp: {**cli_env(tmp), **env})
    code, out, _ = await run_cli(tmp_path, "config", "path")
    assert (code, out.strip()) == (0, str(config))
    code, out, _ = await run_cli(tmp_path, "config", "show")
    assert code == 0 and '"model": "claude-haiku-5-5"' in out
    assert "secret-value" not in out and '"anthropic_api_key": "sk-a' in out
    config.write_text("daily_budget_usd = 'lots'\n", encoding="utf-8")
    code, _, err = await run_cli(tmp_path, "config", "show")
    assert code == 2 and "'daily_budget_usd'" in err and str(config) in err


def test_provider_settings_reach_the_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    """timeout and OLLAMA_HOST (bare host:port too) configure the provider that is built."""
    monkeypatch.setenv("OLLAMA_HOST", "10.0.0.5:11500")
    chosen = settings(provider="ollama", timeout=7.5)
    provider = build_provider(chosen, choose_provider(chosen))
    assert provider is not None
    assert provider.timeout == 7.5 and provider.base_url == "http://10.0.0.5:11500"
    explicit = settings(provider="ollama", base_url="http://127.0.0.1:9")
    assert build_provider(explicit, choose_provider(explicit)).base_url == "http://127.0.0.1:9"  # type: ignore[union-attr]


def test_out_of_range_answer_settings_are_refused() -> None:
    """maxTokens below 1 and a temperature above 2 are validation errors, not silent clamps."""
    with pytest.raises(ValueError, match="max_tokens"):
        settings(max_tokens=0)
    with pytest.raises(ValueError, match="temperature"):
        settings(temperature=3)


def test_mcp_servers_are_checked_and_their_secrets_masked() -> None:
    """[mcp.servers.NAME]: a name the providers could not prefix, or both a command and a URL,
    is refused naming the setting; config show masks env and header values, not their names."""
    from plugin_bridge.app.settings.config import SettingsError, load_settings, shown

    settings = load_settings(
        mcp={
            "servers": {
                "gh": {"command": "npx", "env": {"GITHUB_TOKEN": "ghp_abcdefghijklmnop"}},
                "web": {"url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer x"}},
            }
        }
    )
    servers = shown(settings)["mcp"]["servers"]  # type: ignore[index]
    assert servers["gh"]["env"] == {"GITHUB_TOKEN": "ghp_…op"}
    assert servers["web"]["headers"] == {"Authorization": "…"}
    for bad in ({"Bad Name": {"command": "x"}}, {"both": {"command": "x", "url": "http://h/"}}):
        with pytest.raises(SettingsError, match=r"'mcp\.servers"):
            load_settings(mcp={"servers": bad})
