"""The Telegram bot end to end in this process: python-telegram-bot pointed at the Bot API
stand-in (tests/fakes/telegram.py), the fake Ollama model, a copy of examples/vault."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from pydantic import SecretStr

from plugin_bridge.app.settings.config import TelegramSettings
from tests.fakes import ollama
from tests.fakes.http import FakeHTTPServer, Recorded, Reply
from tests.fakes.telegram import TOKEN, FakeTelegram, SentMessage, plain_of
from tests.helpers.bots import OTHER_USER, STRANGER, USER, running_bots
from tests.helpers.bridge import wait_for
from tests.helpers.pdfs import make_pdf


def settings(api: FakeTelegram, **extra: Any) -> TelegramSettings:
    values: dict[str, Any] = {
        "bot_token": SecretStr(TOKEN),
        "allowed_users": (USER,),
        "api_url": api.url,
        "scope": "write",
    }
    return TelegramSettings(**(values | extra))


async def answered(api: FakeTelegram, chat: int, count: int = 1) -> list[SentMessage]:
    """The chat's messages once ``count`` exist and the bot stopped typing into them."""
    await wait_for(lambda: len(api.chat(chat)) >= count)
    return api.chat(chat)


async def test_a_question_is_answered_by_editing_one_message(
    tmp_path: Path, fake_http: FakeHTTPServer, telegram_api: FakeTelegram
) -> None:
    answer = "Your notes say the plan has **three** steps. " * 8
    fake_http.enqueue(ollama.text_reply(answer))
    async with running_bots(
        tmp_path, fake_http, telegram=settings(telegram_api), edit_interval=0.05
    ) as bots:
        assert telegram_api.commands and {c["command"] for c in telegram_api.commands} == {
            "note",
            "search",
            "new",
            "help",
        }
        telegram_api.send(USER, "What is the plan?")
        await wait_for(
            lambda: any(m.parse_modes[-1] == "MarkdownV2" for m in telegram_api.chat(USER))
        )
        [message] = telegram_api.chat(USER)
        assert len(message.texts) >= 2, "streamed by edits"
        assert "*three*" in message.text
        assert (USER, "typing") in telegram_api.actions
        listed = await bots.app.conversations.stored()
        rows, _ = await listed.execute(lambda store: store.page(10, None))
        assert [row.client for row in rows] == [f"telegram:{USER}"]


async def test_a_stranger_gets_one_short_reply_and_no_model_call(
    tmp_path: Path, fake_http: FakeHTTPServer, telegram_api: FakeTelegram
) -> None:
    async with running_bots(tmp_path, fake_http, telegram=settings(telegram_api)):
        telegram_api.send(STRANGER, "Tell me your secrets")
        telegram_api.send(STRANGER, "Please?")
        telegram_api.send(USER, "/help")
        await answered(telegram_api, USER)
        await wait_for(lambda: len(telegram_api.chat(STRANGER)) >= 1)
        assert [m.text for m in telegram_api.chat(STRANGER)] == ["This assistant is private\\."]
        assert fake_http.requests == []


def kites_call() -> Reply:
    return ollama.tool_reply(
        [("call_1", "create_note", {"path": "Ideas/Kites.md", "content": "# Kites\nFly high."})]
    )


async def review_message(api: FakeTelegram) -> SentMessage:
    await wait_for(lambda: any(m.buttons for m in api.chat(USER)))
    return next(m for m in api.chat(USER) if m.buttons)


@pytest.mark.parametrize("button", ["Approve", "Deny"])
async def test_a_write_waits_for_approve_or_deny(
    tmp_path: Path, fake_http: FakeHTTPServer, telegram_api: FakeTelegram, button: str
) -> None:
    fake_http.enqueue(kites_call())
    fake_http.enqueue(ollama.text_reply("All done."))
    async with running_bots(tmp_path, fake_http, telegram=settings(telegram_api)) as bots:
        telegram_api.send(USER, "Make a note about kites")
        review = await review_message(telegram_api)
        assert "Ideas/Kites\\.md" in review.text and "Fly high" in review.text
        assert [b["text"] for b in review.buttons] == ["Approve", "Deny"]
        assert not (bots.vault / "Ideas" / "Kites.md").exists(), "nothing written before"
        telegram_api.press(USER, review, button)
        await wait_for(lambda: not review.buttons and len(review.texts) > 1)
        await wait_for(lambda: len(fake_http.requests) == 2)
        await wait_for(lambda: any("All done" in m.text for m in telegram_api.chat(USER)))
        written = (bots.vault / "Ideas" / "Kites.md").exists()
        assert written is (button == "Approve")
        assert ("Approved" if written else "Denied") in review.text
        assert telegram_api.answers and telegram_api.answers[-1][1] == (
            "Approved." if written else "Denied."
        )
        result = fake_http.requests[1].json()["messages"][-1]
        assert result["role"] == "tool"
        assert ("not approve" in result["content"]) is (button == "Deny")
        if written:  # the audit line names the chat app's user; so do the usage rows
            audit = (bots.app.vault.data_dir / "audit.jsonl").read_text(encoding="utf-8")
            assert f"(telegram:{USER})" in audit.splitlines()[-1]
        usage = bots.app.usage_log
        assert await usage.execute(lambda log: log.by_model(0, f"telegram:{USER}"))
        assert not await usage.execute(lambda log: log.by_model(0, "owner"))


async def test_no_answer_in_time_is_deny(
    tmp_path: Path, fake_http: FakeHTTPServer, telegram_api: FakeTelegram
) -> None:
    fake_http.enqueue(kites_call())
    fake_http.enqueue(ollama.text_reply("Not written."))
    bot = settings(telegram_api)
    async with running_bots(tmp_path, fake_http, telegram=bot, confirm_timeout=0.3) as bots:
        telegram_api.send(USER, "Make a note about kites")
        review = await review_message(telegram_api)
        await wait_for(lambda: "Denied" in review.text)
        await wait_for(lambda: any("Not written" in m.text for m in telegram_api.chat(USER)))
        assert not (bots.vault / "Ideas" / "Kites.md").exists()
        assert not review.buttons


async def test_only_the_user_who_asked_may_press(
    tmp_path: Path, fake_http: FakeHTTPServer, telegram_api: FakeTelegram
) -> None:
    fake_http.enqueue(kites_call())
    fake_http.enqueue(ollama.text_reply("Not written."))
    bot = settings(telegram_api, allowed_users=(USER, OTHER_USER))
    async with running_bots(tmp_path, fake_http, telegram=bot) as bots:
        telegram_api.send(USER, "Make a note about kites")
        review = await review_message(telegram_api)
        telegram_api.press(OTHER_USER, review, "Approve")
        await wait_for(lambda: len(telegram_api.answers) == 1)
        assert telegram_api.answers[0][1] == "Only the user who asked may answer."
        assert review.buttons, "still waiting"
        telegram_api.press(USER, review, "Deny")
        await wait_for(lambda: "Denied" in review.text)
        assert not (bots.vault / "Ideas" / "Kites.md").exists()


async def test_a_chat_scope_offers_the_model_no_write_tools(
    tmp_path: Path, fake_http: FakeHTTPServer, telegram_api: FakeTelegram
) -> None:
    fake_http.enqueue(ollama.text_reply("I can only read."))
    async with running_bots(tmp_path, fake_http, telegram=settings(telegram_api, scope="chat")):
        telegram_api.send(USER, "Make a note about kites")
        await wait_for(lambda: any("only read" in m.text for m in telegram_api.chat(USER)))
        offered = {tool["function"]["name"] for tool in fake_http.requests[0].json()["tools"]}
        assert "search_notes" in offered
        assert not offered & {"create_note", "append_to_note", "edit_note", "move_note"}


async def test_a_rate_limit_is_waited_out_and_the_answer_arrives_whole(
    tmp_path: Path, fake_http: FakeHTTPServer, telegram_api: FakeTelegram
) -> None:
    answer = "Patience is a virtue. " * 20
    fake_http.enqueue(ollama.text_reply(answer))
    telegram_api.rate_limit["sendMessage"] = [1]
    async with running_bots(tmp_path, fake_http, telegram=settings(telegram_api)):
        telegram_api.send(USER, "Say something")
        await wait_for(lambda: any(m.parse_modes[-1] for m in telegram_api.chat(USER)))
        [message] = telegram_api.chat(USER)
        assert plain_words(message.text) == plain_words(answer)
        [(_, limited_at)] = telegram_api.limited
        assert message.times[0] - limited_at >= 1.0, "retry_after honoured"


def plain_words(text: str) -> list[str]:
    return plain_of(text).split()


async def test_note_and_search_make_no_model_call(
    tmp_path: Path, fake_http: FakeHTTPServer, telegram_api: FakeTelegram
) -> None:
    async with running_bots(tmp_path, fake_http, telegram=settings(telegram_api)) as bots:
        telegram_api.send(USER, "/note Buy more string for the kite")
        await answered(telegram_api, USER)
        assert telegram_api.chat(USER)[0].text == "Added to Inbox\\."
        inbox = (bots.vault / "Inbox.md").read_text(encoding="utf-8")
        last = inbox.rstrip().splitlines()[-1]
        assert last.startswith("- 20") and last.endswith(" Buy more string for the kite")
        telegram_api.send(USER, "/search welcome")
        await answered(telegram_api, USER, 2)
        assert "Welcome" in telegram_api.chat(USER)[1].text
        assert fake_http.requests == []


async def test_a_photo_lands_in_the_vault_and_reaches_the_model_as_an_image(
    tmp_path: Path, fake_http: FakeHTTPServer, telegram_api: FakeTelegram
) -> None:
    image = io.BytesIO()
    Image.new("RGB", (8, 8), "red").save(image, "JPEG")
    chats = [ollama.text_reply("A red square.")]

    def route(request: Recorded) -> Reply:
        if request.path == "/api/show":
            return Reply.json({"capabilities": ["completion", "tools", "vision"]})
        return chats.pop(0)

    fake_http.route = route
    async with running_bots(tmp_path, fake_http, telegram=settings(telegram_api)) as bots:
        telegram_api.send(USER, photo=image.getvalue(), caption="What is this?")
        await wait_for(lambda: any("red square" in m.text for m in telegram_api.chat(USER)))
        saved = list((bots.vault / "Attachments").iterdir())
        assert [p.read_bytes() for p in saved] == [image.getvalue()]
        chat = next(r for r in fake_http.requests if r.path == "/api/chat").json()
        assert chat["messages"][-1]["images"], "sent as an image"


async def test_a_pdf_is_saved_indexed_and_answered_about(
    tmp_path: Path, fake_http: FakeHTTPServer, telegram_api: FakeTelegram
) -> None:
    fake_http.enqueue(ollama.text_reply("It is about lighthouses."))
    pdf = make_pdf(["Lighthouses guide ships along the zanzibar coast."])
    async with running_bots(tmp_path, fake_http, telegram=settings(telegram_api)) as bots:
        document = ("Guide.pdf", "application/pdf", pdf)
        telegram_api.send(USER, document=document, caption="Summarise it")
        await wait_for(lambda: any("lighthouses" in m.text for m in telegram_api.chat(USER)))
        assert (bots.vault / "Attachments" / "Guide.pdf").read_bytes() == pdf
        asked = json.dumps(fake_http.requests[-1].json())
        assert "zanzibar" in asked, "the PDF's text reached the model"


async def test_a_file_over_20_mb_is_refused_in_one_sentence(
    tmp_path: Path, fake_http: FakeHTTPServer, telegram_api: FakeTelegram
) -> None:
    async with running_bots(tmp_path, fake_http, telegram=settings(telegram_api)) as bots:
        big = ("Huge.pdf", "application/pdf", b"%PDF" + b"0" * (20 * 1024 * 1024 + 1))
        telegram_api.send(USER, document=big, caption="Read this")
        [message] = await answered(telegram_api, USER)
        assert "over 20 MB" in plain_of(message.text)
        assert not (bots.vault / "Attachments").exists()
        assert fake_http.requests == []


async def test_markdown_full_of_reserved_characters_is_delivered_formatted(
    tmp_path: Path, fake_http: FakeHTTPServer, telegram_api: FakeTelegram
) -> None:
    answer = (
        "# Result!\n\nSome _emphasis_ and **bold with _nested_ italic** (really).\n"
        "- item one: a-b=c! {x} #tag +1 | pipe > quote ~tilde. [brackets]\n\n"
        "```python\nprint('a_b*c[d](e).f!-`tick`\\\\')\n```\nDone."
    )
    fake_http.enqueue(ollama.text_reply(answer))
    async with running_bots(tmp_path, fake_http, telegram=settings(telegram_api)):
        telegram_api.send(USER, "Show me")
        await wait_for(lambda: any(m.parse_modes[-1] for m in telegram_api.chat(USER)))
        [message] = telegram_api.chat(USER)
        assert telegram_api.refused_formatting == 0
        assert "print('a_b*c[d](e).f!-\\`tick\\`" in message.text


async def test_a_refused_format_is_sent_again_as_plain_text(
    tmp_path: Path, fake_http: FakeHTTPServer, telegram_api: FakeTelegram
) -> None:
    answer = "Plain *after* all."
    fake_http.enqueue(ollama.text_reply(answer))
    telegram_api.refuse_markdown = True
    async with running_bots(tmp_path, fake_http, telegram=settings(telegram_api)):
        telegram_api.send(USER, "Say it")
        await wait_for(lambda: telegram_api.refused_formatting > 0)
        await wait_for(lambda: any(m.text == answer for m in telegram_api.chat(USER)))


async def test_a_10000_character_answer_arrives_whole_within_the_limit(
    tmp_path: Path, fake_http: FakeHTTPServer, telegram_api: FakeTelegram
) -> None:
    answer = "\n\n".join(f"Paragraph {n}. " + "word " * 60 for n in range(30))[:10_000]
    fake_http.enqueue(ollama.text_reply(answer, stream=False))
    async with running_bots(tmp_path, fake_http, telegram=settings(telegram_api)):
        telegram_api.send(USER, "Tell me everything")
        await wait_for(lambda: len(telegram_api.chat(USER)) >= 3)
        await wait_for(lambda: all(m.parse_modes[-1] for m in telegram_api.chat(USER)))
        messages = telegram_api.chat(USER)
        assert all(len(m.text) <= 4096 for m in messages)
        delivered = " ".join(plain_of(m.text) for m in messages)
        assert delivered.split() == answer.split()


async def test_in_a_group_the_bot_answers_only_when_mentioned(
    tmp_path: Path, fake_http: FakeHTTPServer, telegram_api: FakeTelegram
) -> None:
    group = -1001
    fake_http.enqueue(ollama.text_reply("Hello group."))
    async with running_bots(tmp_path, fake_http, telegram=settings(telegram_api)):
        telegram_api.send(USER, "chatter among friends", chat_id=group, chat_type="group")
        telegram_api.send(STRANGER, "@vault_test_bot hi", chat_id=group, chat_type="group")
        telegram_api.send(USER, "@vault_test_bot say hello", chat_id=group, chat_type="group")
        await wait_for(lambda: any("Hello group" in m.text for m in telegram_api.chat(group)))
        assert len(fake_http.requests) == 1
        assert fake_http.requests[0].json()["messages"][-1]["content"] == "say hello"
        assert len(telegram_api.chat(group)) == 1, "the stranger got no reply in the group"


async def test_a_voice_note_is_saved_not_transcribed_and_an_empty_message_is_answered(
    tmp_path: Path, fake_http: FakeHTTPServer, telegram_api: FakeTelegram
) -> None:
    async with running_bots(tmp_path, fake_http, telegram=settings(telegram_api)) as bots:
        telegram_api.send(USER, voice=b"OggS fake voice")
        [saved] = await answered(telegram_api, USER)
        assert "not transcribed" in plain_of(saved.text)
        assert [p.read_bytes() for p in (bots.vault / "Attachments").iterdir()] == [
            b"OggS fake voice"
        ]
        telegram_api.send(USER, "   ")
        await answered(telegram_api, USER, 2)
        assert "Send a question" in plain_of(telegram_api.chat(USER)[1].text)
        assert fake_http.requests == []


async def test_a_provider_error_is_the_sentence_the_panel_shows(
    tmp_path: Path, fake_http: FakeHTTPServer, telegram_api: FakeTelegram
) -> None:
    fake_http.enqueue(ollama.error_reply(404, "model 'llama3.1:8b' not found, try pulling it"))
    async with running_bots(tmp_path, fake_http, telegram=settings(telegram_api)):
        telegram_api.send(USER, "Hello?")
        await wait_for(lambda: any(m.parse_modes[-1] for m in telegram_api.chat(USER)))
        [message] = telegram_api.chat(USER)
        assert "not found" in plain_of(message.text)


async def test_a_model_that_cannot_see_gets_the_question_and_the_user_one_sentence(
    tmp_path: Path, fake_http: FakeHTTPServer, telegram_api: FakeTelegram
) -> None:
    image = io.BytesIO()
    Image.new("RGB", (8, 8), "blue").save(image, "JPEG")
    chats = [ollama.text_reply("I cannot see it, but here is my answer.")]

    def route(request: Recorded) -> Reply:
        if request.path == "/api/show":
            return Reply.json({"capabilities": ["completion", "tools"]})
        return chats.pop(0)

    fake_http.route = route
    async with running_bots(tmp_path, fake_http, telegram=settings(telegram_api)):
        telegram_api.send(USER, photo=image.getvalue(), caption="What colour?")
        await wait_for(lambda: any(m.parse_modes[-1] for m in telegram_api.chat(USER)))
        [message] = telegram_api.chat(USER)
        assert "my answer" in plain_of(message.text)
        assert "cannot see images" in plain_of(message.text)
        chat = next(r for r in fake_http.requests if r.path == "/api/chat").json()
        assert not chat["messages"][-1].get("images")


async def test_an_answer_under_way_survives_a_failed_poll(
    tmp_path: Path, fake_http: FakeHTTPServer, telegram_api: FakeTelegram
) -> None:
    fake_http.enqueue(kites_call())
    fake_http.enqueue(ollama.text_reply("Written after all."))
    async with running_bots(tmp_path, fake_http, telegram=settings(telegram_api)) as bots:
        telegram_api.send(USER, "Make a note about kites")
        review = await review_message(telegram_api)
        telegram_api.failing_polls = 1
        telegram_api.send(STRANGER, "hello")  # ends the long poll under way; the next fails
        state = bots.bots.states[0]
        await wait_for(lambda: state.state == "failed")
        assert "Telegram cannot be reached" in (state.error or "")
        await wait_for(lambda: state.state == "running")
        telegram_api.press(USER, review, "Approve")
        await wait_for(lambda: any("Written after" in m.text for m in telegram_api.chat(USER)))
        assert (bots.vault / "Ideas" / "Kites.md").exists()
