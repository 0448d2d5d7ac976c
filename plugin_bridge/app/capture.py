"""Quick capture from a chat app: a timestamped line appended to the capture note, and files
(photos, PDFs, voice notes) saved into the vault's attachments folder.

Both are the chat app's user's own writes (``/note TEXT``, a photo sent): no model proposes
them, so they need no review; they are made as every other write is (the note store's planned
writes through ``writer``: the plugin's editor when it is open, the audit log naming who).
"""

from __future__ import annotations

import json
import os
import re
from datetime import datetime
from typing import TYPE_CHECKING, Final

from plugin_bridge.vault.errors import VaultError
from plugin_bridge.vault.notes.atomic import write_atomic
from plugin_bridge.vault.paths import resolve_note, to_posix

if TYPE_CHECKING:
    from plugin_bridge.app.clients import Caller
    from plugin_bridge.app.vault_tools import Writer
    from plugin_bridge.vault.notes.store import PlannedWrite
    from plugin_bridge.vault.vault import Vault

DEFAULT_ATTACHMENTS: Final = "Attachments"
"""Where files go when Obsidian's own setting (attachmentFolderPath) names no folder."""
MAX_FILE_BYTES: Final = 20 * 1024 * 1024
"""Files larger than this are neither downloaded nor saved (the Bot API's own download limit)."""
_UNSAFE: Final = re.compile(r"[^A-Za-z0-9._ -]+")


async def capture(vault: Vault, writer: Writer, note: str, text: str, user: Caller) -> str:
    """Append ``- YYYY-MM-DD HH:MM text`` to ``note`` for ``user`` (the audit line's origin
    is its label), creating it when missing; the note's path. VaultError when the path is
    refused."""
    line = f"- {datetime.now().astimezone():%Y-%m-%d %H:%M} {' '.join(text.split())}"
    plan = await vault.run(_plan_capture, vault, note, line)
    result = await writer(plan, user.label, user)
    return result.path


def _plan_capture(vault: Vault, note: str, line: str) -> PlannedWrite:
    path = note if note.lower().endswith(".md") else f"{note}.md"
    try:
        return vault.notes.plan_append(path, line)
    except VaultError as exc:
        if exc.code != "not_found":
            raise
        return vault.notes.plan_create(path, f"{line}\n")


def attachments_folder(vault: Vault) -> str:
    """Obsidian's attachment folder (``.obsidian/app.json``'s attachmentFolderPath) when it is
    a vault folder, else ``Attachments``; a folder relative to the note (``./…``) is taken
    from the vault root, as a chat has no note."""
    try:
        app = json.loads((vault.root / ".obsidian" / "app.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return DEFAULT_ATTACHMENTS
    folder = app.get("attachmentFolderPath") if isinstance(app, dict) else None
    if not isinstance(folder, str):
        return DEFAULT_ATTACHMENTS
    folder = to_posix(folder.strip()).removeprefix("./").strip("/")
    return folder or DEFAULT_ATTACHMENTS


def save_attachment(vault: Vault, name: str, data: bytes) -> str:
    """Save ``data`` as a new file named after ``name`` in the attachments folder (``name 1``,
    ``name 2``… when taken); its vault path (blocking: call it through ``vault.run``).
    VaultError when the folder is refused or the file is too large."""
    if len(data) > MAX_FILE_BYTES:
        raise VaultError("too_large", "Files over 20 MB are not saved: send a smaller one.")
    stem, dot, suffix = _safe_name(name).rpartition(".")
    if not dot:
        stem, suffix = suffix, "bin"
    folder = attachments_folder(vault)
    for n in range(10_000):
        rel = f"{folder}/{stem}{f' {n}' if n else ''}.{suffix}"
        full = resolve_note(vault.root, rel, write=True, suffixes=frozenset({f".{suffix.lower()}"}))
        if not os.path.lexists(full):
            write_atomic(full, data)
            return rel
    raise VaultError("exists", f"Too many files are named '{stem}': rename some.")


def _safe_name(name: str) -> str:
    """A file name with nothing but letters, digits, dots, dashes, underscores and spaces."""
    base = to_posix(name).rpartition("/")[2]
    cleaned = " ".join(_UNSAFE.sub(" ", base).split()).strip(" .")
    return cleaned[:100] or "file"
