"""The language guard of vector search: which writing system a text is in, and the notes found
by vectors put in the query's own script first.

An embedder that does not know a script maps its texts close together and close to anything
short: with all-MiniLM-L6-v2, "how do I make bread" had a Chinese note as its nearest (issue
41). Across scripts (Latin, Cyrillic, CJK) a query and a note share no words, so a note in
another script is found by the vectors alone, which is exactly where that noise lives. The
vectors' notes written at least a fifth in the query's script (by letters: a Chinese note that
names "Obsidian Sync" is still Chinese) therefore rank before the others; the order inside
each group is the vectors' own, and a vault in one script is ranked as before. A multilingual
embedder loses little: a note in another script still follows when the query's script has too
few.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Final, Literal, TypeVar

from plugin_bridge.vault.lexical.cjk import CJK_CHARS, CJK_RUN

Script = Literal["latin", "cyrillic", "cjk"]
SAMPLE_CHARS: Final = 400
"""Characters of a text looked at (a chunk's start says its script)."""
MIN_SHARE: Final = 0.2
"""Share of a note's letters in the query's script from which it counts as written in it (a
Chinese vocabulary list full of pinyin and English glosses is still a Chinese note)."""
V = TypeVar("V")


def _letters(text: str) -> dict[Script, int]:
    """How many letters of ``text`` (its first :data:`SAMPLE_CHARS`) are in each script."""
    sample = text[:SAMPLE_CHARS]
    latin = len(_NOT_ASCII_LETTER.sub("", sample))  # counted by the regex engine: a loop
    for char in _OTHER.findall(sample):  # over every character was 2-4 ms of a hybrid search
        if char.isalpha() and unicodedata.name(char, "").startswith("LATIN"):
            latin += 1
    return {
        "latin": latin,
        "cyrillic": len(_NOT_CYRILLIC.sub("", sample)),
        "cjk": sum(len(run) for run in CJK_RUN.findall(sample)),
    }


_NOT_ASCII_LETTER: Final = re.compile("[^A-Za-z]+")
_NOT_CYRILLIC: Final = re.compile("[^\u0400-\u04ff]+")
_OTHER: Final = re.compile(f"[^\\x00-\\x7f\u0400-\u04ff{CJK_CHARS}]")
"""Characters that are none of those (a few accented Latin letters, punctuation)."""


def script_of(text: str) -> Script | None:
    """The script most of the letters of ``text`` are in (None when it has none)."""
    counts = _letters(text)
    best = max(counts.values())
    if best == 0:
        return None
    return next(script for script, count in counts.items() if count == best)


def share_of(text: str, script: Script) -> float | None:
    """The share of the letters of ``text`` in ``script`` (None when it has no letters)."""
    counts = _letters(text)
    total = sum(counts.values())
    return counts[script] / total if total else None


def same_script_first(
    query: str, notes: Mapping[str, V], text: Sequence[str], lexical: frozenset[str] = frozenset()
) -> dict[str, V]:
    """``notes`` (path → value, best first; ``text[i]`` is the i-th note's text) reordered so
    that those written at least :data:`MIN_SHARE` in the script of ``query`` come first (and
    those in ``lexical``, whose words matched); unchanged when the query has no letters."""
    wanted = script_of(query)
    if wanted is None:
        return dict(notes)
    first: dict[str, V] = {}
    later: dict[str, V] = {}
    for (path, value), body in zip(notes.items(), text, strict=True):
        share = share_of(body, wanted)
        keep = share is None or share >= MIN_SHARE or path in lexical
        (first if keep else later)[path] = value
    return first | later
