"""What committing a turn before its reply costs: ``chat/send`` p50 with the turn committed
before the result (now) and after it (the baseline, ``live.COMMIT_BEFORE_REPLY = False``).

One in-process bridge over a real WebSocket, the same ScriptedProvider answer for every turn,
the two modes interleaved turn by turn so a noisy machine slows both alike; half the turns start
a conversation, half continue one. Prints p50/p95 of the whole turn (request to result) and of
the first ``chat/delta`` in each mode, and writes bench/results/turn_commit.json.
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
from typing import Any

from bench.stats import percentile

ROOT = Path(__file__).resolve().parent.parent
ANSWER = "Kafka is an event log; see [[Projects/Kafka pipeline]] for how we use it at work."
MODES = ("durable", "late")


async def measure(turns: int) -> dict[str, Any]:
    from bench.bridge import serving
    from llm_service import ScriptedProvider
    from plugin_bridge.app.conversations import live
    from plugin_bridge.app.settings.providers import ProviderSetup, Route
    from plugin_bridge.vault.vault import Vault
    from plugin_bridge.wire.client import BridgeClient

    whole: dict[str, list[float]] = {mode: [] for mode in MODES}
    first: dict[str, list[float]] = {mode: [] for mode in MODES}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "vault"
        shutil.copytree(ROOT / "examples" / "vault", root)
        async with Vault(root, Path(tmp) / "data") as vault:
            await vault.index.wait_until_idle(30)
            provider = ScriptedProvider()
            async with serving(vault, ProviderSetup(Route(None, provider, "m"))) as served:
                app, server = served.app, served.server
                delta_at: list[float] = []

                def on_notification(method: str, _params: dict[str, Any]) -> None:
                    if method == "chat/delta" and not delta_at:
                        delta_at.append(time.perf_counter())

                client = await BridgeClient.connect(
                    server.url, app.token, on_notification=on_notification
                )
                conversations: dict[str, str | None] = dict.fromkeys(MODES)
                for turn in range(turns):
                    for mode in MODES if turn % 2 else MODES[::-1]:
                        live.COMMIT_BEFORE_REPLY = mode == "durable"
                        params: dict[str, Any] = {"text": "What is Kafka?"}
                        if turn % 2 and conversations[mode] is not None:
                            params["conversationId"] = conversations[mode]
                        provider.enqueue_text(ANSWER)
                        delta_at.clear()
                        started = time.perf_counter()
                        result = await client.request("chat/send", params)
                        whole[mode].append((time.perf_counter() - started) * 1000)
                        first[mode].append((delta_at[0] - started) * 1000)
                        conversations[mode] = result["conversationId"]
                        await app.conversations.settled()  # the baseline's write is not billed
                await client.close()
    live.COMMIT_BEFORE_REPLY = True
    figures: dict[str, Any] = {"turns": turns}
    for mode in MODES:
        figures[f"{mode}_p50_ms"] = statistics.median(whole[mode])
        figures[f"{mode}_p95_ms"] = percentile(whole[mode], 0.95)
        figures[f"{mode}_first_delta_p50_ms"] = statistics.median(first[mode])
    figures["added_p50_ms"] = figures["durable_p50_ms"] - figures["late_p50_ms"]
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=300)
    args = parser.parse_args()
    figures = asyncio.run(measure(args.turns))
    print(f"chat/send, turn committed before vs after the reply, {args.turns} interleaved turns")
    for mode in MODES:
        print(
            f"  {mode:8} whole turn p50 {figures[f'{mode}_p50_ms']:6.2f} ms"
            f"  p95 {figures[f'{mode}_p95_ms']:6.2f} ms"
            f"  first chat/delta p50 {figures[f'{mode}_first_delta_p50_ms']:6.2f} ms"
        )
    print(f"  added by the commit: p50 {figures['added_p50_ms']:+.2f} ms")
    out = ROOT / "bench" / "results" / "turn_commit.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
