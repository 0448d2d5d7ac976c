"""What the vault itself tells the assistant: the context note and the custom prompts.

Both are ordinary notes the user edits in Obsidian and both are read at every request, so an
edit applies to the next message without a restart.

* The **context note** (setting ``context_note``, default ``Assistant.md`` at the vault root)
  becomes every conversation's standing context, within a budget.
* **Custom prompts** are the notes in the prompts folder (setting ``prompts_folder``, default
  ``Assistant/Prompts``): the body is the instruction; front matter may set ``name``,
  ``description``, ``insert`` (``selection``, ``note`` or ``none``: what the plugin should send
  along as context) and ``purpose`` (``chat``, ``fast`` or ``deep``: the model that runs it).
  A prompt note whose front matter cannot be read (not YAML, or hostile: an alias bomb, deep
  nesting) is left out of the list with one log line.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Final, Literal

from plugin_bridge.app.settings.providers import PURPOSES, Purpose
from plugin_bridge.vault.errors import VaultError
from plugin_bridge.vault.lexical.parse import parse_note

if TYPE_CHECKING:
    from plugin_bridge.vault.vault import Vault

logger = logging.getLogger(__name__)

CONTEXT_NOTE_CHARS: Final = 8_000
"""The context note's share of every request (about 2,000 tokens)."""
MAX_PROMPTS: Final = 200
Insert = Literal["selection", "note", "none"]


def system_prompt(vault_name: str) -> str:
    """The system prompt of every chat conversation."""
    return (
        f"You are an assistant inside the user's Obsidian vault named “{vault_name}”. "
        "Use the tools to search and read notes before answering questions about them, and "
        "never invent notes. Cite every note you use as a [[wikilink]] with its path without "
        "the .md extension, e.g. [[Projects/Kafka]]. Create or change notes only when the "
        "user asks."
    )


@dataclass(frozen=True)
class Prompt:
    """A custom prompt: ``id`` is its note's path."""

    id: str
    name: str
    description: str
    insert: Insert
    instruction: str
    purpose: Purpose | None = None
    """The model that runs it; None: the one the client asks for."""


def context_note(vault: Vault, path: str) -> str | None:
    """The context note's text for the system prompt, cut to the budget; None without one."""
    try:
        note = vault.notes.read(path)
    except VaultError:
        return None
    body = parse_note(note.path, note.content).body.strip()
    if not body:
        return None
    if len(body) > CONTEXT_NOTE_CHARS:
        body = body[:CONTEXT_NOTE_CHARS] + "\n[… the rest of the context note is not shown]"
    return f"What the user wants you to know (from their note [[{note.path[:-3]}]]):\n{body}"


class ContextNoteCache:
    """The context note's text as :func:`context_note` made it, read again only when the
    note's size or modification time changed (a stat, cheap enough for the event loop), so a
    turn needs no worker thread for it."""

    def __init__(self) -> None:
        self._stamp: tuple[str, int, float] | tuple[str] | None = None
        self._text: str | None = None

    def cached(self, vault: Vault, path: str) -> tuple[bool, str | None]:
        """(True, text) when the note is unchanged since :meth:`read`, else (False, None)."""
        if self._stamp is not None and self._stamp == _stamp(vault, path):
            return True, self._text
        return False, None

    def read(self, vault: Vault, path: str) -> str | None:
        """The context note's text, read now (blocking) and kept."""
        stamp = _stamp(vault, path)  # before the read: a change during it reads again
        self._text = context_note(vault, path)
        self._stamp = stamp
        return self._text


def _stamp(vault: Vault, path: str) -> tuple[str, int, float] | tuple[str]:
    try:
        info = vault.notes.info(path)
    except VaultError:
        return (path,)
    return (path, info.size, info.mtime)


def list_prompts(vault: Vault, folder: str) -> list[Prompt]:
    """The custom prompts, by name; none when the folder does not exist."""
    try:
        infos = vault.notes.list_notes(folder, MAX_PROMPTS)
    except VaultError:
        return []
    prompts = []
    for info in infos:
        if not info.path.endswith(".md"):
            continue
        try:
            prompts.append(read_prompt(vault, info.path, folder))
        except BadPrompt as exc:
            logger.warning("Prompt note %s is skipped: %s.", info.path, exc.reason)
        except VaultError:
            continue
    return sorted(prompts, key=lambda prompt: prompt.name.casefold())


def read_prompt(vault: Vault, prompt_id: str, folder: str) -> Prompt:
    """The prompt ``prompt_id`` (a note path inside the prompts folder), read now."""
    if not prompt_id.startswith(folder.rstrip("/") + "/"):
        raise VaultError(
            "not_found",
            f"There is no prompt '{prompt_id}': prompts/list names them.",
            path=prompt_id,
        )
    note = vault.notes.read(prompt_id)
    return prompt_from_note(note.path, note.content)


class BadPrompt(VaultError):
    """A prompt note whose front matter cannot be read; ``reason`` says why (never quoting it)."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(
            "not_text",
            f"The prompt note '{path}' has front matter that cannot be read ({reason}): "
            "fix it in Obsidian.",
            path=path,
        )
        self.reason = reason


def prompt_from_note(path: str, content: str) -> Prompt:
    """The prompt the note at ``path`` with text ``content`` defines: its front matter's name
    (else the file name without ``.md``), description, insert and purpose, its body the
    instruction; :class:`BadPrompt` when its front matter cannot be read (not YAML, or over the
    loader's limits)."""
    parsed = parse_note(path, content, warn=False)
    if parsed.frontmatter_error is not None:
        raise BadPrompt(path, parsed.frontmatter_error)
    meta = parsed.frontmatter
    insert = meta.get("insert", "none")
    purpose = meta.get("purpose")
    return Prompt(
        id=path,
        name=str(meta.get("name") or PurePosixPath(path).stem),
        description=str(meta.get("description") or ""),
        insert=insert if insert in ("selection", "note", "none") else "none",
        instruction=parsed.body.strip(),
        purpose=purpose if purpose in PURPOSES else None,
    )
