"""resources/list through MCP on an N-note vault: every page's time, as an MCP client pages.

One ``obsidian-ai-bridge mcp`` process started by the SDK's stdio client serves a vault of N
short notes in 100 folders (the listing reads the index's notes table, so what a note holds
does not matter); a second one forwards to it (its pages come over the WebSocket's
``vault/list``); the first one's HTTP listener serves ``/mcp``. Each client pages through the
whole vault ``--rounds`` times (with the SDK's response cache bypassed). The baseline, measured
in the same run on the same connections: ``resources/templates/list`` (one template: the
transport's own round trip; 2026-07-28 has no ``ping``). Prints
p50/p95/max per path and writes bench/results/mcp_resources.json.

    nice .venv/bin/python bench/mcp_resources.py --notes 50000    # the issue's figure
    nice .venv/bin/python bench/mcp_resources.py --notes 5000     # quick
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from bench.stats import percentile
from plugin_bridge.wire.client import BridgeClient

RESULTS = Path(__file__).resolve().parent / "results" / "mcp_resources.json"
TARGET_MS = 100.0
LEGACY = "2025-11-25"
RAW = "/mcp, plain JSON-RPC posts (no SDK client)"
INDEX_WAIT_S = 1800.0


def make_vault(root: Path, notes: int) -> None:
    for n in range(notes):
        folder = root / f"Folder {n % 100:02}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"Note {n:06}.md").write_text(f"# Note {n}\n\nA short note.\n", encoding="utf-8")


async def until_indexed(client: BridgeClient, notes: int) -> float:
    started = time.perf_counter()
    while True:
        index = (await client.request("health"))["index"]
        if index["notes"] >= notes and not index["pending"]:
            return time.perf_counter() - started
        if time.perf_counter() - started > INDEX_WAIT_S:
            raise TimeoutError(f"the index holds {index['notes']} of {notes} notes")
        await asyncio.sleep(0.5)


async def page_through(client: Client) -> tuple[int, list[float]]:
    """Notes listed and each page's milliseconds."""
    listed, times, cursor = 0, [], None
    while True:
        started = time.perf_counter()
        page = await client.list_resources(cursor=cursor, cache_mode="bypass")
        times.append((time.perf_counter() - started) * 1000)
        listed += len(page.resources)
        cursor = page.next_cursor
        if cursor is None:
            return listed, times


async def page_through_raw(http: httpx2.AsyncClient, url: str) -> tuple[int, list[float]]:
    """The same over /mcp as plain JSON-RPC posts (the stateless handshake-era path, no SDK
    client): the server's answer without the client's parsing of 500 resources."""
    headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": LEGACY}
    listed, times, cursor = 0, [], None
    while True:
        params = {"cursor": cursor} if cursor else {}
        body = {"jsonrpc": "2.0", "id": 1, "method": "resources/list", "params": params}
        started = time.perf_counter()
        response = await http.post(url, json=body, headers=headers)
        result = response.json()["result"]
        times.append((time.perf_counter() - started) * 1000)
        listed += len(result["resources"])
        cursor = result.get("nextCursor")
        if cursor is None:
            return listed, times


async def run(notes: int, rounds: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-mcp-resources-") as tmp:
        work = Path(tmp)
        make_vault(work / "vault", notes)
        info_file = work / "server.json"
        env = dict(os.environ, XDG_STATE_HOME=str(work / "state"))
        env["AI_BRIDGE_CONFIG"] = str(work / "none.toml")
        command = [
            "-m", "plugin_bridge", "mcp", "--vault", str(work / "vault"),
            "--data-dir", str(work / "data"), "--info-file", str(info_file),
        ]  # fmt: skip
        params = StdioServerParameters(command=sys.executable, args=command, env=env)
        async with AsyncExitStack() as stack:
            own = await stack.enter_async_context(Client(params))
            info = json.loads(info_file.read_text())
            bridge = await BridgeClient.connect(info["url"], info["token"])
            stack.push_async_callback(bridge.close)
            index_s = await until_indexed(bridge, notes)
            forwarded = await stack.enter_async_context(Client(params))
            http = await stack.enter_async_context(
                httpx2.AsyncClient(
                    headers={"Authorization": f"Bearer {info['token']}"}, timeout=60.0
                )
            )
            transport: Any = streamable_http_client(f"{info['httpUrl']}/mcp", http_client=http)
            over_http = await stack.enter_async_context(Client(transport))
            clients = {
                "MCP stdio, serving the vault": own,
                "MCP stdio, forwarded to the server": forwarded,
                "MCP streamable HTTP /mcp": over_http,
            }
            pages: dict[str, list[float]] = {name: [] for name in [*clients, RAW]}
            pings: dict[str, list[float]] = {name: [] for name in [*clients, RAW]}
            for round_ in range(rounds + 1):  # round 0 warms up, untimed
                for name, client in clients.items():
                    listed, times = await page_through(client)
                    assert listed == notes, (name, listed)
                    started = time.perf_counter()
                    await client.list_resource_templates(cache_mode="bypass")
                    ping = (time.perf_counter() - started) * 1000
                    if round_:
                        pages[name] += times
                        pings[name].append(ping)
                listed, times = await page_through_raw(http, f"{info['httpUrl']}/mcp")
                assert listed == notes, (RAW, listed)
                if round_:
                    pages[RAW] += times
            pings[RAW] = pings["MCP streamable HTTP /mcp"]
    figures = {
        name: {
            "pages": len(ms),
            "p50": round(percentile(ms, 0.5), 2),
            "p95": round(percentile(ms, 0.95), 2),
            "max": round(max(ms), 2),
            "baseline_p50": round(percentile(pings[name], 0.5), 2),
        }
        for name, ms in pages.items()
    }
    return {"notes": notes, "index_s": round(index_s, 1), "rounds": rounds, "figures": figures}


def report(result: dict[str, Any]) -> str:
    lines = [
        f"{result['notes']} notes, indexed in {result['index_s']} s; the whole list paged "
        f"{result['rounds']} times per path (200 notes a page)",
        f"{'path':<44} {'pages':>6} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8} {'baseline p50':>13}",
    ]
    for name, f in result["figures"].items():
        lines.append(
            f"{name:<44} {f['pages']:>6} {f['p50']:>8.2f} {f['p95']:>8.2f} {f['max']:>8.2f} "
            f"{f['baseline_p50']:>13.2f}"
        )
    worst = max(f["max"] for f in result["figures"].values())
    verdict = "ok" if worst < TARGET_MS else "OVER"
    lines.append(f"slowest page: {worst:.2f} ms: {verdict} (< {TARGET_MS:g})")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=50_000, help="vault size (default 50000)")
    parser.add_argument("--rounds", type=int, default=3, help="times each path pages through")
    args = parser.parse_args()
    result = asyncio.run(run(args.notes, args.rounds))
    print(report(result))
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
