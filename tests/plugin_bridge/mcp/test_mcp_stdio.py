"""`obsidian-ai-bridge mcp` through the official MCP client over stdio, in both of its modes:

- "own": no server runs for the vault, so the first MCP process (--allow-writes) becomes the
  server and the second (read-only) forwards to it;
- "forwarded": a `serve` process owns the vault and both MCP processes forward to it.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import mcp_types as types
import pytest
import pytest_asyncio
from mcp.shared.exceptions import MCPError

from llm_service.tools import ToolRegistry
from plugin_bridge.app.vault_tools import register_vault_tools
from plugin_bridge.vault.vault import Vault
from plugin_bridge.wire.client import BridgeClient
from tests.helpers.bridge import copy_example_vault
from tests.helpers.mcp import HeldClient, child_pids, json_of, mcp_command, open_files, text_of
from tests.helpers.serve import Served, cli_env, start_serve

pytestmark = [
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="reads /proc (Linux)"),
]

READS = {"search_notes", "read_note", "list_notes", "get_backlinks"}
WRITES = {"create_note", "edit_note", "append_to_note"}


@dataclass
class Setup:
    mode: str
    vault: Path
    data_dir: Path
    writer: HeldClient
    reader: HeldClient
    served: Served | None


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=["own", "forwarded"])
async def setup(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Setup]:
    tmp = tmp_path_factory.mktemp(request.param)
    vault, data_dir = copy_example_vault(tmp), tmp / "data"
    env = cli_env(tmp) | {"AI_BRIDGE_CONFIG": str(tmp / "none.toml")}
    info = ("--info-file", str(tmp / "server.json"))
    served = None
    if request.param == "forwarded":
        served = await start_serve(tmp, *info, vault=vault)
    writer = await HeldClient(mcp_command(vault, data_dir, env, *info, "--allow-writes")).open()
    reader = await HeldClient(mcp_command(vault, data_dir, env, *info)).open()
    try:
        yield Setup(request.param, vault, data_dir, writer, reader, served)
    finally:
        await reader.close()
        await writer.close()
        if served is not None:
            served.process.terminate()
            await served.process.wait()


async def searched(client: HeldClient, query: str) -> list[dict[str, str]]:
    """search_notes once the background index has the vault (it starts with the server)."""
    async with asyncio.timeout(30):
        while True:
            results: list[dict[str, str]] = json_of(
                await client.call("search_notes", {"query": query})
            )["results"]
            if results:
                return results
            await asyncio.sleep(0.05)


async def test_lists_the_vault_tools_with_the_models_schemas(setup: Setup, tmp_path: Path) -> None:
    """Reads for every client, writes with --allow-writes, each with the model's own schema."""
    registry = ToolRegistry()
    register_vault_tools(registry, Vault(setup.vault, tmp_path / "d"))
    schemas = {spec.name: spec.input_schema for spec in registry.tool_specs()}
    reader, writer = await setup.reader.tools(), await setup.writer.tools()
    assert set(reader) == READS
    assert set(writer) == READS | WRITES
    for name, tool in writer.items():
        assert tool.input_schema == schemas[name]
        assert tool.annotations is not None
        assert tool.annotations.read_only_hint is (name in READS)


async def test_search_and_read(setup: Setup) -> None:
    results = await searched(setup.reader, "kafka")
    assert results[0]["path"] == "Projects/Kafka pipeline.md"
    note = json_of(await setup.reader.call("read_note", {"path": "Projects/Kafka pipeline.md"}))
    assert note["content"] == (setup.vault / "Projects/Kafka pipeline.md").read_text()
    missing = await setup.reader.call("read_note", {"path": "No such note.md"})
    assert missing.is_error and "There is no note 'No such note.md'" in text_of(missing)


async def test_notes_are_resources(setup: Setup) -> None:
    """note://PATH (percent-encoded) reads a whole note; a path outside the vault is refused."""
    templates = (await setup.reader.client.list_resource_templates()).resource_templates
    assert [t.uri_template for t in templates] == ["note://{path}"]
    read = await setup.reader.client.read_resource("note://Projects/Kafka%20pipeline.md")
    (contents,) = read.contents
    assert isinstance(contents, types.TextResourceContents)
    assert contents.text == (setup.vault / "Projects/Kafka pipeline.md").read_text()
    assert contents.mime_type == "text/markdown"
    with pytest.raises(MCPError, match="leaves the vault"):
        await setup.reader.client.read_resource("note://../secret.md")


async def test_notes_are_listed_and_prompts_offered(setup: Setup) -> None:
    """resources/list and the custom prompts in either mode (forwarded: vault/list, prompts/list
    and note/read on the server)."""
    folder = setup.vault / "Assistant" / "Prompts"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "Tidy.md").write_text("---\ninsert: note\n---\nTidy this note.\n")
    async with asyncio.timeout(30):
        while True:  # once the index has the whole vault
            listed = await setup.reader.client.list_resources(cache_mode="bypass")
            names = {resource.name for resource in listed.resources}
            if {"Projects/Kafka pipeline.md", "Assistant/Prompts/Tidy.md"} <= names:
                break
            await asyncio.sleep(0.1)
    assert listed.next_cursor is None
    prompts = {p.name: p for p in (await setup.reader.client.list_prompts()).prompts}
    assert [a.name for a in prompts["Tidy"].arguments or []] == ["note", "text"]
    got = await setup.reader.client.get_prompt("Tidy", {"note": "Welcome.md", "text": "Now."})
    first, second = (message.content for message in got.messages)
    assert isinstance(first, types.TextContent) and first.text == "Tidy this note.\n\nNow."
    assert isinstance(second, types.EmbeddedResource)
    assert isinstance(second.resource, types.TextResourceContents)
    assert second.resource.text == (setup.vault / "Welcome.md").read_text()


async def test_a_write_without_allow_writes_is_refused(setup: Setup) -> None:
    refused = await setup.reader.call("create_note", {"path": "Sneaky.md", "content": "x"})
    assert refused.is_error
    assert "--allow-writes" in text_of(refused)
    assert not (setup.vault / "Sneaky.md").exists()


async def test_an_allowed_write_checks_the_hash(setup: Setup) -> None:
    """edit_note with the hash read_note gave is refused once the note changed since; with the
    current hash it writes, logged as the model's, and the shared index finds the new text."""
    path, file = "Inbox.md", setup.vault / "Inbox.md"
    stale = json_of(await setup.writer.call("read_note", {"path": path}))["hash"]
    file.write_text(file.read_text() + "\n- changed by hand\n")
    edit = {"old_text": "changed by hand", "new_text": f"zanzibarquux {setup.mode}"}
    conflict = await setup.writer.call(
        "edit_note", {"path": path, "edits": [edit], "expected_hash": stale}
    )
    assert conflict.is_error and "changed" in text_of(conflict)
    assert "changed by hand" in file.read_text()
    fresh = json_of(await setup.writer.call("read_note", {"path": path}))["hash"]
    written = json_of(
        await setup.writer.call(
            "edit_note", {"path": path, "edits": [edit], "expected_hash": fresh}
        )
    )
    assert written["path"] == path
    assert f"zanzibarquux {setup.mode}" in file.read_text()
    audit = [json.loads(line) for line in (setup.data_dir / "audit.jsonl").read_text().splitlines()]
    assert audit[-1]["path"] == path and audit[-1]["origin"] == "model"
    assert (await searched(setup.reader, "zanzibarquux"))[0]["path"] == path


async def test_one_server_one_index(setup: Setup) -> None:
    """Only the vault's server holds its lock and index: a forwarding MCP process opens neither,
    and a plugin's client reaches the same server through the info file."""
    holders = [
        pid for pid in child_pids() if any(str(setup.data_dir) in name for name in open_files(pid))
    ]
    mcp_processes = [pid for pid in child_pids() if b" mcp " in _cmdline(pid)]
    expected = 1 if setup.mode == "own" else 0
    assert len([pid for pid in holders if pid in mcp_processes]) == expected
    assert len(mcp_processes) == 2
    info = json.loads((setup.data_dir.parent / "server.json").read_text())
    client = await BridgeClient.connect(info["url"], info["token"])
    try:
        assert (await client.request("health"))["index"]["notes"] >= 16
    finally:
        await client.close()


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
    except OSError:
        return b""
