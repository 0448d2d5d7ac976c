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

import unicodedata
from collections.abc import Mapping, Sequence
from typing import Final, Literal, TypeVar

from plugin_bridge.vault.lexical.cjk import CJK_RUN

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
    counts: dict[Script, int] = {"latin": 0, "cyrillic": 0, "cjk": 0}
    counts["cjk"] = sum(len(run) for run in CJK_RUN.findall(sample))
    for char in sample:
        if char.isalpha() and char.isascii():
            counts["latin"] += 1
        elif "\u0400" <= char <= "\u04ff":
            counts["cyrillic"] += 1
        elif char.isalpha() and unicodedata.name(char, "").startswith("LATIN"):
            counts["latin"] += 1
    return counts


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
