"""``usage``: what the model cost today and this month, per model, read from the data folder."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import TextIO

from llm_service.profiles import PROFILES
from plugin_bridge.app.conversations.usage import Budgets, Period, Spending
from plugin_bridge.app.conversations.usage_log import (
    OLD_USAGE_FILE,
    USAGE_FILE,
    ModelUsage,
    UsageLog,
)
from plugin_bridge.vault.datadir import data_dir_for

LOCAL_PROVIDERS = frozenset(name for name, profile in PROFILES.items() if profile.local)
"""Providers whose models run on this computer: nothing is paid per token."""
LOCAL_COST = "free, runs on this computer"
"""The one wording of a local model's cost (the plugin's chat, rewrite and phone say the same)."""


def report(data_dir: Path, out: TextIO) -> int:
    if not any((data_dir / name).exists() for name in (USAGE_FILE, OLD_USAGE_FILE)):
        out.write("No usage recorded yet for this vault.\n")
        return 0
    by_period = asyncio.run(_read(data_dir))
    periods: tuple[tuple[Period, str], ...] = (("day", "Today"), ("month", "This month"))
    for period, label in periods:
        rows = by_period[period]
        priced = [row.cost_usd for row in rows if row.cost_usd is not None]
        unpriced = sum(row.unpriced_calls for row in rows if row.provider not in LOCAL_PROVIDERS)
        local = all(row.provider in LOCAL_PROVIDERS for row in rows)
        total = (
            f"${sum(priced):.4f}"
            if priced or not rows
            else (LOCAL_COST if local else "price not known")
        )
        note = f" (+{unpriced} calls of models without a known price)" if unpriced else ""
        out.write(f"{label}: {total}{note}\n")
        for row in rows:
            cost = _cost(row.cost_usd, row.provider)
            model = f"{row.provider}:{row.model}" if row.provider else row.model
            out.write(
                f"  {model:<36} {row.calls:>5} calls {row.input_tokens:>9} in "
                f"{row.output_tokens:>8} out  {cost}\n"
            )
    return 0


async def _read(data_dir: Path) -> dict[Period, list[ModelUsage]]:
    """Today's and this month's calls per model, read on the log's door."""
    log = UsageLog(data_dir)
    try:
        return await Spending(log, Budgets()).by_period()
    finally:
        await log.execute(UsageLog.close)


def _cost(cost_usd: float | None, provider: str) -> str:
    if cost_usd is not None:
        return f"${cost_usd:.4f}"
    return LOCAL_COST if provider in LOCAL_PROVIDERS else "price not known"


def run(vault: Path, data_dir: Path | None) -> int:
    return report(data_dir_for(vault.expanduser(), data_dir), sys.stdout)
