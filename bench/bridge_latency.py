"""What the bridge adds to a chat turn: chat/send over the WebSocket vs LLMService called directly.

Both sides use the same ScriptedProvider answer (no network, no SDK), so the difference is the
bridge's own cost: JSON-RPC framing, validation, the chat/delta relay and the socket. Runs are
interleaved (bridge, direct, bridge, ...) so a noisy machine slows both alike. Prints p50/p95 of
each and of the difference, and writes bench/results/bridge_latency.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from bench.stats import percentile

ROOT = Path(__file__).resolve().parent.parent
ANSWER = "Kafka is an event log; see [[Projects/Kafka pipeline]] for how we use it at work."


async def measure(turns: int) -> dict[str, float]:
    from bench.bridge import serving
    from llm_service import LLMService, ScriptedProvider
    from plugin_bridge.app.settings.providers import ProviderSetup, Route
    from plugin_bridge.vault.vault import Vault
    from plugin_bridge.wire.client import BridgeClient

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "vault"
        shutil.copytree(ROOT / "examples" / "vault", root)
        async with Vault(root, Path(tmp) / "data") as vault:
            await vault.index.wait_until_idle(30)
            provider = ScriptedProvider()
            direct = LLMService(provider, model="m")
            async with serving(vault, ProviderSetup(Route(None, provider, "m"))) as served:
                app, server = served.app, served.server
                client = await BridgeClient.connect(server.url, app.token)
                bridge_ms: list[float] = []
                direct_ms: list[float] = []
                for _ in range(turns):
                    provider.enqueue_text(ANSWER)
                    started = time.perf_counter()
                    await client.request("chat/send", {"text": "What is Kafka?"})
                    bridge_ms.append((time.perf_counter() - started) * 1000)
                    provider.enqueue_text(ANSWER)
                    started = time.perf_counter()
                    async for _event in direct.stream_message("What is Kafka?"):
                        pass
                    direct_ms.append((time.perf_counter() - started) * 1000)
                    direct.clear_conversation()
                await client.close()
    added = [b - d for b, d in zip(bridge_ms, direct_ms, strict=True)]
    return {
        "turns": turns,
        "bridge_p50_ms": statistics.median(bridge_ms),
        "bridge_p95_ms": percentile(bridge_ms, 0.95),
        "direct_p50_ms": statistics.median(direct_ms),
        "direct_p95_ms": percentile(direct_ms, 0.95),
        "added_p50_ms": statistics.median(added),
        "added_p95_ms": percentile(added, 0.95),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=300)
    args = parser.parse_args()
    figures = asyncio.run(measure(args.turns))
    print(f"chat/send through the bridge vs LLMService direct, {args.turns} interleaved turns")
    print(
        f"  bridge  p50 {figures['bridge_p50_ms']:7.2f} ms   p95 {figures['bridge_p95_ms']:7.2f} ms"
    )
    print(
        f"  direct  p50 {figures['direct_p50_ms']:7.2f} ms   p95 {figures['direct_p95_ms']:7.2f} ms"
    )
    print(
        f"  added   p50 {figures['added_p50_ms']:7.2f} ms   p95 {figures['added_p95_ms']:7.2f} ms"
    )
    out = ROOT / "bench" / "results" / "bridge_latency.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
