"""Flat front matter read without YAML: whatever the fast path returns, YAML returns too, types
included; anything it cannot prove flat (and every hostile block) goes to the bounded loader."""

from __future__ import annotations

import datetime

import pytest
import yaml
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from plugin_bridge.vault.lexical import front_yaml
from plugin_bridge.vault.lexical.front_yaml import Refused, flat, load, load_yaml
from plugin_bridge.vault.lexical.parse import REFUSED, parse_note
from tests.helpers.notes import alias_bomb

# Pieces YAML may read otherwise than as text: booleans and null in every spelling, numbers,
# dates, indicators, quotes, comments, tabs, separators, non-breaking and zero-width spaces.
_TRICKY = [
    *["yes", "Yes", "YES", "yEs", "no", "NO", "true", "True", "tRUE", "false", "on", "OFF"],
    *["null", "Null", "NULL", "nULL", "~", "y", "n", "Y", ".inf", ".NaN", "0x1f", "0o17"],
    *["1_000", "12", "-3", "+4", "1.5e3", "1:20", "2024-01-02", "2001-12-14t21:59:43.10-05:00"],
    *["<<", "=", "&a", "*a", "!!str", "!x", "%YAML", "@x", "`x`", "'q'", '"q"', "a'b", "{a}"],
    *["[a]", "|", ">", "#c", " #c", "a #c", "a: b", "a:b", "-", "- a", "?", "? a", ":", "a,b"],
    *["\t", "\xa0", "\u200b", "\u2028", "\x85", "\ufeff", "\r", "é", "Ж", "日本", "a-b", "a/b"],
]
_LETTERS = "abcxyzAZéЖж日本"
_WORD = st.builds(
    str.__add__,
    st.sampled_from(_LETTERS),
    st.text(st.sampled_from(_LETTERS + "0129_-/.,()+$^\\= "), max_size=10),
)
_NAME = st.builds(
    str.__add__, st.sampled_from(_LETTERS), st.text(st.sampled_from(_LETTERS + "09_-"), max_size=8)
)
_ANY = st.one_of(
    st.sampled_from(_TRICKY),
    st.text(st.sampled_from(_LETTERS + "".join(_TRICKY)), min_size=1, max_size=12),
)


@st.composite
def _blocks(draw: st.DrawFn) -> str:
    """Front matter of ``key: value`` lines and lists under a ``key:``, flat but for (half of
    the time) one piece: a key, a value, an item, a separator, an indent or the end."""
    pieces: list[str] = []
    for _ in range(draw(st.integers(1, 4))):
        pieces += [draw(_NAME), ":"]
        if draw(st.booleans()):
            pieces += [
                " ",
                draw(st.one_of(_WORD, st.sampled_from(["true", "Off", "NULL", ""]))),
                "\n",
            ]
            continue
        pieces += ["\n"]
        indent = draw(st.sampled_from(["", "  ", "    "]))
        for _ in range(draw(st.integers(0, 3))):
            pieces += [indent, "- ", draw(_WORD), "\n"]
    if draw(st.booleans()):
        at = draw(st.integers(0, len(pieces) - 1))
        pieces[at] = draw(st.one_of(_ANY, st.sampled_from(["", " ", "  ", "\n", "-", ": "])))
    return "".join(pieces)


def _typed(value: object) -> object:
    """``value`` with the type of every part beside it (so True is not 1, nor "1" 1)."""
    if isinstance(value, dict):
        return {_typed(k): _typed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_typed(v) for v in value]
    return (type(value), value)


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=_blocks())
@example(text="a: b\nc:\n  - d e\n  - f\ng:\nh: true\ni: Off\n")
@example(text="a: b\x85c\n")  # a line break to YAML 1.1
@example(text="a: b\x07c\n")  # not allowed at all
@example(text="a: 0x1f\nb: 12\n")
@example(text="a: OFF\nb: yEs\n")
@example(text="a:\n- yes\n")
@example(text="yes: a\n")
@example(text="a:\n  - b\n - c\n")
@example(text="a: b:c\n")
def test_what_the_fast_path_reads_yaml_reads_the_same(text: str) -> None:
    found = flat(text)
    event("flat" if found is not None else "YAML's")
    if found is not None:
        assert _typed(found) == _typed(load_yaml(text))


_PLAIN_WORD = st.text(st.sampled_from("abcxyzéЖж日本-/., "), min_size=1, max_size=12).filter(
    lambda w: w[0].isalpha() and w.strip() == w and w.lower() not in {"y", "n", "on", "no"}
)


@given(
    pairs=st.dictionaries(
        st.text(st.sampled_from("abkeyé日"), min_size=3, max_size=8),
        st.one_of(_PLAIN_WORD, st.sampled_from([True, False, None]), st.lists(_PLAIN_WORD)),
        min_size=1,
    )
)
def test_flat_front_matter_is_read_without_yaml(pairs: dict[str, object]) -> None:
    spelled: dict[object, str] = {True: "true", False: "false", None: ""}
    lines = []
    for key, value in pairs.items():
        if isinstance(value, list):
            lines += [f"{key}:"] + [f"  - {item}" for item in value]
        else:
            lines.append(
                f"{key}: {value}" if isinstance(value, str) else f"{key}: {spelled[value]}"
            )
    text = "\n".join(lines) + "\n"
    expected = {
        key: (value or None) if isinstance(value, list) else value for key, value in pairs.items()
    }
    assert flat(text) == expected
    assert _typed(load_yaml(text)) == _typed(expected)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("tags:\n- a\n- b\n", {"tags": ["a", "b"]}),  # a list level with its key is YAML too
        ("a: 12\n", {"a": 12}),
        ("d: 2024-01-02\n", {"d": datetime.date(2024, 1, 2)}),
        ("b: tRUE\n", {"b": "tRUE"}),
        ("k: a: b\n", None),  # not YAML at all
        ("k: v\n  more\n", {"k": "v more"}),  # a continuation line
    ],
)
def test_what_is_not_provably_flat_is_yamls_to_read(text: str, expected: object) -> None:
    if text.startswith("tags"):
        assert flat(text) == expected
    else:
        assert flat(text) is None
    if expected is None:
        with pytest.raises(yaml.YAMLError):
            load(text)
    else:
        assert load(text) == expected


def test_an_alias_bomb_is_still_refused() -> None:
    block_bomb = "a: &a\n  - lol\n  - lol\nb: &b\n" + "".join(["  - *a\n"] * 9) + "c: *b\n"
    for bomb in (alias_bomb(), block_bomb):
        assert flat(bomb) is None
        with pytest.raises(Refused, match="alias bomb"):
            load(bomb)
    note = parse_note("bomb.md", f"---\n{alias_bomb()}\n---\nText", warn=False)
    assert note.frontmatter == {}
    assert note.frontmatter_error is not None and note.frontmatter_error.startswith(REFUSED)


def test_a_flat_block_past_the_limits_is_left_to_the_bounded_loader(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(front_yaml, "MAX_NODES", 50)
    text = "tags:\n" + "".join(f"  - t{i}\n" for i in range(60))
    assert flat(text) is None
    with pytest.raises(Refused, match="more than 50 values"):
        load(text)
