"""The usage log: every provider call (time, conversation, purpose, model, tokens, cost), which
``usage/summary`` sums and the budgets are held against; in its own SQLite file,
``usage.sqlite3`` in the data dir, so that a damaged conversation store never takes it along.

It used to be a table of ``conversations.sqlite3``: the named migration
``002_rows_from_conversations`` copies those rows once (the old table is left as it was). When
they cannot be read the log says budgets start from zero.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

from llm_service.door import BlockingStore
from plugin_bridge.vault.datadir import private_folder
from plugin_bridge.vault.schema import open_store

if TYPE_CHECKING:
    from llm_service.messages import Usage

logger = logging.getLogger(__name__)

USAGE_FILE: Final = "usage.sqlite3"
OLD_USAGE_FILE: Final = "conversations.sqlite3"
MOVED: Final = "002_rows_from_conversations"
COLUMNS: Final = (
    "time, conversation, purpose, model, input_tokens, output_tokens, cache_read_tokens, "
    "cache_write_tokens, cost_usd, provider"
)
USAGE_MIGRATIONS: Final[tuple[tuple[str, str], ...]] = (
    (
        # Every provider call; cost NULL = price unknown; provider "" when not known.
        "001_usage",
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
            cost_usd REAL,
            provider TEXT NOT NULL DEFAULT ''
        );
        CREATE INDEX usage_by_time ON usage(time);
        """,
    ),
    (
        # Who made the call: "owner" (the info file's token) or "key:NAME" (a client key).
        "003_client",
        "ALTER TABLE usage ADD COLUMN client TEXT NOT NULL DEFAULT 'owner';",
    ),
)


@dataclass(frozen=True)
class ModelUsage:
    """One provider's model's calls over a period; ``cost_usd`` sums the priced ones (None: no
    call had a known price), ``unpriced_calls`` counts the others."""

    provider: str
    """"" for calls recorded before providers were (or by a provider without a name)."""
    model: str
    calls: int
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    cost_usd: float | None
    unpriced_calls: int


class UsageLog(BlockingStore):
    """The provider calls of one vault, in ``<data dir>/usage.sqlite3``."""

    def __init__(self, data_dir: Path) -> None:
        private_folder(data_dir)
        self._conn = open_store(
            data_dir / USAGE_FILE, USAGE_MIGRATIONS, afresh="budgets start from zero"
        )
        self._lock = threading.Lock()
        self._move_old_rows(data_dir / OLD_USAGE_FILE)

    def record(
        self,
        conversation_id: str | None,
        purpose: str,
        provider: str,
        model: str,
        usage: Usage,
        cost_usd: float | None,
        client: str = "owner",
    ) -> None:
        """Log one provider call (``client``: who asked, ``owner`` or ``key:NAME``)."""
        with self._lock:
            self._conn.execute(
                f"INSERT INTO usage ({COLUMNS}, client) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    time.time(),
                    conversation_id,
                    purpose,
                    model,
                    usage.input_tokens,
                    usage.output_tokens,
                    usage.cache_read_tokens,
                    usage.cache_write_tokens,
                    cost_usd,
                    provider,
                    client,
                ),
            )

    def by_model(self, since: float, client: str | None = None) -> list[ModelUsage]:
        """Calls since ``since`` (Unix seconds) per provider and model, most expensive first
        (``client``: only that client's calls)."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT provider, model, COUNT(*), SUM(input_tokens), SUM(output_tokens), "
                "SUM(cache_read_tokens), SUM(cache_write_tokens), SUM(cost_usd), "
                "SUM(cost_usd IS NULL) FROM usage WHERE time >= ? AND (? IS NULL OR client = ?) "
                "GROUP BY provider, model ORDER BY SUM(cost_usd) DESC, provider, model",
                (since, client, client),
            ).fetchall()
        return [ModelUsage(*row) for row in rows]

    def close(self) -> None:
        self._conn.close()

    def _move_old_rows(self, old: Path) -> None:
        """The migration ``002_rows_from_conversations``: once, copy the rows of the usage
        table that ``conversations.sqlite3`` used to hold."""
        conn = self._conn
        if conn.execute("SELECT 1 FROM migrations WHERE name = ?", (MOVED,)).fetchone():
            return
        moved = 0
        if old.exists():
            try:
                moved = _copy_rows(conn, old)
            except sqlite3.DatabaseError as exc:
                logger.warning(
                    "The usage log in %s cannot be read (%s): budgets start from zero.", old, exc
                )
        conn.execute(
            "INSERT INTO migrations VALUES (?, strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))", (MOVED,)
        )
        if moved:
            logger.info("Moved %d usage records from %s to %s.", moved, old.name, USAGE_FILE)


def _copy_rows(conn: sqlite3.Connection, old: Path) -> int:
    """Copy the usage rows of the database at ``old`` into ``conn``'s; how many."""
    source = sqlite3.connect(f"file:{old}?mode=ro", uri=True)
    try:
        columns = {row[1] for row in source.execute("PRAGMA table_info(usage)")}
        wanted = COLUMNS if "provider" in columns else COLUMNS.replace("provider", "''")
        rows = source.execute(f"SELECT {wanted} FROM usage").fetchall() if columns else []
    finally:
        source.close()
    conn.execute("BEGIN IMMEDIATE")
    conn.executemany(f"INSERT INTO usage ({COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    conn.execute("COMMIT")
    return len(rows)
