"""Words as the full-text index sees them: tokens, stop words, Snowball stems, a note's language.

- **Tokens** follow FTS5's ``unicode61`` tokenizer closely enough to agree with it: runs of
  letters and digits, lower-cased (CJK runs are the bigram side table's, see ``cjk.py``). A
  long text's characters are classified by numpy through a table built from the same regex
  (every other character becomes a space, then ``str.split``): the regex costs ~20 ns a
  character, a third of a note's preparing; the table the same tokens in two thirds of the time.
- **Stems** come from the Snowball stemmers through PyStemmer (C; ~80x faster than the pure
  Python ``snowballstemmer`` on the help vault's 104,000 words: 0.02 s against 1.8 s, the same
  stems). A note's Latin-script words are stemmed with its language's stemmer, its Cyrillic
  words with the Russian one; the stems go to the index's stem columns beside the words, so an
  exact word still ranks first (it matches both).
- **Stems are tagged with their language** (a private-use character after the stem, which
  ``unicode61`` keeps inside the token): the French stem of "note" is "not", which must not
  find English notes that say "not".
- **A note's language** is the Latin-script language among :data:`LANGUAGES` whose stop words
  it uses most (English when none): cheap, and right for whole notes. A *query* is too short for
  that, so its words are expanded to the stems of every language (usually 1-3 distinct stems).
- **Stop words** come from the ``stopwords`` package (the classic short lists of 42 languages:
  English 175 words, German 129). ``stop-words`` and ``stopwordsiso`` were measured too and
  dropped: their English lists have grown to ~1,300 words, among them "help", "home", "new",
  "show", "use", "first" and "information", words users search notes for. A query drops the
  stop words of the language whose stop words it uses most, and the question words its list
  lacks (:data:`QUESTION_WORDS`); a query of stop words alone keeps them all.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from functools import cache
from typing import TYPE_CHECKING, Final

from llm_service import lazy
from plugin_bridge.vault.lexical.cjk import CJK_CHARS, TABLE_FROM, bmp_table, code_points

if TYPE_CHECKING:
    import numpy as np
    import Stemmer
    import stopwords
else:
    np = lazy.module("numpy")
    Stemmer = lazy.module("Stemmer")
    stopwords = lazy.module("stopwords")

LATIN: Final = ("english", "german", "french", "spanish", "italian", "portuguese", "dutch")
"""Latin-script languages a note can be detected as (stemmed and stop-worded as such)."""
CYRILLIC: Final = "russian"
LANGUAGES: Final = (*LATIN, CYRILLIC)
DETECT_TOKENS: Final = 200
"""Tokens of a note looked at to choose its language."""
MIN_STEM_LENGTH: Final = 3
"""Shorter words are not stemmed ("is", "an", ...)."""
STEM_CACHE: Final = 100_000
"""Words whose stem is remembered, every note language together (about 15 MB; forgotten all
at once when full)."""

QUESTION_WORDS: Final = {
    "english": frozenset({"can"}),
    "russian": frozenset({"какие", "какое", "какую", "каком", "каким", "каких", "какими"}),
}
"""Question words the stop word lists lack, dropped from queries only: English "can" ("How
can I…", "…I can tick off"); the Russian list holds "какой" and "какая" but not the other
forms of "which" ("Как увидеть, какие заметки…")."""
_TOKEN: Final = re.compile(f"[^\\W_{CJK_CHARS}]+")
_MARKS: Final = {language: chr(0xE000 + i) for i, language in enumerate(LANGUAGES)}
STEM_MARKS: Final = frozenset(_MARKS.values())
"""The characters that end a stem token (never in a word of a note)."""


def tokens(text: str) -> list[str]:
    """Lower-case words and numbers of ``text`` outside its CJK runs."""
    lower = text.lower()
    if len(lower) < TABLE_FROM:
        return _TOKEN.findall(lower)
    codes = code_points(lower)
    if codes is None:  # beyond the table: CJK extensions, emoji
        return _TOKEN.findall(lower)
    spaced = np.where(bmp_table(_TOKEN)[codes], codes, np.uint32(32)).astype(np.uint32)
    return spaced.tobytes().decode("utf-32-le").split()


def fold(word: str) -> str:
    """``word`` without diacritics, as ``unicode61 remove_diacritics 2`` indexes it."""
    if word.isascii():
        return word
    stripped = "".join(
        c for c in unicodedata.normalize("NFD", word) if not unicodedata.combining(c)
    )
    return unicodedata.normalize("NFC", stripped)


def is_cyrillic(word: str) -> bool:
    return "\u0400" <= word[0] <= "\u04ff"


@cache
def stemmer(language: str) -> Stemmer.Stemmer:
    return Stemmer.Stemmer(language)


@cache
def stop_words(language: str) -> frozenset[str]:
    return frozenset(w for w in stopwords.get_stopwords(language) if w)


def language_of(words: Sequence[str]) -> str | None:
    """The language whose stop words ``words`` use most (None when they use none)."""
    counts = _stop_counts(words)
    best = max(counts)
    return LANGUAGES[counts.index(best)] if best else None


def note_language(words: Sequence[str]) -> str:
    """The Latin-script language to stem a note's Latin words with (English when unsure)."""
    counts = _stop_counts(words)[: len(LATIN)]  # no Latin stop word is Cyrillic
    best = max(counts)
    return LATIN[counts.index(best)] if best else "english"


def _stop_counts(words: Sequence[str]) -> list[int]:
    """How many of the first :data:`DETECT_TOKENS` of ``words`` are stop words of each of
    :data:`LANGUAGES`, in its order."""
    sample = Counter(words[:DETECT_TOKENS])
    languages = _stop_languages()
    counts = [0] * len(LANGUAGES)
    for word in sample.keys() & languages.keys():
        for i in languages[word]:
            counts[i] += sample[word]
    return counts


@cache
def _stop_languages() -> dict[str, tuple[int, ...]]:
    """Every stop word and the places in :data:`LANGUAGES` of the languages it is one of."""
    found: dict[str, tuple[int, ...]] = {}
    for i, language in enumerate(LANGUAGES):
        for word in stop_words(language):
            found[word] = (*found.get(word, ()), i)
    return found


def note_stems(words: Iterable[str], language: str) -> str:
    """The distinct stems of ``words``, space-separated: what a note's stem columns hold.

    A note of ``language`` stems its Latin-script words with that language's stemmer and its
    Cyrillic words with the Russian one; each word's marked stem is remembered per note
    language (:data:`STEM_CACHE` words at most over all of them), since notes repeat most of
    their words: preparing the 10,000 notes of ``bench/search.py --serve`` spent a sixth of its
    time here."""
    distinct = set(words)
    known = _known_stems(language)
    found = set(map(known.get, distinct))
    if None in found:
        found.update(
            _learn_stems(known, [word for word in distinct if word not in known], language)
        )
    return " ".join(filter(None, found))  # None: learnt just now; "": a word not stemmed


_known: dict[str, dict[str, str]] = {}


def _known_stems(language: str) -> dict[str, str]:
    """Words seen in notes of ``language`` → their marked stem ("" for a word not stemmed)."""
    return _known.setdefault(language, {})


def _learn_stems(known: dict[str, str], words: list[str], language: str) -> list[str]:
    """The marked stems of ``words`` (not in ``known``) in a note of ``language``, added to
    ``known`` (returned, not read back: another index's thread may clear it meanwhile)."""
    if sum(map(len, _known.values())) + len(words) > STEM_CACHE:
        for each in _known.values():
            each.clear()
    latin: list[str] = []
    cyrillic: list[str] = []
    for word in words:
        if len(word) < MIN_STEM_LENGTH or word[0].isdigit():
            known[word] = ""
        else:
            (cyrillic if is_cyrillic(word) else latin).append(word)
    learnt: list[str] = []
    for script, script_language in ((latin, language), (cyrillic, CYRILLIC)):
        mark = _MARKS[script_language]
        stems = [stem + mark for stem in stemmer(script_language).stemWords(script)]
        known.update(zip(script, stems, strict=True))
        learnt += stems
    return learnt


def query_stems(word: str) -> tuple[str, ...]:
    """The stem tokens ``word`` may have in any note: its stem in each language of its script
    (none for numbers and words too short to stem)."""
    if len(word) < MIN_STEM_LENGTH or word.isdigit():
        return ()
    languages = (CYRILLIC,) if is_cyrillic(word) else LATIN
    return tuple(stemmer(language).stemWord(word) + _MARKS[language] for language in languages)


def content_words(words: Sequence[str], *, keep_all: bool = True) -> list[str]:
    """``words`` without the stop words of their language; with ``keep_all``, all of them when
    nothing else is left (a query of stop words alone still searches them)."""
    language = language_of(words)
    if language is None:
        return list(words)
    stops = stop_words(language) | QUESTION_WORDS.get(language, frozenset())
    kept = [word for word in words if word not in stops]
    return kept or (list(words) if keep_all else [])
