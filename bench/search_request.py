"""A lexical ``vault/search``'s work on the server, in-process, for the checkout in the current
folder (so that another checkout is measured by running this file from its folder):

    cd CHECKOUT && python /path/to/bench/search_request.py --vault VAULT --data DIR [--rounds N]

Per search (``bench/serve_index.py``'s 14 queries, limit 10), p50 wall time and mean CPU of
``SearchIndex.search``, ``Vault.search`` (the read door's hop and the whole search) and one
request frame through ``Connection.handle_frame`` until its reply is sent (params model,
search, results model, JSON; no socket). ``--profile PREFIX`` writes cProfile stats of the
frames (``PREFIX.loop.prof``) and of the door thread's work (``PREFIX.thread.prof``).
``DIR`` keeps the index between runs (the first run builds it: give each checkout its own);
``VAULT`` e.g. ``bench.vaultgen.generate_vault(Path(VAULT), 10000, shared)``.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import os
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, os.getcwd())  # the checkout measured, ahead of this file's own

from bench.serve_index import QUERIES
from tests.helpers.bridge import running_bridge

Timed = Callable[[str], Awaitable[None]]


async def sample(steps: dict[str, Timed], rounds: int) -> dict[str, float]:
    """p50 ms and mean CPU ms of each step, interleaved query by query."""
    walls: dict[str, list[float]] = {name: [] for name in steps}
    cpu = dict.fromkeys(steps, 0.0)
    for query in QUERIES:  # warm-up
        for step in steps.values():
            await step(query)
    for _ in range(rounds):
        for query in QUERIES:
            for name, step in steps.items():
                clock, begun = time.process_time(), time.perf_counter()
                await step(query)
                walls[name].append((time.perf_counter() - begun) * 1000)
                cpu[name] += time.process_time() - clock
    count = rounds * len(QUERIES)
    figures = {f"{name}_p50_ms": round(statistics.median(ms), 3) for name, ms in walls.items()}
    return figures | {f"{name}_cpu_ms": round(cpu[name] / count * 1000, 3) for name in steps}


def frame_sender(bridge: Any) -> Callable[[str, dict[str, Any]], Awaitable[bytes]]:
    """A connection of the bridge's server that is handed frames directly; the returned
    coroutine sends one request and waits for its reply's bytes."""
    from plugin_bridge.wire.connection import Connection

    loop = asyncio.get_running_loop()
    reply: list[asyncio.Future[bytes]] = [loop.create_future()]
    server = bridge.server

    async def send(data: bytes) -> None:
        if not reply[0].done():
            reply[0].set_result(data)

    connection: Any = Connection(
        server.router,
        bridge.app,
        send,
        account=lambda delta: server.budget.change(connection, delta),
        reserve=lambda size: server.budget.reserve(connection, size),
    )
    ids = iter(range(1, 1 << 30))

    async def call(method: str, params: dict[str, Any]) -> bytes:
        reply[0] = loop.create_future()
        message = {"jsonrpc": "2.0", "id": next(ids), "method": method, "params": params}
        await connection.handle_frame(json.dumps(message))
        return await reply[0]

    return call


async def measure(vault_root: Path, data: Path, rounds: int, profile: str | None) -> None:
    async with running_bridge(data, vault_root=vault_root) as bridge:
        vault, call = bridge.vault, frame_sender(bridge)
        hello = {"name": "bench", "version": "0"}
        await call("initialize", {"token": bridge.app.token, "protocolVersion": 1, "client": hello})

        async def index(query: str) -> None:
            vault.index.search(query, 10)

        async def door(query: str) -> None:
            await vault.search(query, 10, "lexical")

        async def request(query: str) -> None:
            await call("vault/search", {"query": query, "limit": 10, "mode": "lexical"})

        steps: dict[str, Timed] = {"index": index, "vault": door, "frame": request}
        print(json.dumps(await sample(steps, rounds)))
        if profile:
            await profiled(vault, request, rounds, profile)


async def profiled(vault: Any, request: Timed, rounds: int, prefix: str) -> None:
    """cProfile of ``rounds`` rounds of requests: the event loop's and the door thread's."""
    thread, loop = cProfile.Profile(), cProfile.Profile()
    execute = vault.index.execute
    vault.index.execute = lambda reads: execute(lambda reader: thread.runcall(reads, reader))
    loop.enable()
    for _ in range(rounds):
        for query in QUERIES:
            await request(query)
    loop.disable()
    vault.index.execute = execute
    loop.dump_stats(f"{prefix}.loop.prof")
    thread.dump_stats(f"{prefix}.thread.prof")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vault", type=Path, required=True)
    parser.add_argument("--data", type=Path, required=True, help="the index's folder")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--profile", help="write PREFIX.loop.prof and PREFIX.thread.prof")
    args = parser.parse_args()
    args.data.mkdir(parents=True, exist_ok=True)
    asyncio.run(measure(args.vault, args.data, args.rounds, args.profile))


if __name__ == "__main__":
    main()
