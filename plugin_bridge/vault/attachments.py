"""Files in the vault that are not notes but that the assistant reads: images and PDFs.

Their paths follow every rule of a note's path (inside the vault, not hidden, not excluded),
with these suffixes instead of a note's. All of it blocks: call it off the event loop.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

from plugin_bridge.vault.errors import VaultError
from plugin_bridge.vault.files import megabytes, out_of_scope
from plugin_bridge.vault.paths import resolve_note, to_posix
from plugin_bridge.vault.pdf import is_pdf_name, page_range, too_large, with_markers
from plugin_bridge.vault.pdf_worker import extract_pages

if TYPE_CHECKING:
    from plugin_bridge.vault.notes.store import NoteStore

IMAGE_TYPES: Final = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
}
"""Images a model that sees can be given, by suffix, with their media types."""
ATTACHMENT_SUFFIXES: Final = frozenset({*IMAGE_TYPES, ".pdf"})
MAX_IMAGE_BYTES: Final = 20 * 1024 * 1024
"""Larger images are refused before reading (they are scaled down after)."""


def is_image_name(rel: str) -> bool:
    return os.path.splitext(rel)[1].lower() in IMAGE_TYPES


def is_attachment_name(rel: str) -> bool:
    return os.path.splitext(rel)[1].lower() in ATTACHMENT_SUFFIXES


@dataclass(frozen=True)
class Attachment:
    """An image's or a PDF's bytes and media type."""

    path: str
    media_type: str
    data: bytes


@dataclass(frozen=True)
class PdfText:
    """The text of some pages of a PDF, each after a ``--- page N of M ---`` line."""

    path: str
    content: str
    hash: str
    page_count: int


def resolve(notes: NoteStore, path: str) -> tuple[str, Path]:
    """The vault-relative path and real file of an image or PDF (VaultError forbidden_path)."""
    files = notes.files
    excluded = frozenset({notes.data_dir})
    full = resolve_note(files.root, path, excluded=excluded, suffixes=ATTACHMENT_SUFFIXES)
    rel = to_posix(str(full.relative_to(files.root)))
    if files.scope and out_of_scope(rel, files.scope):
        raise VaultError(
            "forbidden_path",
            f"'{rel}' is excluded from the assistant by your settings (exclude).",
            path=rel,
        )
    return rel, Path(os.path.realpath(full))


def read_attachment(notes: NoteStore, path: str) -> Attachment:
    """An image's or PDF's bytes (VaultError: forbidden_path, not_found, too_large)."""
    rel, full = resolve(notes, path)
    limit = notes.files.pdf_max_bytes if is_pdf_name(rel) else MAX_IMAGE_BYTES
    data = _read(rel, full, limit)
    kind = "application/pdf" if is_pdf_name(rel) else IMAGE_TYPES[full.suffix.lower()]
    return Attachment(rel, kind, data)


def read_pdf(notes: NoteStore, path: str, pages: str | None = None) -> PdfText:
    """A PDF's text with page markers, all pages or ``pages`` ("3-5"), and a last sentence
    when the reader's limits stopped it early; VaultError otherwise (not_text with one
    sentence for an encrypted or damaged PDF, or one not a page of which could be read)."""
    rel, full = resolve(notes, path)
    if not is_pdf_name(rel):
        raise VaultError("not_text", f"'{rel}' is an image, which has no text to read.", path=rel)
    data = _read(rel, full, notes.files.pdf_max_bytes)
    read = extract_pages(rel, data)
    chosen = page_range(pages, len(read.pages), rel)
    content = with_markers(read.pages, chosen)
    if read.stopped is not None:
        content = f"{content}\n\n{read.stopped}"
    return PdfText(rel, content, hashlib.sha256(data).hexdigest(), len(read.pages))


def _read(rel: str, full: Path, limit: int) -> bytes:
    try:
        size = full.stat().st_size
        if size > limit:
            if is_pdf_name(rel):
                raise VaultError("too_large", str(too_large(rel, size, limit)), path=rel)
            raise VaultError(
                "too_large",
                f"'{rel}' is {megabytes(size)}, over the {megabytes(limit)} limit.",
                path=rel,
            )
        return full.read_bytes()
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        raise VaultError("not_found", f"There is no file '{rel}'.", path=rel) from None
