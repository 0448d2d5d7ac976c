"""Names a file system or a sync service would mangle are refused with a sentence, never
trimmed or twinned; each case is tried through the store and counted."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest

from plugin_bridge.vault.errors import VaultError
from plugin_bridge.vault.notes.store import NoteStore
from tests.helpers.bridge import running_bridge

REFUSED = {
    "too long": ("x" * 252) + ".md",  # 255 characters, 255 bytes: allowed below; one more is not
    "too long in bytes": ("é" * 127) + ".md",
    "newline": "Two\nlines.md",
    "tab": "Tab\there.md",
    "trailing space": "Trailing.md ",
    "leading space": " Leading.md",
    "space before a folder slash": "Projects /Plan.md",
    "under a file": "Welcome.md/Inside.md",
}


@pytest.fixture
def store(tmp_path: Path) -> NoteStore:
    vault = tmp_path / "vault"
    (vault / "Projects").mkdir(parents=True)
    (vault / "Welcome.md").write_text("# Welcome\n", encoding="utf-8")
    (vault / "Projects" / "Café.md").write_text("# Café\n", encoding="utf-8")
    return NoteStore(vault, tmp_path / "data")


def test_names_that_would_be_mangled_are_refused_and_nothing_is_written(store: NoteStore) -> None:
    """Every refused name is forbidden_path with its reason, and the vault is unchanged."""
    before = sorted(p.relative_to(store.root) for p in store.root.rglob("*"))
    refused = 0
    for case, name in REFUSED.items():
        if case == "too long":
            name = "x" + name  # 256 bytes
        with pytest.raises(VaultError) as caught:
            store.create(name, "text")
        assert caught.value.code == "forbidden_path", case
        refused += 1
    assert refused == len(REFUSED)
    assert sorted(p.relative_to(store.root) for p in store.root.rglob("*")) == before


def test_a_name_of_exactly_255_bytes_is_fine(store: NoteStore) -> None:
    """The limit is the file systems' own: 255 bytes is still a valid name."""
    assert store.create(REFUSED["too long"], "text").path == REFUSED["too long"]


@pytest.mark.parametrize(
    "twin",
    [
        "welcome.md",
        "WELCOME.md",
        "Projects/café.md",
        unicodedata.normalize("NFD", "Projects/Café.md"),
    ],
)
def test_case_and_normalisation_twins_are_refused_naming_the_existing_note(
    store: NoteStore, twin: str
) -> None:
    """A twin of an existing note is 'exists' naming that note; no second file appears."""
    with pytest.raises(VaultError) as caught:
        store.create(twin, "twin")
    assert caught.value.code == "exists"
    assert caught.value.path in ("Welcome.md", "Projects/Café.md")
    assert caught.value.path in str(caught.value)
    assert len(list(store.root.rglob("*.md"))) == 2


async def test_the_wire_gives_32023_for_bad_names_and_32021_for_twins(tmp_path: Path) -> None:
    """note/create answers each case with the vault error's code and sentence."""
    async with running_bridge(tmp_path) as bridge:
        wire = await bridge.wire()
        bad = await wire.error("note/create", {"path": "Inbox.md ", "content": "x"})
        assert bad["code"] == -32023 and "space" in bad["message"]
        twin = await wire.error("note/create", {"path": "inbox.md", "content": "x"})
        assert twin["code"] == -32021 and "'Inbox.md'" in twin["message"]


def test_unique_path_steps_over_twins(store: NoteStore) -> None:
    """A title whose file name would twin an existing note gets a numbered name instead."""
    assert store.unique_path("", "welcome") == "welcome 1.md"


async def test_note_read_flags_a_lossy_note_and_search_finds_it(tmp_path: Path) -> None:
    """A stray non-UTF-8 byte: note/read answers with lossy true and search still finds it."""
    async with running_bridge(tmp_path) as bridge:
        raw = b"zeppelin notes " + "caf\xe9".encode("latin-1")
        (bridge.vault.root / "Mixed.md").write_bytes(raw)
        bridge.vault.index.notify_changed("Mixed.md")
        wire = await bridge.wire()
        note = await wire.result("note/read", {"path": "Mixed.md"})
        assert note["lossy"] is True and note["content"].endswith("caf\ufffd")
        hits = await wire.result("vault/search", {"query": "zeppelin"})
        assert [hit["path"] for hit in hits["results"]] == ["Mixed.md"]
