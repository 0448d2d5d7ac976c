"""What the user points at, sent with one message: the open note, a selection, @-mentioned
folders and tags, within a character budget, with paths the model can cite; images and PDFs
as the files themselves (:mod:`.media`)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Final

from plugin_bridge.app.turn.media import Media, is_media_context
from plugin_bridge.wire.models import FolderContext, NoteContext, TagContext

if TYPE_CHECKING:
    from llm_service import Message
    from plugin_bridge.vault.vault import Vault

CONTEXT_BUDGET_CHARS: Final = 24_000
"""About 6,000 tokens shared by the items of one message's context."""
LISTED_NOTES: Final = 50
"""A folder or tag in the context lists at most this many notes (the model can read them)."""

ContextItem = NoteContext | FolderContext | TagContext


def resolve_context(
    vault: Vault, items: Sequence[ContextItem], budget: int = CONTEXT_BUDGET_CHARS
) -> tuple[str, list[str], Media]:
    """The context block for the model, the notes (and files) given whole or in part, and the
    images and PDFs to send (blocking: call it off the event loop). Raises VaultError for a
    note, file or folder that cannot be used."""
    parts: list[str] = []
    given: list[str] = []
    media = Media()
    remaining = budget
    for index, item in enumerate(items):
        share = remaining // (len(items) - index)
        if isinstance(item, NoteContext) and is_media_context(item.note):
            path = media.add_file(vault, item.note, share)
            given.append(path)
            part = f"The user attached [[{path}]] (sent with this message)."
        elif isinstance(item, NoteContext):
            note = vault.notes.read(item.note)
            given.append(note.path)
            if item.selection is not None:
                part = f"The user selected this in [[{_link(note.path)}]]:\n{item.selection}"
            else:
                part = f"The note the user has open, [[{_link(note.path)}]]:\n{note.content}"
                given += media.add_embeds(vault, note.path, note.content)
        elif isinstance(item, FolderContext):
            found = vault.notes.list_notes(item.folder, LISTED_NOTES)
            part = f"Notes in the folder {item.folder or '/'}: " + _links(n.path for n in found)
        else:
            hits = vault.index.search(f"tag:{item.tag.lstrip('#')}", LISTED_NOTES).hits
            part = f"Notes tagged #{item.tag.lstrip('#')}: " + _links(h.path for h in hits)
        if len(part) > share:
            part = f"{part[:share]}\n[… {len(part) - share} more characters not shown]"
        remaining -= len(part)
        parts.append(part)
    if not parts:
        return "", [], media
    return "\n\n<context>\n" + "\n\n".join(parts) + "\n</context>", given, media


def turn_sources(given: Sequence[str], exchange: Sequence[Message]) -> list[str]:
    """The notes a turn drew on: those given as context, then those the model read."""
    read = (
        str(call.arguments.get("path", ""))
        for message in exchange
        for call in message.tool_calls
        if call.name == "read_note"
    )
    return list(dict.fromkeys(path for path in (*given, *read) if path))


def _link(path: str) -> str:
    return path.removesuffix(".md")


def _links(paths: Iterable[str]) -> str:
    listed = [f"[[{_link(path)}]]" for path in paths]
    return ", ".join(listed) if listed else "none"
