"""MemoryBudget's rules on their own: who is busy, who waits, who is evicted."""

from __future__ import annotations

import asyncio
import functools

from plugin_bridge.wire.budget import MemoryBudget


def test_a_holder_is_busy_only_past_the_budget_and_holding_its_share() -> None:
    budget = MemoryBudget(100)
    evicted: list[str] = []
    for name in ("big", "small", "new"):
        budget.join(name, functools.partial(evicted.append, name))
    budget.change("big", 80)
    budget.change("small", 10)
    assert not budget.busy("big", 10)  # 100: still within the budget
    assert budget.busy("big", 11)  # past it, holding more than the mean
    assert not budget.busy("small", 11)  # past it, but holding less than its share
    assert not budget.busy("new", 50)  # holds nothing: never kept waiting
    assert budget.hold("small", 20)  # counted: the largest holder goes
    assert evicted == ["big"]
    assert not budget.hold("big", 1)  # an evicted holder gets nothing more
    assert budget.refusals == 1


async def test_a_waiter_gets_the_room_others_let_go_not_a_reply_moving_to_the_socket() -> None:
    """A reply's bytes move from "being built" to "unsent" as a release and a count in the same
    step: a waiting holder must not take that room; it gets room once bytes really go out."""
    budget = MemoryBudget(100, busy_wait=5)
    budget.change("a", 90)
    waiting = asyncio.create_task(budget.reserve("a", 20))
    await asyncio.sleep(0)
    budget.change("a", -60)  # the reply is built...
    budget.change("a", 60)  # ...and handed to the socket, in one step
    await asyncio.sleep(0.01)
    assert not waiting.done() and budget.total == 90
    budget.change("a", -60)  # it went out
    assert await waiting is True
    assert budget.total == 50 and budget.refusals == 0


async def test_a_busy_holder_is_refused_after_the_wait_and_nothing_stays_counted() -> None:
    budget = MemoryBudget(100, busy_wait=0.05)
    budget.change("a", 90)
    assert await budget.reserve("a", 20) is False
    assert await budget.admit("a") is True  # within the budget: requests still run
    budget.change("a", 20)  # past it now
    assert await budget.admit("a") is False
    assert budget.total == 110 and budget.refusals == 2
