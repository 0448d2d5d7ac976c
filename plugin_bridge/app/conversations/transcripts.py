"""Conversations as Markdown notes: ``conversations/export`` and, when the setting
``conversations_folder`` is set, a note per conversation kept up to date after every turn.

Every write goes through the vault's safe write layer (atomic, snapshotted for undo, in the
audit log). A conversation's note is only ever overwritten while it is exactly as the bridge
last wrote it: once the user edited, moved or deleted it, the next turn starts a new note.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from llm_service.messages import Message, TextBlock, ToolCall
from plugin_bridge.vault.errors import VaultError

if TYPE_CHECKING:
    from plugin_bridge.app.conversations.store import ConversationStore
    from plugin_bridge.vault.notes.store import NoteStore, WriteResult

SAVE_ATTEMPTS: Final = 5
"""Retries when another writer takes the unique name between choosing and creating it."""
NOTE_ORIGIN: Final = "conversation"
"""The audit log's origin of the notes kept per conversation."""


def transcript(messages: Sequence[Message]) -> str:
    """A conversation as Markdown: each question and answer, tool calls as quoted lines."""
    parts: list[str] = []
    for message in messages:
        for block in message.content:
            if isinstance(block, TextBlock) and block.text.strip():
                speaker = "You" if message.role == "user" else "Assistant"
                parts.append(f"**{speaker}:** {block.text.strip()}")
            elif isinstance(block, ToolCall):
                arguments = json.dumps(block.arguments, ensure_ascii=False)
                parts.append(f"> Tool `{block.name}` {arguments}")
    return "\n\n".join(parts) + "\n"


def save_unique(
    notes: NoteStore, folder: str, title: str, body: str, *, origin: str = "model"
) -> WriteResult:
    """Create ``folder/title.md`` or the first free ``title N.md``; never overwrite."""
    for attempt in range(SAVE_ATTEMPTS):
        path = notes.unique_path(folder, title)
        try:
            return notes.create(path, body, overwrite=False, origin=origin)
        except VaultError as exc:
            if exc.code != "exists" or attempt == SAVE_ATTEMPTS - 1:
                raise
    raise AssertionError("unreachable")


def save_conversation_note(
    notes: NoteStore, store: ConversationStore, folder: str, conversation_id: str
) -> WriteResult | None:
    """Write the stored conversation's transcript to its note in ``folder`` (blocking): the
    same note as last time while it is unchanged, else a new one. None for an unknown id."""
    row = store.get(conversation_id)
    if row is None:
        return None
    body = transcript(store.messages(conversation_id))
    written: WriteResult | None = None
    last = store.note_of(conversation_id)
    if last is not None:
        path, expected_hash = last
        try:
            written = notes.create(
                path, body, overwrite=True, expected_hash=expected_hash, origin=NOTE_ORIGIN
            )
        except VaultError as exc:
            if exc.code != "conflict":  # changed, moved or deleted by the user since
                raise
    if written is None:
        written = save_unique(notes, folder, row.title, body, origin=NOTE_ORIGIN)
    store.set_note(conversation_id, written.path, written.hash)
    return written
