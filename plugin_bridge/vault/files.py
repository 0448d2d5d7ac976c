"""The one rule for which files are notes, asked by the note store, the index and the watcher.

A note is a regular file with a ``.md``, ``.canvas`` or ``.base`` suffix that is

* inside the vault: a symbolic link may point elsewhere inside it, never out;
* not hidden: no part of its path starts with a dot. Obsidian shows neither dot-files nor
  dot-folders, and ``.obsidian``, ``.git`` and ``.trash`` are among them;
* not in the assistant's data folder when that sits inside the vault, and not a temp file;
* not excluded by the user (``scope``: folders and globs, e.g. ``Archive``, ``*.excalidraw.md``);
* at most :data:`MAX_NOTE_BYTES`, and text (a NUL byte in its first 8 KiB means binary); bytes
  that are not UTF-8 read as U+FFFD and flag the note as lossy.

:class:`VaultFiles` answers the questions (``ignored``, ``inside``, ``walk``, ``load``);
:func:`decode_note` turns a note's bytes into its text.
"""

from __future__ import annotations

import fnmatch
import os
import stat
import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Final

from plugin_bridge.vault.errors import VaultError, reporting_read_failures
from plugin_bridge.vault.paths import READABLE_SUFFIXES, is_ignored, to_posix
from plugin_bridge.vault.pdf import MAX_PDF_BYTES, is_pdf_name

MAX_NOTE_BYTES: Final = 5 * 1024 * 1024
_BINARY_SNIFF_BYTES: Final = 8192
READ_ATTEMPTS: Final = 5
"""Reads of a file that changes under us before giving up with a conflict."""


def read_text(rel: str, raw: bytes) -> tuple[str, bool]:
    """The text of a note file (BOM dropped) and whether it was lossy: bytes that are not UTF-8
    (one stray Latin-1 byte, say) read as U+FFFD, so the note stays readable and searchable.
    VaultError(not_text) for a binary file."""
    if b"\x00" in raw[:_BINARY_SNIFF_BYTES]:
        raise VaultError("not_text", f"'{rel}' is a binary file, not a text note.", path=rel)
    try:
        return raw.decode("utf-8-sig"), False
    except UnicodeDecodeError:
        return raw.decode("utf-8-sig", errors="replace"), True


def decode_note(rel: str, raw: bytes) -> str:
    """The text of a note about to be rewritten: VaultError(not_text) when it is binary or not
    all UTF-8, since writing it back would replace those bytes; overwriting it is explicit."""
    text, lossy = read_text(rel, raw)
    if lossy:
        raise VaultError(
            "not_text",
            f"'{rel}' has bytes that are not UTF-8, which a change would replace: overwrite the "
            "whole note explicitly if that is what you want.",
            path=rel,
        )
    return text


def out_of_scope(rel: str, patterns: Sequence[str]) -> bool:
    """Whether ``rel`` or a folder above it matches one of the user's exclusion patterns."""
    parts = rel.split("/")
    prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    return any(
        fnmatch.fnmatchcase(prefix, pattern.strip("/"))
        for pattern in patterns
        if pattern.strip("/")
        for prefix in prefixes
    )


def is_note_name(rel: str) -> bool:
    """Whether ``rel`` has a note's suffix."""
    return os.path.splitext(rel)[1].lower() in READABLE_SUFFIXES


def is_indexed_name(rel: str) -> bool:
    """Whether the search index holds files named like ``rel``: notes and PDFs."""
    return is_note_name(rel) or is_pdf_name(rel)


class VaultFiles:
    """The note files of the vault at ``root``; ``excluded`` folders (the data dir) are never
    notes."""

    def __init__(
        self,
        root: Path,
        excluded: Iterable[Path] = (),
        *,
        max_bytes: int = MAX_NOTE_BYTES,
        scope: Sequence[str] = (),
    ) -> None:
        self.root = root.resolve()
        self.scope: tuple[str, ...] = tuple(scope)
        """The user's exclusions: folder paths (``Archive``) or globs (``*.excalidraw.md``,
        ``Daily/2023-*``), matched against a note's path and every folder above it."""
        self.max_bytes = max_bytes
        self.pdf_max_bytes = MAX_PDF_BYTES
        """PDFs larger than this are not indexed or read (setting ``pdf_max_mb``)."""
        self._root = str(self.root)
        self._excluded = tuple(p.resolve() for p in excluded)
        self._excluded_rel = tuple(
            to_posix(os.path.relpath(folder, self.root))
            for folder in self._excluded
            if folder != self.root and folder.is_relative_to(self.root)
        )

    def ignored(self, rel: str) -> bool:
        """Whether a vault-relative path (file or folder) is never a note or a note's folder:
        hidden, a temp file, or inside an excluded folder."""
        return self._ignored_posix(to_posix(rel))

    def _ignored_posix(self, rel: str) -> bool:
        """:meth:`ignored` for a path in POSIX form already."""
        if is_ignored(rel):
            return True
        if any(rel == folder or rel.startswith(folder + "/") for folder in self._excluded_rel):
            return True
        return bool(self.scope) and out_of_scope(rel, self.scope)

    def inside(self, path: str | Path) -> bool:
        """Whether ``path``'s real location (links followed) is a visible place in the vault."""
        real = os.path.realpath(path)
        if real != self._root and not real.startswith(self._root + os.sep):
            return False
        return not self.ignored(os.path.relpath(real, self._root))

    def walk(self, folder: str = "", *, pdfs: bool = False) -> Iterator[tuple[str, os.stat_result]]:
        """Every note (and with ``pdfs`` every PDF) under ``folder`` (vault-relative, "" =
        all) with its ``stat``; folder links are not followed, file links only when they stay
        inside the vault."""
        wanted = is_indexed_name if pdfs else is_note_name
        top = os.path.join(self._root, folder) if folder else self._root
        stack = [(top, self._prefix(top))]
        while stack:
            path, prefix = stack.pop()
            try:
                entries = list(os.scandir(path))
            except OSError:
                continue  # vanished or unreadable folder
            for entry in entries:
                name = entry.name  # its folder's path and its name: no relpath per file
                rel = prefix + name if "\\" not in name else self._prefix(entry.path)[:-1]
                if self._ignored_posix(rel):
                    continue
                try:
                    if entry.is_dir(follow_symlinks=False):
                        stack.append((entry.path, rel + "/"))
                    elif wanted(rel) and (not entry.is_symlink() or self.inside(entry.path)):
                        info = entry.stat()
                        if stat.S_ISREG(info.st_mode):
                            yield rel, info
                except OSError:
                    continue  # vanished between listing and stat: it is not there

    def _prefix(self, path: str) -> str:
        """The vault-relative POSIX form of the folder ``path`` with a trailing slash ("" for
        the vault folder)."""
        rel = to_posix(os.path.relpath(path, self._root))
        return "" if rel == "." else rel + "/"

    def load(
        self, rel: str, full: Path | str, *, settle: float = 0.0
    ) -> tuple[bytes, os.stat_result] | None:
        """A note's bytes and the ``stat`` they were read under, or None if there is no file.

        A read that sees the file change under it (its inode, size or mtime moved: another
        program is writing it) reads again. With ``settle`` (seconds), a file modified more
        recently than that is read again after a pause, so a program still writing a note in
        place is not caught half-way: writers use it before they write back. Raises
        VaultError: too_large over ``max_bytes``, forbidden_path for a folder, conflict when the
        file keeps changing.
        """
        with reporting_read_failures(rel):
            return self._load(rel, full, settle)

    def _load(
        self, rel: str, full: Path | str, settle: float
    ) -> tuple[bytes, os.stat_result] | None:
        for _attempt in range(READ_ATTEMPTS):
            try:
                before = os.stat(full)
            except (FileNotFoundError, NotADirectoryError):
                return None
            if not stat.S_ISREG(before.st_mode):
                raise VaultError("forbidden_path", f"'{rel}' is a folder, not a note.", path=rel)
            if before.st_size > self.max_bytes:
                raise self.too_large(rel, before.st_size)
            try:
                with open(full, "rb") as handle:
                    raw = handle.read(self.max_bytes + 1)
                    during = os.fstat(handle.fileno())
                after = os.stat(full)
            except FileNotFoundError:  # deleted (or being replaced) right now
                continue
            if len(raw) > self.max_bytes:  # grew since the stat
                raise self.too_large(rel, len(raw))
            if not (_same(before, during) and _same(during, after) and len(raw) == after.st_size):
                continue
            if settle and time.time() - after.st_mtime < settle:
                time.sleep(settle)
                continue
            return raw, after
        raise VaultError(
            "conflict",
            f"'{rel}' kept changing while it was read: try again once the other program has "
            "saved it.",
            path=rel,
        )

    def too_large(self, rel: str, size: int) -> VaultError:
        return VaultError(
            "too_large",
            f"'{rel}' is {megabytes(size)}, over the {megabytes(self.max_bytes)} limit for notes.",
            path=rel,
        )


def _same(a: os.stat_result, b: os.stat_result) -> bool:
    return (a.st_ino, a.st_dev, a.st_size, a.st_mtime_ns) == (
        b.st_ino,
        b.st_dev,
        b.st_size,
        b.st_mtime_ns,
    )


def megabytes(size: int) -> str:
    """``size`` bytes as MB with one decimal, for messages."""
    return f"{size / (1024 * 1024):.1f} MB"
