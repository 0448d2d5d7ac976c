"""Where the vectors live: the ``vectors`` and ``embedding_models`` tables of the index file,
through a connection of their own (WAL lets it write beside the index's worker). Used from
worker threads; one lock serialises its calls."""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Final

from llm_service import lazy
from plugin_bridge.vault.chunks import embed_text
from plugin_bridge.vault.lexical.reader import IndexReader
from plugin_bridge.vault.schema import connect
from plugin_bridge.vault.semantic.vectors import ExactVectorIndex

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
else:
    np = lazy.module("numpy")

logger = logging.getLogger(__name__)

LOAD_ROWS: Final = 4096
ORPHANS_KEPT: Final = 1000
"""Vectors of chunks gone are kept at least up to this many (see ``finish``)."""


class VectorStore:
    """The stored vectors of every model, in the index file at ``db_path``."""

    def __init__(self, db_path: Path) -> None:
        self.db_path = db_path
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.Lock()

    def open(self) -> None:
        with self._lock:
            if self._conn is None:
                self._conn = connect(str(self.db_path))
                # appends and one sequential read: the writer's 32 MB page cache buys nothing
                self._conn.execute("PRAGMA cache_size=-4096")

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    @contextmanager
    def _db(self, *, write: bool = False) -> Iterator[sqlite3.Connection]:
        """The connection, locked; with ``write``, inside one transaction."""
        with self._lock:
            if self._conn is None:
                raise RuntimeError("Open the VectorStore (SemanticIndex.start) first.")
            if not write:
                yield self._conn
                return
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    def load(self, model: str) -> ExactVectorIndex | None:
        """The stored vectors of ``model``, read in pieces into one preallocated half-precision
        matrix (the exact index's own: no float32 copy of them all is ever held)."""
        with self._db() as conn:
            info = conn.execute(
                "SELECT dims FROM embedding_models WHERE model = ?", (model,)
            ).fetchone()
            count = conn.execute(
                "SELECT count(*) FROM vectors WHERE model = ?", (model,)
            ).fetchone()[0]
            if info is None or count == 0:
                return None
            dims = int(info[0])
            matrix = np.empty((count, dims), dtype=np.float16)
            keys: list[str] = []
            cursor = conn.execute(  # a table scan reads the file in order; the index would not
                "SELECT hash, vector FROM vectors NOT INDEXED WHERE model = ?", (model,)
            )
            while rows := cursor.fetchmany(LOAD_ROWS):
                start = len(keys)
                keys += [row[0] for row in rows]
                blob = b"".join(row[1] for row in rows)
                matrix[start : len(keys)] = np.frombuffer(blob, dtype="<f4").reshape(-1, dims)
        index = ExactVectorIndex(dims)
        index.add(keys, matrix[: len(keys)])
        logger.info("Loaded %d vectors of %s.", len(keys), model)
        return index

    def pending(self, model: str) -> list[str]:
        """The chunk hashes without a vector of ``model``, in note order."""
        with self._db() as conn:
            rows = conn.execute(
                "SELECT c.hash FROM chunks c WHERE NOT EXISTS "
                "(SELECT 1 FROM vectors v WHERE v.model = ? AND v.hash = c.hash) "
                "GROUP BY c.hash ORDER BY min(c.id)",
                (model,),
            ).fetchall()
        return [row[0] for row in rows]

    def texts(self, hashes: Sequence[str]) -> list[tuple[str, str]]:
        """(hash, text to embed) of the chunks with these hashes that still exist."""
        with self._db() as conn:
            rows = IndexReader(conn).chunk_texts(hashes)
        return [(key, embed_text(title, heading, text)) for key, title, heading, text in rows]

    def add(self, model: str, hashes: list[str], vectors: npt.NDArray[np.float32]) -> None:
        dims = int(vectors.shape[1])
        rows = [
            (model, key, np.asarray(v, dtype="<f4").tobytes())
            for key, v in zip(hashes, vectors, strict=True)
        ]
        with self._db(write=True) as conn:
            known = conn.execute(
                "SELECT dims FROM embedding_models WHERE model = ?", (model,)
            ).fetchone()
            if known is not None and int(known[0]) != dims:  # same name, new width: start over
                conn.execute("DELETE FROM vectors WHERE model = ?", (model,))
            conn.execute(
                "INSERT INTO embedding_models (model, dims, complete, updated_at) "
                "VALUES (?, ?, 0, strftime('%Y-%m-%dT%H:%M:%SZ', 'now')) "
                "ON CONFLICT (model) DO UPDATE SET dims = excluded.dims, "
                "updated_at = excluded.updated_at",
                (model, dims),
            )
            conn.executemany(
                "INSERT OR REPLACE INTO vectors (model, hash, vector) VALUES (?, ?, ?)", rows
            )

    def finish(self, model: str, *, drop_orphans: bool) -> list[str]:
        """Mark ``model`` complete and drop every other model's vectors; return the hashes of
        ``model`` dropped because their chunks are gone. Those are kept (a note moved in two
        steps, or deleted and synced back, needs them again) unless ``drop_orphans`` (the first
        pass after a start) or they are over a tenth of all and ``ORPHANS_KEPT``."""
        with self._db(write=True) as conn:
            orphans = [
                row[0]
                for row in conn.execute(
                    "SELECT hash FROM vectors WHERE model = ? "
                    "AND hash NOT IN (SELECT hash FROM chunks)",
                    (model,),
                )
            ]
            total = conn.execute(
                "SELECT count(*) FROM vectors WHERE model = ?", (model,)
            ).fetchone()[0]
            if not drop_orphans and len(orphans) <= max(ORPHANS_KEPT, total // 10):
                orphans = []
            conn.executemany(
                "DELETE FROM vectors WHERE model = ? AND hash = ?",
                [(model, key) for key in orphans],
            )
            others = conn.execute(
                "SELECT model FROM embedding_models WHERE model != ?", (model,)
            ).fetchall()
            for (other,) in others:  # a switched-from model: its vectors go now
                conn.execute("DELETE FROM vectors WHERE model = ?", (other,))
                conn.execute("DELETE FROM embedding_models WHERE model = ?", (other,))
            conn.execute("UPDATE embedding_models SET complete = 1 WHERE model = ?", (model,))
        return orphans
