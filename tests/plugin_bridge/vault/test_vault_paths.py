"""Path safety of the note store: nothing outside the vault, in its system folders or in our data
dir can be read, written, listed or undone, whatever path a model or a plugin sends."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from plugin_bridge.vault.errors import VaultError
from plugin_bridge.vault.notes.store import NoteStore

EVIL_PATHS = [
    "../x.md",
    "/etc/passwd",
    "/etc/hosts.md",
    "a/../../x.md",
    "Projects/../../x.md",
    "..\\x.md",
    "C:\\x.md",
    "C:/Windows/x.md",
    "\\\\server\\share\\x.md",
    ".obsidian/app.json",
    ".obsidian/workspace.md",
    "Projects/.obsidian/x.md",
    ".git/config.md",
    ".trash/old.md",
    ".ai-bridge/index.md",
    "",
    "   ",
    "a\x00b.md",
]

OPERATIONS: dict[str, Callable[[NoteStore, str], object]] = {
    "read": lambda store, path: store.read(path),
    "info": lambda store, path: store.info(path),
    "create": lambda store, path: store.create(path, "pwned", overwrite=True),
    "modify": lambda store, path: store.modify(path, "pwned", expected_hash="0" * 64),
    "append": lambda store, path: store.append(path, "pwned"),
    "undo": lambda store, path: store.undo(path),
    "plan_rewrite": lambda store, path: store.plan_create(path, "pwned", overwrite=True),
}


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    (root / "Projects").mkdir(parents=True)
    (root / "Projects" / "Plan.md").write_text("# Plan\n", encoding="utf-8")
    (root / ".obsidian").mkdir()
    (root / ".obsidian" / "app.json").write_text("{}")
    (root / ".obsidian" / "workspace.md").write_text("internal")
    (tmp_path / "x.md").write_text("outside")
    return root


@pytest.fixture
def store(vault: Path, tmp_path: Path) -> NoteStore:
    return NoteStore(vault, tmp_path / "data")


def _snapshot_tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


@pytest.mark.parametrize("operation", sorted(OPERATIONS))
@pytest.mark.parametrize("path", EVIL_PATHS)
def test_evil_paths_are_refused_by_every_operation(
    store: NoteStore, tmp_path: Path, path: str, operation: str
) -> None:
    """Traversal, absolute, drive, UNC, system-folder and empty paths are forbidden_path."""
    before = _snapshot_tree(tmp_path)
    with pytest.raises(VaultError) as caught:
        OPERATIONS[operation](store, path)
    assert caught.value.code == "forbidden_path"
    assert str(caught.value)  # one sentence for the model or the user
    assert _snapshot_tree(tmp_path) == before


@pytest.mark.parametrize("operation", sorted(OPERATIONS))
def test_a_symlinked_folder_leading_out_is_refused(
    store: NoteStore, tmp_path: Path, operation: str
) -> None:
    """A folder link to outside the vault cannot be used to reach files there."""
    outside = tmp_path / "secret"
    outside.mkdir()
    (outside / "keys.md").write_text("secret")
    (store.root / "linked").symlink_to(outside, target_is_directory=True)
    for path in ["linked/keys.md", "linked/new.md"]:
        with pytest.raises(VaultError) as caught:
            OPERATIONS[operation](store, path)
        assert caught.value.code == "forbidden_path"
    assert [p.name for p in outside.iterdir()] == ["keys.md"]
    assert (outside / "keys.md").read_text() == "secret"


@pytest.mark.parametrize("operation", sorted(OPERATIONS))
def test_a_symlinked_file_leading_out_is_refused(
    store: NoteStore, tmp_path: Path, operation: str
) -> None:
    """A note that is a link to a file outside the vault is neither read nor written through."""
    (store.root / "Leak.md").symlink_to(tmp_path / "x.md")
    with pytest.raises(VaultError) as caught:
        OPERATIONS[operation](store, "Leak.md")
    assert caught.value.code == "forbidden_path"
    assert (tmp_path / "x.md").read_text() == "outside"


def test_a_symlink_inside_the_vault_is_followed_for_reads_and_writes(store: NoteStore) -> None:
    """A link that stays inside the vault is an ordinary note: writes reach its target."""
    alias = store.root / "Alias.md"
    alias.symlink_to(store.root / "Projects" / "Plan.md")
    assert store.read("Alias.md").content == "# Plan\n"
    store.append("Alias.md", "via the link")
    assert alias.is_symlink()
    assert (store.root / "Projects" / "Plan.md").read_text() == "# Plan\nvia the link"
    store.undo("Alias.md")
    assert alias.is_symlink() and store.read("Projects/Plan.md").content == "# Plan\n"


@pytest.mark.parametrize("operation", sorted(OPERATIONS))
def test_a_symlink_into_a_system_folder_is_refused(store: NoteStore, operation: str) -> None:
    """A note that links into .obsidian cannot be used to read or change Obsidian's files."""
    (store.root / "Sneaky.md").symlink_to(store.root / ".obsidian" / "workspace.md")
    with pytest.raises(VaultError, match="system folder") as caught:
        OPERATIONS[operation](store, "Sneaky.md")
    assert caught.value.code == "forbidden_path"
    assert (store.root / ".obsidian" / "workspace.md").read_text() == "internal"


def test_the_data_dir_inside_the_vault_is_off_limits(vault: Path) -> None:
    """State kept inside the vault is never read, written or listed as notes."""
    (vault / "state").mkdir()
    (vault / "state" / "x.md").write_text("internal")
    store = NoteStore(vault, vault / "state")
    for operation in ("read", "create", "append"):
        with pytest.raises(VaultError, match="data folder") as caught:
            OPERATIONS[operation](store, "state/x.md")
        assert caught.value.code == "forbidden_path"
    store.create("Inbox/A.md", "a")
    assert [n.path for n in store.list_notes()] == ["Inbox/A.md", "Projects/Plan.md"]
    with pytest.raises(VaultError) as listed:
        store.list_notes("state")
    assert listed.value.code == "forbidden_path"


@pytest.mark.parametrize("path", ["Board.canvas", "Table.base", "script.sh", "image.png", "x"])
def test_only_markdown_can_be_written(store: NoteStore, path: str) -> None:
    """.canvas and .base are read-only; other file types are refused outright."""
    with pytest.raises(VaultError) as caught:
        store.create(path, "x")
    assert caught.value.code == "forbidden_path"
    assert not (store.root / path).exists()


def test_canvas_and_base_files_can_be_read(store: NoteStore) -> None:
    """The read-only note types are readable as text."""
    (store.root / "Board.canvas").write_text('{"nodes": []}')
    (store.root / "Table.base").write_text("views: []\n")
    assert store.read("Board.canvas").content == '{"nodes": []}'
    assert store.read("Table.base").content == "views: []\n"


@pytest.mark.parametrize(
    "folder", ["..", "../", "/etc", "Projects/../..", ".obsidian", ".git", "C:\\Windows"]
)
def test_listing_a_folder_outside_the_vault_is_refused(store: NoteStore, folder: str) -> None:
    """list_notes only lists folders of the vault itself."""
    with pytest.raises(VaultError) as caught:
        store.list_notes(folder)
    assert caught.value.code == "forbidden_path"


@pytest.mark.parametrize("folder", ["../x", "/tmp", ".obsidian"])
def test_unique_path_refuses_folders_outside_the_vault(store: NoteStore, folder: str) -> None:
    """A new note's folder obeys the same rules as any path."""
    with pytest.raises(VaultError) as caught:
        store.unique_path(folder, "Title")
    assert caught.value.code == "forbidden_path"


def test_equivalent_spellings_of_a_path_reach_the_same_note(store: NoteStore) -> None:
    """Backslashes, './' and surrounding blanks are normalised to the canonical path."""
    for spelling in ["Projects\\Plan.md", "./Projects/Plan.md", "  Projects/Plan.md "]:
        assert store.read(spelling).path == "Projects/Plan.md"
