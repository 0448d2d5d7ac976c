"""usage/summary: what today and this month cost, per model, against the budgets."""

from __future__ import annotations

from plugin_bridge.app.conversations.usage import Period
from plugin_bridge.app.conversations.usage_log import ModelUsage
from plugin_bridge.handlers.context import AppRouter, Context, caller_of
from plugin_bridge.wire.models import (
    USAGE_SUMMARY,
    Empty,
    ModelUsageModel,
    PeriodUsage,
    UsageSummaryResult,
)


async def usage_summary(ctx: Context, params: Empty) -> UsageSummaryResult:
    """Spending of today and this month (local time), per model; unknown prices never count as
    $0: those calls are counted apart."""
    caller = caller_of(ctx)
    client = None if caller.is_owner else caller.label  # a client key: its own calls only
    rows = await ctx.app.spending.by_period(client)
    return UsageSummaryResult(
        today=_period(ctx, "day", rows["day"]), month=_period(ctx, "month", rows["month"])
    )


def _period(ctx: Context, period: Period, rows: list[ModelUsage]) -> PeriodUsage:
    spending = ctx.app.spending
    priced = [row.cost_usd for row in rows if row.cost_usd is not None]
    only_unpriced = bool(rows) and not priced
    return PeriodUsage(
        cost_usd=None if only_unpriced else round(sum(priced), 6),
        budget_usd=spending.budgets.limit(period),
        unpriced_calls=sum(row.unpriced_calls for row in rows),
        by_model=[ModelUsageModel.model_validate(row, from_attributes=True) for row in rows],
    )


def register(router: AppRouter) -> None:
    router.register(USAGE_SUMMARY, usage_summary)
