"""kill -9 during concurrent writes over the wire: no note is truncated or lost, and the audit
log agrees with the files. A real ``serve`` subprocess, real WebSocket clients."""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from tests.helpers.bridge import init_params
from tests.helpers.serve import START_WAIT, serve

WRITERS = 100
"""Notes written at once, each by its own task, version after version."""
CONNECTIONS = 10
KILL_AFTER = 150
"""Acknowledged writes before the kill (the writers keep going: ~100 are in flight)."""
ROUNDS_SOAK = 10


@pytest.fixture(autouse=True)
def _state_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """default_data_dir in this process agrees with the subprocesses' XDG_STATE_HOME."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))


def version(note: int, number: int) -> str:
    """Version ``number`` of note ``note``: 8-40 KiB that say whose and which they are, so a
    torn or mixed-up file cannot pass for any version."""
    body = f"note {note} version {number} " * (300 + 1200 * ((note * 7 + number) % 5))
    return f"# Note {note}\n{body}\nend of note {note} version {number}\n"


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


class Client:
    """One connection shared by many writers: a reader task hands each reply to its caller."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self._waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._ids = itertools.count(1)
        self._reader = asyncio.create_task(self._read())

    async def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        request_id = next(self._ids)
        reply = self._waiting[request_id] = asyncio.get_running_loop().create_future()
        message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        await self.ws.send(json.dumps(message))
        return await reply

    async def _read(self) -> None:
        try:
            async for frame in self.ws:
                message = json.loads(frame)
                if "id" in message and "method" not in message:
                    self._waiting.pop(message["id"]).set_result(message)
        except ConnectionClosed:
            pass
        for reply in self._waiting.values():
            reply.set_exception(ConnectionClosed(None, None))

    async def close(self) -> None:
        await self.ws.close()
        await self._reader


@dataclass
class Writer:
    """One note's history as its writer saw it."""

    note: int
    acked: list[int] = field(default_factory=list)
    """Versions the server confirmed, in order."""
    sent: int | None = None
    """The version whose reply had not come when the server died."""

    @property
    def path(self) -> str:
        return f"crash/n{self.note:03d}.md"


async def _write_until_killed(
    client: Client, writer: Writer, acks: Counter[str], enough: asyncio.Event
) -> None:
    number = 0
    try:
        while True:
            writer.sent = number
            params: dict[str, Any] = {"path": writer.path, "content": version(writer.note, number)}
            if number:
                params["overwrite"] = True
            reply = await client.call("note/create", params)
            assert reply["result"]["hash"] == digest(version(writer.note, number)), reply
            writer.acked.append(number)
            writer.sent = None
            acks["acked"] += 1
            if acks["acked"] >= KILL_AFTER:
                enough.set()
            number += 1
    except (ConnectionClosed, OSError):
        return


async def _one_round(tmp_path: Path) -> Counter[str]:
    """Start serve, write until KILL_AFTER acks, kill -9, then check every note and the log."""
    writers = [Writer(i) for i in range(WRITERS)]
    acks: Counter[str] = Counter()
    enough = asyncio.Event()
    async with serve(tmp_path) as served:
        info = served.info
        clients = []
        for _ in range(CONNECTIONS):
            ws = await connect(str(info["url"]), open_timeout=START_WAIT, max_size=None)
            await ws.send(
                json.dumps(
                    {
                        "jsonrpc": "2.0",
                        "id": 0,
                        "method": "initialize",
                        "params": init_params(str(info["token"])),
                    }
                )
            )
            assert "result" in json.loads(await ws.recv())
            clients.append(Client(ws))
        tasks = [
            asyncio.create_task(_write_until_killed(clients[w.note % CONNECTIONS], w, acks, enough))
            for w in writers
        ]
        async with asyncio.timeout(START_WAIT):
            await enough.wait()
        served.process.kill()
        await served.process.wait()
        async with asyncio.timeout(START_WAIT):
            await asyncio.gather(*tasks)
        for client in clients:
            await client.close()
    return _check(tmp_path / "vault", tmp_path / "data" / "audit.jsonl", writers) + acks


def _check(vault: Path, audit_file: Path, writers: list[Writer]) -> Counter[str]:
    """Every note holds a whole version: its last acknowledged one or the one in flight; every
    acknowledged write is in the audit log, and each file's hash is its last logged one (or
    the in-flight write's, when the kill fell between its rename and its log line)."""
    seen: Counter[str] = Counter()
    lines = audit_file.read_text(encoding="utf-8").splitlines()
    entries = [json.loads(line) for line in lines]  # no torn line either
    logged: dict[str, list[str]] = {}
    for entry in entries:
        logged.setdefault(entry["path"], []).append(entry["newHash"])
    for writer in writers:
        file = vault / writer.path
        allowed = {writer.acked[-1]} if writer.acked else set()
        if writer.sent is not None:
            allowed.add(writer.sent)
        if not file.exists():
            assert not writer.acked, f"{writer.path}: acknowledged, then lost"
            seen["never written"] += 1
            continue
        text = file.read_text(encoding="utf-8")
        matches = [n for n in allowed if text == version(writer.note, n)]
        assert matches, f"{writer.path}: {len(text)} chars, not a whole version of {allowed}"
        history = logged.get(writer.path, [])
        acked_hashes = [digest(version(writer.note, n)) for n in writer.acked]
        assert history[: len(acked_hashes)] == acked_hashes, f"{writer.path}: audit disagrees"
        if history and history[-1] == digest(text):
            seen["file = last audit entry"] += 1
        else:
            assert matches == [writer.sent], f"{writer.path}: file is not its last audit entry"
            seen["renamed, killed before its audit line"] += 1
        seen["in flight at the kill"] += writer.sent is not None
        seen["whole notes"] += 1
    return seen


async def test_kill_9_during_100_concurrent_writes_loses_and_tears_nothing(
    tmp_path: Path,
) -> None:
    """A server killed mid-write leaves each note whole (last confirmed or in-flight version),
    no confirmed write is lost, and the audit log agrees with the files."""
    seen = await _one_round(tmp_path)
    print(dict(seen))
    assert seen["acked"] >= KILL_AFTER and seen["whole notes"] + seen["never written"] == WRITERS
    assert seen["in flight at the kill"] > 0, seen


@pytest.mark.soak
async def test_kill_9_again_and_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ten kill -9 rounds on fresh copies: the same guarantees every time."""
    total: Counter[str] = Counter()
    for round_number in range(ROUNDS_SOAK):
        home = tmp_path / f"round{round_number}"
        monkeypatch.setenv("XDG_STATE_HOME", str(home / "state"))
        total += await _one_round(home)
    assert total["whole notes"] + total["never written"] == WRITERS * ROUNDS_SOAK
    print(dict(total))
