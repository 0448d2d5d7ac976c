"""Hostile local clients against the bridge (``python bench/hostile.py``): a frame flood
before and after initialize, 2,000 concurrent HTTP ``/chat``, and 20 clients that never read
their replies of a 3 MB note; the plugin's ``health`` meanwhile, and the bridge's RSS. With
``--before DIR`` the HTTP and the non-reading rounds run against that checkout's bridge too.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import multiprocessing as mp
import statistics
import time
from collections.abc import Callable
from typing import Any

from bench import fakeapi
from bench.stalls import SHORT_ANSWER, _connect, bridge_process
from bench.stats import percentile

# -- hostile local processes (--flood): frames before initialize, clients that do not read --

FLOOD_FRAMES = 20_000
GREEDY_CLIENTS = 20
GREEDY_READS = 32
BIG_NOTE_BYTES = 3_000_000


def flood_process(url: str, frames: int, token: str | None, pipe: Any) -> None:
    """Send ``frames`` health requests in one burst (after initialize when given a token),
    then read until the server closes: its close code and how many answers came."""
    import socket

    from websockets.client import ClientProtocol
    from websockets.frames import Frame, Opcode
    from websockets.uri import parse_uri

    protocol = ClientProtocol(parse_uri(url), max_size=None)
    host, port = url.removeprefix("ws://").split(":")
    sock = socket.create_connection((host, int(port)))
    protocol.send_request(protocol.connect())
    sock.sendall(b"".join(protocol.data_to_send()))
    while protocol.state.name == "CONNECTING":
        protocol.receive_data(sock.recv(65536))
    message = {"jsonrpc": "2.0", "method": "health", "params": {}}
    if token is not None:
        init = {"token": token, "protocolVersion": 1, "client": {"name": "bench", "version": "0"}}
        protocol.send_text(
            json.dumps({**message, "id": -1, "method": "initialize", "params": init}).encode()
        )
    for request_id in range(frames):
        protocol.send_text(json.dumps({**message, "id": request_id}).encode())
    started = time.perf_counter()
    with contextlib.suppress(OSError):
        sock.sendall(b"".join(protocol.data_to_send()))
    answers = 0
    sock.settimeout(60)
    while True:
        try:
            data = sock.recv(1 << 20)
        except OSError:
            data = b""
        if not data:
            break
        protocol.receive_data(data)
        answers += sum(
            isinstance(e, Frame) and e.opcode is Opcode.TEXT for e in protocol.events_received()
        )
        with contextlib.suppress(OSError):
            sock.sendall(b"".join(protocol.data_to_send()))
        if token is not None and answers >= frames + 1:  # every request answered
            break
    close = protocol.close_rcvd
    pipe.send(
        {
            "code": close.code if close else None,
            "answers": answers,
            "seconds": time.perf_counter() - started,
        }
    )
    sock.close()


async def _health_while(url: str, token: str, busy: Callable[[], bool]) -> list[float]:
    """health, one at a time, while ``busy()``; a connection the bridge dropped (its
    keepalive timed out while the loop was stuck) counts as one call of infinite latency."""
    client = await _connect(url, token)
    took: list[float] = []
    while busy() or len(took) < 20:
        started = time.perf_counter()
        try:
            reply = await client.call("health", {})
        except ConnectionError:
            took.append(float("inf"))
            while busy():  # noqa: ASYNC110 - a process, not an event, to wait for
                await asyncio.sleep(0.05)
            return took
        assert "result" in reply, reply
        took.append((time.perf_counter() - started) * 1000)
        await asyncio.sleep(0.001)
    await client.ws.close()
    return took


def _with_bridge(
    work: Callable[[str, str, Callable[[], float]], dict[str, Any]],
    api: str = "http://127.0.0.1:9",
    code: str | None = None,
) -> dict[str, Any]:
    """Run ``work(url, token, rss)`` against a bridge in its own process (``ready`` holds the
    HTTP listener's URL too)."""
    ctx = mp.get_context("spawn")
    here, there = ctx.Pipe()
    bridge = ctx.Process(target=bridge_process, args=(there, api, "gc", None, code))
    bridge.start()
    ready = here.recv()

    def rss() -> float:
        here.send("rss?")
        return float(here.recv())

    try:
        result = work(ready["url"], f"{ready['token']} {ready['http']}", rss)
    finally:
        here.send("done")
        after = here.recv()
        bridge.join(30)
    return {**result, "rss_peak_mb": after["peak"]}


def flood_round(frames: int, with_token: bool) -> dict[str, Any]:
    """A second client's health latency while one process floods ``frames`` frames."""

    def work(url: str, both: str, rss: Callable[[], float]) -> dict[str, Any]:
        token = both.split()[0]
        ctx = mp.get_context("spawn")
        here, there = ctx.Pipe()
        flooder = ctx.Process(
            target=flood_process, args=(url, frames, token if with_token else None, there)
        )

        async def measure() -> list[float]:
            flooder.start()
            return await _health_while(url, token, flooder.is_alive)

        took = asyncio.run(measure())
        outcome = here.recv()
        flooder.join(30)
        return {
            "health_p50_ms": statistics.median(took),
            "health_p99_ms": percentile(took, 0.99),
            "health_max_ms": max(took),
            "health_calls": len(took),
            **outcome,
        }

    return _with_bridge(work)


def greedy_round(clients: int, reads: int, code: str | None = None) -> dict[str, Any]:
    """``clients`` connections that never read, each asking ``reads`` reads of a 3 MB note:
    the bridge's RSS, and meanwhile (from the moment the reads are sent, for
    :data:`GREEDY_SECONDS`) ``health`` on a fresh connection each time, connect and
    initialize included."""

    def work(url: str, both: str, rss: Callable[[], float]) -> dict[str, Any]:
        token = both.split()[0]

        async def run() -> dict[str, Any]:
            writer = await _connect(url, token)
            text = "word " * (BIG_NOTE_BYTES // 5)
            await writer.call("note/create", {"path": "Big.md", "content": text})
            await writer.call("health", {})  # the tool registry is built by the first health
            before = rss()
            sockets = [_greedy(url, token, reads) for _ in range(clients)]
            took = await _fresh_health(url, token, GREEDY_SECONDS)
            loaded = rss()
            for sock in sockets:
                sock.close()
            await writer.ws.close()
            return {
                "rss_before_mb": before,
                "rss_loaded_mb": loaded,
                "fresh_health_max_ms": max(took),
                "fresh_health_p50_ms": statistics.median(took),
                "fresh_health_calls": len(took),
                "fresh_health_ms": [round(t) for t in took],
            }

        return asyncio.run(run())

    return _with_bridge(work, code=code)


GREEDY_SECONDS = 10.0


async def _fresh_health(url: str, token: str, seconds: float) -> list[float]:
    """For ``seconds``: a new connection, initialize, one ``health``, close; each one's ms
    (a connection the bridge dropped counts as infinite)."""
    took: list[float] = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        started = time.perf_counter()
        try:
            client = await _connect(url, token)
            reply = await client.call("health", {})
        except (ConnectionError, OSError):
            took.append(float("inf"))
            continue
        assert "result" in reply, reply
        took.append((time.perf_counter() - started) * 1000)
        await client.ws.close()
        await asyncio.sleep(0.05)
    return took


def _greedy(url: str, token: str, reads: int) -> Any:
    import socket

    from websockets.client import ClientProtocol
    from websockets.uri import parse_uri

    protocol = ClientProtocol(parse_uri(url), max_size=None)
    host, port = url.removeprefix("ws://").split(":")
    sock = socket.create_connection((host, int(port)))
    protocol.send_request(protocol.connect())
    sock.sendall(b"".join(protocol.data_to_send()))
    while protocol.state.name == "CONNECTING":
        protocol.receive_data(sock.recv(65536))
    init = {"token": token, "protocolVersion": 1, "client": {"name": "bench", "version": "0"}}
    frames = [{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}]
    frames += [
        {"jsonrpc": "2.0", "id": i, "method": "note/read", "params": {"path": "Big.md"}}
        for i in range(1, reads + 1)
    ]
    for frame in frames:
        protocol.send_text(json.dumps(frame).encode())
    sock.sendall(b"".join(protocol.data_to_send()))  # and never read
    return sock


HTTP_CHATS = 2000


def _http_chats_process(http: str, token: str, count: int, pipe: Any) -> None:
    """``count`` concurrent POST /chat on as many connections: how many got each status."""
    import httpx

    async def run() -> dict[int, int]:
        limits = httpx.Limits(max_connections=count, max_keepalive_connections=0)
        headers = {"Authorization": f"Bearer {token}"}
        body = {"messages": [{"role": "user", "content": "What is Kafka?"}]}
        async with httpx.AsyncClient(
            base_url=http, headers=headers, limits=limits, timeout=120
        ) as client:

            async def one() -> int:
                try:
                    return (await client.post("/chat", json=body)).status_code
                except httpx.HTTPError:
                    return 0

            statuses = await asyncio.gather(*(one() for _ in range(count)))
        counts: dict[int, int] = {}
        for status in statuses:
            counts[status] = counts.get(status, 0) + 1
        return counts

    pipe.send(asyncio.run(run()))


def http_round(count: int, code: str | None = None) -> dict[str, Any]:
    """The plugin's health (WebSocket) while ``count`` concurrent HTTP /chat run."""
    api, fake = fakeapi.start(SHORT_ANSWER)

    def work(url: str, both: str, rss: Callable[[], float]) -> dict[str, Any]:
        token, http = both.split()
        ctx = mp.get_context("spawn")
        here, there = ctx.Pipe()
        chats = ctx.Process(target=_http_chats_process, args=(http, token, count, there))

        async def measure() -> list[float]:
            chats.start()
            return await _health_while(url, token, chats.is_alive)

        took = asyncio.run(measure())
        statuses = here.recv()
        chats.join(30)
        return {
            "health_p50_ms": statistics.median(took),
            "health_p99_ms": percentile(took, 0.99),
            "health_max_ms": max(took),
            "health_calls": len(took),
            "statuses": statuses,
        }

    try:
        return _with_bridge(work, api, code)
    finally:
        fake.kill()


def flood_main(before: str | None = None) -> None:
    rows = [
        ("no token", flood_round(FLOOD_FRAMES, with_token=False)),
        ("token", flood_round(FLOOD_FRAMES, with_token=True)),
    ]
    print(
        f"A process floods {FLOOD_FRAMES:,} health frames in one burst (before initialize, or "
        "after it with the token) while another client asks health one at a time"
    )
    print(
        f"{'flood':<9} {'health p50':>10} {'p99':>8} {'max':>8} {'calls':>6} "
        f"{'flooder: answers':>16} {'close':>6} {'seconds':>8}"
    )
    for name, row in rows:
        print(
            f"{name:<9} {row['health_p50_ms']:8.1f}ms {row['health_p99_ms']:6.1f}ms "
            f"{row['health_max_ms']:6.0f}ms {row['health_calls']:>6} {row['answers']:>16} "
            f"{row['code']!s:>6} {row['seconds']:8.1f}"
        )
    for name, code in [("before", before), ("after", None)] if before else [("after", None)]:
        row = http_round(HTTP_CHATS, code)
        print(
            f"{name}: {HTTP_CHATS:,} concurrent HTTP /chat: the plugin's health p50 "
            f"{row['health_p50_ms']:.1f} ms, p99 {row['health_p99_ms']:.1f} ms, max "
            f"{row['health_max_ms']:.0f} ms ({row['health_calls']} calls); statuses "
            f"{dict(sorted(row['statuses'].items()))}"
        )
    greedy_main(before)


def greedy_main(before: str | None = None) -> None:
    for name, code in [("before", before), ("after", None)] if before else [("after", None)]:
        greedy = greedy_round(GREEDY_CLIENTS, GREEDY_READS, code)
        print(
            f"{name}: {GREEDY_CLIENTS} clients that never read, {GREEDY_READS} note/read of a "
            f"3 MB note each: bridge RSS {greedy['rss_before_mb']:.0f} MB -> "
            f"{greedy['rss_loaded_mb']:.0f} MB (peak {greedy['rss_peak_mb']:.0f} MB); health on "
            f"a fresh connection (connect and initialize included) p50 "
            f"{greedy['fresh_health_p50_ms']:.1f} ms, max {greedy['fresh_health_max_ms']:.0f} ms "
            f"({greedy['fresh_health_calls']} connections)"
        )


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(
        description="Hostile local clients against the bridge: a frame flood, 2,000 HTTP /chat "
        "at once, and 20 clients that never read (3 MB each)"
    )
    parser.add_argument(
        "--before", metavar="DIR", help="also run the bridge from this checkout, first"
    )
    parser.add_argument("--greedy", action="store_true", help="only the 20 clients that never read")
    args = parser.parse_args()
    if args.greedy:
        greedy_main(args.before)
    else:
        flood_main(args.before)
