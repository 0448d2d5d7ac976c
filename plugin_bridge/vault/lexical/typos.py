"""Typos: a query word that matches nothing is matched to the vault's own words.

The vocabulary is FTS5's (``notes_vocab``, an ``fts5vocab`` table over ``notes_fts``): every
indexed word with the number of notes that hold it, stem tokens left out. It is read on the
first typo and again, at most every :data:`RELOAD_SECONDS`, after notes changed. Candidates are
the words within an optimal-string-alignment distance (a swap of two neighbours counts once:
"hotkyes" → "hotkeys") of 1, or 2 for words of 8 letters or more, found with RapidFuzz over the
whole list (C++, ~10 ms for 100,000 words); the closest, then the most common, win.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from typing import Final

from plugin_bridge.vault.lexical.words import STEM_MARKS, fold

MIN_LENGTH: Final = 4
"""Shorter words are not corrected (too many neighbours)."""
LONG: Final = 8
"""Words this long may be two edits away."""
MAX_CORRECTIONS: Final = 3
RELOAD_SECONDS: Final = 30.0
MAX_WORD: Final = 40


class Vocabulary:
    """The index's words, for typo corrections; thread-safe."""

    def __init__(self) -> None:
        self._words: list[str] = []
        self._notes: list[int] = []
        self._loaded_at: float | None = None
        self._stale = True
        self._lock = threading.Lock()

    def changed(self) -> None:
        """Notes changed: read the vocabulary again when next needed (rate-limited)."""
        self._stale = True

    def corrections(self, conn: sqlite3.Connection, word: str) -> tuple[str, ...]:
        """Vault words close to ``word`` (a word that matches nothing), best first."""
        if len(word) < MIN_LENGTH or word.isdigit():
            return ()
        from rapidfuzz import process
        from rapidfuzz.distance import OSA

        with self._lock:
            self._refresh(conn)
            words, notes = self._words, self._notes
        limit = 1 if len(word) < LONG else 2
        found = process.extract(
            fold(word), words, scorer=OSA.distance, score_cutoff=limit, limit=50
        )
        found.sort(key=lambda match: (match[1], -notes[match[2]], match[0]))
        return tuple(match[0] for match in found[:MAX_CORRECTIONS])

    def _refresh(self, conn: sqlite3.Connection) -> None:
        now = time.monotonic()
        if self._loaded_at is not None and (
            not self._stale or now - self._loaded_at < RELOAD_SECONDS
        ):
            return
        self._stale = False
        words: list[str] = []
        notes: list[int] = []
        for term, count in conn.execute("SELECT term, doc FROM notes_vocab"):
            usable = MIN_LENGTH - 1 <= len(term) <= MAX_WORD and not term.isdigit()
            if usable and term[-1] not in STEM_MARKS:
                words.append(term)
                notes.append(int(count))
        self._words, self._notes, self._loaded_at = words, notes, now
