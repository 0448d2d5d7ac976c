"""The command line as a user runs it: serve (subprocess), search, chat, schema, refusals."""

from __future__ import annotations

import asyncio
import json
import shlex
import signal
import stat
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from plugin_bridge.vault.datadir import default_data_dir
from tests.conftest import REPO_ROOT
from tests.helpers.bridge import copy_example_vault, init_params
from tests.helpers.serve import START_WAIT, cli_env, run_cli, serve


@pytest.fixture(autouse=True)
def _state_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """default_data_dir in this process agrees with the subprocesses' XDG_STATE_HOME."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
async def test_serve_lifecycle_info_file_and_clean_shutdown(
    tmp_path: Path, sig: signal.Signals, record_property: Callable[[str, object], None]
) -> None:
    """serve writes a 0600 info file, answers, and on a signal closes with 1001 and cleans up."""
    async with serve(tmp_path) as served:
        record_property("seconds_to_info_file", round(served.seconds_to_info_file, 3))
        print(f"serve: info file after {served.seconds_to_info_file:.3f} s")
        info = served.info
        assert stat.S_IMODE(served.info_file.stat().st_mode) == 0o600
        assert set(info) == {"url", "token", "pid", "protocolVersion", "httpUrl"}
        assert info["pid"] == served.process.pid
        assert info["protocolVersion"] == 1
        assert str(info["url"]).startswith("ws://127.0.0.1:")
        async with connect(str(info["url"]), open_timeout=START_WAIT) as ws:
            await ws.send(
                json.dumps(
                    {
                        "jsonrpc": "2.0",
                        "id": 1,
                        "method": "initialize",
                        "params": init_params(str(info["token"])),
                    }
                )
            )
            async with asyncio.timeout(START_WAIT):
                reply = json.loads(await ws.recv())
            assert reply["result"]["vault"]["name"] == "vault"
            served.process.send_signal(sig)
            with pytest.raises(ConnectionClosed):
                async with asyncio.timeout(START_WAIT):
                    await ws.recv()
            assert ws.close_code == 1001
        async with asyncio.timeout(START_WAIT):
            assert await served.process.wait() == 0
        assert not served.info_file.exists()
        assert served.process.stderr is not None
        stderr = (await served.process.stderr.read()).decode()
    lines = stderr.splitlines()
    assert lines[0] == f"Listening on {info['url']}"
    assert lines[1] == f"Info file: {served.info_file}"
    assert lines[2] == f"HTTP API on {info['httpUrl']}"
    assert "No provider" in lines[3] and "ANTHROPIC_API_KEY" in lines[3]
    assert str(info["token"]) not in stderr


async def test_serve_uses_the_documented_default_info_file(tmp_path: Path) -> None:
    """Without --info-file the file is <state dir>/obsidian-ai-bridge/vaults/<key>/server.json."""
    async with serve(tmp_path) as served:
        vault = tmp_path / "vault"
        expected = tmp_path / "state" / "obsidian-ai-bridge" / "vaults"
        assert served.info_file.parent.parent == expected
        assert served.info_file == default_data_dir(vault) / "server.json"
        served.process.send_signal(signal.SIGTERM)
        async with asyncio.timeout(START_WAIT):
            assert await served.process.wait() == 0


async def test_chat_cli_finds_the_server_through_the_info_file(tmp_path: Path) -> None:
    """`chat --vault V` connects via the default info file; without a provider it says why."""
    async with serve(tmp_path) as served:
        code, out, err = await run_cli(
            tmp_path, "chat", "--vault", str(tmp_path / "vault"), stdin=b"hello\n"
        )
        served.process.send_signal(signal.SIGTERM)
    assert code == 0, err
    assert "Connected to vault vault (" in out  # the note count depends on indexing progress
    assert "error: No model provider is configured" in out


async def test_chat_cli_without_a_server_explains(tmp_path: Path) -> None:
    """`chat` for a vault with no running server exits 1 with the installed command that
    starts one, spelled as everywhere else: obsidian-ai-bridge serve --vault PATH."""
    vault = copy_example_vault(tmp_path)
    code, _, err = await run_cli(tmp_path, "chat", "--vault", str(vault))
    assert code == 1
    assert f"No server is running for {vault}" in err
    assert f"obsidian-ai-bridge serve --vault {vault}" in err and "python" not in err


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.5", "example.com", "::"])
async def test_serve_refuses_non_loopback_hosts(tmp_path: Path, host: str) -> None:
    """A non-loopback --host exits 2 with a clear message and writes no info file."""
    vault = copy_example_vault(tmp_path)
    info_file = tmp_path / "info.json"
    code, _, err = await run_cli(
        tmp_path, "serve", "--vault", str(vault), "--host", host, "--info-file", str(info_file)
    )
    assert code == 2
    assert f"Refusing to listen on {host}" in err
    assert not info_file.exists()


async def test_serve_refuses_a_missing_vault(tmp_path: Path) -> None:
    """A --vault that is not a folder exits 2."""
    code, _, err = await run_cli(tmp_path, "serve", "--vault", str(tmp_path / "nope"))
    assert code == 2
    assert "does not exist" in err


async def test_search_cli_indexes_and_prints_results(tmp_path: Path) -> None:
    """`search` indexes the vault (incrementally) and prints ranked paths with snippets."""
    vault = copy_example_vault(tmp_path)
    args = ("search", "kafka", "--vault", str(vault), "--data-dir", str(tmp_path / "d"))
    code, out, err = await run_cli(tmp_path, *args, "--limit", "2")
    assert code == 0, err
    assert out.splitlines()[0].startswith("1. Projects/Kafka pipeline.md — Kafka pipeline")
    assert "**" in out
    assert "16 notes indexed" in err
    code, out, _ = await run_cli(
        tmp_path, "search", "zeppelinxyz", "--vault", str(vault), "--data-dir", str(tmp_path / "d")
    )
    assert (code, out) == (0, "No notes match “zeppelinxyz”.\n")


async def test_schema_cli_prints_the_committed_schema(tmp_path: Path) -> None:
    """`schema` prints exactly docs/protocol.schema.json."""
    code, out, _ = await run_cli(tmp_path, "schema")
    assert code == 0
    assert out == (REPO_ROOT / "docs" / "protocol.schema.json").read_text(encoding="utf-8")


def test_the_cli_does_not_import_heavy_modules_before_listening() -> None:
    """Importing the serve path loads no pydantic, websockets server, index or provider SDK,
    and of llm_service only the provider names (the --provider choices)."""
    import subprocess

    code = (
        "import sys, plugin_bridge.cli, plugin_bridge.cli.serve; "
        "heavy = [m for m in ('pydantic', 'websockets.asyncio.server', 'anthropic', 'openai', "
        "'httpx', 'sqlite3', 'llm_service.providers.base', 'llm_service.messages', "
        "'plugin_bridge.vault.lexical.index') "
        "if m in sys.modules]; "
        "print(heavy)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO_ROOT
    ).stdout
    assert out.strip() == "[]"


async def test_serve_hint_is_a_command_that_works_when_pasted(tmp_path: Path) -> None:
    """The 'Ready. Try:' line, run as a shell would, connects to this very server."""
    info_file = tmp_path / "custom-info.json"
    async with serve(tmp_path, "--info-file", str(info_file)) as served:
        assert served.process.stderr is not None
        async with asyncio.timeout(START_WAIT):
            while True:
                line = (await served.process.stderr.readline()).decode()
                assert line, "serve ended without printing its hint"
                if line.startswith("Ready. Try: "):
                    break
        command = shlex.split(line.removeprefix("Ready. Try: ").strip())
        assert "--info-file" in command and str(info_file) in command
        chat = await asyncio.create_subprocess_exec(
            *command,
            cwd=tmp_path,
            env=cli_env(tmp_path),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        async with asyncio.timeout(START_WAIT):
            out, _err = await chat.communicate()
        assert chat.returncode == 0
        assert "Connected to vault vault" in out.decode()
        served.process.send_signal(signal.SIGTERM)
        async with asyncio.timeout(START_WAIT):
            assert await served.process.wait() == 0


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--provider", "openai"], "OPENAI_API_KEY"),
        (["--provider", "anthropic"], "ANTHROPIC_API_KEY"),
        (["--base-url", "http://127.0.0.1:1234/v1"], "--base-url needs --provider"),
        (["--provider", "ollama", "--base-url", "http://127.0.0.1:9"], "ollama serve"),
    ],
)
async def test_serve_fails_fast_on_settings_that_cannot_work(
    tmp_path: Path, args: list[str], says: str
) -> None:
    """A provider asked for but unusable, or a base URL alone: one sentence, exit 2, no server
    left running without the provider it was asked for."""
    vault = copy_example_vault(tmp_path)
    code, _out, err = await run_cli(
        tmp_path, "serve", "--vault", str(vault), "--data-dir", str(tmp_path / "data"), *args
    )
    assert code == 2
    last = err.strip().splitlines()[-1]
    assert says in last and "Traceback" not in err
