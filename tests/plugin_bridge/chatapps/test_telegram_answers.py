"""What the Telegram bot adds to an answer, and the sentences it gives instead of one: the
sources as note names with their ``obsidian://open`` URLs to copy, a used-up budget and a
question over the model's context, each as the panel says it (python-telegram-bot against the
Bot API stand-in, the fake Ollama model, a copy of examples/vault)."""

from __future__ import annotations

from pathlib import Path

from llm_service import Usage
from plugin_bridge.app.clients import OWNER_CALLER
from plugin_bridge.app.conversations.usage import Budgets
from tests.fakes import ollama
from tests.fakes.http import FakeHTTPServer
from tests.fakes.telegram import FakeTelegram, markdown_v2_problem, plain_of
from tests.helpers.bots import USER, running_bots
from tests.helpers.bridge import wait_for
from tests.plugin_bridge.chatapps.test_telegram_flows import settings

CONTEXT_OVER = (
    "This model's maximum context length is 8192 tokens. However, your messages resulted in "
    "9120 tokens. Please reduce the length of the messages."
)

CONTEXT_OVER_SHOWN = (
    f"Ollama refused the request (400): {CONTEXT_OVER.removesuffix('.')}; check the model "
    "name and the request."
)
"""The provider error's sentence, as the panel shows it (the wire error's message)."""


def test_the_bot_api_refuses_a_link_to_an_obsidian_url() -> None:
    """Why the URL is not a link: Telegram takes only schemes it opens (http(s), tg...)."""
    assert markdown_v2_problem("[Welcome](obsidian://open?vault=v&file=Welcome)") is not None
    assert markdown_v2_problem("[Welcome](https://example.com/Welcome)") is None


async def test_sources_are_note_names_with_their_obsidian_urls_to_copy(
    tmp_path: Path, fake_http: FakeHTTPServer, telegram_api: FakeTelegram
) -> None:
    read = [("call_1", "read_note", {"path": "Projects/Garden redesign.md"})]
    fake_http.enqueue(ollama.tool_reply(read))
    fake_http.enqueue(ollama.text_reply("Plant the roses in May."))
    bot = settings(telegram_api)
    async with running_bots(tmp_path, fake_http, telegram=bot, edit_interval=0.05) as bots:
        telegram_api.send(USER, "When do the roses go in?")
        await wait_for(lambda: any("Sources" in m.text for m in telegram_api.chat(USER)))
        [message] = telegram_api.chat(USER)
        vault = bots.vault.name.replace(" ", "%20")
        url = f"obsidian://open?vault={vault}&file=Projects%2FGarden%20redesign"
        assert message.parse_modes[-1] == "MarkdownV2"
        assert telegram_api.refused_formatting == 0
        assert f"• Garden redesign: `{url}`" in message.text, "the URL is a code span to copy"
        assert plain_of(message.text).endswith(f"Sources:\n• Garden redesign: {url}")


async def test_a_used_up_budget_is_the_panels_sentence_and_no_model_call(
    tmp_path: Path, fake_http: FakeHTTPServer, telegram_api: FakeTelegram
) -> None:
    async with running_bots(tmp_path, fake_http, telegram=settings(telegram_api)) as bots:
        spending = bots.app.spending
        spending.budgets = Budgets(daily_usd=0.01)
        spending.recorder(None, "test", OWNER_CALLER)("m", Usage(1, 1), 0.02, "ollama")
        telegram_api.send(USER, "What is the plan?")
        await wait_for(lambda: any(m.parse_modes[-1] for m in telegram_api.chat(USER)))
        [message] = telegram_api.chat(USER)
        assert plain_of(message.text) == (
            "The daily budget of $0.01 is used up ($0.02 spent): raise it in the settings or "
            "wait for the next day."
        )
        assert not [r for r in fake_http.requests if r.path == "/api/chat"]


async def test_a_question_over_the_models_context_is_the_providers_sentence(
    tmp_path: Path, fake_http: FakeHTTPServer, telegram_api: FakeTelegram
) -> None:
    fake_http.enqueue(ollama.error_reply(400, CONTEXT_OVER, error_type="invalid_request_error"))
    async with running_bots(tmp_path, fake_http, telegram=settings(telegram_api)):
        telegram_api.send(USER, "Summarise every note I have " * 50)
        await wait_for(lambda: any(m.parse_modes[-1] for m in telegram_api.chat(USER)))
        [message] = telegram_api.chat(USER)
        assert plain_of(message.text) == CONTEXT_OVER_SHOWN
