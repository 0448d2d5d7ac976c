"""What the Discord bot adds to an answer, and the sentences it gives instead of one, as the
Telegram bot does (tests/plugin_bridge/chatapps/test_telegram_answers.py): hikari against the
Discord stand-in, the fake Ollama model, a copy of examples/vault."""

from __future__ import annotations

from pathlib import Path

from llm_service import Usage
from plugin_bridge.app.clients import OWNER_CALLER
from plugin_bridge.app.conversations.usage import Budgets
from tests.fakes import ollama
from tests.fakes.discord import FakeDiscord
from tests.fakes.http import FakeHTTPServer
from tests.helpers.bots import USER, running_bots
from tests.helpers.bridge import wait_for
from tests.plugin_bridge.chatapps.test_discord_flows import settings
from tests.plugin_bridge.chatapps.test_telegram_answers import CONTEXT_OVER, CONTEXT_OVER_SHOWN


async def test_sources_are_note_names_with_their_obsidian_urls_as_inline_code(
    tmp_path: Path, fake_http: FakeHTTPServer, discord_api: FakeDiscord
) -> None:
    """Discord makes only http(s) links clickable: the URL is inline code, to copy."""
    read = [("call_1", "read_note", {"path": "Projects/Garden redesign.md"})]
    fake_http.enqueue(ollama.tool_reply(read))
    fake_http.enqueue(ollama.text_reply("Plant the roses in May."))
    bot = settings(discord_api)
    async with running_bots(tmp_path, fake_http, discord=bot, edit_interval=0.05) as bots:
        await discord_api.send(USER, "When do the roses go in?")
        await wait_for(lambda: any("Sources" in m.text for m in discord_api.channel(USER)))
        [message] = discord_api.channel(USER)
        vault = bots.vault.name.replace(" ", "%20")
        url = f"obsidian://open?vault={vault}&file=Projects%2FGarden%20redesign"
        assert message.text == f"Plant the roses in May.\n\nSources:\n- Garden redesign: `{url}`"


async def test_a_used_up_budget_is_the_panels_sentence_and_no_model_call(
    tmp_path: Path, fake_http: FakeHTTPServer, discord_api: FakeDiscord
) -> None:
    async with running_bots(tmp_path, fake_http, discord=settings(discord_api)) as bots:
        spending = bots.app.spending
        spending.budgets = Budgets(monthly_usd=0.5)
        spending.recorder(None, "test", OWNER_CALLER)("m", Usage(1, 1), 0.75, "ollama")
        await discord_api.send(USER, "What is the plan?")
        expected = (
            "The monthly budget of $0.50 is used up ($0.75 spent): raise it in the settings or "
            "wait for the next month."
        )
        await wait_for(lambda: any(m.text == expected for m in discord_api.channel(USER)))
        assert len(discord_api.channel(USER)) == 1
        assert not [r for r in fake_http.requests if r.path == "/api/chat"]


async def test_a_question_over_the_models_context_is_the_providers_sentence(
    tmp_path: Path, fake_http: FakeHTTPServer, discord_api: FakeDiscord
) -> None:
    fake_http.enqueue(ollama.error_reply(400, CONTEXT_OVER, error_type="invalid_request_error"))
    async with running_bots(tmp_path, fake_http, discord=settings(discord_api)):
        await discord_api.send(USER, "Summarise every note I have " * 50)
        await wait_for(lambda: any(m.text == CONTEXT_OVER_SHOWN for m in discord_api.channel(USER)))
        assert len(discord_api.channel(USER)) == 1
