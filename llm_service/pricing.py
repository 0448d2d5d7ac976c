"""Model prices, the default model, recommended models and Anthropic's deprecation dates.

Prices are USD per million tokens, at standard (not batch, not priority) rates for prompts in a
model's base context band. Sources, read November 2026: Anthropic's pricing page
(platform.claude.com/docs/en/about-claude/pricing) and model overview pages; OpenAI's pricing
page (developers.openai.com/api/docs/pricing) and model pages. Where a listed model has no
published price, the row says which family price it borrows.

Anthropic's "cache write" is the 5-minute cache-write rate (what ``cache_creation_input_tokens``
bills at by default). OpenAI bills most models nothing for cache writes.

Models not in the table, including every Ollama or other local model, have an unknown cost
(``None``), never 0. This module imports nothing heavy: it must not import ``anthropic``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from llm_service.messages import Usage


@dataclass(frozen=True, slots=True)
class Price:
    """USD per million tokens of each kind."""

    input: float
    output: float
    cache_read: float = 0.0
    cache_write: float = 0.0

    def cost(self, usage: Usage) -> float:
        """What ``usage`` costs at these rates."""
        return (
            usage.input_tokens * self.input
            + usage.output_tokens * self.output
            + usage.cache_read_tokens * self.cache_read
            + usage.cache_write_tokens * self.cache_write
        ) / 1_000_000


_OPUS_4 = Price(5.0, 25.0, 0.50, 6.25)
_SONNET_4 = Price(3.0, 15.0, 0.30, 3.75)
_FABLE_5 = Price(10.0, 50.0, 1.0, 12.50)
_FABLE_5_1 = Price(10.0, 50.0, 0.25, 12.50)
_FABLE_5_2 = Price(8.0, 40.0, 0.20, 10.0)
_GPT_6_1_SOL = Price(2.0, 10.0, 0.10, 2.50)
_GPT_5_2 = Price(1.75, 14.0, 0.175)
_GPT_5_1 = Price(1.25, 10.0, 0.125)
_GPT_5_MINI = Price(0.25, 2.0, 0.025)

PRICES: Final[dict[str, Price]] = {
    # Anthropic
    "claude-haiku-5-5": Price(0.10, 0.50, 0.01, 0.125),  # prompts <= 100k tokens; 5x above that
    "claude-sonnet-5-5": Price(2.0, 10.0, 0.10, 2.50),  # cache reads cut to $0.10 on 2026-10-07
    "claude-opus-5-5": Price(4.0, 20.0, 0.20, 5.0),
    "claude-sonnet-5": Price(2.0, 10.0, 0.20, 2.50),
    "claude-opus-5": _OPUS_4,
    "claude-opus-4-8": _OPUS_4,
    "claude-opus-4-7": _OPUS_4,
    "claude-opus-4-6": _OPUS_4,
    "claude-opus-4-5": _OPUS_4,
    "claude-sonnet-4-6": _SONNET_4,
    "claude-sonnet-4-5": _SONNET_4,
    "claude-haiku-4-5": Price(1.0, 5.0, 0.10, 1.25),
    "claude-fable-5-2": _FABLE_5_2,
    "claude-mythos-5-2": _FABLE_5_2,  # no published price: Mythos shares its Fable version's price
    "claude-fable-5-1": _FABLE_5_1,
    "claude-mythos-5-1": _FABLE_5_1,
    "claude-fable-5": _FABLE_5,
    "claude-mythos-5": _FABLE_5,
    "claude-mythos-preview": _FABLE_5,  # no published price: the Mythos 5 family price
    # OpenAI
    "gpt-6-astra": Price(10.0, 50.0, 1.0, 12.50),
    "gpt-6.2-astra": Price(8.0, 40.0, 0.80, 10.0),  # caching not published: gpt-6-astra's ratios
    "gpt-6.2-sol": _GPT_6_1_SOL,  # no published price: the gpt-6.1-sol family price
    "gpt-6.1-sol": _GPT_6_1_SOL,
    "gpt-6-sol": Price(2.0, 10.0, 0.20, 2.50),
    "gpt-6.1-terra": Price(1.0, 5.0, 0.05, 1.25),
    "gpt-6-luna": Price(0.10, 0.50, 0.01, 0.125),
    "gpt-5.6-sol": Price(4.0, 20.0, 0.40, 5.0),
    "gpt-5.6-terra": Price(2.0, 12.0, 0.20, 2.50),
    "gpt-5.6-luna": Price(0.20, 1.20, 0.02, 0.25),
    "gpt-5.5": Price(5.0, 30.0, 0.50),
    "gpt-5.4": Price(2.50, 15.0, 0.25),
    "gpt-5.4-mini": Price(0.75, 4.50, 0.075),
    "gpt-5.4-nano": Price(0.20, 1.25, 0.02),
    "gpt-5.3-chat-latest": _GPT_5_2,  # no published price: the gpt-5.2 family price
    "gpt-5.2": _GPT_5_2,
    "gpt-5.2-chat-latest": _GPT_5_2,
    "gpt-5.2-pro": Price(21.0, 168.0),
    "gpt-5.1": _GPT_5_1,
    "gpt-5.1-codex": _GPT_5_1,
    "gpt-5.1-chat-latest": _GPT_5_1,
    "gpt-5.1-mini": _GPT_5_MINI,  # not a real model id (SDK compatibility): the gpt-5-mini price
    "gpt-5": _GPT_5_1,
    "gpt-5-chat-latest": _GPT_5_1,
    "gpt-5-mini": _GPT_5_MINI,
    "gpt-5-nano": Price(0.05, 0.40, 0.005),
    "gpt-4.1": Price(2.0, 8.0, 0.50),
    "gpt-4.1-mini": Price(0.40, 1.60, 0.10),
    "gpt-4.1-nano": Price(0.10, 0.40, 0.025),
    "gpt-4o": Price(2.50, 10.0, 1.25),
    "gpt-4o-2024-05-13": Price(5.0, 15.0),  # the original gpt-4o snapshot kept its launch price
    "gpt-4o-mini": Price(0.15, 0.60, 0.075),
    "o4-mini": Price(1.10, 4.40, 0.275),
    "o3": Price(2.0, 8.0, 0.50),
    "o3-mini": Price(1.10, 4.40, 0.55),
    "o1": Price(15.0, 60.0, 7.50),
    # OpenAI embeddings (input tokens only)
    "text-embedding-3-small": Price(0.02, 0.0),
    "text-embedding-3-large": Price(0.13, 0.0),
    "text-embedding-ada-002": Price(0.10, 0.0),
}

DEPRECATED_MODELS: Final[dict[str, str]] = {
    "claude-mythos-preview": "June 30th, 2026",
    "claude-sonnet-4-5": "November 30th, 2026",
    "claude-sonnet-4-5-20250929": "November 30th, 2026",
}
"""Anthropic model -> retirement date, as the anthropic SDK's ``_data/deprecated_models.py``
lists them (a test keeps the two equal; importing the SDK here would cost 1.6 s)."""

DEFAULT_MODEL: Final = "claude-sonnet-5-5"
"""The current Sonnet: never a model in :data:`DEPRECATED_MODELS`."""

RECOMMENDED_MODELS: Final[dict[str, list[str]]] = {
    "anthropic": [DEFAULT_MODEL, "claude-opus-5-5", "claude-haiku-5-5"],
    "openai": ["gpt-6.1-sol", "gpt-6.1-terra", "gpt-6-luna"],
    "ollama": ["qwen3:8b", "llama3.1:8b", "mistral-nemo"],
}
"""Per provider, best first: the bridge's default is the first of its provider's list."""

_DATE_SUFFIX = re.compile(r"-(\d{8}|\d{4}-\d{2}-\d{2})$")


def price_for(model: str) -> Price | None:
    """The price of ``model``; a dated id (``-20250929``, ``-2025-04-14``) uses its alias' price."""
    price = PRICES.get(model)
    if price is None:
        price = PRICES.get(_DATE_SUFFIX.sub("", model))
    return price


def cost_usd(model: str, usage: Usage) -> float | None:
    """What ``usage`` on ``model`` costs in USD, or None when the model's price is unknown."""
    price = price_for(model)
    return None if price is None else price.cost(usage)


def retirement_date(model: str) -> str | None:
    """When Anthropic retires ``model`` (e.g. "November 30th, 2026"), or None if not deprecated."""
    return DEPRECATED_MODELS.get(model)
