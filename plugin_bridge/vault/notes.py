"""Safe note access: path checks, atomic writes that keep line endings and BOM, optimistic
concurrency by sha256, undo snapshots and an audit log (both in the data dir, never the vault).
"""

from __future__ import annotations

import difflib
import hashlib
import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath

from plugin_bridge.vault.atomic import write_atomic
from plugin_bridge.vault.errors import VaultError
from plugin_bridge.vault.paths import is_ignored, resolve_note, to_posix

BOM = b"\xef\xbb\xbf"
SNAPSHOTS_KEPT = 20
_FORBIDDEN_NAME_CHARS = re.compile(r'[\\/:*?"<>|#^\[\]]')


@dataclass(frozen=True)
class NoteContent:
    path: str
    content: str
    hash: str


@dataclass(frozen=True)
class WriteResult:
    path: str
    hash: str
    previous_hash: str | None
    created: bool


@dataclass(frozen=True)
class NoteInfo:
    path: str
    size: int
    mtime: float


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class NoteStore:
    """Reads and writes notes of the vault at ``root``; state goes to ``data_dir``."""

    def __init__(
        self,
        root: Path,
        data_dir: Path,
        *,
        max_bytes: int = 5 * 1024 * 1024,
        on_write: Callable[[str], None] | None = None,
    ) -> None:
        self.root = root.resolve()
        self.data_dir = data_dir
        self.max_bytes = max_bytes
        self.on_write = on_write
        self._excluded = frozenset({data_dir.resolve()})
        self._locks: dict[str, threading.Lock] = {}
        self._locks_guard = threading.Lock()

    # -- reading ------------------------------------------------------------------------

    def read(self, path: str) -> NoteContent:
        rel, full = self._resolve(path, write=False)
        raw = self._read_bytes(rel, full)
        return NoteContent(rel, _decode(rel, raw), sha256(raw))

    def list_notes(self, folder: str = "", limit: int = 100) -> list[NoteInfo]:
        base = self.root
        if folder.strip().strip("/"):
            rel_folder = to_posix(folder.strip().strip("/"))
            if ".." in PurePosixPath(rel_folder).parts or is_ignored(rel_folder + "/x"):
                raise VaultError("forbidden_path", f"'{folder}' is not a folder you can list.")
            base = self.root / rel_folder
            if not base.resolve().is_relative_to(self.root):
                raise VaultError("forbidden_path", f"'{folder}' points outside the vault.")
            if not base.is_dir():
                raise VaultError("not_found", f"There is no folder '{folder}' in the vault.")
        notes = []
        for full in sorted(base.rglob("*")):
            rel = to_posix(str(full.relative_to(self.root)))
            if full.suffix.lower() not in {".md", ".canvas", ".base"} or is_ignored(rel):
                continue
            if any(full.resolve().is_relative_to(x) for x in self._excluded) or not full.is_file():
                continue
            stat = full.stat()
            notes.append(NoteInfo(rel, stat.st_size, stat.st_mtime))
            if len(notes) >= limit:
                break
        return notes

    def preview_write(self, path: str, new_content: str) -> str:
        """A unified diff of the note as it is (or empty) to ``new_content``."""
        rel, full = self._resolve(path, write=True)
        old = _decode(rel, full.read_bytes()) if full.is_file() else ""
        diff = difflib.unified_diff(
            old.splitlines(keepends=True),
            new_content.splitlines(keepends=True),
            fromfile=f"a/{rel}" if full.is_file() else "/dev/null",
            tofile=f"b/{rel}",
        )
        return "".join(diff)

    def unique_path(self, folder: str, title: str) -> str:
        """``folder/Title.md``, or ``Title 1.md``, ``Title 2.md``… that does not exist yet."""
        name = _FORBIDDEN_NAME_CHARS.sub(" ", title).strip().strip(".") or "Untitled"
        name = " ".join(name.split())[:120]
        prefix = to_posix(folder.strip().strip("/")) + "/" if folder.strip().strip("/") else ""
        for n in range(10_000):
            candidate = f"{prefix}{name}{f' {n}' if n else ''}.md"
            _, full = self._resolve(candidate, write=True)
            if not full.exists():
                return candidate
        raise VaultError("exists", f"Too many notes named '{name}' in '{folder}'.")

    # -- writing ------------------------------------------------------------------------

    def create(
        self, path: str, content: str, *, overwrite: bool = False, origin: str = "model"
    ) -> WriteResult:
        rel, full = self._resolve(path, write=True)
        with self._lock(rel):
            old = self._existing(rel, full)
            if old is not None and not overwrite:
                raise VaultError(
                    "exists", f"'{rel}' already exists: choose another name or modify it.", path=rel
                )
            action = "overwrite" if old is not None else "create"
            return self._write(rel, full, old, content, action, origin)

    def modify(
        self, path: str, content: str, *, expected_hash: str, origin: str = "model"
    ) -> WriteResult:
        rel, full = self._resolve(path, write=True)
        with self._lock(rel):
            old = self._existing(rel, full)
            if old is None:
                raise VaultError("not_found", f"There is no note '{rel}'.", path=rel)
            if sha256(old) != expected_hash:
                raise VaultError(
                    "conflict",
                    f"'{rel}' changed since it was read: read it again and redo the edit.",
                    path=rel,
                )
            return self._write(rel, full, old, content, "modify", origin)

    def append(self, path: str, content: str, *, origin: str = "model") -> WriteResult:
        rel, full = self._resolve(path, write=True)
        with self._lock(rel):
            old = self._existing(rel, full)
            if old is None:
                raise VaultError("not_found", f"There is no note '{rel}' to append to.", path=rel)
            current = _decode(rel, old).replace("\r\n", "\n")
            separator = "" if not current or current.endswith("\n") else "\n"
            return self._write(rel, full, old, current + separator + content, "append", origin)

    def undo(self, path: str, *, origin: str = "user") -> WriteResult:
        """Restore the note as it was before its last write (delete it if that write made it)."""
        rel, full = self._resolve(path, write=True)
        with self._lock(rel):
            snapshots = sorted(self._snapshot_dir(rel).glob("*.snap"))
            if not snapshots:
                raise VaultError("not_found", f"There is no earlier version of '{rel}' to restore.")
            last = snapshots[-1]
            old = self._existing(rel, full)
            if last.name.endswith("-absent.snap"):
                full.unlink(missing_ok=True)
                new_hash = ""
            else:
                data = last.read_bytes()
                write_atomic(full, data)
                new_hash = sha256(data)
            last.unlink()
            self._audit(rel, "undo", sha256(old) if old is not None else None, new_hash, origin)
            self._changed(rel)
            return WriteResult(rel, new_hash, sha256(old) if old is not None else None, False)

    # -- internals ----------------------------------------------------------------------

    def _resolve(self, path: str, *, write: bool) -> tuple[str, Path]:
        full = resolve_note(self.root, path, write=write, excluded=self._excluded)
        return to_posix(str(full.relative_to(self.root))), full

    def _read_bytes(self, rel: str, full: Path) -> bytes:
        if not full.is_file():
            raise VaultError("not_found", f"There is no note '{rel}'.", path=rel)
        size = full.stat().st_size
        if size > self.max_bytes:
            raise VaultError(
                "too_large",
                f"'{rel}' is {size / 1e6:.1f} MB, over the {self.max_bytes / 1e6:.0f} MB limit.",
                path=rel,
            )
        return full.read_bytes()

    def _existing(self, rel: str, full: Path) -> bytes | None:
        return self._read_bytes(rel, full) if full.is_file() else None

    def _write(
        self, rel: str, full: Path, old: bytes | None, content: str, action: str, origin: str
    ) -> WriteResult:
        data = _encode_like(content, old)
        self._snapshot(rel, old)
        mode = full.stat().st_mode & 0o777 if old is not None else None
        write_atomic(full, data, mode=mode)
        old_hash = sha256(old) if old is not None else None
        new_hash = sha256(data)
        self._audit(rel, action, old_hash, new_hash, origin)
        self._changed(rel)
        return WriteResult(rel, new_hash, old_hash, old is None)

    def _snapshot_dir(self, rel: str) -> Path:
        return self.data_dir / "snapshots" / sha256(rel.encode())[:24]

    def _snapshot(self, rel: str, old: bytes | None) -> None:
        folder = self._snapshot_dir(rel)
        folder.mkdir(parents=True, exist_ok=True)
        stamp = f"{time.time_ns():020d}"
        name = f"{stamp}-absent.snap" if old is None else f"{stamp}-{sha256(old)[:12]}.snap"
        write_atomic(folder / name, old or b"")
        for stale in sorted(folder.glob("*.snap"))[:-SNAPSHOTS_KEPT]:
            stale.unlink(missing_ok=True)

    def _audit(
        self, rel: str, action: str, old_hash: str | None, new_hash: str, origin: str
    ) -> None:
        entry = {
            "time": datetime.now(UTC).isoformat(timespec="milliseconds"),
            "path": rel,
            "action": action,
            "oldHash": old_hash,
            "newHash": new_hash or None,
            "origin": origin,
        }
        self.data_dir.mkdir(parents=True, exist_ok=True)
        with (self.data_dir / "audit.jsonl").open("a", encoding="utf-8") as log:
            log.write(json.dumps(entry, ensure_ascii=False) + "\n")

    def _changed(self, rel: str) -> None:
        if self.on_write is not None:
            self.on_write(rel)

    def _lock(self, rel: str) -> threading.Lock:
        with self._locks_guard:
            return self._locks.setdefault(rel, threading.Lock())


def _decode(rel: str, raw: bytes) -> str:
    if b"\x00" in raw[:8192]:
        raise VaultError("not_text", f"'{rel}' is not a text note.", path=rel)
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise VaultError("not_text", f"'{rel}' is not UTF-8 text.", path=rel) from exc


def _encode_like(content: str, old: bytes | None) -> bytes:
    """``content`` encoded with the old file's line endings and BOM."""
    text = content.replace("\r\n", "\n")
    if old is not None and b"\r\n" in old:
        text = text.replace("\n", "\r\n")
    data = text.encode("utf-8")
    return BOM + data if old is not None and old.startswith(BOM) else data
