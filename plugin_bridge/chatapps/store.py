"""What the bots keep across restarts, in ``chatapps.sqlite3`` in the vault's data folder:
the updates and messages already taken (so a re-delivered one after a kill -9 is never answered
twice: each is recorded, synchronously to disk, before its answer is sent), Telegram's last
update id, and each chat's conversation."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Final

from llm_service.door import BlockingStore, Door

CHATAPPS: Final = Door("chatapps")
"""The bots' store's door: its one thread alone uses the connection."""
FILE_NAME: Final = "chatapps.sqlite3"
KEPT: Final = 5000
"""Taken message ids kept per bot (older ones cannot come again)."""

_SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS taken (bot TEXT NOT NULL, key TEXT NOT NULL, seq INTEGER NOT NULL,
    PRIMARY KEY (bot, key));
CREATE TABLE IF NOT EXISTS offsets (bot TEXT PRIMARY KEY, last INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS chats (bot TEXT NOT NULL, chat TEXT NOT NULL,
    conversation TEXT NOT NULL, PRIMARY KEY (bot, chat));
"""


class ChatAppStore(BlockingStore):
    """See the module docstring; its methods block and run on the :data:`CHATAPPS` door
    (``await store.execute(work)``)."""

    door = CHATAPPS

    def __init__(self, data_dir: Path) -> None:
        data_dir.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(
            data_dir / FILE_NAME, check_same_thread=False, isolation_level=None
        )
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=FULL")
        self._conn.executescript(_SCHEMA)

    def take(self, bot: str, key: str) -> bool:
        """Record ``key`` (an update's or message's id) as taken, durably; False when it was
        taken before (a re-delivery: skip it)."""
        row = self._conn.execute(
            "SELECT COALESCE(MAX(seq), 0) FROM taken WHERE bot = ?", (bot,)
        ).fetchone()
        seq = int(row[0]) + 1
        inserted = self._conn.execute(
            "INSERT OR IGNORE INTO taken (bot, key, seq) VALUES (?, ?, ?)", (bot, key, seq)
        ).rowcount
        if inserted and seq % 100 == 0:
            self._conn.execute("DELETE FROM taken WHERE bot = ? AND seq <= ?", (bot, seq - KEPT))
        return inserted > 0

    def last_update(self, bot: str) -> int:
        """The last update id taken (0: none yet)."""
        row = self._conn.execute("SELECT last FROM offsets WHERE bot = ?", (bot,)).fetchone()
        return 0 if row is None else int(row[0])

    def take_update(self, bot: str, update_id: int) -> bool:
        """Record ``update_id`` as taken, durably; False when it is not newer than the last."""
        row = self._conn.execute("SELECT last FROM offsets WHERE bot = ?", (bot,)).fetchone()
        if row is not None and update_id <= int(row[0]):
            return False
        self._conn.execute(
            "INSERT INTO offsets (bot, last) VALUES (?, ?) "
            "ON CONFLICT (bot) DO UPDATE SET last = excluded.last",
            (bot, update_id),
        )
        return True

    def conversation(self, bot: str, chat: str) -> str | None:
        row = self._conn.execute(
            "SELECT conversation FROM chats WHERE bot = ? AND chat = ?", (bot, chat)
        ).fetchone()
        return None if row is None else str(row[0])

    def set_conversation(self, bot: str, chat: str, conversation: str | None) -> None:
        """The chat's conversation from now on (None: the next message starts a new one)."""
        if conversation is None:
            self._conn.execute("DELETE FROM chats WHERE bot = ? AND chat = ?", (bot, chat))
        else:
            self._conn.execute(
                "INSERT INTO chats (bot, chat, conversation) VALUES (?, ?, ?) "
                "ON CONFLICT (bot, chat) DO UPDATE SET conversation = excluded.conversation",
                (bot, chat, conversation),
            )

    def close(self) -> None:
        self._conn.close()
