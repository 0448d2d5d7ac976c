"""Typos: a query word that matches nothing is matched to the vault's own words.

The vocabulary is FTS5's (``notes_vocab``, an ``fts5vocab`` table over ``notes_fts``): every
indexed word with the number of notes that hold it, stem tokens left out. It is read on the
first typo and again, at most every :data:`RELOAD_SECONDS`, after notes changed. Candidates are
the words within an optimal-string-alignment distance (a swap of two neighbours counts once:
"hotkyes" → "hotkeys") of 1, or 2 for words of 8 letters or more, found with RapidFuzz among
the words of those lengths only; the closest, then the most common, win. Answers are kept until
the vocabulary is read again, so a search repeated while a new word is being indexed costs
nothing.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from typing import TYPE_CHECKING, Final

from llm_service import lazy
from plugin_bridge.vault.lexical.words import STEM_MARKS, fold

if TYPE_CHECKING:
    from rapidfuzz import distance as rapidfuzz_distance
    from rapidfuzz import process as rapidfuzz_process
else:
    rapidfuzz_distance = lazy.module("rapidfuzz.distance")
    rapidfuzz_process = lazy.module("rapidfuzz.process")

MIN_LENGTH: Final = 4
"""Shorter words are not corrected (too many neighbours)."""
LONG: Final = 8
"""Words this long may be two edits away."""
MAX_CORRECTIONS: Final = 3
RELOAD_SECONDS: Final = 30.0
MAX_WORD: Final = 40
MAX_ANSWERS: Final = 1000


class Vocabulary:
    """The index's words, for typo corrections; thread-safe."""

    def __init__(self) -> None:
        self._by_length: dict[int, tuple[list[str], list[int]]] = {}
        """Words by length, each with the number of notes holding it."""
        self._answers: dict[str, tuple[str, ...]] = {}
        """Corrections already found since the vocabulary was read (a word typed again, a
        search repeated while a new note is being indexed, cost nothing)."""
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
        with self._lock:
            self._refresh(conn)
            known = self._answers.get(word)
            if known is not None:
                return known
            found = self._closest(fold(word))
            if len(self._answers) >= MAX_ANSWERS:
                self._answers.pop(next(iter(self._answers)))
            self._answers[word] = found
            return found

    def _closest(self, word: str) -> tuple[str, ...]:
        """Words at most 1 (2 from 8 letters on) edits away: only lengths that close are
        compared."""
        limit = 1 if len(word) < LONG else 2
        found: list[tuple[int, int, str]] = []
        for length in range(len(word) - limit, len(word) + limit + 1):
            words, notes = self._by_length.get(length, ([], []))
            for match, distance, i in rapidfuzz_process.extract(
                word, words, scorer=rapidfuzz_distance.OSA.distance, score_cutoff=limit, limit=20
            ):
                found.append((int(distance), -notes[i], match))
        return tuple(match for _, _, match in sorted(found)[:MAX_CORRECTIONS])

    def _refresh(self, conn: sqlite3.Connection) -> None:
        now = time.monotonic()
        if self._loaded_at is not None and (
            not self._stale or now - self._loaded_at < RELOAD_SECONDS
        ):
            return
        self._stale = False
        by_length: dict[int, tuple[list[str], list[int]]] = {}
        for term, count in conn.execute("SELECT term, doc FROM notes_vocab"):
            usable = MIN_LENGTH - 1 <= len(term) <= MAX_WORD and not term.isdigit()
            if usable and term[-1] not in STEM_MARKS:
                words, notes = by_length.setdefault(len(term), ([], []))
                words.append(term)
                notes.append(int(count))
        self._by_length, self._answers, self._loaded_at = by_length, {}, now
