"""Usage and budgets: every provider call recorded, usage/summary per model, a budget that
stops chat before the provider is called, and budget/warning at 80 %."""

from __future__ import annotations

from pathlib import Path

from llm_service import ScriptedProvider, Usage
from plugin_bridge.app.conversations.usage import Budgets
from tests.helpers.bridge import running_bridge

PRICED = "claude-haiku-5-5"
"""$0.10 / $0.50 per million tokens: 1,000 in + 1,000 out cost $0.0006."""
CALL = Usage(1000, 1000)


async def test_summary_counts_priced_calls_and_never_prices_unknown_models_at_zero(
    tmp_path: Path,
) -> None:
    """A priced model's calls cost; an unknown model's calls are counted apart, cost null."""
    provider = ScriptedProvider()
    provider.enqueue_text("a", usage=CALL)
    provider.enqueue_text("b", usage=CALL)
    async with running_bridge(tmp_path / "a", provider=provider, model=PRICED) as bridge:
        wire = await bridge.wire()
        await wire.result("chat/send", {"text": "one"})
        await wire.result("chat/send", {"text": "two"})
        summary = await wire.result("usage/summary")
    today = summary["today"]
    assert round(today["costUsd"], 6) == 0.0012 and today["unpricedCalls"] == 0
    (row,) = today["byModel"]
    assert (row["model"], row["calls"], row["inputTokens"]) == (PRICED, 2, 2000)
    assert summary["month"]["costUsd"] == today["costUsd"]
    local = ScriptedProvider()
    local.enqueue_text("c", usage=CALL)
    async with running_bridge(tmp_path / "b", provider=local, model="llama3.1:8b") as bridge:
        wire = await bridge.wire()
        await wire.result("chat/send", {"text": "three"})
        summary = await wire.result("usage/summary")
    (row,) = summary["today"]["byModel"]
    assert row["costUsd"] is None and row["unpricedCalls"] == 1
    assert summary["today"]["costUsd"] is None and summary["today"]["unpricedCalls"] == 1


async def test_a_used_up_budget_stops_chat_before_the_provider_and_warns_at_80_percent(
    tmp_path: Path,
) -> None:
    """$0.001 a day: the 2nd call passes 80 % (budget/warning) and the limit; the 3rd message
    is refused with -32012 and never reaches the provider."""
    provider = ScriptedProvider()
    for text in ("a", "b"):
        provider.enqueue_text(text, usage=CALL)
    budgets = Budgets(daily_usd=0.001)
    async with running_bridge(tmp_path, provider=provider, model=PRICED, budgets=budgets) as bridge:
        wire = await bridge.wire()
        await wire.result("chat/send", {"text": "one"})
        assert not [n for n in wire.notifications if n["method"] == "budget/warning"]
        await wire.result("chat/send", {"text": "two"})
        (warning,) = [n["params"] for n in wire.notifications if n["method"] == "budget/warning"]
        assert warning["period"] == "day" and warning["budgetUsd"] == 0.001
        error = await wire.error("chat/send", {"text": "three"})
        summary = await wire.result("usage/summary")
    assert error["code"] == -32012 and "daily budget" in error["message"]
    assert error["data"]["period"] == "day" and error["data"]["budgetUsd"] == 0.001
    assert len(provider.requests) == 2
    assert summary["today"]["budgetUsd"] == 0.001


async def test_the_usage_command_prints_today_and_this_month_per_model(tmp_path: Path) -> None:
    """obsidian-ai-bridge usage reads the data folder: totals, per-model rows, unknown prices,
    and a local model's cost in the plugin's words ("free, runs on this computer")."""
    from plugin_bridge.app.conversations.usage_log import UsageLog
    from tests.helpers.serve import run_cli

    vault = tmp_path / "vault"
    vault.mkdir()
    log = UsageLog(tmp_path / "data")
    log.record("c1", "chat", "anthropic", PRICED, CALL, 0.0006)
    log.record(None, "note", "ollama", "llama3.1:8b", CALL, None)
    log.record(None, "note", "openai", "unlisted-model", CALL, None)
    log.close()
    code, out, _err = await run_cli(
        tmp_path, "usage", "--vault", str(vault), "--data-dir", str(tmp_path / "data")
    )
    assert code == 0
    assert "Today: $0.0006 (+1 calls of models without a known price)" in out
    assert "claude-haiku-5-5" in out
    rows = {line.split()[0]: line for line in out.splitlines() if line.startswith("  ")}
    assert rows["ollama:llama3.1:8b"].endswith("free, runs on this computer")
    assert rows["openai:unlisted-model"].endswith("price not known")
    assert out.count("This month: $0.0006") == 1
