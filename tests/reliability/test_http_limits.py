"""No HTTP client can make the listener hold time, sockets, queued requests, running requests or
log lines without bound (docs/http.md, Limits): over real sockets, with small limits so the
tests are fast. The full sizes are the ``soak`` test at the end."""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest

from llm_service.providers.scripted import ScriptedProvider
from plugin_bridge.httpapi.limits import HttpLimits
from tests.helpers.bridge import WAIT, Bridge, running_bridge, wait_for

TIMEOUT = 0.5
LIMITS = HttpLimits(
    timeout=TIMEOUT,
    max_pipelined=4,
    max_pipelined_all=6,
    max_per_client=2,
    max_requests=3,
    max_connections=64,
)


@asynccontextmanager
async def http_bridge(
    tmp_path: Path, limits: HttpLimits = LIMITS, **kw: object
) -> AsyncIterator[Bridge]:
    async with running_bridge(tmp_path, http=True, http_limits=limits, **kw) as bridge:  # type: ignore[arg-type]
        yield bridge


async def raw(bridge: Bridge) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    host, port = bridge.http_url.removeprefix("http://").split(":")
    return await asyncio.open_connection(host, int(port))


async def closed_after(reader: asyncio.StreamReader) -> tuple[float, bytes]:
    """Read until the server closes: how long that took, and what came."""
    started = time.monotonic()
    received = b""
    async with asyncio.timeout(WAIT):
        while True:
            try:
                data = await reader.read(65536)
            except ConnectionError:
                data = b""
            if not data:
                return time.monotonic() - started, received
            received += data


def head(bridge: Bridge, method: str = "GET", path: str = "/health", extra: str = "") -> bytes:
    port = bridge.http_url.rsplit(":", 1)[1]
    return (
        f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
        f"Authorization: Bearer {bridge.app.token}\r\n{extra}\r\n"
    ).encode()


async def test_an_idle_connection_is_closed(tmp_path: Path) -> None:
    async with http_bridge(tmp_path) as bridge:
        reader, writer = await raw(bridge)
        took, received = await closed_after(reader)
        writer.close()
    assert received == b""
    assert TIMEOUT * 0.8 < took < TIMEOUT + 5


async def test_a_connection_idle_after_an_answer_is_closed(tmp_path: Path) -> None:
    async with http_bridge(tmp_path) as bridge:
        reader, writer = await raw(bridge)
        writer.write(head(bridge))
        took, received = await closed_after(reader)
        writer.close()
    assert received.startswith(b"HTTP/1.1 200")
    assert took < TIMEOUT + 5


async def test_a_slow_request_head_is_closed(tmp_path: Path) -> None:
    """A header sent a byte at a time, each byte well within the timeout: the head as a whole
    must come within it."""
    async with http_bridge(tmp_path) as bridge:
        reader, writer = await raw(bridge)
        writer.write(b"GET /health HTTP/1.1\r\nX-Slow: ")

        async def trickle() -> None:
            while True:
                await asyncio.sleep(TIMEOUT / 5)
                writer.write(b"a")

        sender = asyncio.create_task(trickle())
        took, received = await closed_after(reader)
        sender.cancel()
        writer.close()
    assert received == b""
    assert took < 2 * TIMEOUT + 5


async def test_a_slow_body_is_closed(tmp_path: Path) -> None:
    async with http_bridge(tmp_path) as bridge:
        reader, writer = await raw(bridge)
        writer.write(head(bridge, "POST", "/chat", "Content-Length: 1000\r\n") + b'{"messa')
        took, _ = await closed_after(reader)
        writer.close()
        async with bridge_client(bridge) as client:  # the listener still serves others
            assert (await client.get("/health")).status_code == 200
    assert took < TIMEOUT + 5


async def test_open_connections_are_capped(tmp_path: Path) -> None:
    """Past the cap a new connection is closed at once (file handles stay for the vault and the
    plugin); once the idle ones are gone, connections are served again."""
    limits = HttpLimits(timeout=10, max_connections=4)  # closed at once, not when idle
    async with http_bridge(tmp_path, limits) as bridge:
        held = [await raw(bridge) for _ in range(4)]
        reader, writer = await raw(bridge)
        took, received = await closed_after(reader)
        writer.close()
        assert received == b"" and took < 5
        for _, idle in held:
            idle.close()
        await asyncio.sleep(0.2)
        async with bridge_client(bridge) as client:
            assert (await client.get("/health")).status_code == 200


async def test_a_huge_request_head_is_closed(tmp_path: Path) -> None:
    async with http_bridge(tmp_path) as bridge:
        reader, writer = await raw(bridge)
        writer.write(b"GET /health HTTP/1.1\r\nX-Big: " + b"a" * 200_000)
        _, received = await closed_after(reader)
        writer.close()
    assert received == b""


async def test_requests_pipelined_without_reading_are_bounded(tmp_path: Path) -> None:
    """5,000 requests in one write, answers never read: the connection is dropped once more
    than 4 queue, far fewer than 5,000 are answered, and nothing stays counted."""
    async with http_bridge(tmp_path) as bridge:
        reader, writer = await raw(bridge)
        writer.write(head(bridge) * 5000)
        _, received = await closed_after(reader)
        writer.close()
        assert received.count(b"HTTP/1.1 200") < 50
        async with bridge_client(bridge) as client:
            assert (await client.get("/health")).status_code == 200


async def test_pipelined_requests_are_bounded_over_all_connections(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """With room for 100 on one connection but 6 in all, the bound in all drops it."""
    limits = HttpLimits(timeout=TIMEOUT, max_pipelined=100, max_pipelined_all=6)
    async with http_bridge(tmp_path, limits) as bridge:
        reader, writer = await raw(bridge)
        with caplog.at_level(logging.WARNING, logger="plugin_bridge.httpapi"):
            writer.write(head(bridge) * 5000)
            _, received = await closed_after(reader)
        writer.close()
    assert received.count(b"HTTP/1.1 200") < 50
    assert any("more than 6 requests queued in all" in r.getMessage() for r in caplog.records)


async def test_requests_running_at_once_are_bounded_per_client_and_in_all(
    tmp_path: Path,
) -> None:
    """Two requests of the token hold their bodies back (running, waiting for the body): the
    third gets 429 busy at once; once they end, requests are served again."""
    limits = HttpLimits(timeout=10, max_per_client=2, max_requests=3)  # bodies held for long
    async with http_bridge(tmp_path, limits) as bridge:
        ends = []
        for _ in range(2):
            reader, writer = await raw(bridge)
            writer.write(head(bridge, "POST", "/chat", "Content-Length: 100\r\n") + b"{")
            ends.append((reader, writer))
        async with bridge_client(bridge) as client:
            busy = await until_busy(client)
            assert busy.json()["error"] == "busy"
            assert busy.headers["retry-after"] == "1"
            for _, writer in ends:
                writer.close()
            await asyncio.sleep(0.2)
            assert (await client.get("/health")).status_code == 200


async def test_all_clients_together_are_bounded(tmp_path: Path) -> None:
    limits = HttpLimits(timeout=10, max_per_client=10, max_requests=2)
    async with http_bridge(tmp_path, limits) as bridge:
        ends = []
        for _ in range(2):
            reader, writer = await raw(bridge)
            writer.write(head(bridge, "POST", "/chat", "Content-Length: 100\r\n") + b"{")
            ends.append((reader, writer))
        async with bridge_client(bridge) as client:
            busy = await until_busy(client)
        for _, writer in ends:
            writer.close()
    assert "too many HTTP requests" in busy.json()["message"]


async def test_refused_requests_are_logged_once_a_second_with_a_count(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """300 requests with a wrong token: the first is logged at once, the rest as counts, at
    most a line a second."""
    async with http_bridge(tmp_path) as bridge:
        with caplog.at_level(logging.WARNING, logger="plugin_bridge.httpapi"):
            started = time.monotonic()
            async with bridge_client(bridge, token="wrong") as client:
                for _ in range(300):
                    assert (await client.get("/health")).status_code == 401
            took = time.monotonic() - started
            await asyncio.sleep(1.2)  # the count of the last second comes within the second
    lines = [r.getMessage() for r in caplog.records if r.name.startswith("plugin_bridge.httpapi")]
    assert (
        "HTTP: refused a request to /health: Authentication failed: missing or wrong client key"
        in lines[0]
    )
    assert 2 <= len(lines) <= took + 2, lines
    counts = [1 if line.startswith("HTTP: refused") else int(line.split()[1]) for line in lines]
    assert sum(counts) == 300, lines


async def test_a_large_body_over_the_memory_budget_is_refused(tmp_path: Path) -> None:
    """The HTTP listener counts bodies in the server's one budget: 3 MiB against 1 MiB."""
    async with http_bridge(tmp_path, server_options={"memory_budget": 1024 * 1024}) as bridge:
        async with bridge_client(bridge) as client:
            reply = await client.post("/chat", content=b"x" * (3 * 1024 * 1024))
        assert reply.status_code == 503, reply.text
        assert reply.json()["error"] == "busy"
        assert bridge.server.budget.total == 0


async def until_busy(client: httpx.AsyncClient) -> httpx.Response:
    """GET /health until it is refused 429 (the held requests have reached the app)."""
    async with asyncio.timeout(WAIT):
        while True:
            reply = await client.get("/health")
            if reply.status_code == 429:
                return reply
            await asyncio.sleep(0.02)


@asynccontextmanager
async def bridge_client(
    bridge: Bridge, token: str | None = None
) -> AsyncIterator[httpx.AsyncClient]:
    headers = {"Authorization": f"Bearer {token or bridge.app.token}"}
    async with httpx.AsyncClient(base_url=bridge.http_url, headers=headers, timeout=WAIT) as client:
        yield client


@pytest.mark.soak
async def test_soak_pipelining_without_reading_for_3_s_keeps_memory_flat(tmp_path: Path) -> None:
    """The attack of the issue (861 MB in 2.9 s): tiny requests pipelined for 3 s on 8
    connections at the default limits, answers never read; RSS grows by under 50 MB."""
    from tests.reliability.test_wire_flood import _rss_mb

    async with running_bridge(tmp_path, http=True) as bridge:
        before = _rss_mb()
        request = head(bridge) * 1000

        async def attack() -> None:
            deadline = time.monotonic() + 3
            while time.monotonic() < deadline:
                try:
                    _, writer = await raw(bridge)
                    while time.monotonic() < deadline:
                        writer.write(request)
                        await asyncio.wait_for(writer.drain(), 1)
                except (ConnectionError, TimeoutError):
                    await asyncio.sleep(0.01)

        await asyncio.gather(*(attack() for _ in range(8)))
        grown = _rss_mb() - before
        async with bridge_client(bridge) as client:
            assert (await client.get("/health")).status_code == 200
    assert grown < 50, f"RSS grew by {grown:.0f} MB"


CHATS_SCRIPT = """
import asyncio, collections, json, sys
import httpx

async def main():
    url, token = sys.argv[1:3]
    limits = httpx.Limits(max_connections=2000, max_keepalive_connections=0)
    body = {"messages": [{"role": "user", "content": "Hi"}]}
    async with httpx.AsyncClient(
        base_url=url, headers={"Authorization": "Bearer " + token}, limits=limits, timeout=120
    ) as client:
        replies = await asyncio.gather(
            *(client.post("/chat", json=body) for _ in range(2000)), return_exceptions=True
        )
    print(json.dumps(collections.Counter(
        str(r.status_code) if isinstance(r, httpx.Response) else type(r).__name__
        for r in replies
    )))

asyncio.run(main())
"""


@pytest.mark.soak
async def test_soak_2000_concurrent_http_chats_leave_the_plugins_health_under_100_ms(
    tmp_path: Path,
) -> None:
    """2,000 concurrent POST /chat (each on its own connection) while the plugin asks health on
    the WebSocket: health p99 under 100 ms; each chat is answered, refused 429, or its
    connection dropped past the open-connection cap."""
    from llm_service import ScriptedProvider

    provider = ScriptedProvider()
    for _ in range(2000):
        provider.enqueue_text("An answer.")
    async with running_bridge(tmp_path, provider=provider, http=True) as bridge:
        wire = await bridge.wire()
        assert (await wire.result("health"))["status"] == "ok"
        took: list[float] = []
        done = asyncio.Event()

        async def ask() -> None:
            while not done.is_set():
                started = time.perf_counter()
                assert (await wire.result("health"))["status"] == "ok"
                took.append((time.perf_counter() - started) * 1000)
                await asyncio.sleep(0.02)

        asker = asyncio.create_task(ask())
        chats = await asyncio.create_subprocess_exec(  # the load's own process and loop
            sys.executable,
            "-c",
            CHATS_SCRIPT,
            bridge.http_url,
            bridge.app.token,
            stdout=asyncio.subprocess.PIPE,
        )
        out, _ = await chats.communicate()
        done.set()
        await asker
    statuses = json.loads(out)
    # answered, refused (429), or dropped at once past the open-connection cap
    dropped = {"ReadError", "RemoteProtocolError", "ConnectError"}
    assert sum(statuses.values()) == 2000 and set(statuses) <= {"200", "429", *dropped}, statuses
    p99 = sorted(took)[int(0.99 * (len(took) - 1))]
    assert p99 < 100, f"health p99 {p99:.0f} ms over {len(took)} calls"


async def test_a_stream_the_client_does_not_read_is_dropped_and_let_go(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """An SSE stream (``/chat/stream``) whose client reads nothing: its events count in the
    memory budget until the client takes them, the connection is dropped once the client has
    taken nothing for the timeout, nothing stays held, and the plugin is served meanwhile."""
    provider = ScriptedProvider()
    provider.enqueue_text(("x" * 10_000 + " ") * 3_000)  # a delta per word: 30 MB of events
    limits = HttpLimits(timeout=1.0)
    caplog.set_level(logging.WARNING, logger="plugin_bridge.httpapi")
    async with http_bridge(tmp_path, limits, provider=provider) as bridge:
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.setblocking(False)
        host, port = bridge.http_url.removeprefix("http://").split(":")
        await asyncio.get_running_loop().sock_connect(sock, (host, int(port)))
        reader, writer = await asyncio.open_connection(sock=sock)
        body = json.dumps({"messages": [{"role": "user", "content": "hi"}]}).encode()
        extra = f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
        writer.write(head(bridge, "POST", "/chat/stream", extra) + body)  # and read nothing

        def dropped() -> bool:
            return any("read none of its answer" in r.getMessage() for r in caplog.records)

        await wait_for(dropped)
        wire = await bridge.wire()
        assert (await wire.result("health"))["status"] == "ok"
        await wait_for(lambda: bridge.server.budget.total == 0)
        _, received = await closed_after(reader)
        writer.close()
    assert received.startswith(b"HTTP/1.1 200")
    assert len(received) < 20_000_000  # the rest of the answer was never made
