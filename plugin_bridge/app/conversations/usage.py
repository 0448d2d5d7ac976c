"""What the model costs: every provider call recorded, daily and monthly budgets enforced.

Costs come from llm_service's price table; a call whose model has no known price is counted as
unpriced (never as $0) and does not move a budget. A budget once reached stops chat with -32012
before the provider is called; crossing 80 % of one sends ``budget/warning`` once.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Final, Literal, get_args

from llm_service.pricing import cost_usd
from plugin_bridge.wire.errors import RpcError, WireCode

if TYPE_CHECKING:
    from collections.abc import Iterable

    from llm_service import Provider, Usage
    from llm_service.service import UsageCallback
    from plugin_bridge.app.clients import Caller
    from plugin_bridge.app.conversations.usage_log import ModelUsage, UsageLog

WARN_AT: Final = 0.8
Period = Literal["day", "month"]
PERIODS: Final[tuple[Period, ...]] = get_args(Period)


@dataclass(frozen=True)
class Budgets:
    """Spending limits in USD; None means no limit."""

    daily_usd: float | None = None
    monthly_usd: float | None = None

    def limit(self, period: Period) -> float | None:
        return self.daily_usd if period == "day" else self.monthly_usd


@dataclass(frozen=True)
class Crossing:
    """A budget whose 80 % mark the last calls passed."""

    period: Period
    spent_usd: float
    budget_usd: float


class Spending:
    """Records provider calls in ``log`` and holds them against ``budgets``: every read is one
    hop to the log's door (none while no budget is set), after the calls posted before it."""

    def __init__(self, log: UsageLog, budgets: Budgets) -> None:
        self.log = log
        self.budgets = budgets

    def recorder(self, conversation_id: str | None, purpose: str, caller: Caller) -> UsageCallback:
        """The ``on_usage`` callback of one conversation (or command) of ``purpose``, its calls
        recorded under ``caller``'s key (posted to the log's door: it returns at once)."""

        def record(model: str, usage: Usage, cost_usd: float | None, provider: str) -> None:
            client = caller.label
            self.log.post(conversation_id, purpose, provider, model, usage, cost_usd, client)

        return record

    async def record_call(
        self,
        conversation_id: str | None,
        purpose: str,
        provider: Provider,
        model: str,
        usage: Usage,
        caller: Caller,
    ) -> float | None:
        """Record one call made outside a conversation's service (a note, a summary),
        committed when it returns; what it cost (None: unknown)."""
        cost = cost_usd(model, usage, provider.price_provider)
        self.recorder(conversation_id, purpose, caller)(model, usage, cost, provider.kind or "")
        await self.recorded()
        return cost

    async def recorded(self) -> None:
        """Return once every call recorded so far is committed (one hop to the log's door,
        behind the rows posted before it): an answer that follows calls awaits it before it
        goes out, so what was answered is counted even after a kill -9."""
        await self.log.execute(_committed)

    async def check(self) -> None:
        """RpcError -32012 when a budget is already used up (await before the provider)."""
        spent = await self.snapshot()
        for period, now in spent.items():
            budget = self.budgets.limit(period)
            if budget is not None and now >= budget:
                raise RpcError(
                    WireCode.BUDGET_EXCEEDED,
                    f"The {'daily' if period == 'day' else 'monthly'} budget of ${budget:.2f} is "
                    f"used up (${now:.2f} spent): raise it in the settings or wait for the "
                    f"next {period}.",
                    {"period": period, "spentUsd": round(now, 6), "budgetUsd": budget},
                )

    async def by_period(self, client: str | None = None) -> dict[Period, list[ModelUsage]]:
        """Today's and this month's calls per model (``client``: that key's only), read in one
        hop to the log."""
        since = {period: period_start(period) for period in PERIODS}
        return await self.log.execute(
            lambda log: {period: log.by_model(start, client) for period, start in since.items()}
        )

    async def crossings(self, before: dict[Period, float]) -> list[Crossing]:
        """The budgets whose 80 % mark was passed since ``before`` (from :meth:`snapshot`)."""
        spent = await self._spent(before)
        found = []
        for period, was in before.items():
            budget = self.budgets.limit(period)
            now = spent[period]
            if budget is not None and was < WARN_AT * budget <= now:
                found.append(Crossing(period, now, budget))
        return found

    async def snapshot(self) -> dict[Period, float]:
        """What each budgeted period has spent so far."""
        return await self._spent([p for p in PERIODS if self.budgets.limit(p) is not None])

    async def _spent(self, periods: Iterable[Period]) -> dict[Period, float]:
        """USD spent on priced calls since the start of each of ``periods`` (this local day or
        month), in one hop to the log (none for no period)."""
        since = {period: period_start(period) for period in periods}
        if not since:
            return {}
        return await self.log.execute(
            lambda log: {period: log.spent(start) for period, start in since.items()}
        )


def _committed(log: UsageLog) -> None:
    """Nothing: a job on the log's door, done once the rows posted before it are."""


def period_start(period: Period, now: datetime | None = None) -> float:
    """Unix time of the start of the current local day or month."""
    local = (now or datetime.now()).astimezone()
    start = local.replace(hour=0, minute=0, second=0, microsecond=0)
    if period == "month":
        start = start.replace(day=1)
    return start.timestamp()
