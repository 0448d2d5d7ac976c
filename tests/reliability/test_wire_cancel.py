"""A cancel that arrives before its request started still answers it, and never leaks a slot."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from plugin_bridge.wire.connection import Connection
from plugin_bridge.wire.models import ClientRequest, Empty, EmptyResult
from plugin_bridge.wire.protocol import MAX_IN_FLIGHT
from plugin_bridge.wire.rpc import Router
from tests.helpers.bridge import WAIT, running_bridge

ROUNDS = 3 * MAX_IN_FLIGHT
INIT = ClientRequest("initialize", Empty, EmptyResult)
SLOW = ClientRequest("slow", Empty, EmptyResult)


def _frame(message: dict[str, Any]) -> str:
    return json.dumps({"jsonrpc": "2.0", **message})


async def _connection() -> tuple[Connection[None], list[dict[str, Any]]]:
    """A ready connection to a router with one slow method, and the list of what it sent."""
    sent: list[dict[str, Any]] = []

    async def send(data: bytes) -> None:
        sent.append(json.loads(data))

    async def slow(ctx: Any, params: Empty) -> EmptyResult:
        await asyncio.sleep(WAIT)
        return EmptyResult()

    async def initialize(ctx: Any, params: Empty) -> EmptyResult:
        return EmptyResult()

    router: Router[None] = Router()
    router.register(INIT, initialize)
    router.register(SLOW, slow)
    connection = Connection(router, None, send)
    await connection.handle_frame(_frame({"id": 0, "method": "initialize"}))
    return connection, sent


async def test_a_cancel_before_the_task_started_is_answered_with_32800() -> None:
    """Request and cancel handled back to back (the task never ran) get -32800, round after
    round, well past the in-flight limit: no slot leaks."""
    connection, sent = await _connection()
    for request_id in range(1, ROUNDS + 1):
        await connection.handle_frame(_frame({"id": request_id, "method": "slow"}))
        await connection.handle_frame(
            _frame({"method": "$/cancelRequest", "params": {"id": request_id}})
        )
        assert connection.protocol.in_flight == 0, f"round {request_id}: the pair holds a slot"
    answers = {message["id"]: message for message in sent[1:]}
    assert sorted(answers) == list(range(1, ROUNDS + 1))
    assert all(a["error"]["code"] == -32800 for a in answers.values())
    assert connection.protocol.in_flight == 0


async def test_pipelined_request_and_cancel_pairs_never_wedge_the_connection(
    tmp_path: Path,
) -> None:
    """More pairs than the in-flight limit, sent in one burst: every request answered, then
    the connection still serves requests."""
    async with running_bridge(tmp_path) as bridge:
        wire = await bridge.wire()
        frames = []
        for request_id in range(1, ROUNDS + 1):
            frames.append(
                _frame({"id": request_id, "method": "vault/search", "params": {"query": "kafka"}})
            )
            frames.append(_frame({"method": "$/cancelRequest", "params": {"id": request_id}}))
        for frame in frames:
            await wire.ws.send(frame)
        answered = set()
        async with asyncio.timeout(WAIT):
            while len(answered) < ROUNDS:
                answered.add((await wire.recv())["id"])
        assert answered == set(range(1, ROUNDS + 1))
        assert (await wire.result("health"))["status"] == "ok"


PAIRS = 2000


async def test_2000_pipelined_pairs_never_meet_the_in_flight_limit(tmp_path: Path) -> None:
    """A request and its cancel sent back to back hold no place among the 32 in flight: of
    2,000 pairs in one burst none is refused -32003 (1,776 were before), each is cancelled or,
    when it finished first, answered."""
    async with running_bridge(tmp_path) as bridge:
        wire = await bridge.wire()
        for request_id in range(1, PAIRS + 1):
            await wire.ws.send(
                _frame({"id": request_id, "method": "vault/search", "params": {"query": "kafka"}})
            )
            await wire.ws.send(_frame({"method": "$/cancelRequest", "params": {"id": request_id}}))
        answers: dict[int, dict[str, Any]] = {}
        async with asyncio.timeout(4 * WAIT):
            while len(answers) < PAIRS:
                message = await wire.recv()
                answers[message["id"]] = message
    refused = [a for a in answers.values() if a.get("error", {}).get("code") == -32003]
    assert not refused, f"{len(refused)} of {PAIRS} pairs were refused -32003"
    assert all(a.get("error", {"code": -32800})["code"] == -32800 for a in answers.values())
