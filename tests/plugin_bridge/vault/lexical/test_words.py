"""A note's words and CJK bigrams: long texts go through tables of characters, and give
exactly the tokens and bigrams of the regexes that define them."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plugin_bridge.vault.lexical import cjk, words
from plugin_bridge.vault.lexical.cjk import TABLE_FROM
from plugin_bridge.vault.lexical.words import tokens

# letters of several scripts, digits, "_", CJK, characters whose lower case is longer ("İ"),
# astral letters and CJK, whitespace of every kind, punctuation, a lone surrogate
_ALPHABET = "aZé9_ Жж日本가ｶ々İẞ\u0130\U00020000\U0001d400\U0001f600\t\n\u3000\x85\x1c.,-#'\ud800²"


@settings(max_examples=300, deadline=None)
@given(
    pieces=st.lists(st.text(st.sampled_from(_ALPHABET), max_size=40), min_size=1, max_size=200),
    filler=st.sampled_from(["word ", "слово ", "言葉", " "]),
)
def test_a_long_text_gives_the_regexs_tokens(pieces: list[str], filler: str) -> None:
    text = " ".join(pieces)
    text += filler * (TABLE_FROM // len(filler) + 1)  # long enough for the table
    assert tokens(text) == words._TOKEN.findall(text.lower())


def test_the_table_and_the_regex_agree_on_the_help_vaults_kinds_of_text() -> None:
    text = "Obsidian Sync — синхронизация заметок. 同步设置とプラグインの設定 snake_case x2 "
    text += "Ⅻ ½ ﬁ Straße İstanbul\n"
    expected = words._TOKEN.findall(text.lower())
    assert {"синхронизация", "snake", "case", "x2", "straße"} <= set(expected)
    assert tokens(text * 40) == expected * 40  # through the table
    astral = text + "𠀀x 😀y\n"  # beyond the table: the regex
    assert tokens(astral * 40) == words._TOKEN.findall(astral.lower()) * 40


def _regex_bigrams(text: str) -> str:
    runs = cjk.CJK_RUN.findall(text)
    return "\n".join(" ".join(map(str.__add__, run, run[1:])) + " " + run[-1] for run in runs)


@settings(max_examples=300, deadline=None)
@given(
    pieces=st.lists(st.text(st.sampled_from(_ALPHABET), max_size=40), min_size=1, max_size=200),
    filler=st.sampled_from(["word ", "東京都 ", "語", "a語"]),
    at_end=st.booleans(),
)
def test_a_long_texts_bigrams_are_the_regexs(pieces: list[str], filler: str, at_end: bool) -> None:
    text, more = " ".join(pieces), filler * (cjk.TABLE_FROM // len(filler) + 1)
    text = text + more if at_end else more + text
    assert cjk.bigrams(text) == _regex_bigrams(text)


def test_bigrams_keep_the_form_the_side_table_was_filled_with() -> None:
    text = "東京都 x 語 yz 日本" + "." * cjk.TABLE_FROM  # runs of 3, 1 and 2 characters
    assert cjk.bigrams(text) == "東京 京都 都\n 語\n日本 本"
    assert cjk.bigrams("a" * cjk.TABLE_FROM) == ""


def test_a_notes_language_is_the_latin_one_whose_stop_words_it_uses_most() -> None:
    german = tokens("Die Notizen und der Ordner sind nicht mit dem Vault synchronisiert")
    assert words.note_language(german) == "german"
    russian = tokens("и в не на я что тот быть с а весь это как она по но они к у")
    assert words.note_language(russian + tokens("the note")) == "english"  # Cyrillic: none
    assert words.language_of(russian) == "russian"
    assert words.note_language(tokens("Obsidian Sync")) == "english"  # no stop word at all
    late = ["x"] * words.DETECT_TOKENS + german  # only the first tokens are looked at
    assert words.note_language(late) == "english"


def _fresh_stems(text: str, language: str) -> set[str]:
    """What a note's stem column must hold: each word stemmed now, by its script's stemmer."""
    found = set()
    for word in tokens(text):
        if len(word) < words.MIN_STEM_LENGTH or word[0].isdigit():
            continue
        script = words.CYRILLIC if words.is_cyrillic(word) else language
        found.add(words.stemmer(script).stemWord(word) + words._MARKS[script])
    return found


@settings(max_examples=200, deadline=None)
@given(
    text=st.text(st.sampled_from("aeinrstlé Жжаеит9 \n"), max_size=200),
    language=st.sampled_from(words.LATIN),
)
def test_a_notes_stems_are_its_words_stemmed_whatever_was_stemmed_before(
    text: str, language: str
) -> None:
    column = words.note_stems(tokens(text), language)
    assert len(column.split()) == len(set(column.split()))  # each stem once
    assert set(column.split()) == _fresh_stems(text, language)
    # the same words again, now remembered; and a note of another language stems them anew
    assert set(words.note_stems(tokens(text), language).split()) == _fresh_stems(text, language)
    other = "german" if language != "german" else "french"
    assert set(words.note_stems(tokens(text), other).split()) == _fresh_stems(text, other)


def test_the_remembered_stems_are_bounded_over_every_language(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(words, "STEM_CACHE", 50)
    for start in range(0, 400, 40):
        batch = " ".join(f"woord{chr(97 + n % 26)}{n // 26}x" for n in range(start, start + 40))
        language = ("dutch", "italian")[start // 40 % 2]
        assert set(words.note_stems(tokens(batch), language).split()) == _fresh_stems(
            batch, language
        )
        assert sum(map(len, words._known.values())) <= 50


def test_a_notes_stems_do_not_depend_on_another_thread_keeping_the_remembered_ones(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    text = "Notizen werden synchronisiert, und заметки синхронизируются"
    expected = _fresh_stems(text, "german")
    real = words.stemmer

    class Forgetful:
        """A stemmer during whose work another index's thread forgets every remembered stem."""

        def __init__(self, language: str) -> None:
            self._real = real(language)

        def stemWords(self, batch: list[str]) -> list[str]:
            for each in words._known.values():
                each.clear()
            return list(self._real.stemWords(batch))

    monkeypatch.setattr(words, "stemmer", Forgetful)
    assert set(words.note_stems(tokens(text), "german").split()) == expected
