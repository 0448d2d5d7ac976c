"""Write history of the NoteStore: undo snapshots, the audit log, the per-note lock and the
on_write hook."""

from __future__ import annotations

import json
import logging
import threading
from datetime import datetime as dt
from datetime import timedelta
from pathlib import Path

import pytest

from plugin_bridge.vault.errors import VaultError
from plugin_bridge.vault.notes.audit import SNAPSHOTS_KEPT
from plugin_bridge.vault.notes.store import NoteStore, sha256

PLAN = "# Plan\nship it\n"
JOIN_TIMEOUT = 10.0


@pytest.fixture
def store(tmp_path: Path) -> NoteStore:
    root = tmp_path / "vault"
    (root / "Projects").mkdir(parents=True)
    (root / "Projects" / "Plan.md").write_text(PLAN, encoding="utf-8")
    return NoteStore(root, tmp_path / "data")


def audit_entries(store: NoteStore) -> list[dict[str, object]]:
    lines = (store.data_dir / "audit.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


# -- undo ----------------------------------------------------------------------------------


def test_undo_after_modify_restores_the_previous_bytes(store: NoteStore) -> None:
    """Undo puts back exactly what was there before the last write."""
    before = (store.root / "Projects" / "Plan.md").read_bytes()
    written = store.modify("Projects/Plan.md", "rewritten", expected_hash=sha256(before))
    result = store.undo("Projects/Plan.md")
    assert (store.root / "Projects" / "Plan.md").read_bytes() == before
    assert (result.hash, result.previous_hash, result.created) == (
        sha256(before),
        written.hash,
        False,
    )


def test_undo_after_create_deletes_the_note(store: NoteStore) -> None:
    """A note the last write created is removed again; the result hash is empty."""
    store.create("Inbox/Idea.md", "idea")
    result = store.undo("Inbox/Idea.md")
    assert not (store.root / "Inbox" / "Idea.md").exists()
    assert result.hash == ""
    with pytest.raises(VaultError) as caught:
        store.undo("Inbox/Idea.md")
    assert caught.value.code == "not_found"


def test_undo_walks_back_one_write_at_a_time(store: NoteStore) -> None:
    """Successive undos go back through append, overwrite and modify in reverse order."""
    versions = [store.read("Projects/Plan.md").content]
    store.append("Projects/Plan.md", "- step 2")
    versions.append(store.read("Projects/Plan.md").content)
    store.create("Projects/Plan.md", "replaced\n", overwrite=True)
    versions.append(store.read("Projects/Plan.md").content)
    store.modify("Projects/Plan.md", "final\n", expected_hash=store.read("Projects/Plan.md").hash)
    for expected in reversed(versions):
        store.undo("Projects/Plan.md")
        assert store.read("Projects/Plan.md").content == expected
    with pytest.raises(VaultError, match="no earlier version") as caught:
        store.undo("Projects/Plan.md")
    assert caught.value.code == "not_found"


def test_undo_refuses_to_discard_edits_made_after_the_write(store: NoteStore) -> None:
    """If the user changed the note since our write, undo is a conflict and changes nothing."""
    store.append("Projects/Plan.md", "model line")
    (store.root / "Projects" / "Plan.md").write_text("the user's own edit\n")
    with pytest.raises(VaultError, match="undo would lose") as caught:
        store.undo("Projects/Plan.md")
    assert caught.value.code == "conflict"
    assert store.read("Projects/Plan.md").content == "the user's own edit\n"


def test_undo_skips_a_snapshot_whose_write_never_happened(store: NoteStore) -> None:
    """A crash between snapshot and rename leaves a stale snapshot that undo passes over."""
    store.append("Projects/Plan.md", "kept line")
    current = (store.root / "Projects" / "Plan.md").read_bytes()
    store.snapshots.save("Projects/Plan.md", current, sha256(b"a write that was lost"))
    store.undo("Projects/Plan.md")
    assert store.read("Projects/Plan.md").content == PLAN


def test_undo_after_a_manual_revert_never_deletes_the_note(store: NoteStore) -> None:
    """The user undid our edit by hand (back to what we created): undo is a conflict and the
    note, which an older snapshot says we created, stays."""
    store.create("New.md", "first", origin="model")
    store.modify("New.md", "second", expected_hash=store.read("New.md").hash)
    (store.root / "New.md").write_bytes(b"first")
    with pytest.raises(VaultError) as caught:
        store.undo("New.md")
    assert caught.value.code == "conflict"
    assert (store.root / "New.md").read_bytes() == b"first"


def test_undo_keeps_only_the_last_twenty_snapshots(store: NoteStore) -> None:
    """History is bounded per note: the 21st undo has nothing left to restore."""
    for i in range(SNAPSHOTS_KEPT + 5):
        store.create("Projects/Plan.md", f"version {i}\n", overwrite=True)
    folders = list((store.data_dir / "snapshots").iterdir())
    assert len(folders) == 1 and len(list(folders[0].iterdir())) == SNAPSHOTS_KEPT
    for _ in range(SNAPSHOTS_KEPT):
        store.undo("Projects/Plan.md")
    assert store.read("Projects/Plan.md").content == "version 4\n"
    with pytest.raises(VaultError):
        store.undo("Projects/Plan.md")


def test_snapshots_and_audit_live_in_the_data_dir_not_the_vault(store: NoteStore) -> None:
    """Writes and undos add nothing to the vault besides the notes themselves."""
    store.create("Inbox/A.md", "a")
    store.append("Projects/Plan.md", "b")
    store.undo("Projects/Plan.md")
    in_vault = sorted(str(p.relative_to(store.root)) for p in store.root.rglob("*"))
    assert in_vault == ["Inbox", "Inbox/A.md", "Projects", "Projects/Plan.md"]
    assert (store.data_dir / "audit.jsonl").is_file()
    assert (store.data_dir / "snapshots").is_dir()


def test_a_failed_write_leaves_no_snapshot_behind(
    store: NoteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When the rename fails (write_failed) the note is unchanged and undo has nothing new to
    restore."""
    store.append("Projects/Plan.md", "first")

    def broken_replace(src: object, dst: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("plugin_bridge.vault.notes.atomic.os.replace", broken_replace)
    with pytest.raises(VaultError, match="the disk is full") as caught:
        store.append("Projects/Plan.md", "second")
    assert caught.value.code == "write_failed"
    monkeypatch.undo()
    store.undo("Projects/Plan.md")
    assert store.read("Projects/Plan.md").content == PLAN
    assert [e["action"] for e in audit_entries(store)] == ["append", "undo"]


# -- audit log -----------------------------------------------------------------------------


def test_every_write_is_audited_with_hashes_and_origin_never_content(store: NoteStore) -> None:
    """One JSON line per write: UTC time, path, action, old and new hash, origin."""
    secret = "TOP-SECRET-WORDS"
    store.create("Inbox/A.md", f"{secret} 1", origin="user")
    store.create("Inbox/A.md", f"{secret} 2", overwrite=True, origin="user")
    store.modify("Inbox/A.md", f"{secret} 3", expected_hash=sha256(f"{secret} 2".encode()))
    store.append("Inbox/A.md", secret)
    store.undo("Inbox/A.md")
    store.create("Inbox/B.md", secret)
    store.undo("Inbox/B.md", origin="plugin")

    text = (store.data_dir / "audit.jsonl").read_text(encoding="utf-8")
    assert secret not in text
    entries = audit_entries(store)
    assert [(e["path"], e["action"], e["origin"]) for e in entries] == [
        ("Inbox/A.md", "create", "user"),
        ("Inbox/A.md", "overwrite", "user"),
        ("Inbox/A.md", "modify", "model"),
        ("Inbox/A.md", "append", "model"),
        ("Inbox/A.md", "undo", "user"),
        ("Inbox/B.md", "create", "model"),
        ("Inbox/B.md", "undo", "plugin"),
    ]
    assert entries[0]["oldHash"] is None and entries[0]["newHash"] == sha256(f"{secret} 1".encode())
    assert entries[1]["oldHash"] == entries[0]["newHash"]
    assert entries[4]["newHash"] == entries[2]["newHash"]  # undo of the append
    assert entries[6]["newHash"] is None  # undo deleted B
    for entry in entries:
        assert set(entry) == {"time", "path", "action", "oldHash", "newHash", "origin"}
        stamp = dt.fromisoformat(str(entry["time"]))
        assert stamp.utcoffset() == timedelta(0)


def test_refused_writes_are_not_audited(store: NoteStore) -> None:
    """Only writes that happened are logged."""
    with pytest.raises(VaultError):
        store.create("Projects/Plan.md", "x")
    with pytest.raises(VaultError):
        store.modify("Projects/Plan.md", "x", expected_hash="0" * 64)
    assert not (store.data_dir / "audit.jsonl").exists()


# -- concurrency and the on_write hook -----------------------------------------------------


def _run_threads(count: int, target: object) -> None:
    assert callable(target)
    threads = [threading.Thread(target=target, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(JOIN_TIMEOUT)
        assert not thread.is_alive(), "a writer thread hung"


def test_concurrent_appends_to_one_note_are_serialised(store: NoteStore) -> None:
    """Eight threads appending at once lose no line."""
    barrier = threading.Barrier(8, timeout=JOIN_TIMEOUT)

    def writer(worker: int) -> None:
        barrier.wait()
        for i in range(10):
            store.append("Projects/Plan.md", f"w{worker}-{i}\n")

    _run_threads(8, writer)
    lines = store.read("Projects/Plan.md").content.splitlines()
    assert sorted(lines[2:]) == sorted(f"w{w}-{i}" for w in range(8) for i in range(10))
    assert len(audit_entries(store)) == 80


def test_racing_modifies_with_the_same_hash_let_exactly_one_win(store: NoteStore) -> None:
    """Optimistic concurrency: of writers that read the same version, one wins, others conflict."""
    seen = store.read("Projects/Plan.md").hash
    barrier = threading.Barrier(6, timeout=JOIN_TIMEOUT)
    outcomes: list[str] = []

    def writer(worker: int) -> None:
        barrier.wait()
        try:
            store.modify("Projects/Plan.md", f"by {worker}\n", expected_hash=seen)
            outcomes.append("ok")
        except VaultError as exc:
            outcomes.append(exc.code)

    _run_threads(6, writer)
    assert sorted(outcomes) == ["conflict"] * 5 + ["ok"]


def test_on_write_is_told_every_written_path(tmp_path: Path) -> None:
    """The hook (the index) hears of creates, appends and undos, with the canonical path."""
    heard: list[str] = []
    (tmp_path / "v").mkdir()
    store = NoteStore(tmp_path / "v", tmp_path / "d", on_write=heard.append)
    store.create("./Inbox\\A.md", "a")
    store.append("Inbox/A.md", "b")
    store.undo("Inbox/A.md")
    with pytest.raises(VaultError):
        store.create("Inbox/A.md", "again")
    assert heard == ["Inbox/A.md"] * 3


def test_a_failing_on_write_hook_does_not_fail_the_write(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The note is written and the failure is logged without the note's content."""

    def broken(path: str) -> None:
        raise RuntimeError("index is closed")

    (tmp_path / "v").mkdir()
    store = NoteStore(tmp_path / "v", tmp_path / "d", on_write=broken)
    with caplog.at_level(logging.WARNING, logger="plugin_bridge.vault.notes.store"):
        result = store.create("A.md", "private words")
    assert result.created and (tmp_path / "v" / "A.md").read_text() == "private words"
    assert "A.md" in caplog.text and "private words" not in caplog.text
