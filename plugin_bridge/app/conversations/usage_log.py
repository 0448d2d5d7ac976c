"""The usage log: every provider call (time, conversation, purpose, model, tokens, cost), which
``usage/summary`` sums and the budgets are held against; in its own SQLite file,
``usage.sqlite3`` in the data dir, so that a damaged conversation store never takes it along.

Its connection is the :data:`USAGE` door's alone (:class:`~llm_service.door.BlockingStore`): a
provider call's row is posted there (:meth:`UsageLog.post`, in the order the calls completed),
and every read goes there too, after the rows posted before it, so a budget check or
``usage/summary`` asked after a call sees it; the event loop never runs SQLite, and no lock
is shared with a worker thread.

It used to be a table of ``conversations.sqlite3``: the named migration
``002_rows_from_conversations`` copies those rows once (the old table is left as it was). When
they cannot be read the log says budgets start from zero.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

from llm_service.door import BlockingStore, Door
from plugin_bridge.vault.datadir import private_folder
from plugin_bridge.vault.schema import open_store

if TYPE_CHECKING:
    from llm_service.messages import Usage

logger = logging.getLogger(__name__)

USAGE: Final = Door("usage-log")
"""The usage logs' door: one thread, so each log's rows are written and read in order."""
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
    """The provider calls of one vault, in ``<data dir>/usage.sqlite3``. Its methods block and
    run on the :data:`USAGE` door: async code posts rows (:meth:`post`) and reads through
    ``execute``."""

    door = USAGE

    def __init__(self, data_dir: Path) -> None:
        private_folder(data_dir)
        self._conn = open_store(
            data_dir / USAGE_FILE, USAGE_MIGRATIONS, afresh="budgets start from zero"
        )
        self._move_old_rows(data_dir / OLD_USAGE_FILE)
        self._spent: dict[float, float] = {}
        """USD spent since each start asked for (:meth:`spent`), kept up to date by
        :meth:`record`; the door's thread alone touches it."""
        self._version: int | None = None
        """SQLite's ``data_version`` when ``_spent`` was filled: another connection's commit
        changes it, and the totals are summed again."""

    def post(
        self,
        conversation_id: str | None,
        purpose: str,
        provider: str,
        model: str,
        usage: Usage,
        cost_usd: float | None,
        client: str,
    ) -> None:
        """Queue :meth:`record` of one provider call, made now, on the door and return at once
        (from any thread: the loop, a door's); whatever reads the log afterwards sees it. A
        row that cannot be written is logged."""
        at = time.time()

        def write() -> None:
            try:
                self.record(conversation_id, purpose, provider, model, usage, cost_usd, client, at)
            except sqlite3.Error as exc:
                logger.error(
                    "a %s call of %s was not recorded in the usage log (%s)", purpose, model, exc
                )

        USAGE.post(write)

    def record(
        self,
        conversation_id: str | None,
        purpose: str,
        provider: str,
        model: str,
        usage: Usage,
        cost_usd: float | None,
        client: str = "owner",
        at: float | None = None,
    ) -> None:
        """Log one provider call (``client``: who asked, ``owner`` or ``key:NAME``; ``at``: when,
        default now), committed when it returns."""
        at = time.time() if at is None else at
        self._conn.execute(
            f"INSERT INTO usage ({COLUMNS}, client) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                at,
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
        for since in self._spent:
            if cost_usd is not None and at >= since:
                self._spent[since] += cost_usd

    def by_model(self, since: float, client: str | None = None) -> list[ModelUsage]:
        """Calls since ``since`` (Unix seconds) per provider and model, most expensive first
        (``client``: only that client's calls)."""
        rows = self._conn.execute(
            "SELECT provider, model, COUNT(*), SUM(input_tokens), SUM(output_tokens), "
            "SUM(cache_read_tokens), SUM(cache_write_tokens), SUM(cost_usd), "
            "SUM(cost_usd IS NULL) FROM usage WHERE time >= ? AND (? IS NULL OR client = ?) "
            "GROUP BY provider, model ORDER BY SUM(cost_usd) DESC, provider, model",
            (since, client, client),
        ).fetchall()
        return [ModelUsage(*row) for row in rows]

    def spent(self, since: float) -> float:
        """USD spent on priced calls since ``since`` (Unix seconds): summed once per start (a
        day's, a month's), then kept up to date by :meth:`record`, and summed again after
        another connection (another process) wrote."""
        (version,) = self._conn.execute("PRAGMA data_version").fetchone()
        if version != self._version or (since not in self._spent and len(self._spent) >= 4):
            self._spent, self._version = {}, version  # a new day or month drops the old ones
        if since not in self._spent:
            self._spent[since] = sum(row.cost_usd or 0.0 for row in self.by_model(since))
        return self._spent[since]

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
