"""How `obsidian-ai-bridge mcp` lives and dies: serving the vault itself it stops when stdin
closes (info file removed, lock free, nothing but MCP on stdout); forwarding, it survives the
server's stop by becoming the vault's server itself."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

from plugin_bridge.cli.lock import acquire
from tests.conftest import REPO_ROOT
from tests.helpers.bridge import copy_example_vault
from tests.helpers.mcp import HeldClient, json_of, mcp_command
from tests.helpers.serve import START_WAIT, cli_env, run_cli, start_serve


async def test_serving_the_vault_it_stops_when_stdin_closes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))  # the subprocess's lock folder
    vault, info_file = copy_example_vault(tmp_path), tmp_path / "server.json"
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        *("-m", "plugin_bridge", "mcp", "--vault", str(vault), "--data-dir", str(tmp_path / "d")),
        *("--info-file", str(info_file)),
        cwd=REPO_ROOT,
        env=cli_env(tmp_path) | {"AI_BRIDGE_CONFIG": str(tmp_path / "none.toml")},
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    assert process.stdin is not None and process.stdout is not None
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"},
        },
    }
    process.stdin.write(json.dumps(initialize).encode() + b"\n")
    await process.stdin.drain()
    async with asyncio.timeout(START_WAIT):
        reply = json.loads(await process.stdout.readline())
    assert reply["id"] == 1 and reply["result"]["serverInfo"]["name"] == "obsidian-ai-bridge"
    assert info_file.exists()
    process.stdin.close()
    async with asyncio.timeout(START_WAIT):
        rest = await process.stdout.read()
        assert await process.wait() == 0
    assert all(json.loads(line) for line in rest.splitlines())  # stdout: MCP messages only
    assert not info_file.exists()
    acquire(vault).release()  # the vault's lock is free again


async def test_forwarding_it_takes_over_when_the_server_stops(tmp_path: Path) -> None:
    """The server forwarded to stops: the forwarding process (given another data folder) takes
    the vault's lock and serves the vault itself, in the same MCP session; a serve started then
    is refused naming it; when its client closes stdin it stops and frees the vault."""
    vault = copy_example_vault(tmp_path)
    info = ("--info-file", str(tmp_path / "server.json"))
    env = cli_env(tmp_path) | {"AI_BRIDGE_CONFIG": str(tmp_path / "none.toml")}
    served = await start_serve(tmp_path, *info, vault=vault)
    client = await HeldClient(mcp_command(vault, tmp_path / "other-data", env, *info)).open()
    try:
        read = {"path": "Welcome.md"}
        assert json_of(await client.call("read_note", read))["path"] == "Welcome.md"
        served.process.terminate()
        await served.process.wait()
        result = await client.call("read_note", read)  # waits for the takeover, not lost
        assert json_of(result)["path"] == "Welcome.md"
        taken = json.loads((tmp_path / "server.json").read_text())
        assert taken["pid"] != served.process.pid
        code, _out, err = await run_cli(tmp_path, "serve", "--vault", str(vault))
        assert code == 2 and f"pid {taken['pid']}" in err and "other-data" in err
        names: set[str] = set()
        async with asyncio.timeout(START_WAIT):  # the new server indexes the vault first
            while "Welcome.md" not in names:
                listed = await client.client.list_resources(cache_mode="bypass")
                names = {r.name for r in listed.resources}
                await asyncio.sleep(0.1)
    finally:
        await client.close()
        if served.process.returncode is None:
            served.process.terminate()
            await served.process.wait()
    async with asyncio.timeout(START_WAIT):
        while (tmp_path / "server.json").exists():  # noqa: ASYNC110 - another process's file
            await asyncio.sleep(0.05)
