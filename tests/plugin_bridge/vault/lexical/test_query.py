"""Query syntax: parsing into FTS5 terms, CJK terms and filters; any input is a valid query."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plugin_bridge.vault.files import VaultFiles
from plugin_bridge.vault.lexical import scoped
from plugin_bridge.vault.lexical import search as search_sql
from plugin_bridge.vault.lexical.indexer import Indexer
from plugin_bridge.vault.lexical.query import MAX_TERMS, Query, parse_query
from plugin_bridge.vault.schema import connect, migrate


def texts(query: Query) -> list[tuple[str, str]]:
    return [(term.text, term.kind) for term in query.terms]


def test_words_are_terms_any_of_which_matches() -> None:
    """Each word is a term matched as itself or as one of its stems; notes match when they have
    any of the words (``match``), and ``match_all`` asks for every one as typed."""
    query = parse_query("Kafka  streams")
    assert texts(query) == [("kafka", "word"), ("streams", "word")]
    kafka, streams = (term.expression() for term in query.terms)
    assert query.match == f"({kafka} OR {streams})"
    exact = [term.expression(exact=True) for term in query.terms]
    assert query.match_all == f"{exact[0]} AND {exact[1]}"  # every word as typed
    assert exact[0] == '{title aliases headings tags body}: "kafka"'
    assert kafka.startswith('({title aliases headings tags body}: "kafka" OR {stem_title')


def test_plus_makes_a_word_required() -> None:
    """``+word`` (and ``+"a phrase"``) must match; the other words may (they stay in the
    expression, after the first required term, so that BM25 counts them)."""
    query = parse_query('+kafka streams +"event log"')
    assert [(t.text, t.required) for t in query.terms] == [
        ("kafka", True),
        ("streams", False),
        ("event log", True),
    ]
    kafka, streams, log = (term.expression() for term in query.terms)
    assert query.match == f"{kafka} AND {log} AND ({streams} OR {kafka})"
    assert texts(parse_query("+")) == []


def test_prefix_and_phrases() -> None:
    """``word*`` is a prefix query; ``"a b"`` a phrase; neither is stemmed. A quote left open
    makes the query plain words."""
    query = parse_query('kaf* "event log"')
    assert texts(query) == [("kaf", "prefix"), ("event log", "phrase")]
    assert query.terms[0].expression() == '{title aliases headings tags body}: "kaf"*'
    assert query.terms[1].expression() == '{title aliases headings tags body}: "event log"'
    assert texts(parse_query('"chapter on')) == [("chapter", "word")]  # "on": a stop word


def test_stop_words_are_dropped_unless_alone() -> None:
    """The stop words of the query's language go; a query of only stop words keeps them; stop
    words inside a phrase or marked required stay."""
    assert [t.text for t in parse_query("How do I embed an image?").terms] == ["embed", "image"]
    assert [t.text for t in parse_query("the who").terms] == ["the", "who"]
    assert [t.text for t in parse_query('how "to do" +the').terms] == ["to do", "the"]
    assert [t.text for t in parse_query("Wie kann ich Notizen verschieben").terms] == [
        "notizen",
        "verschieben",
    ]


def test_question_words_the_stop_word_lists_lack_are_dropped_too() -> None:
    """English "can" and the Russian forms of "какой" ask; they are not what is looked for."""
    assert [t.text for t in parse_query("How can I see backlinks?").terms] == ["see", "backlinks"]
    assert [t.text for t in parse_query("Как увидеть, какие заметки есть?").terms] == [
        "увидеть",
        "заметки",
    ]
    assert [t.text for t in parse_query("can").terms] == ["can"]  # alone, still searched


def test_fts5_operators_and_punctuation_are_text() -> None:
    """FTS5's AND, NOT, NEAR and stray stars never become FTS5 syntax (here "a", "and" and
    "not" are English stop words as well); Obsidian's OR, -, parentheses and phrases filter,
    and the words they hold rank."""
    query = parse_query('a AND (b OR -c) NOT NEAR(d) * ** "x""y" col:z')
    assert [t.text for t in query.terms] == ["b", "near", "d", "x", "y", "col z"]
    assert len(query.where) == 3  # (b OR -c), "x", "y"
    assert [t.text for t in parse_query("AND NOT or").terms] == ["and", "not", "or"]


def test_tag_and_path_filters() -> None:
    """tag: and path: are filters (any case), with quoted values; '#' and slashes trimmed."""
    query = parse_query('TAG:#Project/Alpha path:"My Notes/2024" Path:./Inbox/ kafka')
    assert texts(query) == [("kafka", "word")]
    assert (query.tags, query.paths) == (("project/alpha",), ("My Notes/2024", "Inbox/"))


def test_only_filters() -> None:
    """A query of only filters has no words; empty filter values are dropped."""
    query = parse_query("tag:todo path: tag:")
    assert (query.match, query.tags, query.paths, query.empty) == ("", ("todo",), (), False)


def test_cjk_runs_become_their_own_terms() -> None:
    """CJK runs are split from the rest of a token and from each other."""
    query = parse_query("Obsidian同期 の使い方 서울 tower東京")
    assert query.cjk == ("同期", "の使い方", "서울", "東京")
    assert [t.text for t in query.terms] == ["obsidian", "tower"]


@pytest.mark.parametrize("text", ["", "   ", "*", "- -", '""', "(-)", "\x00\x01", "+"])
def test_nothing_to_search(text: str) -> None:
    """Blank input, lone operators and punctuation make an empty query."""
    assert parse_query(text).empty


def test_emoji_are_searchable() -> None:
    """Emoji are tokens for unicode61, so they stay in the query."""
    assert texts(parse_query("🙂")) == [("🙂", "phrase")]


def test_control_characters_and_lone_surrogates_are_dropped() -> None:
    """NUL, control characters and unpaired surrogates cannot reach SQLite."""
    assert [t.text for t in parse_query("ka\x00fka \ud800x").terms] == ["ka", "fka", "x"]


def test_query_size_is_bounded() -> None:
    """Huge inputs are cut to a bounded number of terms; repeated words count once."""
    assert len(parse_query(" ".join(f"w{i}" for i in range(10_000))).terms) == MAX_TERMS
    assert len(parse_query("w " * 10_000).terms) == 1


SYNTAX = [*"\"()*-^:'%_\\ ", "AND", "OR", "NOT", "NEAR", "tag:", "path:", "kafka", "東京", "の"]
SYNTAX += ["🙂", "\x00", "é", "[", "]", "[tags:infra]", "file:", "content:", "#", "null"]
SYNTAX += ["line:", "section:", "line:(log", "section:(events"]


@pytest.fixture(scope="module")
def conn(tmp_path_factory: pytest.TempPathFactory) -> Iterator[sqlite3.Connection]:
    """A small real index, read through its own connection."""
    root = tmp_path_factory.mktemp("vault")
    notes = {
        "Kafka.md": "---\ntags: [infra]\n---\n# Kafka\nA log of events,東京で会議.",
        "Café.md": "Crème brûlée, Москва, 🙂.",
    }
    for rel, text in notes.items():
        (root / rel).write_text(text, encoding="utf-8")
    db = root.parent / "fuzz.sqlite3"
    writer = connect(str(db))
    migrate(writer)
    indexer = Indexer(writer, VaultFiles(root))
    indexer.apply(indexer.changes()[0])
    writer.close()
    reader = connect(str(db), readonly=True)
    scoped.register(reader)  # as IndexReader does
    yield reader
    reader.close()


def paths(conn: sqlite3.Connection, text: str) -> list[str]:
    return [row[0] for row in search_sql.run(conn, parse_query(text), 10)]


def test_sample_queries_run(conn: sqlite3.Connection) -> None:
    """Words, prefixes, CJK and filters find the right notes through the real SQL."""
    assert paths(conn, "kaf*") == ["Kafka.md"]
    assert paths(conn, "東京") == ["Kafka.md"]
    assert paths(conn, "creme москва") == ["Café.md"]
    assert paths(conn, "🙂") == ["Café.md"]
    assert paths(conn, "tag:infra") == ["Kafka.md"]
    assert paths(conn, "path:caf") == ["Café.md"]


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=80))
def test_any_text_is_a_valid_query(conn: sqlite3.Connection, text: str) -> None:
    """Whatever the user types, the SQL runs without an SQLite error."""
    search_sql.run(conn, parse_query(text), 5)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(SYNTAX), max_size=12))
def test_operator_soup_is_a_valid_query(conn: sqlite3.Connection, parts: list[str]) -> None:
    """Dense mixes of FTS5 and LIKE syntax characters never break the SQL."""
    search_sql.run(conn, parse_query("".join(parts)), 5)
    search_sql.run(conn, parse_query(" ".join(parts)), 5)


def test_path_filter_wildcards_are_literal(conn: sqlite3.Connection) -> None:
    """% and _ in path: match themselves, not any text."""
    assert paths(conn, "path:%") == []
    assert paths(conn, "path:_afka") == []
