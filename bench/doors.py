"""The attacks of issue 43 on the remote listener and MCP subscriptions, against two
checkouts in one run (``--before DIR``: e.g. a checkout of the commit before; the tree this
file is in is "after"), each with its own ``.venv``:

- silent: 400 TCP connections to the remote listener (``serve --remote 127.0.0.1:PORT`` on a
  soft limit of 256 open files) from 127.0.0.2 that never start TLS (each reopened when the
  server closes it); meanwhile, once a second, the local plugin connects afresh and reads a
  note, and the owner's remote client (127.0.0.1, a read key) gets ``/health`` over TLS;
- keyless: 80 workers opening ``/ws`` upgrades without a key from 127.0.0.2, again and again;
  meanwhile the owner's client (its key in the handshake and in ``initialize``) opens a
  WebSocket twice a second; the WARNING and ERROR lines serve logged;
- subscriptions: a read key's 8 ``subscriptions/listen`` streams of 100,000 note URIs on
  ``/mcp`` (the official SDK client); meanwhile the owner's ``note/read`` over the WebSocket.

Run as root-free: ``nice -n 10 .venv/bin/python bench/doors.py --before /path/to/checkout``;
prints one JSON object per tree and attack.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import resource
import socket
import ssl
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from bench.stats import percentile

ROOT = Path(__file__).resolve().parent.parent
FLOOD = ROOT / "tests" / "helpers" / "remote_flood.py"
NOTES = 200
SECONDS = 15.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def low_limit() -> None:
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard))


class Bridge:
    """``serve --remote`` of the checkout ``tree`` on a 200-note vault, with a read key."""

    def __init__(self, tree: Path, tmp: Path) -> None:
        self.tree, self.tmp = tree, tmp
        self.port = free_port()
        vault = tmp / "vault"
        (vault / "Bulk").mkdir(parents=True)
        for n in range(NOTES):
            (vault / "Bulk" / f"N{n}.md").write_text(f"# Note {n}\n\nText.\n", encoding="utf-8")
        self.env = {
            **os.environ,
            "HOME": str(tmp),
            "XDG_STATE_HOME": str(tmp / "state"),
            "XDG_CONFIG_HOME": str(tmp / "config"),
            "AI_BRIDGE_CONFIG": str(tmp / "none.toml"),
        }
        python = str(tree / ".venv" / "bin" / "python")
        where = ["--vault", str(vault), "--data-dir", str(tmp / "data")]
        self.key = subprocess.run(
            [python, "-m", "plugin_bridge", "clients", "add", "reader", "--scope", "read", *where],
            env=self.env,
            cwd=tree,
            capture_output=True,
            check=True,
            text=True,
        ).stdout.strip()
        self.log = open(tmp / "serve.log", "w+b")  # noqa: SIM115 - closed in stop()
        info = tmp / "server.json"
        self.process = subprocess.Popen(
            [
                python,
                "-m",
                "plugin_bridge",
                "serve",
                *where,
                "--info-file",
                str(info),
                "--remote",
                f"127.0.0.1:{self.port}",
            ],
            env=self.env,
            cwd=tree,
            stderr=self.log,
            preexec_fn=low_limit,
        )
        deadline = time.monotonic() + 60
        while not info.exists():
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise RuntimeError(f"serve did not start in {tree}")
            time.sleep(0.05)
        self.info = json.loads(info.read_text())
        time.sleep(2)

    def log_lines(self) -> int:
        """Lines at WARNING or ERROR in serve's log so far (a connection's INFO lines aside)."""
        lines = (self.tmp / "serve.log").read_bytes().splitlines()
        return sum(b" WARNING " in line or b" ERROR " in line for line in lines)

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:  # too busy to stop: the attack's own figure
            self.process.kill()
            self.process.wait()
        self.log.close()


def tls() -> ssl.SSLContext:
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


async def plugin_read(bridge: Bridge) -> float | None:
    """Seconds for a new local connection to read a note (None: it failed)."""
    from plugin_bridge.wire.client import BridgeClient

    started = time.perf_counter()
    try:
        async with asyncio.timeout(10):
            client = await BridgeClient.connect(bridge.info["url"], bridge.info["token"])
            try:
                await client.request("note/read", {"path": "Bulk/N1.md"})
            finally:
                await client.close()
    except Exception:
        return None
    return time.perf_counter() - started


async def owner_health(bridge: Bridge) -> float | None:
    started = time.perf_counter()
    try:
        async with asyncio.timeout(10):
            reader, writer = await asyncio.open_connection(
                "127.0.0.1", bridge.port, ssl=tls(), local_addr=("127.0.0.1", 0)
            )
            writer.write(
                f"GET /health HTTP/1.1\r\nHost: 127.0.0.1:{bridge.port}\r\n"
                f"Authorization: Bearer {bridge.key}\r\nConnection: close\r\n\r\n".encode()
            )
            answer = await reader.read()
            writer.close()
    except Exception:
        return None
    return time.perf_counter() - started if answer.startswith(b"HTTP/1.1 200") else None


@contextlib.asynccontextmanager
async def flood(bridge: Bridge, mode: str, count: int) -> AsyncIterator[None]:
    """tests/helpers/remote_flood.py from 127.0.0.2, in its own process."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        str(FLOOD),
        "127.0.0.1",
        str(bridge.port),
        "127.0.0.2",
        mode,
        str(count),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    assert process.stdout is not None and process.stdin is not None
    await process.stdout.readline()
    try:
        yield
    finally:
        process.stdin.close()
        process.kill()
        await process.wait()


async def silent(bridge: Bridge) -> dict[str, Any]:
    async with flood(bridge, "silent", 400):
        return await _silent_round(bridge)


async def _silent_round(bridge: Bridge) -> dict[str, Any]:
    plugin, owner = [], []
    started = time.perf_counter()
    while time.perf_counter() - started < SECONDS:
        plugin.append(await plugin_read(bridge))
        owner.append(await owner_health(bridge))
        await asyncio.sleep(1)
    return {
        "pluginReads": f"{sum(t is not None for t in plugin)}/{len(plugin)}",
        "pluginWorstS": max((t for t in plugin if t is not None), default=None),
        "ownerHealth": f"{sum(t is not None for t in owner)}/{len(owner)}",
        "ownerWorstS": max((t for t in owner if t is not None), default=None),
    }


async def keyless(bridge: Bridge) -> dict[str, Any]:
    from websockets.asyncio.client import connect

    url = f"wss://127.0.0.1:{bridge.port}/ws"

    async def owner() -> bool:
        params = {
            "token": bridge.key,
            "protocolVersion": 1,
            "client": {"name": "o", "version": "0"},
        }
        try:
            async with asyncio.timeout(5):
                async with connect(
                    url,
                    ssl=tls(),
                    additional_headers={"Authorization": f"Bearer {bridge.key}"},
                ) as ws:
                    await ws.send(
                        json.dumps(
                            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}
                        )
                    )
                    return "result" in json.loads(await ws.recv())
        except Exception:
            return False

    before = bridge.log_lines()
    tries = []
    async with flood(bridge, "keyless", 80):
        await asyncio.sleep(1)
        started = time.perf_counter()
        while time.perf_counter() - started < SECONDS:
            tries.append(await owner())
            await asyncio.sleep(0.5)
    return {
        "ownerOpened": f"{sum(tries)}/{len(tries)}",
        "logLines": bridge.log_lines() - before,
        "seconds": round(time.perf_counter() - started + 1, 1),
    }


async def subscriptions(bridge: Bridge) -> dict[str, Any]:
    from tests.helpers.mcp import http_client

    uris = [f"note://Bulk/N{n % NOTES}-{n}.md" for n in range(100_000)]
    outcome: dict[str, int] = {"refused": 0, "held": 0}

    async def stream() -> None:
        async with http_client(f"{bridge.info['httpUrl']}/mcp", bridge.key) as client:
            try:
                async with client.client.listen(resource_subscriptions=uris) as subscription:
                    outcome["held"] += 1
                    async with asyncio.timeout(SECONDS):
                        await anext(aiter(subscription))
            except TimeoutError:
                return
            except Exception:
                outcome["refused"] += 1

    from plugin_bridge.wire.client import BridgeClient

    owner = await BridgeClient.connect(bridge.info["url"], bridge.info["token"])
    streams = [asyncio.create_task(stream()) for _ in range(8)]
    times: list[float] = []
    started = time.perf_counter()
    while time.perf_counter() - started < SECONDS:
        begun = time.perf_counter()
        await owner.request("note/read", {"path": f"Bulk/N{len(times) % NOTES}.md"})
        times.append(time.perf_counter() - begun)
        await asyncio.sleep(0.05)
    await owner.close()
    for task in streams:
        task.cancel()
    await asyncio.gather(*streams, return_exceptions=True)
    return {
        "reads": len(times),
        "p95Ms": round(percentile(times, 0.95) * 1000, 1),
        "maxMs": round(max(times) * 1000, 1),
        **outcome,
    }


ATTACKS = {"silent": silent, "keyless": keyless, "subscriptions": subscriptions}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", type=Path, required=True)
    parser.add_argument("--attacks", default=",".join(ATTACKS))
    args = parser.parse_args()
    for attack in args.attacks.split(","):
        for label, tree in (("before", args.before), ("after", ROOT)):
            with tempfile.TemporaryDirectory() as tmp:
                bridge = Bridge(tree, Path(tmp))
                try:
                    result = asyncio.run(ATTACKS[attack](bridge))
                finally:
                    bridge.stop()
            load = os.getloadavg()[0]
            print(json.dumps({"attack": attack, "tree": label, "load": round(load, 1), **result}))


if __name__ == "__main__":
    main()
