"""The bots against a real ``serve`` subprocess with the fake model: the Telegram and Discord
stand-ins started here, the settings file naming them (api_url), the tokens kept out of every
log line (httpx logs Telegram's request URLs, which hold the token, at INFO), ``health``
reporting each bot, and no update answered twice after a kill -9 and a restart that gets the
answered update again."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

import tomli_w

from plugin_bridge.wire.client import BridgeClient
from tests.fakes import ollama
from tests.fakes.discord import TOKEN as DISCORD_TOKEN
from tests.fakes.discord import FakeDiscord
from tests.fakes.http import FakeHTTPServer
from tests.fakes.telegram import TOKEN as TELEGRAM_TOKEN
from tests.fakes.telegram import FakeTelegram
from tests.helpers.bots import USER
from tests.helpers.bridge import copy_example_vault, wait_for
from tests.helpers.serve import Served, start_serve

WAIT = 30.0


def write_config(path: Path, telegram: FakeTelegram, discord: FakeDiscord) -> None:
    path.write_text(
        tomli_w.dumps(
            {
                "telegram": {
                    "allowed_users": [USER],
                    "api_url": telegram.url,
                    "scope": "write",
                },
                "discord": {"allowed_users": [USER], "api_url": discord.url},
            }
        )
    )


async def start(tmp_path: Path, vault: Path, model: FakeHTTPServer, log: Path) -> Served:
    env = {
        "AI_BRIDGE_CONFIG": str(tmp_path / "config.toml"),
        "AI_BRIDGE_TELEGRAM_BOT_TOKEN": TELEGRAM_TOKEN,
        "AI_BRIDGE_DISCORD_BOT_TOKEN": DISCORD_TOKEN,
    }
    info_file = tmp_path / "info.json"
    info_file.unlink(missing_ok=True)
    with log.open("ab") as out:
        return await start_serve(
            tmp_path,
            "--info-file",
            str(info_file),
            "--provider",
            "ollama",
            "--base-url",
            model.url,
            "--model",
            ollama.MODEL,
            vault=vault,
            stderr=out,
            env=env,
        )


async def health_bots(served: Served) -> dict[str, str]:
    client = await BridgeClient.connect(str(served.info["url"]), str(served.info["token"]))
    try:
        health = await client.request("health")
    finally:
        await client.close()
    bots: dict[str, str] = health["bots"]
    return bots


async def test_both_bots_in_serve_answer_once_and_never_log_a_token(
    tmp_path: Path, fake_http: FakeHTTPServer
) -> None:
    vault = copy_example_vault(tmp_path)
    log = tmp_path / "serve.log"
    async with FakeTelegram() as telegram, FakeDiscord() as discord:
        write_config(tmp_path / "config.toml", telegram, discord)
        served = await start(tmp_path, vault, fake_http, log)
        try:
            async with asyncio.timeout(WAIT):
                while (bots := await health_bots(served)) != {
                    "telegram": "running",
                    "discord": "running",
                }:
                    assert all(s in ("starting", "running") for s in bots.values()), bots
                    await asyncio.sleep(0.1)
            fake_http.enqueue(ollama.text_reply("Telegram answer. " * 10))
            telegram.send(USER, "A question from Telegram")
            await wait_for(lambda: any(m.parse_modes[-1] for m in telegram.chat(USER)), WAIT)
            fake_http.enqueue(ollama.text_reply("Discord answer."))
            await discord.send(USER, "A question from Discord")
            await wait_for(
                lambda: any(m.text == "Discord answer." for m in discord.channel(USER)), WAIT
            )
            served.process.send_signal(signal.SIGKILL)  # right after the answers
            await served.process.wait()

            telegram.redeliver = True  # the Bot API hands out the answered update again
            discord.identified.clear()
            replayed = discord.dispatched[-1]
            served = await start(tmp_path, vault, fake_http, log)
            await wait_for(discord.identified.is_set, WAIT)
            await discord.dispatch(replayed["t"], replayed["d"])  # the answered message again
            telegram.send(USER, "/help")
            await wait_for(lambda: len(telegram.chat(USER)) == 2, WAIT)
            await discord.send(USER, "/help")
            await wait_for(lambda: len(discord.channel(USER)) == 2, WAIT)
            assert "/note" in telegram.chat(USER)[1].text
            assert len(fake_http.requests) == 2, "no question answered twice"
        finally:
            if served.process.returncode is None:
                served.process.send_signal(signal.SIGTERM)
                await served.process.wait()
    text = log.read_text(encoding="utf-8", errors="replace")
    assert "/bot<bot token>/getUpdates" in text, "httpx's request lines are there, scrubbed"
    assert TELEGRAM_TOKEN not in text
    assert DISCORD_TOKEN not in text
    assert TELEGRAM_TOKEN.split(":")[1] not in text
