"""Wire models of usage and budgets: usage/summary and budget/warning.

Same rules as :mod:`plugin_bridge.wire.models.base`: camelCase on the wire, params strict.
"""

from __future__ import annotations

from typing import ClassVar, Final, Literal

from pydantic import Field

from plugin_bridge.wire.models.base import ClientRequest, Empty, Notification, WireModel


class BudgetWarning(Notification):
    """Notification: the calls just made passed 80 % of a budget."""

    METHOD: ClassVar[str] = "budget/warning"

    period: Literal["day", "month"]
    spent_usd: float
    budget_usd: float


class ModelUsageModel(WireModel):
    provider: str = Field(
        description='The provider that served the calls ("anthropic", "openai", "ollama"); '
        '"" for calls recorded before providers were.'
    )
    model: str
    calls: int
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    cost_usd: float | None = Field(description="Null when no call of this model had a price.")
    unpriced_calls: int = Field(description="Calls whose model has no known price.")


class PeriodUsage(WireModel):
    cost_usd: float | None = Field(
        description="Sum of the priced calls; null when every call had an unknown price."
    )
    budget_usd: float | None
    unpriced_calls: int
    by_model: list[ModelUsageModel]


class UsageSummaryResult(WireModel):
    today: PeriodUsage
    month: PeriodUsage


USAGE_SUMMARY: Final = ClientRequest("usage/summary", Empty, UsageSummaryResult)
