"""setup: flags for scripts (checked against fake servers), questions in a terminal, exit 2
with the flag to pass when neither answers."""

from __future__ import annotations

import asyncio
import stat
import tomllib
from pathlib import Path

from plugin_bridge.app.settings.config import config_file
from tests.fakes import openai as fake
from tests.fakes.http import FakeHTTPServer
from tests.helpers.bridge import WAIT
from tests.helpers.serve import run_cli
from tests.plugin_bridge.cli.test_cli_chat_pty import cli_in_terminal


async def test_setup_with_flags_checks_the_server_and_saves_the_file(
    tmp_path: Path, fake_http: FakeHTTPServer
) -> None:
    """An OpenAI-compatible server: one models call checks it; the file is written 0600."""
    fake_http.enqueue(fake.models_reply("qwen3-8b", "llama-3.1"))
    code, out, err = await run_cli(
        tmp_path,
        "setup",
        "--provider",
        "openai",
        "--base-url",
        fake_http.url + "/v1",
        "--model",
        "qwen3-8b",
    )
    assert code == 0, err
    assert (
        "openai answers; it serves 2 models." in out
        and "Next: " in out
        and " serve --vault " in out
    )
    saved = tomllib.loads(config_file().read_text())
    assert saved == {"provider": "openai", "base_url": fake_http.url + "/v1", "model": "qwen3-8b"}
    assert stat.S_IMODE(config_file().stat().st_mode) == 0o600
    assert [r.path for r in fake_http.requests] == ["/v1/models"]


async def test_setup_with_a_refused_key_saves_nothing_and_says_why(
    tmp_path: Path, fake_http: FakeHTTPServer
) -> None:
    """A 401 from the server: exit 2 naming the key that was given (not OPENAI_API_KEY);
    no file."""
    fake_http.enqueue(fake.error_reply(401, "Incorrect API key provided"))
    code, _out, err = await run_cli(
        tmp_path,
        "setup",
        "--provider",
        "openai",
        "--base-url",
        fake_http.url + "/v1",
        "--api-key",
        "sk-wrong-000000000",
        "--model",
        "m",
    )
    assert code == 2 and "OpenAI refused the key given with --api-key (401)" in err
    assert "OPENAI_API_KEY" not in err
    assert not config_file().exists()


async def test_setup_without_a_terminal_names_the_missing_flag(tmp_path: Path) -> None:
    """Run from a script with nothing to go on: exit 2 naming --provider."""
    code, _out, err = await run_cli(tmp_path, "setup")
    assert code == 2 and "pass --provider" in err


async def test_setup_asks_what_the_flags_do_not_give(
    tmp_path: Path, fake_http: FakeHTTPServer
) -> None:
    """In a terminal: provider and URL are asked for, the model offers the provider's list with
    a default that an empty answer takes."""
    from plugin_bridge.cli import setup
    from tests.fakes.http import Reply

    fake_http.enqueue(Reply.json({"models": [{"name": "qwen3:8b"}, {"name": "gemma3:1b"}]}))
    answers = {"Provider": "ollama", "Ollama URL": fake_http.url, "Model": ""}
    asked: list[str] = []

    def ask(prompt: str) -> str:
        asked.append(prompt)
        return next(value for key, value in answers.items() if prompt.startswith(key))

    assert await setup._setup(None, None, None, None, ask, ask) == 0
    assert [prompt.split(" ")[0] for prompt in asked] == ["Provider", "Ollama", "Model"]
    assert "qwen3:8b, gemma3:1b" in asked[-1]
    saved = tomllib.loads(config_file().read_text())
    assert saved == {"provider": "ollama", "base_url": fake_http.url, "model": "qwen3:8b"}


async def test_setup_for_a_compatible_server_offers_a_chat_model_not_an_embedder(
    tmp_path: Path, fake_http: FakeHTTPServer
) -> None:
    """LM Studio serves an embedding model and a chat model: the default answer is the chat
    model, never an OpenAI model name."""
    from plugin_bridge.cli import setup

    fake_http.enqueue(fake.models_reply("nomic-embed-text-v1.5", "qwen3-8b"))
    asked: list[str] = []

    def ask(prompt: str) -> str:
        asked.append(prompt)
        return ""

    url = fake_http.url + "/v1"
    assert await setup._setup("openai", None, url, None, ask, ask) == 0
    assert asked[-1].startswith("Model [qwen3-8b] (nomic-embed-text-v1.5, qwen3-8b)")
    assert tomllib.loads(config_file().read_text())["model"] == "qwen3-8b"


async def test_interactive_setup_in_a_terminal_shows_the_models_and_saves(
    tmp_path: Path, fake_http: FakeHTTPServer
) -> None:
    """In a real terminal: the provider is asked, the models are shown as a table, the model is
    asked; the answers are saved."""
    fake_http.enqueue(fake.models_reply("qwen3-8b", "llama-3.1"))
    async with cli_in_terminal("setup", "--base-url", fake_http.url + "/v1") as (process, terminal):
        await terminal.expect("Provider (anthropic, openai, ollama)")
        terminal.type("openai\r")
        await terminal.expect("Model [")
        terminal.type("llama-3.1\r")
        async with asyncio.timeout(WAIT):
            await process.wait()
    assert process.returncode == 0, terminal.screen
    assert "┏━" in terminal.screen and "tools" in terminal.screen and "qwen3-8b" in terminal.screen
    saved = tomllib.loads(config_file().read_text())
    assert saved["model"] == "llama-3.1" and saved["provider"] == "openai"
