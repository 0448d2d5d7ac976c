"""Safe note access: path attacks, atomic writes under SIGKILL, conflicts, undo, encodings."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from plugin_bridge.vault.errors import VaultError
from plugin_bridge.vault.notes import NoteStore, sha256
from plugin_bridge.vault.paths import TEMP_PREFIX, is_ignored


@pytest.fixture
def store(tmp_path: Path) -> NoteStore:
    vault = tmp_path / "vault"
    (vault / "Projects").mkdir(parents=True)
    (vault / "Projects" / "Plan.md").write_text("# Plan\nship it\n", encoding="utf-8")
    (vault / ".obsidian").mkdir()
    (vault / ".obsidian" / "app.json").write_text("{}")
    return NoteStore(vault, tmp_path / "data")


EVIL_PATHS = [
    "../outside.md",
    "Projects/../../outside.md",
    "/etc/passwd",
    "C:\\Windows\\x.md",
    "..\\outside.md",
    ".obsidian/app.json",
    ".git/config.md",
    ".trash/old.md",
    "",
    "   ",
    "a\x00b.md",
]


@pytest.mark.parametrize("path", EVIL_PATHS)
def test_paths_outside_or_into_system_folders_are_refused(store: NoteStore, path: str) -> None:
    """Traversal, absolute and system-folder paths never reach the disk."""
    with pytest.raises(VaultError) as caught:
        store.read(path)
    assert caught.value.code == "forbidden_path"
    with pytest.raises(VaultError):
        store.create(path, "pwned")


def test_symlinks_leading_out_are_refused(store: NoteStore, tmp_path: Path) -> None:
    """A linked folder or file pointing outside the vault cannot be read or written."""
    outside = tmp_path / "secret"
    outside.mkdir()
    (outside / "keys.md").write_text("secret")
    (store.root / "linked").symlink_to(outside)
    (store.root / "file.md").symlink_to(outside / "keys.md")
    for path in ["linked/keys.md", "file.md", "linked/new.md"]:
        with pytest.raises(VaultError) as caught:
            store.read(path) if path != "linked/new.md" else store.create(path, "x")
        assert caught.value.code == "forbidden_path"
    assert (outside / "keys.md").read_text() == "secret"


def test_the_data_dir_inside_the_vault_is_off_limits(tmp_path: Path) -> None:
    """State kept inside the vault cannot be read or written as a note."""
    vault = tmp_path / "v"
    (vault / "state").mkdir(parents=True)
    (vault / "state" / "x.md").write_text("internal")
    store = NoteStore(vault, vault / "state")
    with pytest.raises(VaultError, match="data folder"):
        store.read("state/x.md")


def test_only_markdown_is_written_and_canvas_is_read_only(store: NoteStore) -> None:
    """.canvas and .base can be read, never written; other types are refused."""
    (store.root / "Board.canvas").write_text('{"nodes": []}')
    assert store.read("Board.canvas").content == '{"nodes": []}'
    for path in ["Board.canvas", "script.sh", "image.png"]:
        with pytest.raises(VaultError) as caught:
            store.create(path, "x", overwrite=True)
        assert caught.value.code == "forbidden_path"


def test_create_never_overwrites_unless_asked(store: NoteStore) -> None:
    """An existing note is kept; overwrite=True replaces it and can be undone."""
    with pytest.raises(VaultError) as caught:
        store.create("Projects/Plan.md", "new")
    assert caught.value.code == "exists"
    result = store.create("Projects/Plan.md", "new", overwrite=True)
    assert result.previous_hash is not None and not result.created
    store.undo("Projects/Plan.md")
    assert store.read("Projects/Plan.md").content == "# Plan\nship it\n"


def test_modify_requires_the_hash_that_was_read(store: NoteStore) -> None:
    """A note changed since it was read is not overwritten: conflict."""
    seen = store.read("Projects/Plan.md")
    (store.root / "Projects" / "Plan.md").write_text("# Plan\nedited by the user\n")
    with pytest.raises(VaultError) as caught:
        store.modify("Projects/Plan.md", "model's version", expected_hash=seen.hash)
    assert caught.value.code == "conflict"
    fresh = store.read("Projects/Plan.md")
    store.modify("Projects/Plan.md", "merged", expected_hash=fresh.hash)
    assert store.read("Projects/Plan.md").content == "merged"


def test_undo_restores_and_removes_created_notes(store: NoteStore) -> None:
    """Undo walks back modify, append and create, one write at a time."""
    store.append("Projects/Plan.md", "- step 2")
    assert store.read("Projects/Plan.md").content == "# Plan\nship it\n- step 2"
    store.undo("Projects/Plan.md")
    assert store.read("Projects/Plan.md").content == "# Plan\nship it\n"
    store.create("Inbox/Idea.md", "idea")
    store.undo("Inbox/Idea.md")
    assert not (store.root / "Inbox" / "Idea.md").exists()
    with pytest.raises(VaultError) as caught:
        store.undo("Inbox/Idea.md")
    assert caught.value.code == "not_found"


def test_snapshots_and_audit_stay_outside_the_vault(store: NoteStore, tmp_path: Path) -> None:
    """Every write is logged with hashes and origin, never content; nothing lands in the vault."""
    before = sorted(p.name for p in store.root.rglob("*"))
    store.append("Projects/Plan.md", "secret words", origin="model")
    lines = (tmp_path / "data" / "audit.jsonl").read_text().splitlines()
    entry = json.loads(lines[-1])
    assert entry["path"] == "Projects/Plan.md" and entry["action"] == "append"
    assert entry["origin"] == "model" and entry["oldHash"] and entry["newHash"]
    assert "secret" not in lines[-1]
    assert sorted(p.name for p in store.root.rglob("*")) == before


def test_line_endings_bom_and_mode_are_kept(store: NoteStore) -> None:
    """A CRLF, BOM-prefixed, read-only-for-others note keeps all three after a write."""
    path = store.root / "Windows.md"
    path.write_bytes(b"\xef\xbb\xbfline one\r\nline two\r\n")
    path.chmod(0o600)
    store.modify("Windows.md", "new one\nnew two\n", expected_hash=store.read("Windows.md").hash)
    assert path.read_bytes() == b"\xef\xbb\xbfnew one\r\nnew two\r\n"
    assert path.stat().st_mode & 0o777 == 0o600
    assert store.read("Windows.md").content == "new one\r\nnew two\r\n"


def test_binary_and_huge_files_are_refused_with_codes(store: NoteStore) -> None:
    """Binary content is not_text; a file over the size limit is too_large."""
    (store.root / "blob.md").write_bytes(b"\x00\x01\x02binary")
    (store.root / "huge.md").write_bytes(b"a" * (5 * 1024 * 1024 + 1))
    (store.root / "latin1.md").write_bytes("caf\xe9".encode("latin-1"))
    codes = {}
    for name in ["blob.md", "huge.md", "latin1.md"]:
        with pytest.raises(VaultError) as caught:
            store.read(name)
        codes[name] = caught.value.code
    assert codes == {"blob.md": "not_text", "huge.md": "too_large", "latin1.md": "not_text"}


def test_renamed_note_is_read_at_its_new_path(store: NoteStore) -> None:
    """After a rename on disk the old path is not_found and the new one reads."""
    os.rename(store.root / "Projects" / "Plan.md", store.root / "Projects" / "Roadmap.md")
    assert store.read("Projects/Roadmap.md").content.startswith("# Plan")
    with pytest.raises(VaultError) as caught:
        store.read("Projects/Plan.md")
    assert caught.value.code == "not_found"


def test_unique_path_adds_suffixes_and_cleans_names(store: NoteStore) -> None:
    """Titles become safe file names; taken names get ' 1', ' 2'."""
    assert store.unique_path("Projects", "Plan") == "Projects/Plan 1.md"
    store.create("Projects/Plan 1.md", "x")
    assert store.unique_path("Projects", "Plan") == "Projects/Plan 2.md"
    assert store.unique_path("", "What: a/b? [[x]] #y") == "What a b x y.md"
    assert store.unique_path("", "   ") == "Untitled.md"


def test_list_notes_skips_system_folders_and_temp_files(store: NoteStore) -> None:
    """Listing shows notes only: no .obsidian, no temp files, respects the folder."""
    (store.root / f"{TEMP_PREFIX}abc.tmp").write_text("half")
    store.create("Inbox/A.md", "a")
    assert [n.path for n in store.list_notes()] == ["Inbox/A.md", "Projects/Plan.md"]
    assert [n.path for n in store.list_notes("Projects")] == ["Projects/Plan.md"]
    with pytest.raises(VaultError):
        store.list_notes("../")


def test_preview_is_a_unified_diff(store: NoteStore) -> None:
    """Confirmations show exactly what a write would change."""
    diff = store.preview_write("Projects/Plan.md", "# Plan\nship it today\n")
    assert "-ship it" in diff and "+ship it today" in diff and "a/Projects/Plan.md" in diff


WRITER = """
import sys
from pathlib import Path
from plugin_bridge.vault.notes import NoteStore
store = NoteStore(Path(sys.argv[1]), Path(sys.argv[2]))
i = 0
while True:
    i += 1
    body = (chr(ord('A') + i % 26) * 200_000)
    store.create("big.md", body, overwrite=True, origin="test")
    print(i, flush=True)
"""


def test_writer_killed_mid_write_leaves_old_or_new_never_torn(tmp_path: Path) -> None:
    """SIGKILL at random moments: the note is always one whole version."""
    vault, data = tmp_path / "v", tmp_path / "d"
    vault.mkdir()
    (vault / "big.md").write_text("A" * 200_000)
    for round_ in range(12):
        proc = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(vault), str(data)],
            stdout=subprocess.PIPE,
            cwd=Path(__file__).parent.parent,
        )
        assert proc.stdout is not None
        for _ in range(1 + round_ % 4):  # kill after a varying number of whole writes
            proc.stdout.readline()
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        content = (vault / "big.md").read_text()
        assert len(content) == 200_000 and len(set(content)) == 1
    leftovers = [p.name for p in vault.iterdir() if p.name != "big.md"]
    assert all(is_ignored(name) for name in leftovers)
    store = NoteStore(vault, data)
    assert [n.path for n in store.list_notes()] == ["big.md"]
    assert store.read("big.md").hash == sha256((vault / "big.md").read_bytes())


def test_links_into_system_folders_are_refused(store: NoteStore) -> None:
    """A note that is a link into .obsidian cannot be used to reach it."""
    (store.root / "sneaky.md").symlink_to(store.root / ".obsidian" / "app.json")
    with pytest.raises(VaultError) as caught:
        store.read("sneaky.md")
    assert caught.value.code == "forbidden_path"
