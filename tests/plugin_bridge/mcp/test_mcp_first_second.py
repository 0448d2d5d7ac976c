"""MCP from the first second: a freshly started ``mcp`` (the stdio command, through the SDK's
client) lists the vault's notes in its first ``resources/list`` right after the handshake,
while the index is still being built (from the file system; the index adds titles when it is
done, and ``notifications/resources/list_changed`` tells the client so)."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import mcp_types as types
import pytest

from plugin_bridge.vault.lexical.listing import InvalidCursor
from plugin_bridge.vault.vault import Vault
from tests.conftest import shared_vault
from tests.helpers.bridge import copy_example_vault
from tests.helpers.mcp import HeldClient, mcp_command
from tests.helpers.serve import START_WAIT, cli_env


async def test_a_fresh_mcp_lists_the_notes_in_its_first_resources_list(tmp_path: Path) -> None:
    vault = tmp_path / "en"
    shutil.copytree(shared_vault("en"), vault)
    notes = sorted(p.relative_to(vault).as_posix() for p in vault.rglob("*.md"))
    assert len(notes) >= 170
    changed: asyncio.Queue[object] = asyncio.Queue()

    async def on_message(message: object) -> None:
        if isinstance(message, types.ResourceListChangedNotification):
            changed.put_nowait(message)

    env = cli_env(tmp_path) | {"AI_BRIDGE_CONFIG": str(tmp_path / "none.toml")}
    info = ("--info-file", str(tmp_path / "server.json"))
    client = await HeldClient(
        mcp_command(vault, tmp_path / "data", env, *info),
        mode="legacy",
        message_handler=on_message,
    ).open()
    try:
        first = await client.client.list_resources(cache_mode="bypass")
        assert len(first.resources) >= 150
        assert [r.name for r in first.resources] == notes[: len(first.resources)]
        capabilities = client.client.server_capabilities.resources
        assert capabilities is not None and capabilities.list_changed
        (vault / "Brand new.md").write_text("# Brand new\n", encoding="utf-8")
        async with asyncio.timeout(START_WAIT):
            while True:  # the index done (titles), the new note: told, then listed
                await changed.get()
                listed = await client.client.list_resources(cache_mode="bypass")
                named = {r.name: r for r in listed.resources}
                if "Brand new.md" in named and all(r.title for r in listed.resources):
                    break
        assert named["Brand new.md"].title == "Brand new"
    finally:
        await client.close()


async def test_the_file_systems_list_pages_as_the_index_does(tmp_path: Path) -> None:
    """Before the first indexing is done the list comes from the file system: every note,
    in path order, with its size and no title yet, paged with the index's cursors."""
    root = copy_example_vault(tmp_path)
    (root / ".hidden").mkdir()
    (root / ".hidden" / "Secret.md").write_text("x", encoding="utf-8")
    vault = Vault(root, tmp_path / "data")  # not started: no index yet
    on_disk = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.md"))
    on_disk.remove(".hidden/Secret.md")
    names, cursor = [], None
    while True:
        page = await vault.notes_page(cursor, 5)
        names += [note.path for note in page.notes]
        assert all(note.title == "" for note in page.notes)
        cursor = page.next_cursor
        if cursor is None:
            break
    assert names == on_disk
    welcome = (await vault.notes_page(None, 1000)).notes
    sizes = {note.path: note.size for note in welcome}
    assert sizes["Welcome.md"] == (root / "Welcome.md").stat().st_size
    assert not vault.listed_whole
    with pytest.raises(InvalidCursor):
        await vault.notes_page("not a cursor!", 5)
