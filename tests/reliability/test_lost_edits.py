"""No lost edits: another program's save between our read and our rename wins, and a note that
is being written is never read (or appended to, or indexed) half-way."""

from __future__ import annotations

import os
import random
import threading
from pathlib import Path
from typing import Any

import pytest

from plugin_bridge.vault import files as files_module
from plugin_bridge.vault.errors import VaultError
from plugin_bridge.vault.files import VaultFiles
from plugin_bridge.vault.notes import store as notes_module
from plugin_bridge.vault.notes.store import NoteStore

RUNS = 30
TORN_RUNS = 8
"""Appends against a writer that never pauses: each waits for the note to settle, then gives up."""


def external_save(path: Path, text: str) -> None:
    """What an editor does: write a temp file, rename it over the note."""
    temp = path.with_name(f"{path.name}.editor-tmp")
    temp.write_text(text, encoding="utf-8")
    os.replace(temp, path)


@pytest.fixture
def store(tmp_path: Path) -> NoteStore:
    (tmp_path / "vault").mkdir()
    (tmp_path / "vault" / "Log.md").write_text("# Log\n", encoding="utf-8")
    return NoteStore(tmp_path / "vault", tmp_path / "data")


@pytest.mark.parametrize("operation", ["append", "modify", "create"])
def test_a_save_between_our_read_and_our_rename_is_a_conflict_not_a_loss(
    store: NoteStore, monkeypatch: pytest.MonkeyPatch, operation: str
) -> None:
    """The other program's save lands right before our rename: we write nothing, say so."""
    note = store.root / "Log.md"
    real_write = notes_module.write_atomic

    def save_first(path: Path, data: bytes, **options: Any) -> None:
        external_save(note, "# Log\nthe user's edit\n")
        real_write(path, data, **options)

    monkeypatch.setattr(notes_module, "write_atomic", save_first)
    read_hash = store.read("Log.md").hash
    with pytest.raises(VaultError) as caught:
        if operation == "append":
            store.append("Log.md", "assistant line")
        elif operation == "modify":
            store.modify("Log.md", "# Log\nrewritten\n", expected_hash=read_hash)
        else:
            store.create("Log.md", "# Log\nreplaced\n", overwrite=True)
    assert caught.value.code == "conflict"
    assert note.read_text(encoding="utf-8") == "# Log\nthe user's edit\n"
    assert not [p for p in note.parent.iterdir() if p.name.startswith(".~aib-")]


def test_racing_an_editor_never_loses_its_save(store: NoteStore) -> None:
    """30 races of an append against an editor's atomic save: the editor's text always
    survives; each append either lands on top of it or reports a conflict."""
    note = store.root / "Log.md"
    outcomes = {"appended": 0, "conflict": 0}
    rng = random.Random(14)
    for run in range(RUNS):
        note.write_text("# Log\n" + "line\n" * 2000, encoding="utf-8")
        edit = f"# Log\nsaved by the editor {run}\n"
        spin = rng.randrange(0, 2000)
        go = threading.Barrier(2)
        thread = threading.Thread(target=_editor, args=(go, spin, note, edit))
        thread.start()
        go.wait()
        try:
            store.append("Log.md", f"assistant {run}")
            outcomes["appended"] += 1
        except VaultError as exc:
            assert exc.code == "conflict"
            outcomes["conflict"] += 1
        thread.join()
        assert edit in note.read_text(encoding="utf-8"), f"run {run}: the editor's save was lost"
    assert sum(outcomes.values()) == RUNS


def _editor(go: threading.Barrier, spin: int, note: Path, edit: str) -> None:
    go.wait()
    for _ in range(spin):
        pass
    external_save(note, edit)


def test_a_note_replaced_during_a_read_is_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The file is swapped while it is being read: the read starts over and returns the new
    note whole, not a mix."""
    root = tmp_path / "vault"
    root.mkdir()
    note = root / "Note.md"
    note.write_text("old " * 1000, encoding="utf-8")
    opened: list[str] = []

    def open_then_swap(path: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        handle = open(path, mode, *args, **kwargs)  # noqa: SIM115 - returned to the caller
        if not opened:
            external_save(note, "new " * 1000)
        opened.append(str(path))
        return handle

    monkeypatch.setattr(files_module, "open", open_then_swap, raising=False)
    loaded = VaultFiles(root).load("Note.md", note)
    assert loaded is not None and loaded[0] == ("new " * 1000).encode()
    assert len(opened) == 2


def test_an_append_never_writes_back_a_torn_read(tmp_path: Path) -> None:
    """While another program rewrites a note in place, over and over, appends either land on a
    whole version or report a conflict; the note never ends as a torn version plus our line."""
    root = tmp_path / "vault"
    root.mkdir()
    note = root / "Big.md"
    whole = ["a" * 400_000, "b" * 400_000]
    note.write_text(whole[0], encoding="utf-8")
    store = NoteStore(root, tmp_path / "data")
    stop = threading.Event()

    def writer() -> None:
        i = 0
        while not stop.is_set():
            i += 1
            with open(note, "w", encoding="utf-8") as handle:
                handle.write(whole[i % 2][:200_000])
                handle.flush()
                handle.write(whole[i % 2][200_000:])

    thread = threading.Thread(target=writer)
    thread.start()
    outcomes = {"appended": 0, "conflict": 0}
    try:
        for run in range(TORN_RUNS):
            try:
                store.append("Big.md", f"assistant {run}")
                outcomes["appended"] += 1
            except VaultError as exc:
                assert exc.code == "conflict"
                outcomes["conflict"] += 1
    finally:
        stop.set()
        thread.join()
    text = note.read_text(encoding="utf-8")
    body = text.split("\n", 1)[0]
    assert body in whole, "a torn read was written back"
    assert sum(outcomes.values()) == TORN_RUNS
