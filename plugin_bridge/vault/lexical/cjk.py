"""Chinese, Japanese and Korean text: find its runs, index them as bigrams, cut snippets.

unicode61 makes a whole CJK run (a sentence without spaces) one token, so a word inside it
cannot be found. The index keeps a side table fed only the CJK runs of each note (not whole
bodies), split into overlapping two-character tokens: ``東京都`` → ``東京 京都 都`` (the last
character alone ends each run). A term of two or more characters is then the phrase of its
bigrams, and a one-character term the prefix query ``"x"*``, all answered from the FTS5 index.

Why bigrams and not FTS5's trigram tokenizer: a trigram index cannot answer one- and
two-character words (the most common length of CJK words), and the ``instr`` scan that would
answer them instead took ~50 ms over the CJK runs of a 10,000-note vault; a bigram phrase takes
1-3 ms, at a similar indexing cost.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

CJK_CHARS: Final = (
    "\u1100-\u11ff"  # Hangul Jamo
    "\u3005-\u3007"  # 々 〆 〇
    "\u3040-\u30ff"  # Hiragana, Katakana
    "\u3130-\u318f"  # Hangul compatibility Jamo
    "\u31f0-\u31ff"  # Katakana phonetic extensions
    "\u3400-\u4dbf"  # CJK extension A
    "\u4e00-\u9fff"  # CJK unified ideographs
    "\ua960-\ua97f"  # Hangul Jamo extended A
    "\uac00-\ud7af"  # Hangul syllables
    "\uf900-\ufaff"  # CJK compatibility ideographs
    "\uff66-\uff9f"  # half-width Katakana
    "\U00020000-\U0003134f"  # CJK extensions B-H
)
CJK_RUN: Final = re.compile(f"[{CJK_CHARS}]+")


def bigrams(text: str) -> str:
    """The CJK runs of ``text`` as bigram tokens, one run per line: what the side table
    stores for a note ("" when it has none)."""
    return "\n".join(
        " ".join(map(str.__add__, run, run[1:])) + " " + run[-1] for run in CJK_RUN.findall(text)
    )


def bigram_list(term: str) -> list[str]:
    """The overlapping two-character pieces of a CJK run (``東京都`` → ``東京``, ``京都``)."""
    return [term[i : i + 2] for i in range(len(term) - 1)]


def match_term(term: str) -> str:
    """The FTS5 expression that finds the CJK run ``term`` in the side table."""
    if len(term) == 1:
        return f'"{term}"*'
    return '"' + " ".join(map(str.__add__, term, term[1:])) + '"'


def split_cjk(text: str) -> tuple[list[str], str]:
    """The CJK runs of ``text`` and the rest of it, with each run replaced by a space."""
    return CJK_RUN.findall(text), CJK_RUN.sub(" ", text)


def highlight(text: str, terms: Sequence[str]) -> str:
    """``text`` with every occurrence of ``terms`` (longest first) wrapped in ``**``."""
    wanted = sorted({t for t in terms if t}, key=len, reverse=True)
    if not wanted:
        return text
    pattern = re.compile("|".join(map(re.escape, wanted)))
    return pattern.sub(lambda m: f"**{m.group(0)}**", text)


def snippet_around(text: str, terms: Sequence[str], width: int = 40) -> str:
    """About ``3 * width`` characters of ``text`` around the first of ``terms``, highlighted."""
    found = [i for i in (text.find(t) for t in terms if t) if i >= 0]
    at = min(found, default=0)
    start = max(0, at - width)
    end = min(len(text), at + 2 * width)
    piece = " ".join(text[start:end].split())
    return ("…" if start else "") + highlight(piece, terms) + ("…" if end < len(text) else "")
