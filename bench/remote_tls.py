"""What TLS adds: ``/chat`` through the remote listener (``serve --remote``, its self-signed
certificate) against the loopback listener, same server, same run, same fake API.

One ``serve`` process (Anthropic on the fake API of bench/fakeapi.py as the chat provider) with
``--remote 127.0.0.1:PORT``; one client key (scope chat). In this process, two httpx clients
with keep-alive (the way a bot or the plugin talks to it): plain HTTP to the loopback listener,
HTTPS to the remote one (the certificate file as its only CA). ``--calls`` interleaved rounds
of one ``POST /chat`` each, so a noisy machine slows both alike; p50 and p95 of each and the
difference. Then the handshake: a new TCP connection with a TLS handshake, against a new TCP
connection alone (``--handshakes`` of each, interleaved), and a first request on a new
connection (``GET /health``) through each listener.

Run it with ``nice -n 10 .venv/bin/python bench/remote_tls.py``; writes
bench/results/remote_tls.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import fakeapi
from bench.http_proxy import KEY, MODELS, START_WAIT, free_port
from bench.stats import percentile

ROOT = Path(__file__).resolve().parent.parent

WARMUP = 5
BODY = {"messages": [{"role": "user", "content": "What is Kafka?"}]}


def start_bridge(
    base: str, tmp: Path, remote_port: int
) -> tuple[subprocess.Popen[bytes], dict[str, Any]]:
    """``serve --remote 127.0.0.1:remote_port`` in its own process; its info file's record."""
    import shutil

    shutil.copytree(ROOT / "examples" / "vault", tmp / "vault")
    info = tmp / "server.json"
    env = {
        **os.environ,
        "ANTHROPIC_API_KEY": KEY["anthropic"],
        "AI_BRIDGE_ANTHROPIC_API_KEY_HOST": base,
        "XDG_STATE_HOME": str(tmp / "state"),
        "AI_BRIDGE_CONFIG": str(tmp / "no-settings.toml"),
    }
    process = subprocess.Popen(
        [
            *(sys.executable, "-m", "plugin_bridge", "serve", "--vault", str(tmp / "vault")),
            *("--data-dir", str(tmp / "data"), "--info-file", str(info)),
            *("--provider", "anthropic", "--model", MODELS["anthropic"], "--base-url", base),
            *("--remote", f"127.0.0.1:{remote_port}"),
        ],
        env=env,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + START_WAIT
    while not info.exists():
        if process.poll() is not None or time.monotonic() > deadline:
            raise SystemExit("the bridge did not start")
        time.sleep(0.05)
    return process, json.loads(info.read_text())


def handshakes(port: int, context: ssl.SSLContext, count: int) -> tuple[list[float], list[float]]:
    """ms of a TCP connect alone, and of a TCP connect plus a TLS handshake, interleaved."""
    tcp: list[float] = []
    tls: list[float] = []
    for _ in range(count):
        started = time.perf_counter()
        with socket.create_connection(("127.0.0.1", port)):
            tcp.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        with (
            socket.create_connection(("127.0.0.1", port)) as raw,
            context.wrap_socket(raw, server_hostname="127.0.0.1"),
        ):
            tls.append((time.perf_counter() - started) * 1000)
    return tcp, tls


async def measure(args: argparse.Namespace) -> dict[str, Any]:
    import httpx

    from plugin_bridge.app.certificate import CERT_FILE
    from plugin_bridge.app.clients import ClientKeys

    base, fake = fakeapi.start("Kafka is an event log.")
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        key = ClientKeys(tmp / "data").add("bench", "chat")
        remote_port = free_port()
        process, info = start_bridge(base, tmp, remote_port)
        try:
            context = ssl.create_default_context(cafile=str(tmp / "data" / CERT_FILE))
            headers = {"Authorization": f"Bearer {key}"}
            local = httpx.AsyncClient(base_url=info["httpUrl"], headers=headers, timeout=30)
            remote = httpx.AsyncClient(
                base_url=f"https://127.0.0.1:{remote_port}",
                headers=headers,
                timeout=30,
                verify=context,
            )
            deadline = time.monotonic() + START_WAIT
            while True:
                try:
                    if (await remote.get("/health")).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if time.monotonic() > deadline:
                    raise SystemExit("the remote listener did not answer")
                await asyncio.sleep(0.2)
            times: dict[str, list[float]] = {"loopback": [], "remote_tls": []}
            for round_ in range(WARMUP + args.calls):
                for name, client in (("loopback", local), ("remote_tls", remote)):
                    started = time.perf_counter()
                    response = await client.post("/chat", json=BODY)
                    elapsed = (time.perf_counter() - started) * 1000
                    assert response.status_code == 200, response.text
                    if round_ >= WARMUP:
                        times[name].append(elapsed)
            first: dict[str, list[float]] = {"loopback": [], "remote_tls": []}
            for _ in range(args.handshakes):
                for name, url, verify in (
                    ("loopback", info["httpUrl"], True),
                    ("remote_tls", f"https://127.0.0.1:{remote_port}", context),
                ):
                    async with httpx.AsyncClient(headers=headers, verify=verify) as fresh:
                        started = time.perf_counter()
                        assert (await fresh.get(f"{url}/health")).status_code == 200
                        first[name].append((time.perf_counter() - started) * 1000)
            await local.aclose()
            await remote.aclose()
            tcp, tls = await asyncio.to_thread(handshakes, remote_port, context, args.handshakes)
        finally:
            process.terminate()
            process.wait(10)
            fake.kill()
    result: dict[str, Any] = {}
    for name, values in times.items():
        result[f"chat_{name}_p50_ms"] = statistics.median(values)
        result[f"chat_{name}_p95_ms"] = percentile(values, 0.95)
    result["chat_tls_added_p50_ms"] = (
        result["chat_remote_tls_p50_ms"] - result["chat_loopback_p50_ms"]
    )
    result["tcp_connect_p50_ms"] = statistics.median(tcp)
    result["tcp_and_tls_handshake_p50_ms"] = statistics.median(tls)
    result["tls_handshake_added_p50_ms"] = statistics.median(tls) - statistics.median(tcp)
    for name, values in first.items():
        result[f"first_request_{name}_p50_ms"] = statistics.median(values)
    result["calls"] = args.calls
    result["handshakes"] = args.handshakes
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--handshakes", type=int, default=100)
    args = parser.parse_args()
    result = asyncio.run(measure(args))
    out = ROOT / "bench" / "results" / "remote_tls.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    for name, value in result.items():
        print(f"{name:36} {value:10.2f}" if isinstance(value, float) else f"{name:36} {value}")


if __name__ == "__main__":
    main()
