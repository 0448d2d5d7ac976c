"""The remote listener under floods from another device (a network namespace: needs root), on
a soft limit of 256 open files: silent TCP connections that never start TLS, and keyless
WebSocket upgrades, while the local plugin and the owner's remote client keep working.

``make test`` runs them at a smaller size; ``make soak`` at the size of the issue (400 silent
connections; 80 keyless upgrades held open, 300 refused handshakes).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import resource
import socket
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from plugin_bridge.app.clients import ClientKeys
from plugin_bridge.wire.client import BridgeClient
from tests.conftest import REPO_ROOT
from tests.helpers.netns import Device
from tests.helpers.serve import Served, start_serve

CLIENT = REPO_ROOT / "tests" / "helpers" / "remote_client.py"
FLOOD = REPO_ROOT / "tests" / "helpers" / "remote_flood.py"
SOFT_LIMIT = 256


@dataclass
class Listener:
    served: Served
    device: Device
    port: int
    key: str
    fingerprint: str
    log: list[str] = field(default_factory=list)
    """serve's stderr lines, as they come."""


def _low_file_limit() -> None:
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    resource.setrlimit(resource.RLIMIT_NOFILE, (SOFT_LIMIT, hard))


@pytest.fixture
async def listener(tmp_path: Path, another_device: Device) -> AsyncIterator[Listener]:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "Plan.md").write_text("# Plan\n\nStep 1: start.\n", encoding="utf-8")
    key = ClientKeys(tmp_path / "data").add("owner-phone", "read")
    with socket.socket() as probe:
        probe.bind((another_device.host, 0))
        port = int(probe.getsockname()[1])
    served = await start_serve(
        tmp_path,
        "--info-file",
        str(tmp_path / "info.json"),
        "--remote",
        f"{another_device.host}:{port}",
        vault=vault,
        preexec=_low_file_limit,
    )
    assert served.process.stderr is not None
    fingerprint = ""
    while not fingerprint:
        line = (await served.process.stderr.readline()).decode()
        assert line, "serve stopped before printing the certificate's fingerprint"
        if line.startswith("TLS certificate fingerprint (SHA-256): "):
            fingerprint = line.split(": ")[1].strip()
    found = Listener(served, another_device, port, key, fingerprint)

    async def collect(stream: asyncio.StreamReader) -> None:
        while line := await stream.readline():
            found.log.append(line.decode(errors="replace"))

    reading = asyncio.create_task(collect(served.process.stderr))
    try:
        yield found
    finally:
        served.process.kill()
        await served.process.wait()
        reading.cancel()


async def in_namespace(device: Device, script: Path, *args: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        "ip",
        "netns",
        "exec",
        device.namespace,
        sys.executable,
        str(script),
        *args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )


async def line_of(process: asyncio.subprocess.Process) -> dict[str, Any]:
    assert process.stdout is not None
    async with asyncio.timeout(60):
        line = await process.stdout.readline()
    assert line, "the script in the namespace stopped"
    result: dict[str, Any] = json.loads(line)
    return result


async def step(process: asyncio.subprocess.Process, **command: Any) -> dict[str, Any]:
    assert process.stdin is not None
    process.stdin.write((json.dumps(command) + "\n").encode())
    await process.stdin.drain()
    return await line_of(process)


@contextlib.asynccontextmanager
async def attacker(listener: Listener, mode: str, count: int) -> AsyncIterator[dict[str, Any]]:
    """The flood script from the device's first address; yields its first report and, once
    the block ends, its last one in the same dict under ``"end"``."""
    source = listener.device.addresses[0]
    args = (listener.device.host, str(listener.port), source, mode, str(count))
    flood = await in_namespace(listener.device, FLOOD, *args)
    report = await line_of(flood)
    try:
        yield report
    finally:
        assert flood.stdin is not None
        flood.stdin.close()
        if mode == "keyless":
            report["end"] = await line_of(flood)
        flood.kill()
        await flood.wait()


@contextlib.asynccontextmanager
async def owner_device(listener: Listener) -> AsyncIterator[asyncio.subprocess.Process]:
    """The owner's remote client (tests/helpers/remote_client.py), from the second address."""
    args = (listener.device.host, str(listener.port), listener.fingerprint)
    client = await in_namespace(listener.device, CLIENT, *args)
    try:
        yield client
    finally:
        client.kill()
        await client.wait()


async def plugin_reads_a_note(listener: Listener) -> float:
    """Seconds for the local plugin to connect afresh and read a note."""
    started = time.perf_counter()
    info = listener.served.info
    plugin = await BridgeClient.connect(str(info["url"]), str(info["token"]))
    try:
        note = await plugin.request("note/read", {"path": "Plan.md"})
    finally:
        await plugin.close()
    assert "Step 1" in str(note)
    return time.perf_counter() - started


async def owner_health(listener: Listener, client: asyncio.subprocess.Process) -> float:
    started = time.perf_counter()
    quiet = listener.device.addresses[1]
    answer = await step(client, op="http", path="/health", key=listener.key, source=quiet)
    assert answer.get("status") == 200, answer
    return time.perf_counter() - started


async def silent_flood(listener: Listener, count: int, rounds: int) -> None:
    async with owner_device(listener) as client, attacker(listener, "silent", count) as report:
        assert report["open"] == count  # the kernel took them all: the server decides
        for _ in range(rounds):
            assert await plugin_reads_a_note(listener) < 2.0
            assert await owner_health(listener, client) < 5.0
            await asyncio.sleep(1)
    assert not [line for line in listener.log if "Traceback" in line or "ERROR" in line]


async def keyless_flood(listener: Listener, workers: int, refusals: int, seconds: float) -> None:
    async with owner_device(listener) as client:
        async with attacker(listener, "keyless", workers) as report:
            logged = len(listener.log)
            started = time.perf_counter()
            await asyncio.sleep(1)
            quiet = listener.device.addresses[1]
            opened = await step(client, op="open", name="owner", key=listener.key, source=quiet)
            assert opened.get("result"), opened
            called = await step(client, op="call", name="owner", method="health", params={})
            assert called.get("result"), called
            await asyncio.sleep(seconds - (time.perf_counter() - started))
            lines = listener.log[logged:]
            took = time.perf_counter() - started
        assert report["end"]["opened"] == 0 and report["end"]["refused"] >= refusals, report
    assert not [line for line in lines if "ERROR" in line or "Traceback" in line]
    refusals_logged = [line for line in lines if "refused" in line or "closed a" in line]
    assert len(refusals_logged) <= took + 2, refusals_logged  # one line a second, with a count


async def test_silent_connections_leave_the_plugin_and_the_owner_working(
    listener: Listener,
) -> None:
    """300 TCP connections that never start TLS, on a soft limit of 256 open files."""
    await silent_flood(listener, 300, rounds=2)


async def test_keyless_upgrades_leave_a_keyed_client_connecting(listener: Listener) -> None:
    """20 workers opening keyless /ws upgrades: each is refused before it takes a slot, the
    owner's keyed WebSocket connects, and 100 refusals add a line a second at most."""
    await keyless_flood(listener, 20, 100, seconds=5)


@pytest.mark.soak
async def test_soak_400_silent_connections(listener: Listener) -> None:
    await silent_flood(listener, 400, rounds=10)


@pytest.mark.soak
async def test_soak_80_keyless_upgrades_and_300_refusals(listener: Listener) -> None:
    await keyless_flood(listener, 80, 300, seconds=15)
