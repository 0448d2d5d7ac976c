"""Prices (genai-prices and the override table), cost arithmetic, default/recommended models and
the deprecation table."""

from __future__ import annotations

import inspect
import re
import subprocess
import sys
from typing import get_args

import pytest

from llm_service.messages import Usage
from llm_service.pricing import (
    DEFAULT_MODEL,
    DEPRECATED_MODELS,
    OVERRIDES,
    RECOMMENDED_MODELS,
    Price,
    cost_usd,
    price_for,
    retirement_date,
)

_DATED = r"(-\d{4}-\d\d-\d\d)?$"


def _anthropic_models() -> list[str]:
    from anthropic.types.model_param import ModelParam

    literal = get_args(ModelParam)[0]
    return list(get_args(literal))


def _openai_models() -> list[str]:
    from openai.types.shared.chat_model import ChatModel

    return list(get_args(ChatModel))


def _openai_deprecated() -> set[str]:
    """Model ids the openai SDK's ChatModel notes list under "Deprecated values"."""
    import openai.types.shared.chat_model as module

    notes = inspect.getsource(module).split("Deprecated values:", 1)[1]
    return set(re.findall(r'"([^"]+)"', notes))


def test_deprecation_table_matches_the_anthropic_sdk() -> None:
    """Our copy of the retirement dates equals the installed SDK's DEPRECATED_MODELS."""
    from anthropic._data.deprecated_models import DEPRECATED_MODELS as SDK_DEPRECATED

    assert DEPRECATED_MODELS == SDK_DEPRECATED


def test_default_model_is_a_current_sdk_model() -> None:
    """DEFAULT_MODEL is a Sonnet the SDK lists and does not mark deprecated."""
    from anthropic._data.deprecated_models import DEPRECATED_MODELS as SDK_DEPRECATED

    assert DEFAULT_MODEL in _anthropic_models()
    assert DEFAULT_MODEL not in SDK_DEPRECATED
    assert "sonnet" in DEFAULT_MODEL
    assert price_for(DEFAULT_MODEL) is not None


def test_every_claude_haiku_sonnet_and_opus_model_has_a_price() -> None:
    """All Haiku/Sonnet/Opus ids of the SDK's ModelParam, dated ones included, are priced."""
    models = [m for m in _anthropic_models() if re.match(r"claude-(haiku|sonnet|opus)-", m)]
    assert len(models) >= 14
    assert [m for m in models if price_for(m) is None] == []


def test_every_anthropic_sdk_model_has_a_price() -> None:
    """Fable and Mythos ids of the SDK are priced too (by family where unpublished)."""
    assert [m for m in _anthropic_models() if price_for(m) is None] == []


@pytest.mark.parametrize(
    "family", [r"gpt-6", r"gpt-5", r"gpt-4\.1", rf"gpt-4o{_DATED}", rf"gpt-4o-mini{_DATED}"]
)
def test_current_openai_chat_models_have_prices(family: str) -> None:
    """The SDK's gpt-6/5.x/4.1/4o/4o-mini text models, dated ids too, are priced.

    The audio and search previews of gpt-4o are not chat models this service uses.
    """
    models = [m for m in _openai_models() if re.match(family, m)]
    assert models
    assert [m for m in models if price_for(m) is None] == []


@pytest.mark.parametrize(
    ("dated", "alias"),
    [
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
        ("claude-haiku-4-5-20251001", "claude-haiku-4-5"),
        ("gpt-4.1-mini-2025-04-14", "gpt-4.1-mini"),
        ("gpt-5.2-pro-2025-12-11", "gpt-5.2-pro"),
    ],
)
def test_dated_ids_use_their_alias_price(dated: str, alias: str) -> None:
    """A snapshot id with a date suffix costs what its alias costs."""
    assert price_for(dated) == price_for(alias) is not None


@pytest.mark.parametrize("model", ["llama3.1:8b", "qwen3:8b", "claude-unknown-9", "gpt-99", ""])
def test_unknown_and_local_models_cost_none(model: str) -> None:
    """Unpriced models (every Ollama model among them) cost None, not 0."""
    assert price_for(model) is None
    assert cost_usd(model, Usage(1000, 1000)) is None


def test_cost_is_the_sum_of_tokens_times_rates() -> None:
    """cost = sum(tokens * rate / 1e6) over input, output, cache read and cache write."""
    price = Price(input=3.0, output=15.0, cache_read=0.30, cache_write=3.75)
    usage = Usage(
        input_tokens=1000, output_tokens=500, cache_read_tokens=2000, cache_write_tokens=400
    )
    expected = (1000 * 3.0 + 500 * 15.0 + 2000 * 0.30 + 400 * 3.75) / 1e6
    assert price.cost(usage) == pytest.approx(expected)
    assert cost_usd("claude-sonnet-4-6", usage) == pytest.approx(expected)


def test_zero_usage_on_a_priced_model_costs_zero() -> None:
    """A known model with no tokens costs exactly 0.0."""
    assert cost_usd(DEFAULT_MODEL, Usage()) == 0.0


def test_retirement_dates_come_from_the_table() -> None:
    """retirement_date answers the deprecation date, or None for current models."""
    assert retirement_date("claude-sonnet-4-5") == "November 30th, 2026"
    assert retirement_date(DEFAULT_MODEL) is None


def test_recommended_models_per_provider() -> None:
    """Each provider has a best-first list; cloud picks are current SDK models with prices."""
    assert set(RECOMMENDED_MODELS) == {"anthropic", "openai", "ollama"}
    assert all(RECOMMENDED_MODELS.values())
    assert RECOMMENDED_MODELS["anthropic"][0] == DEFAULT_MODEL
    for model in RECOMMENDED_MODELS["anthropic"]:
        assert model in _anthropic_models() and model not in DEPRECATED_MODELS
        assert price_for(model) is not None
    deprecated = _openai_deprecated()
    assert "gpt-4o" in deprecated  # the parse of the SDK's notes found the list
    for model in RECOMMENDED_MODELS["openai"]:
        assert model in _openai_models() and model not in deprecated
        assert price_for(model) is not None


@pytest.mark.parametrize(
    ("model", "rates"),
    [
        ("claude-sonnet-4", (3.0, 15.0, 0.30, 3.75)),
        ("claude-sonnet-4-20250514", (3.0, 15.0, 0.30, 3.75)),
        ("claude-3-haiku-20240307", (0.25, 1.25, 0.03, 0.30)),
    ],
)
def test_older_ids_have_prices_from_genai_prices(model: str, rates: tuple[float, ...]) -> None:
    """Ids the hand table had no row for are priced by the maintained data."""
    price = price_for(model, "anthropic")
    assert price is not None
    assert (price.input, price.output, price.cache_read, price.cache_write) == pytest.approx(rates)


def test_the_overrides_hold_only_what_genai_prices_lacks() -> None:
    """Every override is a model the package does not price (else the override is stale)."""
    from genai_prices import data_snapshot

    snapshot = data_snapshot.get_snapshot()
    for model in OVERRIDES:
        provider = "anthropic" if model.startswith("claude") else "openai"
        with pytest.raises(LookupError):
            snapshot.find_provider_model(model, None, provider, None)


@pytest.mark.parametrize(
    ("model", "provider"),
    [
        ("llama3.1:8b", "ollama"),
        ("gpt-oss:20b", "ollama"),
        ("gpt-4o", "ollama"),  # a local model named like a hosted one is still local
        ("openai/gpt-oss-20b", "openai-compatible"),
        ("claude-sonnet-5-5", "openai-compatible"),
    ],
)
def test_local_servers_have_unknown_prices_never_zero(model: str, provider: str) -> None:
    assert price_for(model, provider) is None
    assert cost_usd(model, Usage(1000, 1000), provider) is None


def test_a_long_prompt_costs_the_higher_tier_for_the_whole_call() -> None:
    """Claude Haiku 5.5 bills every token of a call whose prompt passes 100k at 5x."""
    short = cost_usd("claude-haiku-5-5", Usage(100_000, 1000), "anthropic")
    long = cost_usd("claude-haiku-5-5", Usage(100_001, 1000), "anthropic")
    assert short == pytest.approx((100_000 * 0.10 + 1000 * 0.50) / 1e6)
    assert long == pytest.approx((100_001 * 0.50 + 1000 * 2.50) / 1e6)


def test_prices_are_read_offline_from_the_package() -> None:
    """With no network at all (the tests' ban), the package's own data answers, and importing
    llm_service.pricing does not import genai-prices (it costs ~0.3 s)."""
    code = (
        "import socket, sys\n"
        "def refuse(*a, **k): raise OSError('no network')\n"
        "socket.socket.connect = refuse; socket.create_connection = refuse\n"
        "import llm_service.pricing as p\n"
        "assert 'genai_prices' not in sys.modules\n"
        "assert p.price_for('gpt-4.1-mini', 'openai').input == 0.40\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_pricing_does_not_import_the_sdks() -> None:
    """llm_service.pricing loads without anthropic or openai (the bridge must start fast)."""
    code = (
        "import sys, llm_service.pricing; "
        "assert 'anthropic' not in sys.modules and 'openai' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=30)
