"""The CLI as a new user meets it, run as a user runs it (a subprocess, a pseudo-terminal):
serve refuses bad settings before it says it listens, a file given as the vault, a refused key
found at start, an unreachable server found at once, setup offering what runs on this machine,
and chat --setup."""

from __future__ import annotations

import asyncio
import socket
import time
import tomllib
from pathlib import Path

import pytest

from llm_service import ScriptedProvider
from plugin_bridge.app.settings.config import config_file
from plugin_bridge.wire.infofile import InfoRecord, write_info_file
from tests.fakes import anthropic as fake_anthropic
from tests.fakes.http import FakeHTTPServer, Recorded, Reply
from tests.helpers.bridge import WAIT, copy_example_vault, running_bridge
from tests.helpers.serve import run_cli
from tests.plugin_bridge.cli.test_cli_chat_pty import Terminal, cli_in_terminal


def _closed_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"


@pytest.fixture(autouse=True)
def _no_local_runtimes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing this machine may run (a real Ollama, LM Studio) is found by these tests."""
    monkeypatch.setenv("OLLAMA_HOST", _closed_url())
    monkeypatch.setenv("LMSTUDIO_HOST", _closed_url())


@pytest.mark.parametrize(
    ("args", "file", "says"),
    [
        (["--temperature", "5"], "", "Setting 'temperature' is invalid"),
        (["--embedder", "model2vec:/no/such/model"], "", "is not a folder"),
        (["--provider", "openai", "--base-url", "BASE"], "", "Nothing answers at"),
        ([], 'temperature = "unfinished\n', "cannot be read"),
        ([], "no_such_setting = 1\n", "Setting 'no_such_setting' is invalid"),
    ],
)
async def test_serve_checks_every_setting_before_it_says_it_listens(
    tmp_path: Path, args: list[str], file: str, says: str
) -> None:
    if file:
        config_file().write_text(file)
    args = [_closed_url() + "/v1" if arg == "BASE" else arg for arg in args]
    vault = copy_example_vault(tmp_path)
    code, _out, err = await run_cli(tmp_path, "serve", "--vault", str(vault), *args)
    assert code == 2 and says in err, err
    assert "Listening" not in err and "Info file" not in err and "Traceback" not in err


async def test_a_file_given_as_the_vault_is_named_a_file(tmp_path: Path) -> None:
    note = copy_example_vault(tmp_path) / "Welcome.md"
    code, _out, err = await run_cli(tmp_path, "serve", "--vault", str(note))
    assert code == 2 and f"{note} is a file, not a folder" in err


async def test_a_refused_anthropic_key_is_found_at_start(
    tmp_path: Path, fake_http: FakeHTTPServer
) -> None:
    fake_http.enqueue(fake_anthropic.error_reply(401, "invalid x-api-key"))
    vault = copy_example_vault(tmp_path)
    code, _out, err = await run_cli(
        tmp_path,
        *("serve", "--vault", str(vault), "--provider", "anthropic", "--base-url", fake_http.url),
        env={"ANTHROPIC_API_KEY": "sk-ant-refused-0000"},  # beside --base-url: sent there
    )
    assert code == 2 and "Anthropic refused the API key (401)" in err, err
    assert "the key comes from ANTHROPIC_API_KEY" in err and "Listening" not in err
    assert [r.path.split("?")[0] for r in fake_http.requests] == ["/v1/models"]
    assert "sk-ant-refused-0000" not in err


@pytest.mark.parametrize("command", ["setup", "serve"])
async def test_an_unreachable_server_fails_within_three_seconds(
    tmp_path: Path, command: str
) -> None:
    """No retries and backoff before saying so (a loose bound; start-up included)."""
    url = _closed_url()
    args = (
        ["--model", "m"] if command == "setup" else ["--vault", str(copy_example_vault(tmp_path))]
    )
    started = time.perf_counter()
    code, _out, err = await run_cli(
        tmp_path, command, "--provider", "ollama", "--base-url", url, *args
    )
    elapsed = time.perf_counter() - started
    assert code == 2 and f"Nothing answers at {url}" in err, err
    assert elapsed < 3.0


def _fake_ollama(request: Recorded) -> Reply:
    if request.path == "/api/tags":
        return Reply.json({"models": [{"name": "qwen3:8b"}, {"name": "nomic-embed-text"}]})
    tools = request.json()["model"] == "qwen3:8b"
    return Reply.json({"capabilities": ["completion", "tools"] if tools else ["embedding"]})


def _fake_lm_studio(request: Recorded) -> Reply:
    models = [{"id": "qwen3-8b", "type": "llm", "capabilities": ["tool_use"]}]
    if request.path in ("/api/v0/models", "/v1/models"):
        return Reply.json({"object": "list", "data": models})
    return Reply.json({"error": "not found"}, status=404)


async def _decline_the_bots(terminal: Terminal) -> None:
    """After the model, setup offers the chat-app bots: Enter is no to each."""
    await terminal.expect("Chat with your vault from Telegram? [y/N]")
    terminal.type("\r")
    await terminal.expect("Chat with your vault from Discord? [y/N]")
    terminal.type("\r")


async def test_interactive_setup_offers_the_ollama_it_finds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async with FakeHTTPServer() as ollama:
        ollama.route = _fake_ollama
        monkeypatch.setenv("OLLAMA_HOST", ollama.url)
        async with cli_in_terminal("setup") as (process, terminal):
            await terminal.expect(f"Found Ollama at {ollama.url} (1 chat models: qwen3:8b)")
            await terminal.expect("Provider (anthropic, openai, ollama) [ollama]")
            terminal.type("\r")
            await terminal.expect(f"Ollama URL [{ollama.url}]")
            terminal.type("\r")
            await terminal.expect("Model [")
            terminal.type("qwen3:8b\r")
            await _decline_the_bots(terminal)
            async with asyncio.timeout(WAIT):
                await process.wait()
    assert process.returncode == 0, terminal.screen
    saved = tomllib.loads(config_file().read_text())
    assert saved == {"provider": "ollama", "base_url": ollama.url, "model": "qwen3:8b"}


async def test_interactive_setup_asks_an_openai_compatible_servers_url(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async with FakeHTTPServer() as lm_studio:
        lm_studio.route = _fake_lm_studio
        monkeypatch.setenv("LMSTUDIO_HOST", lm_studio.url)
        async with cli_in_terminal("setup") as (process, terminal):
            await terminal.expect(f"Found LM Studio at {lm_studio.url}/v1")
            await terminal.expect("[openai]")
            terminal.type("\r")
            await terminal.expect("OpenAI-compatible server URL")
            await terminal.expect(f"[{lm_studio.url}/v1]")
            terminal.type("\r")
            await terminal.expect("Model [")
            terminal.type("\r")
            await _decline_the_bots(terminal)
            async with asyncio.timeout(WAIT):
                await process.wait()
    assert process.returncode == 0, terminal.screen
    saved = tomllib.loads(config_file().read_text())
    assert saved == {"provider": "openai", "base_url": lm_studio.url + "/v1", "model": "qwen3-8b"}


async def test_chat_setup_in_a_terminal_writes_the_context_note_after_review(
    tmp_path: Path,
) -> None:
    """`chat --setup`: the assistant opens, asks, and offers the note; y writes it."""
    provider = ScriptedProvider()
    provider.enqueue_text("What is this vault for?")
    provider.enqueue_tool_call("complete_setup", {"content": "# About me\n\nGardening.\n"})
    provider.enqueue_text("Thanks, saved.")
    async with running_bridge(tmp_path, provider=provider) as bridge:
        info_file = tmp_path / "server.json"
        write_info_file(info_file, InfoRecord(bridge.url, bridge.app.token, 1, 1))
        chat = ("chat", "--vault", str(bridge.vault.root), "--info-file", str(info_file))
        async with cli_in_terminal(*chat, "--setup") as (process, terminal):
            await terminal.expect("What is this vault for?")
            await terminal.expect("you> ")
            terminal.type("my garden\r")
            await terminal.expect("+Gardening.")
            await terminal.expect("Allow? [y/N]")
            terminal.type("y\r")
            await terminal.expect("Thanks, saved.")
            await terminal.expect("you> ")
            terminal.type("/quit\r")
            async with asyncio.timeout(WAIT):
                await process.wait()
        assert (bridge.vault.root / "Assistant.md").read_text() == "# About me\n\nGardening.\n"
    assert process.returncode == 0 and "Traceback" not in terminal.screen
    assert all(request.tools[-1].name == "complete_setup" for request in provider.requests)
