"""Load at the wire: 10,000 pipelined requests all answered; 1,000 connections opened and
dropped leave nothing behind."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from websockets.asyncio.client import connect

from tests.helpers.bridge import WAIT, init_params, running_bridge, wait_for

PIPELINED = 10_000
CONNECTIONS = 1_000


async def test_ten_thousand_pipelined_requests_are_each_answered_once(tmp_path: Path) -> None:
    """Sent without waiting: every id gets exactly one answer, a result or -32003 (over the
    in-flight limit), and the connection then still serves."""
    async with running_bridge(tmp_path) as bridge:
        wire = await bridge.wire()
        answers: dict[int, dict[str, object]] = {}

        async def read_all() -> None:
            while len(answers) < PIPELINED:
                message = await wire.recv()
                assert message["id"] not in answers, "an id was answered twice"
                answers[message["id"]] = message

        reading = asyncio.create_task(read_all())
        for request_id in range(PIPELINED):
            await wire.send({"jsonrpc": "2.0", "id": request_id, "method": "health"})
        async with asyncio.timeout(WAIT * 4):
            await reading
        ok = sum(1 for a in answers.values() if "result" in a)
        busy = sum(1 for a in answers.values() if a.get("error", {}).get("code") == -32003)
        assert ok + busy == PIPELINED and ok > 0
        assert (await wire.result("health"))["status"] == "ok"


async def test_a_thousand_connections_opened_and_dropped_leave_nothing(tmp_path: Path) -> None:
    """Half close properly, half vanish mid-request: the server forgets all of them."""
    async with running_bridge(tmp_path) as bridge:
        for n in range(CONNECTIONS):
            ws = await connect(bridge.url)
            await ws.send(
                json.dumps(
                    {
                        "jsonrpc": "2.0",
                        "id": 0,
                        "method": "initialize",
                        "params": init_params(bridge.app.token),
                    }
                )
            )
            await ws.recv()
            if n % 2:
                await ws.send(
                    json.dumps(
                        {
                            "jsonrpc": "2.0",
                            "id": 1,
                            "method": "vault/search",
                            "params": {"query": "kafka"},
                        }
                    )
                )
                ws.transport.abort()
            else:
                await ws.close()
        await wait_for(lambda: not bridge.server.connections, wait=WAIT)
        assert (await (await bridge.wire()).result("health"))["status"] == "ok"
