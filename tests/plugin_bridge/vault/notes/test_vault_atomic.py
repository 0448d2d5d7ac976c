"""Atomic writes: a note is always one whole version, even when the writer is killed mid-write,
and a crash leaves only temp files that every listing ignores."""

from __future__ import annotations

import inspect
import os
import random
import select
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from plugin_bridge.vault.notes.atomic import remove_durably, write_atomic
from plugin_bridge.vault.notes.store import NoteStore
from plugin_bridge.vault.paths import TEMP_PREFIX, is_ignored
from tests.conftest import REPO_ROOT

KILL_ROUNDS = 20
NOTES = 3
LINE_TIMEOUT = 20.0

# The child writes numbered versions of NOTES notes for ever, alternating modify and overwrite,
# and prints each version number once its write returned.
WRITER_LOOP = """
import sys
from pathlib import Path
from plugin_bridge.vault.notes.store import NoteStore

store = NoteStore(Path(sys.argv[1]), Path(sys.argv[2]))
i = int(sys.argv[3])
while True:
    i += 1
    path = f"note{i % NOTES}.md"
    if i % 2:
        store.modify(path, version(i), expected_hash=store.read(path).hash, origin="test")
    else:
        store.create(path, version(i), overwrite=True, origin="test")
    print(i, flush=True)
"""


def version(i: int) -> str:
    """Version ``i`` of a note: a header naming it, then 150-550 kB of one letter."""
    size = 150_000 + (i * 7919 % 5) * 100_000
    return f"v{i}\n" + chr(ord("A") + i % 26) * size


WRITER = f"NOTES = {NOTES}\n{inspect.getsource(version)}{WRITER_LOOP}"


def is_whole(text: str) -> bool:
    header, _, _ = text.partition("\n")
    return header.startswith("v") and header[1:].isdigit() and text == version(int(header[1:]))


def _vault_state(vault: Path) -> dict[str, tuple[int, int, int]]:
    state = {}
    for entry in os.scandir(vault):
        try:
            st = entry.stat()
        except FileNotFoundError:  # a temp file renamed away meanwhile
            continue
        state[entry.name] = (st.st_ino, st.st_size, st.st_mtime_ns)
    return state


def _wait_for_vault_change(vault: Path, deadline: float) -> None:
    baseline = _vault_state(vault)
    while _vault_state(vault) == baseline and time.monotonic() < deadline:
        pass


def _read_line(proc: subprocess.Popen[bytes], deadline: float) -> bytes:
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], max(0.0, deadline - time.monotonic()))
    line = proc.stdout.readline() if ready else b""
    if not line:
        proc.kill()
        _, err = proc.communicate(timeout=LINE_TIMEOUT)
        pytest.fail(f"the writer stopped without writing: {err.decode(errors='replace')}")
    return line


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")
def test_a_writer_killed_at_random_moments_never_leaves_a_torn_note(tmp_path: Path) -> None:
    """SIGKILL ~20 times mid-write: each note is an old or a new version, never a mix or a cut."""
    vault, data = tmp_path / "vault", tmp_path / "data"
    vault.mkdir()
    for k in range(NOTES):
        (vault / f"note{k}.md").write_text(version(k), encoding="utf-8")
    rng = random.Random(6)
    for round_ in range(KILL_ROUNDS):
        proc = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(vault), str(data), str(1000 * (round_ + 1))],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=REPO_ROOT,
        )
        deadline = time.monotonic() + LINE_TIMEOUT
        for _ in range(rng.randrange(3)):
            _read_line(proc, deadline)
        started = time.monotonic()
        _read_line(proc, deadline)
        if round_ % 2:  # a random moment of the next write cycle
            time.sleep(rng.uniform(0, time.monotonic() - started))
        else:  # right as the next write starts touching the vault
            _wait_for_vault_change(vault, deadline)
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=LINE_TIMEOUT)
        for k in range(NOTES):
            text = (vault / f"note{k}.md").read_text(encoding="utf-8")
            assert is_whole(text), f"round {round_}: note{k}.md is torn ({len(text)} chars)"

    leftovers = [p.name for p in vault.iterdir() if p.name not in {f"note{k}.md" for k in range(3)}]
    assert all(name.startswith(TEMP_PREFIX) and is_ignored(name) for name in leftovers)
    store = NoteStore(vault, data)
    assert [n.path for n in store.list_notes()] == [f"note{k}.md" for k in range(NOTES)]

    # History survived the kills: a fresh write undoes, and so does the write before it.
    before = store.read("note0.md")
    store.modify("note0.md", version(1), expected_hash=before.hash)
    store.undo("note0.md")
    assert store.read("note0.md") == before
    store.undo("note0.md")
    assert is_whole(store.read("note0.md").content)


def test_readers_during_writes_see_only_whole_versions(tmp_path: Path) -> None:
    """A reader racing a writer in the same process never sees a partial file."""
    (tmp_path / "v").mkdir()
    store = NoteStore(tmp_path / "v", tmp_path / "d")
    store.create("race.md", version(0))
    done = threading.Event()
    seen: set[str] = set()

    def writer() -> None:
        try:
            for i in range(1, 30):
                store.create("race.md", version(i), overwrite=True)
        finally:
            done.set()

    thread = threading.Thread(target=writer)
    thread.start()
    deadline = time.monotonic() + LINE_TIMEOUT
    while not done.is_set() and time.monotonic() < deadline:
        text = (tmp_path / "v" / "race.md").read_text(encoding="utf-8")
        assert is_whole(text), f"saw a partial file of {len(text)} chars"
        seen.add(text.partition("\n")[0])
    thread.join(LINE_TIMEOUT)
    assert done.is_set() and not thread.is_alive()
    assert len(seen) > 1, "the reader never overlapped the writer"


def test_the_temp_file_sits_beside_the_target_with_our_prefix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rename stays within one folder (one file system) and the temp name is ignorable."""
    renames: list[tuple[str, str]] = []
    real_replace = os.replace

    def spy(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
        renames.append((os.fspath(src), os.fspath(dst)))
        real_replace(src, dst)

    monkeypatch.setattr("plugin_bridge.vault.notes.atomic.os.replace", spy)
    target = tmp_path / "deep" / "folder" / "Note.md"
    write_atomic(target, b"hello")
    assert target.read_bytes() == b"hello"
    [(src, dst)] = renames
    assert Path(src).parent == target.parent and dst == str(target)
    assert Path(src).name.startswith(TEMP_PREFIX) and is_ignored(f"deep/folder/{Path(src).name}")


def test_a_failed_write_keeps_the_old_file_and_removes_its_temp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """If the rename fails, the original is untouched and no temp file is left behind."""
    target = tmp_path / "Note.md"
    target.write_bytes(b"original")

    def full_disk(src: object, dst: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("plugin_bridge.vault.notes.atomic.os.replace", full_disk)
    with pytest.raises(OSError, match="No space"):
        write_atomic(target, b"new")
    assert target.read_bytes() == b"original"
    assert [p.name for p in tmp_path.iterdir()] == ["Note.md"]


@pytest.mark.parametrize("mode", [0o600, 0o640, 0o755, 0o444])
def test_an_explicit_mode_is_set_exactly_whatever_the_umask(tmp_path: Path, mode: int) -> None:
    """Kept modes are not weakened or widened by the process umask."""
    umask = os.umask(0o077)
    try:
        write_atomic(tmp_path / "Note.md", b"x", mode=mode)
    finally:
        os.umask(umask)
    assert (tmp_path / "Note.md").stat().st_mode & 0o777 == mode


def test_remove_durably_deletes_and_tolerates_a_missing_file(tmp_path: Path) -> None:
    """Undo of a create deletes the note; deleting twice is harmless."""
    target = tmp_path / "Note.md"
    target.write_bytes(b"x")
    remove_durably(target)
    remove_durably(target)
    assert not target.exists()


def test_a_note_keeps_its_folders_modes_and_a_private_file_gets_private_folders(
    tmp_path: Path,
) -> None:
    """A note written with its own mode leaves the vault's folders as they are; the server's
    own file (``private``) makes its missing folders 0700."""
    folder = tmp_path / "vault" / "Projects"
    folder.mkdir(parents=True)
    folder.chmod(0o755)
    write_atomic(folder / "Plan.md", b"# Plan\n", mode=0o644)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o755
    write_atomic(tmp_path / "data" / "snapshots" / "x", b"old", mode=0o600, private=True)
    for made in (tmp_path / "data", tmp_path / "data" / "snapshots"):
        assert stat.S_IMODE(made.stat().st_mode) == 0o700
