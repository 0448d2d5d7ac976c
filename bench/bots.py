"""How soon an allowed user sees the answer in Telegram and Discord: from the user's message to
the first edit (the streamed message appears) and to the last (the whole answer, formatted),
against a real ``serve`` with the fake model (the Ollama stand-in streaming a 600-character
answer in 4-character pieces, as fast as it can) and the Bot API and Discord stand-ins
(tests/fakes). The last edit waits the one-second spacing of edits after the first.

    .venv/bin/python bench/bots.py [--questions 10]

Prints p50 / max per app and writes bench/results/bots.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.fakes import ollama
from tests.fakes.discord import FakeDiscord
from tests.fakes.http import FakeHTTPServer
from tests.fakes.telegram import FakeTelegram
from tests.helpers.bridge import copy_example_vault, wait_for
from tests.reliability.test_bots_serve import USER, health_bots, start, write_config

ANSWER = ("The plan has three steps; see [[Projects/Plan]] for the details. " * 10)[:600]


async def main(questions: int) -> dict[str, Any]:
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        os.environ["XDG_STATE_HOME"] = str(tmp / "state")
        vault = copy_example_vault(tmp)
        async with FakeHTTPServer() as model, FakeTelegram() as telegram, FakeDiscord() as discord:
            write_config(tmp / "config.toml", telegram, discord)
            served = await start(tmp, vault, model, tmp / "serve.log")
            try:
                running = {"telegram": "running", "discord": "running"}
                for _ in range(600):  # both bots polling, within a minute
                    if await health_bots(served) == running:
                        break
                    await asyncio.sleep(0.1)
                await asyncio.sleep(1)  # the first long poll is under way
                for app in ("telegram", "discord"):
                    first, last = [], []
                    for n in range(questions):
                        model.enqueue(ollama.text_reply(ANSWER))
                        sent = time.monotonic()
                        if app == "telegram":
                            telegram.send(USER, f"question {n}")
                            await wait_for(lambda n=n: len(telegram.chat(USER)) > n, 30)
                            message = telegram.chat(USER)[n]
                            await wait_for(lambda m=message: m.parse_modes[-1] is not None, 30)
                            times = message.times
                        else:
                            await discord.send(USER, f"question {n}")
                            await wait_for(lambda n=n: len(discord.channel(USER)) > n, 30)
                            posted = discord.channel(USER)[n]
                            await wait_for(lambda p=posted: p.text == ANSWER.strip(), 30)
                            times = posted.times
                        first.append(times[0] - sent)
                        last.append(times[-1] - sent)
                    results[app] = {
                        "first_edit_p50_s": round(statistics.median(first), 3),
                        "first_edit_max_s": round(max(first), 3),
                        "last_edit_p50_s": round(statistics.median(last), 3),
                        "last_edit_max_s": round(max(last), 3),
                    }
            finally:
                served.process.send_signal(signal.SIGTERM)
                await served.process.wait()
    results["load_average"] = os.getloadavg()
    return results


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--questions", type=int, default=10)
    figures = asyncio.run(main(parser.parse_args().questions))
    print(json.dumps(figures, indent=2))
    out = Path(__file__).resolve().parent / "results" / "bots.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(figures, indent=2) + "\n")
