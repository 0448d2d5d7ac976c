"""The disk says no: a full disk, a read-only folder, the vault folder removed while the server
runs. Every refused write leaves the note as it was, answers -32025 with one sentence saying
why, and leaves no temp file; once the fault is gone, writes work again.

A real tiny tmpfs (root only) gives the real ENOSPC and EROFS; without root the same cases run
against a chmod 0555 folder (EACCES) and a patched fsync (ENOSPC).
"""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from plugin_bridge.vault.paths import TEMP_PREFIX
from tests.helpers.bridge import WAIT, Wire, running_bridge

ORIGINAL = "# Kept\nThe original text, which no failed write may touch.\n"
BIG = "x" * 200_000
"""More than the tiny disk holds."""


def _can_mount() -> bool:
    return os.geteuid() == 0 and shutil.which("mount") is not None


@contextmanager
def tiny_disk(folder: Path, size: str = "64k") -> Iterator[bool]:
    """``folder`` as a tmpfs of ``size`` (True), or an ordinary folder when mounting is not
    possible here (False)."""
    folder.mkdir()
    mounted = _can_mount() and _run("mount", "-t", "tmpfs", "-o", f"size={size}", "t", folder)
    try:
        yield mounted
    finally:
        if mounted:
            _run("umount", "-l", folder)


def _run(*command: object) -> bool:
    done = subprocess.run([str(c) for c in command], capture_output=True, check=False)
    return done.returncode == 0


async def _writes(wire: Wire, path: str, content: str) -> list[dict[str, Any]]:
    """One try of each kind of write of ``content`` to ``path``; their errors."""
    read = await wire.result("note/read", {"path": path})
    attempts = [
        ("note/create", {"path": path, "content": content, "overwrite": True}),
        ("note/append", {"path": path, "text": content}),
        (
            "note/edit",
            {
                "path": path,
                "edits": [{"oldText": "original", "newText": content}],
                "expectedHash": read["hash"],
            },
        ),
        ("note/create", {"path": path.replace(".md", " new.md"), "content": content}),
    ]
    return [await wire.error(method, params) for method, params in attempts]


def _assert_untouched(folder: Path, errors: list[dict[str, Any]], words: str) -> Counter[str]:
    seen: Counter[str] = Counter()
    for error in errors:
        assert error["code"] == -32025 and error["data"]["reason"] == "write_failed", error
        assert words in error["message"] and "unchanged" in error["message"], error
        assert len(error["message"].split(". ")) == 1, error["message"]
        seen["refused"] += 1
    assert (folder / "Kept.md").read_text(encoding="utf-8") == ORIGINAL
    assert sorted(p.name for p in folder.iterdir()) == ["Kept.md"], "a temp file was left"
    seen["original intact"] += 1
    return seen


async def test_a_full_disk_refuses_every_write_and_keeps_the_note(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a full disk create, append, edit and a new note each fail with 'the disk is full';
    the note keeps its bytes, no temp file stays, and a small write works afterwards."""
    async with running_bridge(tmp_path) as bridge:
        folder = bridge.vault.root / "Small"
        with tiny_disk(folder) as mounted:
            (folder / "Kept.md").write_text(ORIGINAL, encoding="utf-8")
            wire = await bridge.wire()
            if not mounted:
                monkeypatch.setattr(os, "fsync", _no_space)
            errors = await _writes(wire, "Small/Kept.md", BIG)
            monkeypatch.undo()
            seen = _assert_untouched(folder, errors, "the disk is full")
            result = await wire.result(
                "note/append", {"path": "Small/Kept.md", "text": "A short line."}
            )
            assert result["hash"] and (folder / "Kept.md").read_text().startswith(ORIGINAL)
    assert seen == {"refused": 4, "original intact": 1}


def _no_space(fd: int) -> None:
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


async def test_a_read_only_folder_refuses_every_write_and_keeps_the_note(
    tmp_path: Path,
) -> None:
    """In a read-only folder (a read-only mount; chmod 0555 without root) every write fails
    with one sentence naming the cause; the note keeps its bytes; writable again, it works."""
    async with running_bridge(tmp_path) as bridge:
        folder = bridge.vault.root / "Locked"
        with tiny_disk(folder, "1m") as mounted:
            (folder / "Kept.md").write_text(ORIGINAL, encoding="utf-8")
            if mounted:
                assert _run("mount", "-o", "remount,ro", folder)
                words = "read-only"
            elif os.geteuid() == 0:
                pytest.skip("root ignores folder permissions, and mounting failed here")
            else:
                folder.chmod(0o555)
                words = "no permission"
            wire = await bridge.wire()
            try:
                seen = _assert_untouched(folder, await _writes(wire, "Locked/Kept.md", "y"), words)
            finally:
                if mounted:
                    _run("mount", "-o", "remount,rw", folder)
                folder.chmod(0o755)
            await wire.result("note/append", {"path": "Locked/Kept.md", "text": "Writable again."})
    assert seen == {"refused": 4, "original intact": 1}


async def test_the_vault_folder_removed_and_restored_while_running(tmp_path: Path) -> None:
    """With the vault folder gone, reads say not found, writes are refused without making a
    new empty vault (which would block the restore) and search answers from the index; once it
    is back, reads, writes and search work as before."""
    async with running_bridge(tmp_path, watch=True) as bridge:
        root = bridge.vault.root
        wire = await bridge.wire()
        before = await wire.result("note/read", {"path": "Welcome.md"})
        root.rename(tmp_path / "away")
        tried: Counter[str] = Counter()
        for method, params in [
            ("note/create", {"path": "New.md", "content": "made while the vault was gone"}),
            ("note/create", {"path": "Inbox.md", "content": "replaced", "overwrite": True}),
            ("note/append", {"path": "Welcome.md", "text": "a line"}),
            ("note/read", {"path": "Welcome.md"}),
        ]:
            error = await wire.error(method, params)
            assert error["code"] in (-32020, -32025), error
            tried["refused"] += 1
        assert not root.exists(), "a write made a new, empty vault folder"
        stale = await wire.result("vault/search", {"query": "welcome"})
        assert "Welcome.md" in [hit["path"] for hit in stale["results"]]
        (tmp_path / "away").rename(root)
        assert (await wire.result("note/read", {"path": "Welcome.md"})) == before
        await wire.result("note/create", {"path": "After.md", "content": "zebracorn is back"})
        tried["works again"] += 1
        await bridge.vault.index.wait_until_idle(WAIT)
        hits = await wire.result("vault/search", {"query": "zebracorn"})
        assert [hit["path"] for hit in hits["results"]] == ["After.md"]
    assert tried == {"refused": 4, "works again": 1}
    assert not any(p.name.startswith(TEMP_PREFIX) for p in root.rglob("*"))
