"""Stored conversations: every message of every completed turn, in SQLite in the data dir.

One row per conversation (title, model, created/updated times) and one per message (its JSON,
as ``llm_service.messages.message_to_dict`` writes it). Each completed turn is one transaction
(WAL, synchronous NORMAL), so a turn survives a kill -9 as a whole or not at all. Schema
changes are named, append-only migrations, as in the search index. The connection is the
:data:`CONVERSATIONS` door's alone: async code reaches the store through ``execute``, one hop
per request, and no lock is shared with a worker thread.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from llm_service.door import BlockingStore, Door
from llm_service.messages import (
    Message,
    TextBlock,
    message_from_dict,
    message_to_dict,
)
from plugin_bridge.vault.datadir import private_folder
from plugin_bridge.vault.schema import open_store

CONVERSATIONS: Final = Door("conversations")
"""The conversation stores' door: one thread, so a conversation's turns are written in order."""
CONVERSATIONS_FILE: Final = "conversations.sqlite3"
TITLE_CHARS: Final = 80

CONVERSATION_MIGRATIONS: Final[tuple[tuple[str, str], ...]] = (
    (
        "001_conversations_and_messages",
        """
        CREATE TABLE conversations (
            id TEXT PRIMARY KEY,
            title TEXT NOT NULL,
            model TEXT,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL
        );
        CREATE INDEX conversations_by_update ON conversations(updated_at DESC, id);
        CREATE TABLE messages (
            conversation TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            body TEXT NOT NULL,
            PRIMARY KEY (conversation, seq)
        ) WITHOUT ROWID;
        """,
    ),
    (
        # Every provider call, for usage/summary and the budgets; cost NULL = price unknown.
        # Since kept in usage.sqlite3 (see usage_log.py), which copied these rows once.
        "002_usage",
        """
        CREATE TABLE usage (
            time REAL NOT NULL,
            conversation TEXT,
            purpose TEXT NOT NULL,
            model TEXT NOT NULL,
            input_tokens INTEGER NOT NULL,
            output_tokens INTEGER NOT NULL,
            cache_read_tokens INTEGER NOT NULL,
            cache_write_tokens INTEGER NOT NULL,
            cost_usd REAL
        );
        CREATE INDEX usage_by_time ON usage(time);
        """,
    ),
    (
        # The vault note a conversation is kept in (setting conversations_folder) and the hash
        # it was last written with.
        "003_conversation_notes",
        """
        ALTER TABLE conversations ADD COLUMN note_path TEXT;
        ALTER TABLE conversations ADD COLUMN note_hash TEXT;
        """,
    ),
    (
        # Which provider served each call ("" for calls recorded before this column).
        "004_usage_provider",
        """
        ALTER TABLE usage ADD COLUMN provider TEXT NOT NULL DEFAULT '';
        """,
    ),
    (
        # Whose conversation it is: "owner" (the info file's token) or "key:NAME".
        "005_conversation_client",
        "ALTER TABLE conversations ADD COLUMN client TEXT NOT NULL DEFAULT 'owner';",
    ),
)


@dataclass(frozen=True)
class ConversationRow:
    """A stored conversation without its messages; times are Unix seconds."""

    id: str
    title: str
    model: str | None
    created_at: float
    updated_at: float
    client: str = "owner"
    """Whose it is: ``owner``, ``key:NAME``, or a chat app's user (``telegram:ID``)."""


class ConversationStore(BlockingStore):
    """The conversations of one vault, in ``<data dir>/conversations.sqlite3``. Its methods
    block and run on the :data:`CONVERSATIONS` door: async code reaches it through ``execute``
    (:class:`~llm_service.door.BlockingStore`)."""

    door = CONVERSATIONS

    def __init__(self, data_dir: Path) -> None:
        private_folder(data_dir)
        self._conn = open_store(
            data_dir / CONVERSATIONS_FILE,
            CONVERSATION_MIGRATIONS,
            afresh="conversations start afresh (search and notes never depended on it)",
        )
        self._conn.execute("PRAGMA foreign_keys=ON")

    @staticmethod
    def new_id() -> str:
        """An id for a new conversation; it is stored with its first completed turn."""
        return secrets.token_hex(8)

    def append(
        self, conversation_id: str, messages: Sequence[Message], model: str, client: str
    ) -> None:
        """Store one completed turn's messages (creating the conversation with its first, as
        ``client``'s: a caller's label), in one transaction: after a crash, a turn is there
        whole or not at all."""
        bodies = [json.dumps(message_to_dict(m), ensure_ascii=False) for m in messages]
        conn = self._conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            now = time.time()
            conn.execute(
                "INSERT OR IGNORE INTO conversations "
                "(id, title, model, created_at, updated_at, client) VALUES (?, '', ?, ?, ?, ?)",
                (conversation_id, model, now, now, client),
            )
            (last,) = conn.execute(
                "SELECT COALESCE(MAX(seq), -1) FROM messages WHERE conversation = ?",
                (conversation_id,),
            ).fetchone()
            conn.executemany(
                "INSERT INTO messages VALUES (?, ?, ?)",
                [(conversation_id, last + 1 + i, body) for i, body in enumerate(bodies)],
            )
            conn.execute(
                "UPDATE conversations SET updated_at = ?, model = ?, "
                "title = CASE WHEN title = '' THEN ? ELSE title END WHERE id = ?",
                (now, model, _title(messages), conversation_id),
            )
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def get(self, conversation_id: str) -> ConversationRow | None:
        row = self._conn.execute(
            "SELECT id, title, model, created_at, updated_at, client FROM conversations "
            "WHERE id = ?",
            (conversation_id,),
        ).fetchone()
        return None if row is None else ConversationRow(*row)

    def client_of(self, conversation_id: str) -> str | None:
        """Whose conversation it is (``owner`` or ``key:NAME``); None: not stored."""
        row = self._conn.execute(
            "SELECT client FROM conversations WHERE id = ?", (conversation_id,)
        ).fetchone()
        return None if row is None else str(row[0])

    def messages(self, conversation_id: str) -> list[Message]:
        """Every stored message of a conversation, in order."""
        rows = self._conn.execute(
            "SELECT body FROM messages WHERE conversation = ? ORDER BY seq",
            (conversation_id,),
        ).fetchall()
        return [message_from_dict(json.loads(body)) for (body,) in rows]

    def page(
        self, limit: int, cursor: str | None, query: str | None = None, client: str | None = None
    ) -> tuple[list[ConversationRow], str | None]:
        """Up to ``limit`` conversations with at least one turn, newest first, from ``cursor``
        (the ``next`` of the previous page), only those whose title or messages contain every
        word of ``query`` (any case); and the cursor of the next page, if any."""
        after = _cursor(cursor)
        sql = (
            "SELECT id, title, model, created_at, updated_at, client FROM conversations c "
            "WHERE title != '' AND (? IS NULL OR (updated_at, id) < (?, ?))"
        )
        args: list[object] = [after and after[0], after and after[0], after and after[1]]
        if client is not None:  # a client key sees its own conversations only
            sql += " AND client = ?"
            args.append(client)
        for word in (query or "").split():
            like = "%" + word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
            sql += (
                " AND (title LIKE ? ESCAPE '\\' OR EXISTS (SELECT 1 FROM messages m "
                "WHERE m.conversation = c.id AND m.body LIKE ? ESCAPE '\\'))"
            )
            args += [like, like]
        sql += " ORDER BY updated_at DESC, id DESC LIMIT ?"
        rows = self._conn.execute(sql, (*args, limit + 1)).fetchall()
        found = [ConversationRow(*row) for row in rows[:limit]]
        more = len(rows) > limit
        return found, (f"{found[-1].updated_at!r}:{found[-1].id}" if more and found else None)

    def rename(self, conversation_id: str, title: str) -> bool:
        changed = self._conn.execute(
            "UPDATE conversations SET title = ? WHERE id = ?", (title, conversation_id)
        ).rowcount
        return changed > 0

    def delete(self, conversation_id: str) -> bool:
        changed = self._conn.execute(
            "DELETE FROM conversations WHERE id = ?", (conversation_id,)
        ).rowcount
        return changed > 0

    def note_of(self, conversation_id: str) -> tuple[str, str] | None:
        """The path and hash of the note the conversation was last written to, if any."""
        row = self._conn.execute(
            "SELECT note_path, note_hash FROM conversations WHERE id = ? AND note_path IS NOT NULL",
            (conversation_id,),
        ).fetchone()
        return None if row is None else (row[0], row[1])

    def set_note(self, conversation_id: str, path: str, note_hash: str) -> None:
        self._conn.execute(
            "UPDATE conversations SET note_path = ?, note_hash = ? WHERE id = ?",
            (path, note_hash, conversation_id),
        )

    def clear(self, conversation_id: str) -> None:
        """Forget a conversation's messages; the conversation stays."""
        self._conn.execute("DELETE FROM messages WHERE conversation = ?", (conversation_id,))

    def close(self) -> None:
        self._conn.close()


def _title(messages: Sequence[Message]) -> str:
    """The first words of the question that opened the conversation."""
    first = messages[0].content[0] if messages and messages[0].content else None
    text = " ".join(first.text.split()) if isinstance(first, TextBlock) else ""
    text = text or "Untitled"
    return text if len(text) <= TITLE_CHARS else text[: TITLE_CHARS - 1] + "…"


def _cursor(cursor: str | None) -> tuple[float, str] | None:
    if not cursor:
        return None
    stamp, _, conversation_id = cursor.partition(":")
    try:
        return float(stamp), conversation_id
    except ValueError:
        raise ValueError("cursor is not one this server gave out") from None
