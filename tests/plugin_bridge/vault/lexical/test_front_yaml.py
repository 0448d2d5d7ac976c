"""The one front matter loader: ordinary YAML as PyYAML's safe loader reads it, and hostile
YAML (alias bombs, deep nesting, huge values) refused at once, before anything is built."""

from __future__ import annotations

import datetime
import time

import pytest

from plugin_bridge.vault.lexical import front_yaml
from plugin_bridge.vault.lexical.front_yaml import MAX_DEPTH, Refused, load
from tests.helpers.notes import alias_bomb


def test_ordinary_front_matter_loads_as_the_safe_loader_reads_it() -> None:
    text = "title: Plan\ntags: [a, b]\ndate: 2024-01-02\nnested: {x: {y: [1, 2]}}\ns: &s hi\nt: *s"
    assert load(text) == {
        "title": "Plan",
        "tags": ["a", "b"],
        "date": datetime.date(2024, 1, 2),
        "nested": {"x": {"y": [1, 2]}},
        "s": "hi",
        "t": "hi",
    }


def test_an_alias_bomb_is_refused_at_once() -> None:
    started = time.monotonic()
    with pytest.raises(Refused, match="alias bomb"):
        load(alias_bomb())
    assert time.monotonic() - started < 1  # a generous bound: it is refused, not built


@pytest.mark.parametrize(
    "text",
    ["a: " + "[" * 5000 + "]" * 5000, "a:\n" + "".join("  " * i + "- \n" for i in range(1, 40))],
)
def test_nesting_past_the_depth_is_refused(text: str) -> None:
    with pytest.raises(Refused, match=f"nested more than {MAX_DEPTH} deep"):
        load(text)


def test_nesting_up_to_the_depth_loads() -> None:
    depth = MAX_DEPTH - 1  # the top map is one level
    expected: object = "x"
    for _ in range(depth):
        expected = [expected]
    assert load("a: " + "[" * depth + "x" + "]" * depth) == {"a": expected}


def test_too_many_values_or_characters_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(front_yaml, "MAX_NODES", 50)
    with pytest.raises(Refused, match="more than 50 values"):
        load("a: [" + ", ".join("x" * 60) + "]")
    monkeypatch.setattr(front_yaml, "MAX_CHARS", 100)
    with pytest.raises(Refused, match="longer than 100 characters"):
        load("s: &s " + "y" * 60 + "\nt: *s")  # an alias of a string counts again
