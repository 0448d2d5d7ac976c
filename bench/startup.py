"""How fast `serve` becomes reachable on examples/vault (target: info file within 1 s).

Two moments per run, measured from spawning ``python -m plugin_bridge serve``:

* info file: every setting is checked (pydantic and the settings file loaded, so a server that
  cannot work never says it listens), the port is bound and ``server.json`` written; a client
  can connect (its TCP connection waits in the backlog while the rest loads). This is the 1 s
  target (0.5 s before the settings were checked first, issue 20).
* first reply: a client that polled for the info file has connected and got its
  ``initialize`` result: pydantic, the WebSocket server and the vault index are loaded.

Runs with a fresh data dir (cold index) and again with the index from the previous run
(warm). Prints a table and writes bench/results/startup.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET_SECONDS = 1.0


async def first_reply(info: dict[str, str]) -> None:
    from websockets.asyncio.client import connect

    async with connect(info["url"], open_timeout=30) as ws:
        await ws.send(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "initialize",
                    "params": {
                        "token": info["token"],
                        "protocolVersion": 1,
                        "client": {"name": "bench", "version": "0"},
                    },
                }
            )
        )
        reply = json.loads(await ws.recv())
        assert "result" in reply, reply


def one_run(vault: Path, data_dir: Path, info_file: Path) -> tuple[float, float]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    started = time.perf_counter()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "plugin_bridge",
            "serve",
            "--vault",
            str(vault),
            "--data-dir",
            str(data_dir),
            "--info-file",
            str(info_file),
        ],
        cwd=ROOT,
        env=env,
        stderr=subprocess.DEVNULL,
    )
    try:
        while not info_file.exists():
            if process.poll() is not None:
                raise SystemExit(f"serve exited with {process.returncode}")
            time.sleep(0.001)
        to_info = time.perf_counter() - started
        asyncio.run(first_reply(json.loads(info_file.read_text())))
        to_reply = time.perf_counter() - started
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(30)
    return to_info, to_reply


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--vault", type=Path, default=ROOT / "examples" / "vault")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    results: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for label in ("cold", "warm"):
            runs = []
            for n in range(args.runs):
                data_dir = Path(tmp) / (f"cold-{n}" if label == "cold" else "warm")
                runs.append(one_run(args.vault, data_dir, Path(tmp) / "server.json"))
            results[label] = {
                "info_file_median_s": statistics.median(r[0] for r in runs),
                "info_file_max_s": max(r[0] for r in runs),
                "first_reply_median_s": statistics.median(r[1] for r in runs),
                "first_reply_max_s": max(r[1] for r in runs),
            }
    print(f"{'index':<8}{'info file (median/max)':>26}{'first reply (median/max)':>28}")
    for label, r in results.items():
        print(
            f"{label:<8}{r['info_file_median_s']:>17.3f} / {r['info_file_max_s']:.3f}"
            f"{r['first_reply_median_s']:>19.3f} / {r['first_reply_max_s']:.3f}"
        )
    worst = max(r["info_file_max_s"] for r in results.values())
    verdict = "PASS" if worst < TARGET_SECONDS else "FAIL"
    print(f"{verdict}: info file within {worst:.3f} s (target {TARGET_SECONDS} s)")
    out = ROOT / "bench" / "results"
    out.mkdir(exist_ok=True)
    (out / "startup.json").write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
