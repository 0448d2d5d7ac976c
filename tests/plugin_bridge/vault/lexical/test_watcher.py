"""Live updates: changes on disk reach search through the watcher, within a bounded wait."""

from __future__ import annotations

import logging
import os
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from plugin_bridge.vault.lexical.index import SearchIndex
from tests.plugin_bridge.vault.lexical.test_index import paths, started, until, write_vault


@pytest.fixture
async def live(tmp_path: Path) -> AsyncIterator[SearchIndex]:
    """A watching index on a small vault, its start-up scan done."""
    write_vault(tmp_path / "vault", {"Kafka.md": "# Kafka\nA log.", "Folder/Old.md": "heron"})
    index = await started(tmp_path / "vault", tmp_path / "data" / "i.sqlite3", watch=True)
    yield index
    await index.close()


async def test_create_modify_rename_delete_show_up(live: SearchIndex) -> None:
    """A note created, edited, renamed and deleted on disk is searchable accordingly."""
    root = live.root
    (root / "New.md").write_text("a fresh axolotl")
    await until(lambda: paths(live, "axolotl") == ["New.md"])
    (root / "New.md").write_text("now a narwhal")
    await until(lambda: paths(live, "narwhal") == ["New.md"] and not paths(live, "axolotl"))
    (root / "New.md").rename(root / "Moved.md")
    await until(lambda: paths(live, "narwhal") == ["Moved.md"])
    (root / "Moved.md").unlink()
    await until(lambda: paths(live, "narwhal") == [])


async def test_atomic_replace_by_an_editor_shows_up(live: SearchIndex) -> None:
    """An editor's write-to-temp-then-rename is seen as a change of the note."""
    temp = live.root / ".~aib-0a1b.tmp"
    temp.write_text("# Kafka\nreplaced with ocelots")
    os.replace(temp, live.root / "Kafka.md")
    await until(lambda: paths(live, "ocelots") == ["Kafka.md"])


async def test_folders_moved_in_and_out(live: SearchIndex, tmp_path: Path) -> None:
    """A folder moved into the vault is indexed; one moved out drops its notes."""
    outside = tmp_path / "outside"
    write_vault(outside, {"a.md": "a lemur", "deep/b.md": "another lemur"})
    shutil.move(outside, live.root / "Imported")
    await until(lambda: sorted(paths(live, "lemur")) == ["Imported/a.md", "Imported/deep/b.md"])
    shutil.move(live.root / "Folder", tmp_path / "gone")
    await until(lambda: paths(live, "heron") == [])


async def test_system_hidden_and_temp_files_are_ignored(live: SearchIndex) -> None:
    """.obsidian, hidden folders, editor and our own temp files never reach the index."""
    root = live.root
    write_vault(
        root,
        {
            ".obsidian/workspace.md": "walrus",
            ".hidden/x.md": "walrus",
            ".~aib-9f.tmp": "walrus",
            "note.md.swp": "walrus",
            "image.png": "walrus",
        },
    )
    (root / "Marker.md").write_text("walrus marker")
    await until(lambda: paths(live, "walrus") == ["Marker.md"])
    assert live.list_paths() == ["Folder/Old.md", "Kafka.md", "Marker.md"]


async def test_vault_removed_and_restored(
    live: SearchIndex, caplog: pytest.LogCaptureFixture
) -> None:
    """While the vault folder is gone search shows the last state; its return is picked up."""
    root = live.root
    backup = root.with_name("backup")
    with caplog.at_level(logging.WARNING, logger="plugin_bridge.vault.lexical.index"):
        shutil.move(root, backup)
        await until(lambda: live.vault_missing)
    assert f"Vault folder {root} is gone" in caplog.text
    assert paths(live, "kafka") == ["Kafka.md"]
    (backup / "Returned.md").write_text("a returning ibis")
    (backup / "Kafka.md").unlink()
    shutil.move(backup, root)
    await until(lambda: paths(live, "ibis") == ["Returned.md"], within=10)
    await until(lambda: paths(live, "kafka") == [])
    assert not live.vault_missing


async def test_vault_replaced_by_a_new_folder(live: SearchIndex) -> None:
    """A vault folder deleted and created again under the same name is watched afresh."""
    root = live.root
    shutil.rmtree(root)
    root.mkdir()
    (root / "Fresh.md").write_text("a brand new quokka")
    await until(lambda: paths(live, "quokka") == ["Fresh.md"], within=10)
    await until(lambda: paths(live, "kafka") == [])
    (root / "Later.md").write_text("a later quokka")
    await until(lambda: sorted(paths(live, "quokka")) == ["Fresh.md", "Later.md"])
