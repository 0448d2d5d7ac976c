"""Model prices, the default model, recommended models and Anthropic's deprecation dates.

Prices come from pydantic's ``genai-prices`` package: its data ships inside the package (no
network at run time; its optional auto-update is never started here), and it is imported on the
first price asked for, in a worker thread when a provider warms up (it costs ~0.3 s). A small
:data:`OVERRIDES` table holds what it lacks. Prices are USD per million tokens at standard (not
batch, not priority) rates; a model priced higher for long prompts (Claude Haiku 5.5 above 100k
tokens) costs that price for the whole call.

A price is looked up for a provider: ``"anthropic"`` and ``"openai"`` are the hosted APIs, None
infers which from the model name, and any other name (``"ollama"``, a compatible local server)
has an unknown price. Unknown is ``None``, never 0.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Final

from llm_service import lazy
from llm_service.messages import Usage
from llm_service.profiles import PROFILES

if TYPE_CHECKING:
    from genai_prices import data_snapshot
    from genai_prices import types as genai_types
    from genai_prices.types import ModelPrice
else:
    data_snapshot = lazy.module("genai_prices.data_snapshot")
    genai_types = lazy.module("genai_prices.types")


@dataclass(frozen=True, slots=True)
class Price:
    """USD per million tokens of each kind; ``above`` is the prompt size (input tokens, cached
    ones included) past which ``long_prompt`` applies to the whole call."""

    input: float
    output: float
    cache_read: float = 0.0
    cache_write: float = 0.0
    above: int | None = None
    long_prompt: Price | None = None

    def cost(self, usage: Usage) -> float:
        """What ``usage`` costs at these rates."""
        prompt = usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens
        if self.long_prompt is not None and self.above is not None and prompt > self.above:
            return self.long_prompt.cost(usage)
        return (
            usage.input_tokens * self.input
            + usage.output_tokens * self.output
            + usage.cache_read_tokens * self.cache_read
            + usage.cache_write_tokens * self.cache_write
        ) / 1_000_000


HOSTED: Final = tuple(name for name, profile in PROFILES.items() if not profile.local)
"""The providers whose prices genai-prices and :data:`OVERRIDES` know."""

_FABLE_5 = Price(10.0, 50.0, 1.0, 12.50)
_FABLE_5_1 = Price(10.0, 50.0, 0.25, 12.50)
_GPT_6_1_SOL = Price(2.0, 10.0, 0.10, 2.50)

OVERRIDES: Final[dict[str, Price]] = {
    # What genai-prices lacks (read November 2026 from Anthropic's and OpenAI's pricing pages).
    "claude-mythos-5-1": _FABLE_5_1,  # no published price: Mythos shares its Fable's price
    "claude-mythos-5": _FABLE_5,
    "claude-mythos-preview": _FABLE_5,  # no published price: the Mythos 5 family price
    "gpt-6.2-astra": Price(8.0, 40.0, 0.80, 10.0),  # caching not published: gpt-6-astra's ratios
    "gpt-6.2-sol": _GPT_6_1_SOL,  # no published price: the gpt-6.1-sol family price
}

DEPRECATED_MODELS: Final[dict[str, str]] = {
    "claude-mythos-preview": "June 30th, 2026",
    "claude-sonnet-4-5": "November 30th, 2026",
    "claude-sonnet-4-5-20250929": "November 30th, 2026",
}
"""Anthropic model -> retirement date, as the anthropic SDK's ``_data/deprecated_models.py``
lists them (a test keeps the two equal; importing the SDK here would cost 1.6 s)."""

RECOMMENDED_MODELS: Final[dict[str, list[str]]] = {
    name: list(profile.recommended_models) for name, profile in PROFILES.items()
}
"""Per provider, best first (its profile's): the bridge's default is the first of its list."""

DEFAULT_MODEL: Final = RECOMMENDED_MODELS["anthropic"][0]
"""The current Sonnet: never a model in :data:`DEPRECATED_MODELS`."""

_DATE_SUFFIX = re.compile(r"-(\d{8}|\d{4}-\d{2}-\d{2})$")


def price_for(model: str, provider: str | None = None) -> Price | None:
    """The price of ``model`` on ``provider`` (see the module docstring); a dated id
    (``-20250929``, ``-2025-04-14``) costs what its alias costs. None when unknown."""
    if provider is not None and provider not in HOSTED:
        return None
    return _price(model, provider)


def cost_usd(model: str, usage: Usage, provider: str | None = None) -> float | None:
    """What ``usage`` on ``model`` costs in USD, or None when the model's price is unknown."""
    price = price_for(model, provider)
    return None if price is None else price.cost(usage)


def retirement_date(model: str) -> str | None:
    """When Anthropic retires ``model`` (e.g. "November 30th, 2026"), or None if not deprecated."""
    return DEPRECATED_MODELS.get(model)


def load_prices() -> None:
    """Import genai-prices and read its data now (a worker thread's job: it takes ~0.3 s)."""
    price_for(DEFAULT_MODEL, "anthropic")


@functools.lru_cache(maxsize=1024)
def _price(model: str, provider: str | None) -> Price | None:
    if not model:
        return None
    override = OVERRIDES.get(model) or OVERRIDES.get(_DATE_SUFFIX.sub("", model))
    if override is not None:
        return override
    snapshot = data_snapshot.get_snapshot()
    for name in (provider,) if provider else HOSTED:
        try:
            _, info = snapshot.find_provider_model(model, None, name, None)
        except LookupError:
            continue
        return _converted(info.get_prices(datetime.now(UTC)))
    return None


def _converted(prices: ModelPrice) -> Price | None:
    """genai-prices' rates as a :class:`Price` (its first long-prompt tier, if any)."""
    fields = ("input_mtok", "output_mtok", "cache_read_mtok", "cache_write_mtok")
    values = [getattr(prices, name) for name in fields]
    if values[0] is None:
        return None
    tiers = [v.tiers[0] for v in values if isinstance(v, genai_types.TieredPrices) and v.tiers]

    def at(tier: int | None) -> Price:
        rates = []
        for value in values:
            if isinstance(value, genai_types.TieredPrices):
                step = next((t for t in value.tiers if t.start == tier), None)
                rates.append(float(step.price if step is not None else value.base))
            else:
                rates.append(float(value or 0))
        return Price(rates[0], rates[1], rates[2], rates[3])

    if not tiers:
        return at(None)
    above = tiers[0].start
    return replace(at(None), above=above, long_prompt=at(above))
