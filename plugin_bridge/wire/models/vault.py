"""Wire models of note access: vault/list, note/read, create, append, edit, undo, audit/list.

Same rules as :mod:`plugin_bridge.wire.models.base`: camelCase on the wire, params strict.
"""

from __future__ import annotations

from typing import Final

from pydantic import Field

from plugin_bridge.wire.models.base import ClientRequest, Params, ServerRequest, WireModel

PAGES_PATTERN = r"^\s*\d+\s*(-\s*\d*\s*)?$"


class VaultListParams(Params):
    cursor: str | None = Field(
        None, max_length=4000, description="nextCursor of the page before; none: the first page."
    )
    limit: int = Field(500, ge=1, le=1000)


class ListedNoteModel(WireModel):
    path: str
    title: str
    size: int = Field(description="The note's size in bytes.")


class VaultListResult(WireModel):
    notes: list[ListedNoteModel] = Field(description="In path order.")
    next_cursor: str | None = Field(description="Pass it for the next page; null: the last one.")


class NoteReadParams(Params):
    path: str = Field(
        max_length=1000, description="Vault-relative path, e.g. Projects/Kafka.md or Papers/x.pdf."
    )
    pages: str | None = Field(
        None,
        max_length=40,
        pattern=PAGES_PATTERN,
        description='A PDF\'s pages to read, 1-based and inclusive: "3-5", "4" or "7-" (to the '
        "end); default all.",
    )
    heading: str | None = Field(
        None,
        max_length=1000,
        description="Read only the part under this heading (a heading path from vault/search, "
        "e.g. 'Setup > Linux', or its last heading): its heading line, text and subheadings. "
        "Error -32602 naming some of the note's headings when it has none such.",
    )


class NoteReadResult(WireModel):
    path: str
    content: str = Field(
        description="The note's text; a PDF's text, each page after a '--- page N of M ---' line."
    )
    hash: str = Field(description="sha256 hex of the file bytes.")
    lossy: bool = Field(
        False,
        description=(
            "Some bytes were not UTF-8 and read as U+FFFD; only note/create with overwrite "
            "may write the note."
        ),
    )
    page_count: int | None = Field(None, description="A PDF's number of pages; null for notes.")
    heading: str | None = Field(
        None, description="With heading: the note's heading path that was read."
    )


HashField = Field(
    None,
    min_length=64,
    max_length=64,
    description="The sha256 the note had when read: the write fails with -32022 if it changed.",
)


class NoteCreateParams(Params):
    path: str = Field(max_length=1000, description="Vault-relative .md path.")
    content: str = Field(max_length=5 * 1024 * 1024)
    overwrite: bool = False
    expected_hash: str | None = HashField


class NoteWriteResult(WireModel):
    path: str
    hash: str


class NoteAppendParams(Params):
    path: str = Field(max_length=1000, description="Vault-relative .md path.")
    text: str = Field(min_length=1, max_length=5 * 1024 * 1024)
    expected_hash: str | None = HashField


class NoteEditModel(Params):
    old_text: str = Field(
        min_length=1, max_length=100_000, description="Must occur exactly once in the note."
    )
    new_text: str = Field(max_length=1_000_000)


class NoteEditParams(Params):
    path: str = Field(max_length=1000, description="Vault-relative .md path.")
    edits: list[NoteEditModel] = Field(min_length=1, max_length=100)
    expected_hash: str = Field(
        min_length=64, max_length=64, description="The sha256 the note had when read."
    )


class NoteUndoParams(Params):
    path: str = Field(max_length=1000, description="Vault-relative .md path.")
    conversation_id: str | None = Field(
        None,
        max_length=100,
        description="The conversation whose turn made the write: its next turn tells the model "
        "the change was undone.",
    )


class NoteUndoResult(WireModel):
    path: str
    hash: str = Field(description="The note's sha256 after the undo; empty when it was removed.")
    removed: bool = Field(description="True when the undone write had created the note.")


class AuditListParams(Params):
    limit: int = Field(50, ge=1, le=1000)


class AuditEntry(WireModel):
    time: str
    path: str
    action: str
    old_hash: str | None
    new_hash: str | None
    origin: str


class AuditListResult(WireModel):
    entries: list[AuditEntry] = Field(description="Newest first.")


class NoteApplyParams(WireModel):
    """The server request ``note/apply``: apply a write through Obsidian (the plugin)."""

    path: str = Field(description="Vault-relative path of an existing note.")
    before: str = Field(description="The note's text the write was worked out from.")
    after: str = Field(description="The note's text once written.")
    expected_hash: str | None = Field(
        description="sha256 of the note's file as the server read it."
    )


class NoteApplyResult(WireModel):
    applied: bool = Field(description="False: the note is not open; the server writes it.")
    hash: str | None = Field(
        None, description="With applied: sha256 hex of the note's new text (UTF-8)."
    )


NOTE_APPLY: Final = ServerRequest("note/apply", NoteApplyParams, NoteApplyResult)
"""Write this planned change through Obsidian (the note is open there)."""


VAULT_LIST: Final = ClientRequest("vault/list", VaultListParams, VaultListResult)
NOTE_READ: Final = ClientRequest("note/read", NoteReadParams, NoteReadResult)
NOTE_CREATE: Final = ClientRequest("note/create", NoteCreateParams, NoteWriteResult)
NOTE_APPEND: Final = ClientRequest("note/append", NoteAppendParams, NoteWriteResult)
NOTE_EDIT: Final = ClientRequest("note/edit", NoteEditParams, NoteWriteResult)
NOTE_UNDO: Final = ClientRequest("note/undo", NoteUndoParams, NoteUndoResult)
AUDIT_LIST: Final = ClientRequest("audit/list", AuditListParams, AuditListResult)
