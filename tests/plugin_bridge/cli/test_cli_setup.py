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
        "openai answers; it serves 2 chat models." in out
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
    """LM Studio serves an embedding model and a chat model: only the chat model is offered,
    and it is the default answer, never an OpenAI model name."""
    from plugin_bridge.cli import setup

    fake_http.enqueue(fake.models_reply("nomic-embed-text-v1.5", "qwen3-8b"))
    asked: list[str] = []

    def ask(prompt: str) -> str:
        asked.append(prompt)
        return ""

    url = fake_http.url + "/v1"
    assert await setup._setup("openai", None, url, None, ask, ask) == 0
    assert asked[-1] == "Model [qwen3-8b] (qwen3-8b): "
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
        await terminal.expect("Chat with your vault from Telegram? [y/N]")
        terminal.type("\r")
        await terminal.expect("Chat with your vault from Discord? [y/N]")
        terminal.type("n\r")
        async with asyncio.timeout(WAIT):
            await process.wait()
    assert process.returncode == 0, terminal.screen
    assert "┏━" in terminal.screen and "tools" in terminal.screen and "qwen3-8b" in terminal.screen
    saved = tomllib.loads(config_file().read_text())
    assert saved["model"] == "llama-3.1" and saved["provider"] == "openai"


async def test_setup_for_another_provider_offers_and_saves_that_providers_model(
    tmp_path: Path, fake_http: FakeHTTPServer
) -> None:
    """Set up for Ollama with qwen3:8b before; now for an OpenAI-compatible server: its own
    model is the default and is saved, with its own URL (never openai + qwen3:8b)."""
    from plugin_bridge.app.settings.config import save_config
    from plugin_bridge.cli import setup

    save_config({"provider": "ollama", "base_url": "http://127.0.0.1:9", "model": "qwen3:8b"})
    fake_http.enqueue(fake.models_reply("text-embedding-nomic", "gemma-3-4b"))
    asked: list[str] = []

    def ask(prompt: str) -> str:
        asked.append(prompt)
        return ""

    url = fake_http.url + "/v1"
    assert await setup._setup("openai", None, url, None, ask, ask) == 0
    assert asked == ["Model [gemma-3-4b] (gemma-3-4b): "]
    saved = tomllib.loads(config_file().read_text())
    assert saved == {"provider": "openai", "base_url": url, "model": "gemma-3-4b"}


async def test_setup_for_anthropic_at_a_base_url_without_a_key_says_why(tmp_path: Path) -> None:
    """A gateway still needs Anthropic's key: the message says so, nothing is saved."""
    code, _out, err = await run_cli(
        tmp_path, "setup", "--provider", "anthropic", "--base-url", "http://127.0.0.1:9"
    )
    assert code == 2, err
    assert "Anthropic needs an API key at http://127.0.0.1:9 too" in err and "--api-key" in err
    assert "or --base-url: pass one" not in err and not config_file().exists()


async def test_one_ctrl_c_stops_setup_and_saves_nothing(tmp_path: Path) -> None:
    """In a terminal, at the first question: one Ctrl-C ends setup (exit 130), no file."""
    async with cli_in_terminal("setup") as (process, terminal):
        await terminal.expect("Provider (anthropic, openai, ollama)")
        terminal.type("\x03")
        await terminal.expect("Setup stopped; nothing was saved.")
        async with asyncio.timeout(WAIT):
            await process.wait()
    assert process.returncode == 130, terminal.screen
    assert "Traceback" not in terminal.screen and not config_file().exists()


async def test_an_empty_answer_asks_again(tmp_path: Path, fake_http: FakeHTTPServer) -> None:
    """In a terminal: Enter alone at the provider question asks it again; then setup goes on
    and an empty model answer takes the default."""
    fake_http.enqueue(fake.models_reply("qwen3-8b"))
    async with cli_in_terminal("setup", "--base-url", fake_http.url + "/v1") as (
        process,
        terminal,
    ):
        await terminal.expect("Provider (anthropic, openai, ollama)")
        terminal.type("\r")
        await terminal.expect("Please answer")
        await terminal.expect("Provider (anthropic, openai, ollama)")
        terminal.type("openai\r")
        await terminal.expect("Model [qwen3-8b]")
        terminal.type("\r")
        await terminal.expect("from Telegram")
        terminal.type("\r")
        await terminal.expect("from Discord")
        terminal.type("\r")
        async with asyncio.timeout(WAIT):
            await process.wait()
    assert process.returncode == 0, terminal.screen
    assert tomllib.loads(config_file().read_text())["model"] == "qwen3-8b"


async def test_help_says_what_the_command_is(tmp_path: Path) -> None:
    code, out, _err = await run_cli(tmp_path, "--help")
    assert code == 0
    assert "Your Obsidian vault's AI assistant: server, terminal chat and tools" in out
    assert "JSON-RPC" not in out


async def test_setup_asks_each_running_server_whether_it_took_the_change_up(
    tmp_path: Path,
) -> None:
    """Each server whose info file is at the default place is asked for its health: one that
    uses the saved provider and model took the change up, one that still does not after the
    wait has not; an info file whose server is gone is passed over."""
    from llm_service import ScriptedProvider
    from plugin_bridge.cli.running import RunningServer, running_servers
    from plugin_bridge.vault.datadir import vaults_dir
    from plugin_bridge.wire.infofile import InfoRecord, write_info_file
    from tests.helpers.bridge import running_bridge

    async with running_bridge(
        tmp_path, provider=ScriptedProvider(), provider_name="openai", model="m1"
    ) as bridge:
        live = InfoRecord(bridge.url, bridge.app.token, 1, 1)
        gone = InfoRecord("ws://127.0.0.1:9/", "t" * 43, 2, 1)
        for name, record in (("live", live), ("gone", gone)):
            (vaults_dir() / name).mkdir(parents=True)
            write_info_file(vaults_dir() / name / "server.json", record)
        assert await running_servers("openai", "m1") == [RunningServer("vault", took_up=True)]
        assert await running_servers("openai", "m2", wait=0.2) == [
            RunningServer("vault", took_up=False)
        ]
