"""A note's parts by heading: the heading path a search snippet is under, and the part of a
note a heading path names; front matter and code fences hold no headings."""

from __future__ import annotations

import pytest

from plugin_bridge.vault.errors import VaultError
from plugin_bridge.vault.lexical.headings import heading_at
from plugin_bridge.vault.sections import headings, section

NOTE = (
    "---\n# a: comment\ntitle: x\n---\nIntro #tag [[x#y]]\n# Setup\nAll.\n"
    "```\n# not a heading\ncode line\n```\n## Linux\napt install x\n### Arch\npacman\n"
    "## Mac ##\nbrew\n# Usage\nrun it\n"
)


def test_headings_are_paths_outside_code_and_front_matter() -> None:
    assert [h.path for h in headings(NOTE)] == [
        "Setup",
        "Setup > Linux",
        "Setup > Linux > Arch",
        "Setup > Mac",
        "Usage",
    ]


@pytest.mark.parametrize(
    ("snippet", "heading"),
    [
        ("**Intro** #tag", None),
        ("…install **pacman**", "Setup > Linux > Arch"),
        ("apt **install** x…", "Setup > Linux"),
        ("…**code** line", "Setup"),  # the fence's line is Setup's text
        ("**brew**", "Setup > Mac"),
        ("run **it**", "Usage"),
        ("no marks", None),
        ("**absent**", None),
    ],
)
def test_a_snippet_is_under_the_heading_above_its_match(snippet: str, heading: str | None) -> None:
    body = NOTE.split("---\n", 2)[2]
    assert heading_at(body, snippet) == heading


def test_a_heading_path_or_its_last_parts_read_that_part() -> None:
    linux = "## Linux\napt install x\n### Arch\npacman"
    assert section("n.md", NOTE, "Setup > Linux") == ("Setup > Linux", linux)
    assert section("n.md", NOTE, "setup#linux") == ("Setup > Linux", linux)
    assert section("n.md", NOTE, " linux ") == ("Setup > Linux", linux)
    assert section("n.md", NOTE, "Usage") == ("Usage", "# Usage\nrun it")


def test_an_unknown_heading_lists_some_of_the_notes_headings() -> None:
    with pytest.raises(VaultError) as raised:
        section("n.md", NOTE, "Windows")
    assert raised.value.code == "no_such_heading"
    assert str(raised.value) == (
        "'n.md' has no heading 'Windows': its headings are 'Setup', 'Setup > Linux', "
        "'Setup > Linux > Arch', 'Setup > Mac', 'Usage'."
    )
    with pytest.raises(VaultError, match="has no headings"):
        section("n.md", "plain text", "Any")
    many = "".join(f"# H{i}\n" for i in range(8))
    with pytest.raises(VaultError, match="'H4' and 3 more"):
        section("n.md", many, "Nope")
