"""A read key's subscription flood: many ``subscriptions/listen`` streams of many note URIs on
``/mcp``, and thousands of handshake-era subscriptions over the stdio ``mcp`` command, while
the owner reads notes over the WebSocket. Past the limits (docs/mcp.md) each is refused with a
sentence, and the owner's ``note/read`` p95 stays under 500 ms.

``make test`` runs them small; ``make soak`` at the issue's size (8 streams of 100,000 URIs;
20,000 subscriptions over stdio).
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time
import warnings
from pathlib import Path

import pytest
from mcp.shared.exceptions import MCPError

from plugin_bridge.app.clients import ClientKeys
from plugin_bridge.app.subscriptions import MAX_URIS_PER_STREAM
from plugin_bridge.wire.client import BridgeClient
from tests.helpers.mcp import HeldClient, http_client, mcp_command
from tests.helpers.serve import START_WAIT, cli_env, start_serve

NOTES = 200


def small_vault(tmp: Path) -> Path:
    vault = tmp / "vault"
    (vault / "Bulk").mkdir(parents=True)
    for n in range(NOTES):
        (vault / "Bulk" / f"N{n}.md").write_text(f"# Note {n}\n\nText {n}.\n", encoding="utf-8")
    return vault


def uris(count: int) -> list[str]:
    return [f"note://Bulk/N{n % NOTES}-{n}.md" for n in range(count)]


async def owner_read_p95(info: dict[str, object], reads: int, stop: asyncio.Event) -> float:
    """p95 seconds of the owner's note/read over the WebSocket, while the flood runs."""
    owner = await BridgeClient.connect(str(info["url"]), str(info["token"]))
    times: list[float] = []
    try:
        while len(times) < reads or not stop.is_set():
            started = time.perf_counter()
            await owner.request("note/read", {"path": f"Bulk/N{len(times) % NOTES}.md"})
            times.append(time.perf_counter() - started)
            await asyncio.sleep(0.02)
    finally:
        await owner.close()
    return statistics.quantiles(times, n=20)[-1]


async def listen_flood(tmp: Path, streams: int, per_stream: int) -> None:
    vault = small_vault(tmp)
    key = ClientKeys(tmp / "data").add("reader", "read")
    served = await start_serve(tmp, "--info-file", str(tmp / "server.json"), vault=vault)
    try:
        url = f"{served.info['httpUrl']}/mcp"
        stop = asyncio.Event()

        async def flood() -> list[str]:
            refused: list[str] = []
            async with http_client(url, key) as client:

                async def one() -> None:
                    try:
                        async with client.client.listen(
                            resource_subscriptions=uris(per_stream)
                        ) as subscription:
                            await anext(aiter(subscription))
                    except MCPError as exc:
                        refused.append(str(exc))

                await asyncio.gather(*(one() for _ in range(streams)))
            stop.set()
            return refused

        reading = asyncio.create_task(owner_read_p95(served.info, 20, stop))
        refused = await flood()
        p95 = await reading
    finally:
        served.process.terminate()
        await served.process.wait()
    assert len(refused) == streams
    assert all(f"One stream follows at most {MAX_URIS_PER_STREAM} notes" in r for r in refused)
    assert p95 < 0.5, p95


async def stdio_flood(tmp: Path, subscriptions: int) -> None:
    vault = small_vault(tmp)
    env = cli_env(tmp) | {"AI_BRIDGE_CONFIG": str(tmp / "none.toml")}
    info_file = tmp / "server.json"
    legacy = await HeldClient(
        mcp_command(vault, tmp / "data", env, "--info-file", str(info_file)), mode="legacy"
    ).open()
    try:
        async with asyncio.timeout(START_WAIT):
            while not info_file.exists():  # noqa: ASYNC110 (a file, not an event, to wait for)
                await asyncio.sleep(0.05)
        stop = asyncio.Event()
        reading = asyncio.create_task(owner_read_p95(json.loads(info_file.read_text()), 20, stop))
        accepted, refused = 0, []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # resources/subscribe: deprecated from 2026-07-28
            for n in range(subscriptions):
                try:
                    await legacy.client.subscribe_resource(f"note://Bulk/N{n % NOTES}-{n}.md")
                    accepted += 1
                except MCPError as exc:
                    refused.append(str(exc))
        stop.set()
        p95 = await reading
    finally:
        await legacy.close()
    assert accepted == MAX_URIS_PER_STREAM
    assert len(refused) == subscriptions - MAX_URIS_PER_STREAM
    assert "One stream follows at most" in refused[0]
    assert p95 < 0.5, p95


async def test_listen_streams_over_the_cap_are_refused_and_the_owner_reads(
    tmp_path: Path,
) -> None:
    await listen_flood(tmp_path, streams=8, per_stream=5_000)


async def test_stdio_subscriptions_over_the_cap_are_refused_and_the_owner_reads(
    tmp_path: Path,
) -> None:
    await stdio_flood(tmp_path, subscriptions=MAX_URIS_PER_STREAM + 100)


@pytest.mark.soak
async def test_soak_eight_listen_streams_of_100_000_uris(tmp_path: Path) -> None:
    await listen_flood(tmp_path, streams=8, per_stream=100_000)


@pytest.mark.soak
async def test_soak_20_000_stdio_subscriptions(tmp_path: Path) -> None:
    await stdio_flood(tmp_path, subscriptions=20_000)
