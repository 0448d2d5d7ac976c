"""make_provider and parse_model_spec: the one place that names and builds providers."""

from __future__ import annotations

import typing

import pytest

import llm_service
from llm_service import (
    PROVIDER_NAMES,
    AnthropicProvider,
    ModelSpec,
    OllamaProvider,
    OpenAIProvider,
    ProviderName,
    UnknownProviderError,
    make_provider,
    parse_model_spec,
)
from llm_service.factory import provider_class
from llm_service.profiles import PROFILES


@pytest.mark.parametrize(
    ("spec", "provider", "model"),
    [
        ("anthropic:claude-haiku-5-5", "anthropic", "claude-haiku-5-5"),
        ("ollama:llama3.1:8b", "ollama", "llama3.1:8b"),  # the tag keeps its ':'
        ("openai/gpt-6.1-sol", "openai", "gpt-6.1-sol"),
        ("OpenAI:gpt-6-luna", "openai", "gpt-6-luna"),
        ("ollama", "ollama", ""),
        ("qwen/qwen3-4b", None, "qwen/qwen3-4b"),  # LM Studio's id stays whole
        ("llama3.1:8b", None, "llama3.1:8b"),
        ("claude-sonnet-5-5", None, "claude-sonnet-5-5"),
        ("ollama/hf.co/org/model:Q4", "ollama", "hf.co/org/model:Q4"),
    ],
)
def test_parse_model_spec(spec: str, provider: ProviderName | None, model: str) -> None:
    assert parse_model_spec(spec) == ModelSpec(provider, model)


def test_a_spec_prints_as_written() -> None:
    assert str(parse_model_spec("ollama:llama3.1:8b")) == "ollama:llama3.1:8b"
    assert str(parse_model_spec("qwen/qwen3-4b")) == "qwen/qwen3-4b"
    assert str(parse_model_spec("ollama")) == "ollama"


def test_the_provider_names_are_the_literal() -> None:
    assert typing.get_args(llm_service.ProviderName) == PROVIDER_NAMES
    assert PROVIDER_NAMES == ("anthropic", "openai", "ollama")


def test_make_provider_builds_each_provider_with_its_model() -> None:
    anthropic = make_provider("anthropic:claude-haiku-5-5", api_key="sk-ant-test")
    assert isinstance(anthropic, AnthropicProvider)
    assert anthropic.model == "claude-haiku-5-5"
    openai = make_provider("openai/gpt-6-luna", api_key="sk-test", timeout=5)
    assert isinstance(openai, OpenAIProvider)
    assert (openai.model, openai.timeout) == ("gpt-6-luna", 5)
    ollama = make_provider("ollama:llama3.1:8b", base_url="http://127.0.0.1:9/")
    assert isinstance(ollama, OllamaProvider)
    assert (ollama.model, ollama.base_url) == ("llama3.1:8b", "http://127.0.0.1:9")


def test_make_provider_without_a_model_leaves_it_to_each_call() -> None:
    assert make_provider("ollama").model is None


@pytest.mark.parametrize("spec", ["mistral:large", "qwen/qwen3-4b", "", "claude-sonnet-5-5"])
def test_an_unknown_provider_is_one_sentence(spec: str) -> None:
    with pytest.raises(UnknownProviderError) as caught:
        make_provider(spec)
    message = str(caught.value)
    assert message.count(". ") == 0 and message.endswith(".")
    assert "anthropic:MODEL" in message
    assert isinstance(caught.value, ValueError)  # the programmer's mistake, not an LLMError


def test_ollama_refuses_a_key() -> None:
    with pytest.raises(ValueError, match="no API key"):
        make_provider("ollama:llama3.1", api_key="sk-x")


def test_the_package_imports_no_provider_module() -> None:
    import subprocess
    import sys

    code = (
        "import sys, llm_service; llm_service.parse_model_spec('ollama:x'); "
        "print(any(m.startswith('llm_service.providers') for m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_every_provider_has_one_profile_that_names_it() -> None:
    """The profile table covers every ProviderName, in order, and each provider's and
    connection's name is its profile's label."""
    assert tuple(PROFILES) == PROVIDER_NAMES
    for name, profile in PROFILES.items():
        assert profile.name == name
        assert provider_class(name).name == profile.label
        assert profile.recommended_models, name
        assert profile.local == (profile.default_base_url is not None)
        assert (profile.key_variable is None) == (profile.default_origin is None)
        # a runtime's own address variable and start command belong to a local one; servers
        # of other makers speak a keyed API that needs no key at their address
        assert profile.local or (profile.host_variable is None and profile.start_command is None)
        assert not profile.compatible_servers or (profile.key_variable and not profile.needs_key)
    assert AnthropicProvider.build("m", "k").connection.name == "Anthropic"


@pytest.mark.parametrize(
    ("name", "key", "base_url", "lacks"),
    [
        ("anthropic", None, None, True),
        ("anthropic", None, "http://127.0.0.1:4000", True),  # a gateway passes the key on
        ("anthropic", "k", None, False),
        ("openai", None, None, True),
        ("openai", None, "http://127.0.0.1:1234/v1", False),  # LM Studio needs none
        ("ollama", None, None, False),
    ],
)
def test_the_key_rule_is_the_profiles(
    name: ProviderName, key: str | None, base_url: str | None, lacks: bool
) -> None:
    assert PROFILES[name].lacks_key(key, base_url) is lacks
