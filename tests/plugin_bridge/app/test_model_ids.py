"""A client's model id is the listed id the provider itself would take it for."""

from __future__ import annotations

import pytest

from plugin_bridge.app.model_ids import close_ids, listed_id

ANTHROPIC = [
    "claude-sonnet-4-5-20250929",
    "claude-sonnet-4-20250514",
    "claude-3-7-sonnet-20250219",
    "claude-3-7-sonnet-20250101",
    "claude-haiku-4-5-20251001",
]
OLLAMA = ["llama3.2:latest", "llama3.1:8b", "hf.co/bartowski/Qwen3-4B-GGUF:latest"]


@pytest.mark.parametrize(
    ("model", "listed"),
    [
        ("claude-sonnet-4-5", "claude-sonnet-4-5-20250929"),
        ("claude-sonnet-4-0", "claude-sonnet-4-20250514"),
        ("claude-sonnet-4", "claude-sonnet-4-20250514"),
        ("claude-sonnet-4-latest", "claude-sonnet-4-20250514"),
        ("claude-3-7-sonnet-latest", "claude-3-7-sonnet-20250219"),  # the newest date
        ("claude-haiku-4-5-20251001", "claude-haiku-4-5-20251001"),
    ],
)
def test_an_anthropic_alias_is_its_dated_id(model: str, listed: str) -> None:
    assert listed_id(model, ANTHROPIC) == listed


@pytest.mark.parametrize("model", ["claude-sonnet-4-6", "claude-sonnet", "claude-sonnet-4-5-2"])
def test_an_alias_is_only_a_whole_stem(model: str) -> None:
    assert listed_id(model, ANTHROPIC) is None


@pytest.mark.parametrize(
    ("model", "listed"),
    [
        ("llama3.2", "llama3.2:latest"),
        ("llama3.2:latest", "llama3.2:latest"),
        ("hf.co/bartowski/Qwen3-4B-GGUF", "hf.co/bartowski/Qwen3-4B-GGUF:latest"),
        ("llama3.1:8b", "llama3.1:8b"),
    ],
)
def test_an_untagged_ollama_name_is_its_latest(model: str, listed: str) -> None:
    assert listed_id(model, OLLAMA) == listed


@pytest.mark.parametrize("model", ["llama3.1", "llama3.2:1b", "llama3"])
def test_other_tags_are_not_guessed(model: str) -> None:
    assert listed_id(model, OLLAMA) is None


def test_close_ids_are_at_most_five_the_closest_first() -> None:
    many = [*ANTHROPIC, "claude-opus-4-1-20250805", "claude-opus-4-20250514"]
    close = close_ids("claude-sonnet-4-7", many)
    assert len(close) <= 5
    assert close[0].startswith("claude-sonnet-4")
    assert close_ids("zzz", many) == []
