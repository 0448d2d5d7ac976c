"""Search through MCP on an N-note vault (bench/vaultgen.py), as MCP clients see it.

One ``obsidian-ai-bridge mcp`` process started by the SDK's stdio client serves the vault itself
(no server was running); a second one forwards to it over the WebSocket; the first one's HTTP
listener serves ``/mcp``. The same search_notes calls (bench/search.py's queries, interleaved)
go through each, and, as the baseline measured in the same run, through the bridge protocol's
``tools/execute`` on the WebSocket. Prints p50/p95/p99 per path and writes bench/results/mcp.json.

    .venv/bin/python -m bench.mcp_search --notes 10000     # `make bench`
    .venv/bin/python -m bench.mcp_search --notes 1000      # quick
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from bench.search import QUERIES
from bench.stats import percentile
from bench.vaultgen import generate_vault
from plugin_bridge.wire.client import BridgeClient

RESULTS = Path(__file__).resolve().parent / "results" / "mcp.json"
TARGET_P95_MS = 20.0
INDEX_WAIT_S = 900.0


async def until_indexed(client: BridgeClient, notes: int) -> float:
    """Seconds until the server's index holds every note."""
    started = time.perf_counter()
    while True:
        index = (await client.request("health"))["index"]
        if index["notes"] >= notes and not index["pending"]:
            return time.perf_counter() - started
        if time.perf_counter() - started > INDEX_WAIT_S:
            raise TimeoutError(f"the index holds {index['notes']} of {notes} notes")
        await asyncio.sleep(0.2)


async def run(notes: int, rounds: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-mcp-") as tmp:
        work = Path(tmp)
        vault = generate_vault(work / "vault", notes)
        info_file = work / "server.json"
        env = dict(os.environ, XDG_STATE_HOME=str(work / "state"))
        env["AI_BRIDGE_CONFIG"] = str(work / "none.toml")
        command = [
            "-m", "plugin_bridge", "mcp", "--vault", str(vault.root),
            "--data-dir", str(work / "data"), "--info-file", str(info_file),
        ]  # fmt: skip
        params = StdioServerParameters(command=sys.executable, args=command, env=env)
        async with AsyncExitStack() as stack:
            own = await stack.enter_async_context(Client(params))
            info = json.loads(info_file.read_text())
            bridge = await BridgeClient.connect(info["url"], info["token"])
            stack.push_async_callback(bridge.close)
            index_s = await until_indexed(bridge, vault.notes)
            forwarded = await stack.enter_async_context(Client(params))
            http = await stack.enter_async_context(
                httpx2.AsyncClient(
                    headers={"Authorization": f"Bearer {info['token']}"}, timeout=30.0
                )
            )
            transport: Any = streamable_http_client(f"{info['httpUrl']}/mcp", http_client=http)
            over_http = await stack.enter_async_context(Client(transport))

            def mcp_call(client: Client) -> Callable[[str], Awaitable[object]]:
                async def call(query: str) -> object:
                    result = await client.call_tool("search_notes", {"query": query})
                    assert not result.is_error, result
                    return result

                return call

            async def websocket(query: str) -> object:
                calls = [{"name": "search_notes", "arguments": {"query": query}}]
                return await bridge.request("tools/execute", {"calls": calls})

            paths = {
                "bridge tools/execute (WebSocket, baseline)": websocket,
                "MCP stdio, serving the vault": mcp_call(own),
                "MCP stdio, forwarded to the server": mcp_call(forwarded),
                "MCP streamable HTTP /mcp": mcp_call(over_http),
            }
            samples: dict[str, list[float]] = {name: [] for name in paths}
            for round_ in range(rounds + 1):  # round 0 warms every cache up, untimed
                for query in QUERIES:
                    for name, call in paths.items():
                        started = time.perf_counter()
                        await call(query)
                        if round_:
                            samples[name].append((time.perf_counter() - started) * 1000)
    figures = {
        name: {pct: round(percentile(ms, pct / 100), 2) for pct in (50, 95, 99)}
        for name, ms in samples.items()
    }
    baseline = figures["bridge tools/execute (WebSocket, baseline)"]
    return {
        "notes": vault.notes,
        "source": vault.source,
        "index_s": round(index_s, 1),
        "calls_per_path": rounds * len(QUERIES),
        "figures": figures,
        "ratio_p50_vs_baseline": {
            name: round(f[50] / baseline[50], 2) for name, f in figures.items()
        },
    }


def report(result: dict[str, Any]) -> str:
    lines = [
        f"{result['notes']} notes ({result['source']}), indexed in {result['index_s']} s; "
        f"{result['calls_per_path']} search_notes calls per path, interleaved",
        f"{'path':<44} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} {'p50 / baseline':>15}",
    ]
    for name, f in result["figures"].items():
        ratio = result["ratio_p50_vs_baseline"][name]
        lines.append(f"{name:<44} {f[50]:>8.2f} {f[95]:>8.2f} {f[99]:>8.2f} {ratio:>14.2f}x")
    worst = max(f[95] for name, f in result["figures"].items() if name.startswith("MCP"))
    verdict = "ok" if worst < TARGET_P95_MS else "OVER"
    lines.append(f"MCP search p95, worst path: {worst:.2f} ms: {verdict} (< {TARGET_P95_MS:g})")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=10_000, help="vault size (default 10000)")
    parser.add_argument("--rounds", type=int, default=10, help="times each query is timed")
    args = parser.parse_args()
    result = asyncio.run(run(args.notes, args.rounds))
    print(report(result))
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
