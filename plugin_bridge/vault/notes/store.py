"""Safe note access for one vault: path checks, atomic writes that keep each file's line endings,
BOM and mode, optimistic concurrency by sha256, undo snapshots and an audit log (both in the data
dir, never in the vault).

Every method is synchronous and may block on disk I/O: async callers go through ``execute``
(one hop for all that a request does, on the vault's file door) or ``Vault.run``.
Writes to the same file from several threads are serialised by a per-file lock.
"""

from __future__ import annotations

import logging
import os
import re
import stat
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Final

from llm_service.door import BlockingStore
from plugin_bridge.vault.door import FILES
from plugin_bridge.vault.errors import VaultError, reporting_write_failures, vault_missing
from plugin_bridge.vault.files import (
    MAX_NOTE_BYTES,
    VaultFiles,
    decode_note,
    megabytes,
    out_of_scope,
    read_text,
)
from plugin_bridge.vault.notes.asked import AskedWrites
from plugin_bridge.vault.notes.atomic import remove_durably, write_atomic
from plugin_bridge.vault.notes.audit import AuditAction, AuditLog, SnapshotStore, sha256
from plugin_bridge.vault.notes.encoding import appended, apply_edits, encode_like
from plugin_bridge.vault.notes.names import twin_of
from plugin_bridge.vault.notes.results import NoteContent, NoteInfo, PlannedWrite, WriteResult
from plugin_bridge.vault.paths import check_new_names, resolve_note, to_posix

__all__ = ["NoteContent", "NoteInfo", "NoteStore", "PlannedWrite", "WriteResult", "sha256"]

logger = logging.getLogger(__name__)

MAX_NAME_CHARS: Final = 120
SETTLE_SECONDS: Final = 0.05
"""A write reads a note modified less than this long ago again after a pause: a program still
writing it in place must not be caught half-way and its half written back."""
_FORBIDDEN_NAME_CHARS: Final = re.compile(r'[\\/:*?"<>|#^\[\]\x00-\x1f]')


class NoteStore(BlockingStore):
    """Reads and writes the notes of the vault at ``root``; history goes to ``data_dir``.

    ``on_write(path)`` is called after every successful write (outside the note's lock), e.g. to
    re-index the note; its failure is logged, never reported as a failed write.
    """

    door = FILES
    """``execute`` runs on the vault's file door, beside ``Vault.run``."""

    def __init__(
        self,
        root: Path,
        data_dir: Path,
        *,
        max_bytes: int = MAX_NOTE_BYTES,
        on_write: Callable[[str], None] | None = None,
    ) -> None:
        self.root = root.resolve()
        self.data_dir = data_dir.resolve()
        self.max_bytes = max_bytes
        self.on_write = on_write
        self.snapshots = SnapshotStore(self.data_dir / "snapshots")
        self.audit = AuditLog(self.data_dir / "audit.jsonl")
        self.asked = AskedWrites(self.data_dir / "snapshots" / "asked")
        self._excluded = frozenset({self.data_dir})
        self.files = VaultFiles(self.root, self._excluded, max_bytes=max_bytes)
        self._locks: dict[str, threading.Lock] = {}
        self._ours: dict[str, tuple[int, int, int] | None] = {}
        """The (inode, size, mtime) each note had after our last write to it."""
        self._locks_guard = threading.Lock()

    # -- reading ------------------------------------------------------------------------

    def read(self, path: str) -> NoteContent:
        """The text of a .md, .canvas or .base note.

        Raises VaultError: forbidden_path, not_found, too_large (over ``max_bytes``) or
        not_text (binary). Bytes that are not UTF-8 read as U+FFFD with ``lossy`` set.
        """
        rel, full = self._resolve(path, write=False)
        raw = self._load(rel, full)
        if raw is None:
            raise VaultError("not_found", f"There is no note '{rel}'.", path=rel)
        text, lossy = read_text(rel, raw)
        return NoteContent(rel, text, sha256(raw), lossy)

    def info(self, path: str) -> NoteInfo:
        """Size and mtime of a readable note without reading it (forbidden_path, not_found)."""
        rel, full = self._resolve(path, write=False)
        try:
            st = full.stat()
        except OSError:
            st = None
        if st is None or not stat.S_ISREG(st.st_mode):
            raise VaultError("not_found", f"There is no note '{rel}'.", path=rel)
        return NoteInfo(rel, st.st_size, st.st_mtime)

    def list_notes(self, folder: str = "", limit: int = 100) -> list[NoteInfo]:
        """Up to ``limit`` notes in ``folder`` and below, sorted by path.

        Skips hidden and system folders, the data dir, temp files and links leading out of the
        vault. Raises VaultError: forbidden_path for a folder outside the vault, not_found.
        """
        notes = sorted(self.files.walk(self._folder(folder)), key=lambda note: note[0])
        return [NoteInfo(rel, st.st_size, st.st_mtime) for rel, st in notes[:limit]]

    def check_location(self, path: str, *, folder: bool = False) -> None:
        """VaultError(forbidden_path) unless a note could be written at ``path`` (a folder of
        notes with ``folder``) under the rules of every note path; exclusions aside."""
        target = f"{to_posix(path.strip()).rstrip('/')}/x.md" if folder else path
        resolve_note(self.root, target, write=True, excluded=self._excluded)

    def unique_path(self, folder: str, title: str) -> str:
        """``folder/Title.md``, or ``Title 1.md``, ``Title 2.md``… whichever does not exist yet.

        Characters Obsidian forbids in file names (``\\ / : * ? " < > | # ^ [ ]``) become spaces.
        """
        name = _FORBIDDEN_NAME_CHARS.sub(" ", title)
        name = re.sub(r"\.md$", "", " ".join(name.split()), flags=re.IGNORECASE)
        name = name[:MAX_NAME_CHARS].strip(" .") or "Untitled"
        prefix = self.folder_rel(folder)
        prefix = f"{prefix}/" if prefix else ""
        for n in range(10_000):
            candidate = f"{prefix}{name}{f' {n}' if n else ''}.md"
            self._resolve(candidate, write=True)
            spot = self.root / candidate  # the name itself: a dangling link is taken too
            if not os.path.lexists(spot) and twin_of(spot) is None:
                return candidate
        raise VaultError("exists", f"Too many notes are named '{name}': choose another title.")

    # -- writing ------------------------------------------------------------------------

    def create(
        self,
        path: str,
        content: str,
        *,
        overwrite: bool = False,
        expected_hash: str | None = None,
        origin: str = "model",
    ) -> WriteResult:
        """Create a .md note and any missing folders; an existing note only with ``overwrite``
        (and, given ``expected_hash``, only while it still has that sha256).

        Raises VaultError: forbidden_path, exists, too_large, conflict.
        """
        return self._write_now(
            path,
            lambda: self.plan_create(
                path, content, overwrite=overwrite, expected_hash=expected_hash
            ),
            origin,
        )

    def modify(
        self, path: str, content: str, *, expected_hash: str, origin: str = "model"
    ) -> WriteResult:
        """Replace a note's text if it still has the sha256 ``expected_hash`` the caller read.

        Raises VaultError: forbidden_path, not_found, too_large, conflict (changed since read),
        not_text (binary, or lossy: overwrite it with ``create(..., overwrite=True)``).
        """

        def replaced(rel: str, text: str, old: bytes) -> tuple[str, bytes]:
            return _lf(content), encode_like(content, old)

        return self._write_now(
            path,
            lambda: self._plan_change(path, "modify", "modify", replaced, expected_hash),
            origin,
        )

    def append(
        self,
        path: str,
        content: str,
        *,
        expected_hash: str | None = None,
        origin: str = "model",
    ) -> WriteResult:
        """Add ``content`` at the end of a note, on a new line; earlier bytes are kept as they are
        (given ``expected_hash``, only while the note still has that sha256).

        Raises VaultError: forbidden_path, not_found, not_text, too_large, conflict.
        """
        return self._write_now(
            path, lambda: self.plan_append(path, content, expected_hash=expected_hash), origin
        )

    def edit(
        self,
        path: str,
        edits: Sequence[tuple[str, str]],
        *,
        expected_hash: str | None = None,
        origin: str = "model",
    ) -> WriteResult:
        """Replace each ``(old_text, new_text)`` in turn; every old text must occur exactly once
        in the note as the earlier edits left it (given ``expected_hash``, only while the note
        still has that sha256).

        Raises VaultError: forbidden_path, not_found, not_text, too_large, conflict, and
        invalid_edit naming the edit whose old text is missing or ambiguous.
        """
        return self._write_now(
            path, lambda: self.plan_edit(path, edits, expected_hash=expected_hash), origin
        )

    # -- planned writes: worked out first, made by the store or applied through Obsidian --

    def plan_create(
        self,
        path: str,
        content: str,
        *,
        overwrite: bool = False,
        expected_hash: str | None = None,
    ) -> PlannedWrite:
        """What :meth:`create` would write (VaultError as it would raise, but nothing written)."""
        rel, full = self._resolve(path, write=True)
        old = self._load(rel, full, settle=SETTLE_SECONDS)
        if old is not None and not overwrite:
            raise _exists(rel)
        _expect(rel, old, expected_hash)
        if old is None:
            self._check_new_path(rel, full)
            return PlannedWrite(rel, None, _lf(content), "create", None, encode_like(content, None))
        before = _lf(read_text(rel, old)[0])
        return PlannedWrite(rel, before, _lf(content), "overwrite", old, encode_like(content, old))

    def plan_append(
        self, path: str, content: str, *, expected_hash: str | None = None
    ) -> PlannedWrite:
        """What :meth:`append` would write."""

        def extended(rel: str, text: str, old: bytes) -> tuple[str, bytes]:
            data = appended(old, content)
            return _lf(decode_note(rel, data)), data

        return self._plan_change(path, "append to", "append", extended, expected_hash)

    def plan_edit(
        self,
        path: str,
        edits: Sequence[tuple[str, str]],
        *,
        expected_hash: str | None = None,
    ) -> PlannedWrite:
        """What :meth:`edit` would write."""

        def edited(rel: str, text: str, old: bytes) -> tuple[str, bytes]:
            new = apply_edits(rel, text, edits)
            return new, encode_like(new, old)

        return self._plan_change(path, "edit", "edit", edited, expected_hash)

    def _plan_change(
        self,
        path: str,
        verb: str,
        action: AuditAction,
        transform: Callable[[str, str, bytes], tuple[str, bytes]],
        expected_hash: str | None,
    ) -> PlannedWrite:
        """The one skeleton of a change to an existing note (modify, append, edit): resolve,
        require it (not_found names ``verb``), decode, hold it to ``expected_hash``, then
        ``transform(rel, text, old bytes)`` gives the new text and bytes."""
        rel, full = self._resolve(path, write=True)
        old = self._require(rel, full, verb)
        text = decode_note(rel, old)
        _expect(rel, old, expected_hash)
        after, data = transform(rel, text, old)
        return PlannedWrite(rel, _lf(text), after, action, old, data)

    def write_planned(self, plan: PlannedWrite, origin: str) -> WriteResult:
        """Write ``plan`` while the note is still as it was planned from (VaultError conflict,
        or exists for a new note that appeared meanwhile, otherwise; nothing is written)."""
        rel, full = self._resolve(plan.path, write=True)
        with self._lock(full):
            old = self._load(rel, full, settle=SETTLE_SECONDS)
            if plan.old is None and old is not None:
                raise _exists(rel)
            if old != plan.old:
                raise _changed(rel)
            if old is None:
                self._check_new_path(rel, full)
            result = self._commit(rel, full, old, plan.data, plan.action, origin)
        self._notify(rel)
        return result

    def _write_now(self, path: str, plan: Callable[[], PlannedWrite], origin: str) -> WriteResult:
        """Work a write out and make it under the note's lock (concurrent writers queue)."""
        rel, full = self._resolve(path, write=True)
        with self._lock(full):
            planned = plan()
            result = self._commit(rel, full, planned.old, planned.data, planned.action, origin)
        self._notify(rel)
        return result

    def record_applied(self, plan: PlannedWrite, new_hash: str, origin: str) -> WriteResult:
        """Keep the undo snapshot and the audit line of ``plan``, which Obsidian applied (its
        editor saves the note itself): undo restores the note as it was planned from."""
        rel, full = self._resolve(plan.path, write=True)
        with self._lock(full), reporting_write_failures(rel):
            snapshot = self.snapshots.save(rel, plan.old, new_hash)
            self.snapshots.commit(snapshot)
            self.audit.record(rel, plan.action, plan.old_hash, new_hash, origin)
        self._notify(rel)
        return WriteResult(rel, new_hash, plan.old_hash, plan.old is None)

    def file_hash(self, path: str) -> str | None:
        """sha256 of the note's file as it is now; None when there is none."""
        _, full = self._resolve(path, write=False)
        try:
            return sha256(full.read_bytes())
        except FileNotFoundError:
            return None

    def record_unconfirmed(self, plan: PlannedWrite, claimed: str, origin: str) -> str | None:
        """Obsidian said it wrote ``plan`` with hash ``claimed``, and the file never got it:
        log that (action ``unconfirmed``: oldHash the claimed hash, newHash the file's) and keep
        undo working: the snapshot recorded for ``claimed`` is replaced by one for what the
        file holds (none when it is as it was). The file's hash now."""
        rel, full = self._resolve(plan.path, write=True)
        with self._lock(full):
            now = self.file_hash(rel)
            latest = self.snapshots.latest(rel)
            if latest is not None and latest.written_hash == claimed:
                self.snapshots.discard(latest)
            if now != plan.old_hash and now is not None:
                self.snapshots.commit(self.snapshots.save(rel, plan.old, now))
            self.audit.record(rel, "unconfirmed", claimed, now, origin)
        return now

    def undo(self, path: str, *, origin: str = "user") -> WriteResult:
        """Restore the note as it was before its last write, or delete it if that write made it.

        Raises VaultError: not_found (nothing to undo), conflict (the note changed after that
        write, so undoing would lose those edits).
        """
        rel, full = self._resolve(path, write=True)
        with self._lock(full):
            current = self._load(rel, full, settle=SETTLE_SECONDS)
            current_hash = None if current is None else sha256(current)
            snapshot = self.snapshots.latest(rel)
            if snapshot is None:
                raise VaultError(
                    "not_found", f"There is no earlier version of '{rel}' to restore.", path=rel
                )
            if current_hash != snapshot.written_hash:
                raise VaultError(
                    "conflict",
                    f"'{rel}' changed after its last write, so undo would lose those edits: "
                    "restore it by hand.",
                    path=rel,
                )
            with reporting_write_failures(rel):
                if snapshot.content is None:
                    remove_durably(full)
                    new_hash = ""
                else:
                    write_atomic(
                        full,
                        snapshot.content,
                        mode=_mode(full),
                        before_replace=lambda: self._check_unchanged(rel, full, current_hash),
                    )
                    new_hash = sha256(snapshot.content)
            self.snapshots.discard(snapshot)
            self.audit.record(rel, "undo", current_hash, new_hash or None, origin)
        self._notify(rel)
        return WriteResult(rel, new_hash, current_hash, False)

    # -- internals ----------------------------------------------------------------------

    def _resolve(self, path: str, *, write: bool) -> tuple[str, Path]:
        """The canonical vault-relative path and the real file it names (links followed)."""
        full = resolve_note(self.root, path, write=write, excluded=self._excluded)
        rel = to_posix(str(full.relative_to(self.root)))
        if self.files.scope and out_of_scope(rel, self.files.scope):
            raise VaultError(
                "forbidden_path",
                f"'{rel}' is excluded from the assistant by your settings (exclude).",
                path=rel,
            )
        return rel, Path(os.path.realpath(full))

    def _check_new_path(self, rel: str, full: Path) -> None:
        """A new note may not sit under a file, nor twin an existing name that differs only in
        case or Unicode normalisation (they collide on macOS, Windows and sync services)."""
        check_new_names(rel)
        parent = full.parent
        for folder in (parent, *parent.parents):
            if folder == self.root or not folder.is_relative_to(self.root):
                break
            inside = to_posix(str(folder.relative_to(self.root)))
            if folder.exists() and not folder.is_dir():
                raise VaultError(
                    "forbidden_path",
                    f"'{inside}' is a file, so '{rel}' cannot go inside it: choose a folder.",
                    path=rel,
                )
            twin_folder = twin_of(folder)
            if twin_folder is not None:
                twin = to_posix(str(twin_folder.relative_to(self.root)))
                raise VaultError(
                    "forbidden_path",
                    f"The folder '{inside}' differs from '{twin}' only in case or accents' "
                    "encoding, and the two would be one folder on macOS, Windows and sync: put "
                    f"the note in '{twin}'.",
                    path=rel,
                )
        twin_path = twin_of(full)
        if twin_path is not None:
            twin = to_posix(str(twin_path.relative_to(self.root)))
            raise VaultError(
                "exists",
                f"'{rel}' differs from the existing note '{twin}' only in case or accents' "
                "encoding, and the two would collide on macOS, Windows and sync: use "
                f"'{twin}' or another name.",
                path=twin,
            )

    def folder_rel(self, folder: str) -> str:
        """``folder`` normalised ("" for the root), or VaultError(forbidden_path)."""
        rel = to_posix(folder.strip())
        if rel in (".", "/"):  # the vault root
            return ""
        # A note path inside the folder carries every check: absolute, '..', system folders,
        # links leading out, the data dir.
        try:
            resolve_note(self.root, f"{rel}/x.md", excluded=self._excluded)
        except VaultError as exc:
            raise VaultError(
                "forbidden_path",
                f"'{folder}' is not a folder you may use: give a folder relative to the vault "
                "root, outside its system folders.",
                path=folder,
            ) from exc
        return rel

    def _folder(self, folder: str) -> str:
        """``folder`` normalised ("" for the root), or VaultError: forbidden_path, not_found."""
        rel = self.folder_rel(folder)
        if not (self.root / rel if rel else self.root).is_dir():
            raise VaultError(
                "not_found", f"There is no folder '{folder}' in the vault.", path=folder
            )
        return rel

    def _load(self, rel: str, full: Path, *, settle: float = 0.0) -> bytes | None:
        """The note's bytes, or None if there is no such file (VaultError: too_large,
        forbidden_path for a folder, conflict while it keeps changing). A note exactly as our
        own last write left it needs no settling."""
        if settle and self._ours.get(str(full)) == _signature(full):
            settle = 0.0
        loaded = self.files.load(rel, full, settle=settle)
        return None if loaded is None else loaded[0]

    def _require(self, rel: str, full: Path, verb: str) -> bytes:
        old = self._load(rel, full, settle=SETTLE_SECONDS)
        if old is None:
            raise VaultError("not_found", f"There is no note '{rel}' to {verb}.", path=rel)
        return old

    def _commit(
        self,
        rel: str,
        full: Path,
        old: bytes | None,
        data: bytes,
        action: AuditAction,
        origin: str,
    ) -> WriteResult:
        if len(data) > self.max_bytes:
            raise VaultError(
                "too_large",
                f"The new text of '{rel}' is {megabytes(len(data))}, over the "
                f"{megabytes(self.max_bytes)} limit for notes: write less.",
                path=rel,
            )
        if not self.root.is_dir():
            raise vault_missing(self.root, rel)
        old_hash = None if old is None else sha256(old)
        new_hash = sha256(data)
        with reporting_write_failures(rel):
            snapshot = self.snapshots.save(rel, old, new_hash)
            try:
                write_atomic(
                    full,
                    data,
                    mode=None if old is None else _mode(full),
                    before_replace=lambda: self._check_unchanged(rel, full, old_hash),
                )
            except BaseException:
                self.snapshots.discard(snapshot)
                raise
        self.snapshots.commit(snapshot)
        self._ours[str(full)] = _signature(full)
        self.audit.record(rel, action, old_hash, new_hash, origin)
        return WriteResult(rel, new_hash, old_hash, old is None)

    def _check_unchanged(self, rel: str, full: Path, old_hash: str | None) -> None:
        """Right before our rename: the note must still be what we read (or still absent).

        Another program may have saved it since (an editor, a sync client): then nothing is
        written and the caller gets a conflict, never a silent overwrite of their edit."""
        try:
            current = self._load(rel, full, settle=SETTLE_SECONDS)
        except VaultError as exc:
            raise _changed(rel) from exc
        if (None if current is None else sha256(current)) != old_hash:
            raise _changed(rel)

    def _notify(self, rel: str) -> None:
        if self.on_write is None:
            return
        try:
            self.on_write(rel)
        except Exception:
            logger.warning("The write of %s succeeded but its follow-up failed", rel, exc_info=True)

    def _lock(self, real: Path) -> threading.Lock:
        with self._locks_guard:
            return self._locks.setdefault(str(real), threading.Lock())


def _lf(text: str) -> str:
    return text.replace("\r\n", "\n")


def _signature(full: Path) -> tuple[int, int, int] | None:
    try:
        st = full.stat()
    except OSError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns


def _expect(rel: str, old: bytes | None, expected_hash: str | None) -> None:
    """VaultError(conflict) when the caller read another version than the one on disk."""
    if expected_hash is not None and (old is None or sha256(old) != expected_hash):
        raise VaultError(
            "conflict",
            f"'{rel}' changed since it was read: read it again and redo the change.",
            path=rel,
        )


def _changed(rel: str) -> VaultError:
    return VaultError(
        "conflict",
        f"'{rel}' was changed by another program while the assistant was writing it, so "
        "nothing was written: read it again and redo the change.",
        path=rel,
    )


def _exists(rel: str) -> VaultError:
    return VaultError(
        "exists", f"'{rel}' already exists: choose another path, or add to that note.", path=rel
    )


def _mode(full: Path) -> int | None:
    try:
        return stat.S_IMODE(full.stat().st_mode)
    except OSError:
        return None
