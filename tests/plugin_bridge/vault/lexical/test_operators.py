"""Obsidian's operators parsed into a tree and split into ranking terms and filters; any
string parses (an unclosed quote or parenthesis is plain words)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plugin_bridge.vault.lexical.operators import (
    All,
    AnyOf,
    Not,
    Property,
    Scoped,
    Text,
    Tree,
    Unparsable,
    parse,
)
from plugin_bridge.vault.lexical.query import parse_query


def test_or_binds_looser_than_words_side_by_side() -> None:
    """``a b OR c`` is ``(a b) OR c``, as Obsidian reads it; parentheses group."""
    assert parse("a b OR c") == Tree((AnyOf((All((Text("a"), Text("b"))), Text("c"))),))
    assert parse("a (b OR c)") == Tree((Text("a"), AnyOf((Text("b"), Text("c")))))


def test_minus_excludes_a_word_a_phrase_or_a_group() -> None:
    assert parse('-a -"b c" -(d e)') == Tree(
        (Not(Text("a")), Not(Text("b c", phrase=True)), Not(All((Text("d"), Text("e")))))
    )
    assert parse("well-known - x") == Tree((Text("well-known"), Text("-"), Text("x")))


def test_field_operators_apply_to_a_word_a_phrase_or_a_group() -> None:
    assert parse('FILE:gamma path:"My Notes" tag:#a/b content:(x OR y)') == Tree(
        (
            Text("gamma", field="file"),
            Text("My Notes", phrase=True, field="path"),
            Text("#a/b", field="tag"),
            AnyOf((Text("x", field="content"), Text("y", field="content"))),
        )
    )
    assert parse("tag: http://x.org") == Tree((Text("http://x.org"),))  # no value; not an operator


def test_properties() -> None:
    assert parse('[Status] [status:Done OR "to do"] [a:null] [[Link]]') == Tree(
        (
            Property("status"),
            Property("status", ("done", "to do")),
            Property("a", null=True),
            Text("[[Link]]"),
        )
    )


def test_line_and_section_scope_their_expression() -> None:
    assert parse("line:(mix flour) section:x") == Tree(
        (Scoped("line", All((Text("mix"), Text("flour")))), Scoped("section", Text("x")))
    )


def test_unsupported_operators_are_named() -> None:
    assert parse("apple block:(mix flour) task:(a)") == Tree((Text("apple"),), "block")


@pytest.mark.parametrize("text", ['"open', "(open", "[open", "open)", "(" * 40 + "deep"])
def test_what_does_not_close_is_unparsable_and_searched_as_plain_words(text: str) -> None:
    with pytest.raises(Unparsable):
        parse(text)
    query = parse_query(text)
    assert [t.text for t in query.terms][-1:] in (["open"], ["deep"])
    assert not query.where


def test_plain_words_rank_and_operators_filter() -> None:
    """Top-level words are the ranking as before; the words inside an OR or content: rank
    too; exclusions, file: and properties only filter; a phrase ranks and filters."""
    query = parse_query('kafka -draft (logs OR events) file:plan "event log" [status:done]')
    assert [t.text for t in query.terms] == ["kafka", "logs", "events", "event log"]
    assert len(query.where) == 5
    assert query.text == "kafka logs events event log"
    plain = parse_query("how do I embed an image? tag:media")
    assert (plain.where, plain.tags, plain.text) == ((), ("media",), "how do I embed an image?")


OPERATORS = ['"', "(", ")", "[", "]", ":", "-", "+", "*", "#", "\\", " ", "OR", "file:"]
OPERATORS += ["path:", "tag:", "content:", "line:", "section:", "block:", "[a:b]", "null", "東京"]


@settings(max_examples=500, deadline=None)
@given(st.text(max_size=120))
def test_any_string_parses(text: str) -> None:
    parse_query(text)


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(OPERATORS), max_size=20))
def test_any_mix_of_operators_parses(parts: list[str]) -> None:
    parse_query("".join(parts))
    parse_query(" ".join(parts))
