"""Acknowledged means durable: ``serve`` killed with SIGKILL right after a ``chat/send`` result,
with the CPU kept busy by child processes, lists every answered turn after the restart, and
``usage/summary`` counts every answered call. A real ``serve`` subprocess, real clients."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from plugin_bridge.wire.client import BridgeClient
from tests.fakes import ollama
from tests.fakes.http import FakeHTTPServer
from tests.helpers.serve import start_serve

ROUNDS = 10
TURNS_PER_ROUND = 2
"""Turns answered before each kill: a new conversation, then one more turn of it."""
ROUNDS_SOAK = 30
TURNS_PER_ROUND_SOAK = 10


@contextlib.asynccontextmanager
async def busy_cpu() -> AsyncIterator[None]:
    """One spinning child process per core (at least two): the server competes for the CPU."""
    spinners = [
        await asyncio.create_subprocess_exec(sys.executable, "-c", "while True: pass")
        for _ in range(max(2, os.cpu_count() or 2))
    ]
    try:
        yield
    finally:
        for spinner in spinners:
            spinner.kill()
            await spinner.wait()


async def _round(
    tmp_path: Path,
    vault: Path,
    fake_http: FakeHTTPServer,
    answered: dict[str, list[str]],
    turns: int,
) -> int:
    """Start serve, check that every turn answered so far is stored, answer ``turns`` more and
    kill -9 the moment the last result arrives; the number of answered calls so far."""
    info_file = tmp_path / "info.json"
    info_file.unlink(missing_ok=True)
    served = await start_serve(
        tmp_path,
        "--info-file",
        str(info_file),
        "--provider",
        "ollama",
        "--base-url",
        fake_http.url,
        "--model",
        ollama.MODEL,
        vault=vault,
        stderr=asyncio.subprocess.DEVNULL,
    )
    try:
        client = await _connect(served.info)
        await _check(client, answered)
        conversation: str | None = None
        for turn in range(turns):
            text = f"answer {sum(map(len, answered.values()))}"
            fake_http.enqueue(ollama.text_reply(text))
            params = {"text": f"question {turn}"}
            if conversation is not None:
                params["conversationId"] = conversation
            result = await client.request("chat/send", params)
            if turn == turns - 1:
                served.process.send_signal(signal.SIGKILL)  # the user has read the answer
            conversation = result["conversationId"]
            answered.setdefault(conversation, []).append(text)
        if not turns:
            served.process.kill()
        await served.process.wait()
        with contextlib.suppress(ConnectionError, OSError):
            await client.close()
    finally:
        if served.process.returncode is None:
            served.process.kill()
            await served.process.wait()
    return sum(map(len, answered.values()))


async def _connect(info: dict[str, object]) -> BridgeClient:
    """A client of the server ``info`` names; the busy CPU may outlast one opening handshake's
    10 s, so up to three."""
    for attempt in range(3):
        try:
            return await BridgeClient.connect(str(info["url"]), str(info["token"]))
        except TimeoutError:
            if attempt == 2:
                raise
    raise AssertionError("unreachable")


async def _check(client: BridgeClient, answered: dict[str, list[str]]) -> None:
    """Every answered turn is stored, in order; usage counts every answered call."""
    listed = {
        c["id"]
        for c in (await client.request("conversations/list", {"limit": 100}))["conversations"]
    }
    assert listed == set(answered), f"lost conversations: {set(answered) - listed}"
    for conversation, answers in answered.items():
        stored = await client.request("conversations/get", {"id": conversation})
        replies = [m["content"][0]["text"] for m in stored["messages"] if m["role"] == "assistant"]
        assert replies == answers, f"{conversation}: lost turns"
    usage = await client.request("usage/summary")
    calls = sum(row["calls"] for row in usage["today"]["byModel"])
    assert calls == sum(map(len, answered.values())), "lost usage records"


async def _kill_rounds(tmp_path: Path, fake_http: FakeHTTPServer, rounds: int, turns: int) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "Note.md").write_text("# Note\n", encoding="utf-8")
    answered: dict[str, list[str]] = {}
    async with busy_cpu():
        for _ in range(rounds):
            await _round(tmp_path, vault, fake_http, answered, turns)
        await _round(tmp_path, vault, fake_http, answered, 0)  # the last check
    assert len(answered) == rounds


@pytest.mark.timeout(600)  # eleven starts of serve while two processes spin
async def test_every_answered_turn_survives_kill_9_on_a_busy_cpu(
    tmp_path: Path, fake_http: FakeHTTPServer
) -> None:
    """10 rounds of: a few turns answered, kill -9 right after the last result, restart; every
    answered turn is listed after each restart."""
    await _kill_rounds(tmp_path, fake_http, ROUNDS, TURNS_PER_ROUND)


@pytest.mark.soak
@pytest.mark.timeout(1800)
async def test_every_answered_turn_survives_kill_9_soak(
    tmp_path: Path, fake_http: FakeHTTPServer
) -> None:
    await _kill_rounds(tmp_path, fake_http, ROUNDS_SOAK, TURNS_PER_ROUND_SOAK)
