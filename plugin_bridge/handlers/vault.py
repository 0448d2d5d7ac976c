"""Vault methods: vault/list (the notes a page at a time), note/read and the user's writes
(origin "user"): note/create, note/append, note/edit (through Obsidian's editor when the plugin
has the note open), note/undo; audit/list."""

from __future__ import annotations

import functools
from collections.abc import Callable

from plugin_bridge.app.clients import UNDO_LOOKBACK, audit_origin, check_undo
from plugin_bridge.handlers.context import AppRouter, Context, caller_of
from plugin_bridge.handlers.conversations import check_own
from plugin_bridge.vault.attachments import read_pdf
from plugin_bridge.vault.errors import VaultError
from plugin_bridge.vault.lexical.listing import InvalidCursor
from plugin_bridge.vault.notes.store import PlannedWrite
from plugin_bridge.vault.pdf import is_pdf_name
from plugin_bridge.vault.sections import PDF_HEADINGS, section
from plugin_bridge.wire.errors import RpcError, WireCode
from plugin_bridge.wire.models import (
    AUDIT_LIST,
    NOTE_APPEND,
    NOTE_CREATE,
    NOTE_EDIT,
    NOTE_READ,
    NOTE_UNDO,
    VAULT_LIST,
    AuditListParams,
    AuditListResult,
    ListedNoteModel,
    NoteAppendParams,
    NoteCreateParams,
    NoteEditParams,
    NoteReadParams,
    NoteReadResult,
    NoteUndoParams,
    NoteUndoResult,
    NoteWriteResult,
    VaultListParams,
    VaultListResult,
)


async def list_notes(ctx: Context, params: VaultListParams) -> VaultListResult:
    """The indexed notes a page at a time, in path order (see vault/lexical/listing.py)."""
    try:
        page = await ctx.app.vault.notes_page(params.cursor, params.limit)
    except InvalidCursor as exc:
        raise RpcError(WireCode.INVALID_PARAMS, str(exc)) from exc
    notes = [ListedNoteModel(path=n.path, title=n.title, size=n.size) for n in page.notes]
    return VaultListResult(notes=notes, next_cursor=page.next_cursor)


async def read_note(ctx: Context, params: NoteReadParams) -> NoteReadResult:
    """A note's text (or the part under ``heading``) and the sha256 of its bytes; a PDF's text
    by page (``pages``)."""
    vault = ctx.app.vault
    notes = vault.notes
    if is_pdf_name(params.path.strip()):
        if params.heading is not None:
            raise VaultError("no_such_heading", PDF_HEADINGS, path=params.path)
        pdf = await vault.run(read_pdf, notes, params.path, params.pages)
        await ctx.hold(len(pdf.content))  # the memory budget counts the reply from here
        return NoteReadResult(
            path=pdf.path, content=pdf.content, hash=pdf.hash, page_count=pdf.page_count
        )
    # The memory budget counts the reply before its bytes are read: a client that reads none
    # of its replies waits for room, or is refused, before the server reads anything for it.
    # (A note over the size limit is refused by the read: at most that much is reserved.)
    size = min((await vault.run(notes.info, params.path)).size, notes.max_bytes)
    await ctx.hold(size)
    note = await vault.run(notes.read, params.path)
    if len(note.content) > size:  # it grew meanwhile
        await ctx.hold(len(note.content) - size)
    heading, content = None, note.content
    if params.heading is not None:
        heading, content = section(note.path, content, params.heading)
    return NoteReadResult(
        path=note.path, content=content, hash=note.hash, lossy=note.lossy, heading=heading
    )


async def create_note(ctx: Context, params: NoteCreateParams) -> NoteWriteResult:
    """Create a note atomically; an existing one only with overwrite."""
    notes = ctx.app.vault.notes
    plan = functools.partial(
        notes.plan_create,
        params.path,
        params.content,
        overwrite=params.overwrite,
        expected_hash=params.expected_hash,
    )
    return await _user_write(ctx, plan)


async def append_note(ctx: Context, params: NoteAppendParams) -> NoteWriteResult:
    """Add text at the end of a note, on a new line; earlier bytes are kept as they are."""
    notes = ctx.app.vault.notes
    plan = functools.partial(
        notes.plan_append, params.path, params.text, expected_hash=params.expected_hash
    )
    return await _user_write(ctx, plan)


async def edit_note(ctx: Context, params: NoteEditParams) -> NoteWriteResult:
    """Search-and-replace edits, each old text occurring exactly once, applied in order."""
    edits = [(edit.old_text, edit.new_text) for edit in params.edits]
    notes = ctx.app.vault.notes
    plan = functools.partial(
        notes.plan_edit, params.path, edits, expected_hash=params.expected_hash
    )
    return await _user_write(ctx, plan)


async def undo_note(ctx: Context, params: NoteUndoParams) -> NoteUndoResult:
    """Restore the note as it was before its last write (-32022 if it changed since)."""
    vault = ctx.app.vault
    caller = caller_of(ctx)
    if not caller.is_owner:  # a client key undoes its own writes only
        entries = await vault.run(vault.notes.audit.entries, UNDO_LOOKBACK)
        check_undo(caller, params.path, entries)
    undone = await vault.run(vault.notes.undo, params.path, origin=audit_origin("user", caller))
    if params.conversation_id is not None:
        await check_own(ctx, params.conversation_id)
        ctx.app.conversations.undone(params.conversation_id, undone.path)
    return NoteUndoResult(path=undone.path, hash=undone.hash, removed=not undone.hash)


async def list_audit(ctx: Context, params: AuditListParams) -> AuditListResult:
    """The write log, newest first: who wrote which note when, with hashes (never contents)."""
    vault = ctx.app.vault
    entries = await vault.run(vault.notes.audit.entries, params.limit)
    return AuditListResult.model_validate({"entries": entries})


async def _user_write(ctx: Context, plan: Callable[[], PlannedWrite]) -> NoteWriteResult:
    """Work a write out off the event loop, then make it as the user's (through Obsidian when
    the plugin has the note open)."""
    planned = await ctx.app.vault.run(plan)
    written = await ctx.app.writes.write(planned, "user", caller_of(ctx))
    return NoteWriteResult(path=written.path, hash=written.hash)


def register(router: AppRouter) -> None:
    router.register(VAULT_LIST, list_notes)
    router.register(NOTE_READ, read_note)
    router.register(NOTE_CREATE, create_note)
    router.register(NOTE_APPEND, append_note)
    router.register(NOTE_EDIT, edit_note)
    router.register(NOTE_UNDO, undo_note)
    router.register(AUDIT_LIST, list_audit)
