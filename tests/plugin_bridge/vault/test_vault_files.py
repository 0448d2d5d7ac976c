"""One rule for which files are notes: the index, the note store and listing agree on it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from plugin_bridge.vault.errors import VaultError
from plugin_bridge.vault.files import MAX_NOTE_BYTES, VaultFiles
from plugin_bridge.vault.vault import Vault

WAIT = 15.0

VISIBLE = {
    "Welcome.md": "# Welcome\nhello",
    "Projects/Plan.md": "# Plan\nship it",
    "Board.canvas": '{"nodes": []}',
    "日本語/ノート.md": "東京",
}
HIDDEN = {
    ".hidden/Secret.md": "# Secret",
    ".dotnote.md": "# Dot",
    "Projects/.drafts/Draft.md": "# Draft",
    ".obsidian/workspace.md": "# Workspace",
    ".trash/Old.md": "# Old",
    "data/inside.md": "# The data dir sits inside this vault",
}
NOT_NOTES = {"Picture.png": "not a note", "Plan.md.swp": "editor swap"}


def odd_vault(root: Path) -> dict[str, str]:
    """A vault with hidden folders, binary, oversized and non-UTF-8 notes; each odd file's
    expected VaultError code."""
    for rel, text in {**VISIBLE, **HIDDEN, **NOT_NOTES}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    (root / "Binary.md").write_bytes(b"PK\x03\x04\x00\x00binary")
    (root / "Latin1.md").write_bytes("Caf\xe9 au lait".encode("latin-1"))
    (root / "Huge.md").write_bytes(b"words " * (MAX_NOTE_BYTES // 6 + 1))
    outside = root.parent / "outside.md"
    outside.write_text("# Outside", encoding="utf-8")
    os.symlink(outside, root / "Link out.md")
    os.symlink(root / ".hidden" / "Secret.md", root / "Link to hidden.md")
    return {"Binary.md": "not_text", "Huge.md": "too_large"}


async def test_index_store_and_listing_agree_on_which_files_are_notes(tmp_path: Path) -> None:
    """A file is indexed exactly when the store reads it and lists it; odd files say why not."""
    root = tmp_path / "vault"
    root.mkdir()
    unreadable = odd_vault(root)
    async with Vault(root, root / "data", watch=False) as vault:
        await vault.index.wait_until_idle(WAIT)
        indexed = set(vault.index.list_paths())
        listed = {info.path for info in vault.notes.list_notes(limit=1000)}
        readable = set()
        for rel in listed:
            try:
                vault.notes.read(rel)
            except VaultError as exc:
                assert unreadable[rel] == exc.code, rel
            else:
                readable.add(rel)
    assert readable == indexed == set(VISIBLE) | {"Latin1.md"}
    assert listed == readable | set(unreadable)


@pytest.mark.parametrize("rel", sorted(HIDDEN))
async def test_hidden_and_data_dir_notes_can_be_neither_read_nor_written(
    tmp_path: Path, rel: str
) -> None:
    """The store refuses every path the index never indexes, for reads and for writes."""
    root = tmp_path / "vault"
    root.mkdir()
    odd_vault(root)
    vault = Vault(root, root / "data", watch=False)
    assert vault.index.files.ignored(rel)
    with pytest.raises(VaultError) as read:
        vault.notes.read(rel)
    with pytest.raises(VaultError) as write:
        vault.notes.create(rel.replace(".md", " new.md"), "x")
    assert read.value.code == write.value.code == "forbidden_path"


@pytest.mark.parametrize("rel", ["Link out.md", "Link to hidden.md"])
def test_links_out_of_the_visible_vault_are_not_notes(tmp_path: Path, rel: str) -> None:
    """A link leading out of the vault or into a hidden folder is neither walked nor read."""
    root = tmp_path / "vault"
    root.mkdir()
    odd_vault(root)
    files = VaultFiles(root)
    assert rel not in {path for path, _ in files.walk()}
    assert not files.inside(root / rel)
    vault = Vault(root, tmp_path / "data", watch=False)
    with pytest.raises(VaultError) as caught:
        vault.notes.read(rel)
    assert caught.value.code == "forbidden_path"


async def test_the_users_exclusions_apply_everywhere_and_change_without_a_rebuild(
    tmp_path: Path,
) -> None:
    """Folders and globs excluded: not indexed, listed, read or written; changing the scope
    drops and adds notes by an incremental scan (the unchanged notes are not read again)."""
    root = tmp_path / "vault"
    for rel in ("Keep.md", "Archive/Old.md", "Archive/Deep/Older.md", "Board.excalidraw.md"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(f"# {rel}\nzebra\n", encoding="utf-8")
    async with Vault(
        root, tmp_path / "data", watch=False, exclude=["Archive", "*.excalidraw.md"]
    ) as vault:
        await vault.index.wait_until_idle(WAIT)
        assert vault.index.list_paths() == ["Keep.md"]
        assert [n.path for n in vault.notes.list_notes()] == ["Keep.md"]
        for attempt in (
            lambda: vault.notes.read("Archive/Old.md"),
            lambda: vault.notes.create("Archive/New.md", "x"),
        ):
            with pytest.raises(VaultError) as caught:
                attempt()
            assert caught.value.code == "forbidden_path" and "excluded" in str(caught.value)
        vault.set_scope(["Archive/Deep"])
        await vault.index.wait_until_idle(WAIT)
        assert sorted(vault.index.list_paths()) == [
            "Archive/Old.md",
            "Board.excalidraw.md",
            "Keep.md",
        ]
        stats = vault.index.last_scan_stats
        assert (stats.added, stats.unchanged) == (2, 1)
        assert vault.notes.read("Archive/Old.md").path == "Archive/Old.md"
