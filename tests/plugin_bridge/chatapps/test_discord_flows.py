"""The Discord bot end to end in this process: hikari pointed at the REST and gateway
stand-in (tests/fakes/discord.py), the fake Ollama model, a copy of examples/vault."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from PIL import Image
from pydantic import SecretStr

from plugin_bridge.app.settings.config import DiscordSettings
from tests.fakes import ollama
from tests.fakes.discord import TOKEN, FakeDiscord, PostedMessage
from tests.fakes.http import FakeHTTPServer, Recorded, Reply
from tests.helpers.bots import STRANGER, USER, running_bots
from tests.helpers.bridge import wait_for


def settings(api: FakeDiscord, **extra: Any) -> DiscordSettings:
    values: dict[str, Any] = {
        "bot_token": SecretStr(TOKEN),
        "allowed_users": (USER,),
        "api_url": api.url,
        "scope": "write",
    }
    return DiscordSettings(**(values | extra))


async def test_a_direct_message_is_answered_by_editing_one_message(
    tmp_path: Path, fake_http: FakeHTTPServer, discord_api: FakeDiscord
) -> None:
    answer = "The plan has **three** steps: `a_b` and more. " * 4
    fake_http.enqueue(ollama.text_reply(answer))
    bot = settings(discord_api)
    async with running_bots(tmp_path, fake_http, discord=bot, edit_interval=0.05) as bots:
        assert bots.bots.states[0].state == "running"
        assert {c["name"] for c in discord_api.commands} == {"note", "search", "new", "help"}
        await discord_api.send(USER, "What is the plan?")
        await wait_for(lambda: any(m.text == answer.strip() for m in discord_api.channel(USER)))
        [message] = discord_api.channel(USER)
        assert len(message.texts) >= 2, "streamed by edits"
        assert discord_api.typing


async def test_a_write_is_approved_with_a_button(
    tmp_path: Path, fake_http: FakeHTTPServer, discord_api: FakeDiscord
) -> None:
    call = ("call_1", "create_note", {"path": "Ideas/Kites.md", "content": "# Kites"})
    fake_http.enqueue(ollama.tool_reply([call]))
    fake_http.enqueue(ollama.text_reply("Written."))
    async with running_bots(tmp_path, fake_http, discord=settings(discord_api)) as bots:
        await discord_api.send(USER, "Make a note about kites")
        await wait_for(lambda: any(m.buttons for m in discord_api.channel(USER)))
        review: PostedMessage = next(m for m in discord_api.channel(USER) if m.buttons)
        assert [b["label"] for b in review.buttons] == ["Approve", "Deny"]
        assert "Ideas/Kites.md" in review.text
        await discord_api.press(USER, review, "Approve")
        await wait_for(lambda: any("Written" in m.text for m in discord_api.channel(USER)))
        assert (bots.vault / "Ideas" / "Kites.md").exists()
        assert "Approved" in review.text and not review.buttons
        assert discord_api.callbacks and discord_api.callbacks[0]["type"] == 4


async def test_slash_commands_and_typed_commands_make_no_model_call(
    tmp_path: Path, fake_http: FakeHTTPServer, discord_api: FakeDiscord
) -> None:
    async with running_bots(tmp_path, fake_http, discord=settings(discord_api)) as bots:
        await discord_api.command(USER, "note", "Slash captured")
        await discord_api.send(USER, "/note Typed captured")
        await discord_api.command(USER, "search", "welcome")
        await wait_for(lambda: len(discord_api.channel(USER)) >= 3)
        inbox = (bots.vault / "Inbox.md").read_text(encoding="utf-8")
        assert "Slash captured" in inbox and "Typed captured" in inbox
        assert any("Welcome" in m.text for m in discord_api.channel(USER))
        assert fake_http.requests == []


async def test_a_rate_limit_is_waited_out(
    tmp_path: Path, fake_http: FakeHTTPServer, discord_api: FakeDiscord
) -> None:
    answer = "Slow and steady."
    fake_http.enqueue(ollama.text_reply(answer))
    discord_api.rate_limit["POST messages"] = [1.0]
    async with running_bots(tmp_path, fake_http, discord=settings(discord_api)):
        await discord_api.send(USER, "Hello")
        await wait_for(lambda: any(m.text == answer for m in discord_api.channel(USER)))
        [(_, limited_at)] = discord_api.limited
        [message] = discord_api.channel(USER)
        assert message.times[0] - limited_at >= 1.0


async def test_a_long_answer_is_split_within_2000_characters(
    tmp_path: Path, fake_http: FakeHTTPServer, discord_api: FakeDiscord
) -> None:
    answer = "\n\n".join(f"Paragraph {n}. " + "word " * 60 for n in range(30))[:10_000]
    fake_http.enqueue(ollama.text_reply(answer, stream=False))
    async with running_bots(tmp_path, fake_http, discord=settings(discord_api)):
        await discord_api.send(USER, "Everything")
        await wait_for(lambda: len(discord_api.channel(USER)) >= 5)
        await wait_for(
            lambda: " ".join(m.text for m in discord_api.channel(USER)).split() == answer.split()
        )
        assert all(len(m.text) <= 2000 for m in discord_api.channel(USER))


async def test_a_stranger_gets_one_reply_and_a_redelivered_message_is_skipped(
    tmp_path: Path, fake_http: FakeHTTPServer, discord_api: FakeDiscord
) -> None:
    async with running_bots(tmp_path, fake_http, discord=settings(discord_api)):
        await discord_api.send(STRANGER, "hi")
        await wait_for(lambda: len(discord_api.channel(STRANGER)) == 1)
        assert discord_api.channel(STRANGER)[0].text == "This assistant is private."
        await discord_api.send(USER, "/help")
        await wait_for(lambda: len(discord_api.channel(USER)) == 1)
        again = discord_api.dispatched[-1]
        await discord_api.dispatch(again["t"], again["d"])  # the same message id again
        await discord_api.send(USER, "/new")
        await wait_for(lambda: len(discord_api.channel(USER)) == 2)
        assert "new conversation" in discord_api.channel(USER)[1].text
        assert fake_http.requests == []


async def test_an_image_in_a_dm_lands_in_the_vault_and_reaches_the_model_as_an_image(
    tmp_path: Path, fake_http: FakeHTTPServer, discord_api: FakeDiscord
) -> None:
    image = io.BytesIO()
    Image.new("RGB", (8, 8), "green").save(image, "PNG")
    chats = [ollama.text_reply("A green square.")]

    def route(request: Recorded) -> Reply:
        if request.path == "/api/show":
            return Reply.json({"capabilities": ["completion", "tools", "vision"]})
        return chats.pop(0)

    fake_http.route = route
    async with running_bots(tmp_path, fake_http, discord=settings(discord_api)) as bots:
        attachment = ("square.png", "image/png", image.getvalue())
        await discord_api.send(USER, "What is this?", attachment=attachment)
        await wait_for(lambda: any("green square" in m.text for m in discord_api.channel(USER)))
        assert (bots.vault / "Attachments" / "square.png").read_bytes() == image.getvalue()
        chat = next(r for r in fake_http.requests if r.path == "/api/chat").json()
        assert chat["messages"][-1]["content"].startswith("What is this?")
        assert chat["messages"][-1]["images"], "sent as an image"
