"""The first chat right after start never races the warm-up (attack item 8 of issue 32: a
warm-up thread and the first request importing the SDK at once failed about 3 times in 10):
``serve`` with the OpenAI provider, ``chat/send`` the moment the info file appears, a few
rounds (ten under ``soak``); every one is answered."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

import pytest

from plugin_bridge.wire.client import BridgeClient
from tests.fakes import openai as fake
from tests.fakes.http import FakeHTTPServer
from tests.helpers.serve import START_WAIT, start_serve

ROUNDS = 3
ROUNDS_SOAK = 10


async def _first_chats(tmp_path: Path, fake_http: FakeHTTPServer, rounds: int) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "Note.md").write_text("# Note\n", encoding="utf-8")
    for round_number in range(rounds):
        info_file = tmp_path / f"info{round_number}.json"
        fake_http.enqueue(fake.text_reply(f"answer {round_number}"))
        served = await start_serve(
            tmp_path,
            "--info-file",
            str(info_file),
            "--provider",
            "openai",
            "--base-url",
            fake_http.url + "/v1",
            "--model",
            fake.MODEL,
            vault=vault,
            stderr=asyncio.subprocess.DEVNULL,
        )
        try:
            client = await BridgeClient.connect(str(served.info["url"]), str(served.info["token"]))
            reply = await client.request("chat/send", {"text": "hello"})
            await client.close()
        finally:
            served.process.send_signal(signal.SIGTERM)
            async with asyncio.timeout(START_WAIT):
                await served.process.wait()
        assert reply["text"] == f"answer {round_number}"


@pytest.mark.timeout(300)
async def test_the_first_chat_after_start_is_answered(
    tmp_path: Path, fake_http: FakeHTTPServer
) -> None:
    await _first_chats(tmp_path, fake_http, ROUNDS)


@pytest.mark.soak
@pytest.mark.timeout(900)
async def test_the_first_chat_after_start_is_answered_soak(
    tmp_path: Path, fake_http: FakeHTTPServer
) -> None:
    await _first_chats(tmp_path, fake_http, ROUNDS_SOAK)
