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
from functools import cache
from typing import TYPE_CHECKING, Any, Final

from llm_service import lazy

if TYPE_CHECKING:
    import numpy as np
else:
    np = lazy.module("numpy")

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


TABLE_FROM: Final = 2000
"""Characters from which a text is read through a table of code points (its tokens in
``words.py``, its bigrams here): below, numpy's calls cost more than the regex."""
_BMP: Final = 0x10000


def code_points(text: str) -> Any:
    """``text``'s code points as a numpy array, or None when one is beyond the Basic
    Multilingual Plane (CJK extensions B-H, emoji), which :func:`bmp_table` does not cover."""
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), np.uint32)
    return codes if int(codes.max()) < _BMP else None


@cache
def bmp_table(pattern: re.Pattern[str]) -> Any:
    """Whether each character of the Basic Multilingual Plane is one that ``pattern`` (a
    character class, repeated) matches: numpy booleans by code point, surrogates False."""
    table = np.zeros(_BMP, dtype=bool)
    every = "\n".join(chr(c) for c in range(_BMP) if not 0xD800 <= c < 0xE000)
    table[[ord(c) for c in "".join(pattern.findall(every))]] = True
    return table


def bigrams(text: str) -> str:
    """The CJK runs of ``text`` as bigram tokens, one run per line: what the side table
    stores for a note ("" when it has none)."""
    if len(text) >= TABLE_FROM:
        codes = code_points(text)
        if codes is not None:  # else beyond the table (CJK extensions B-H): the regex
            return _bigrams_of(codes)
    return "\n".join(
        " ".join(map(str.__add__, run, run[1:])) + " " + run[-1] for run in CJK_RUN.findall(text)
    )


def _bigrams_of(codes: Any) -> str:
    """:func:`bigrams` of a text given as its code points (all in the table): each CJK
    character that a CJK character follows gives "ab ", the last of a run "b\n", and a
    run of one character " a\n" (as the regex's join does)."""
    at = np.flatnonzero(bmp_table(CJK_RUN)[codes])
    if not at.size:
        return ""
    chars = codes[at]
    joined = np.zeros(at.size, dtype=bool)  # the next character is the run's too
    joined[:-1] = at[1:] == at[:-1] + 1
    first = np.ones(at.size, dtype=bool)
    first[1:] = ~joined[:-1]
    alone = first & ~joined
    sizes = np.where(joined | alone, 3, 2)
    starts = np.cumsum(sizes) - sizes
    out = np.empty(int(sizes.sum()), dtype=np.uint32)
    pair = starts[joined]
    out[pair], out[pair + 1], out[pair + 2] = chars[joined], chars[1:][joined[:-1]], 32
    last = starts[~joined & ~alone]
    out[last], out[last + 1] = chars[~joined & ~alone], 10
    one = starts[alone]
    out[one], out[one + 1], out[one + 2] = 32, chars[alone], 10
    return str(out[:-1].tobytes().decode("utf-32-le"))


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
