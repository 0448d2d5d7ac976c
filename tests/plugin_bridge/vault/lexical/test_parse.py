"""parse_note: title, aliases, tags, headings and links of a note, and robustness to bad input."""

from __future__ import annotations

import logging
import unicodedata

import pytest

from plugin_bridge.vault.lexical.parse import link_key, parse_note


def test_title_is_the_file_name_without_extension() -> None:
    """Without a front matter title, the title is the file name minus its extension."""
    assert parse_note("Projects/Kafka pipeline.md", "text").title == "Kafka pipeline"
    assert parse_note("Boards/Plan.canvas", "{}").title == "Plan"


def test_front_matter_title_and_aliases() -> None:
    """``title`` overrides the file name; aliases come as a list, a comma string or ``alias``."""
    note = parse_note("a.md", "---\ntitle: Real title\naliases: [One, Two]\nalias: Three\n---\n")
    assert note.title == "Real title"
    assert note.aliases == ("One", "Two", "Three")
    assert parse_note("a.md", "---\naliases: Kafka, Event log\n---\n").aliases == (
        "Kafka",
        "Event log",
    )
    assert parse_note("2024.md", "---\ntitle: 2024\n---\n").title == "2024"


def test_body_is_the_text_after_the_front_matter() -> None:
    """The body excludes the front matter; CRLF becomes LF and a BOM is dropped."""
    note = parse_note("a.md", "\ufeff---\r\ntags: x\r\n---\r\n# Hi\r\nthere\r\n")
    assert note.body == "# Hi\nthere\n"
    assert note.frontmatter == {"tags": "x"}


def test_unclosed_front_matter_is_body_text() -> None:
    """A leading --- without a closing line is not front matter."""
    note = parse_note("a.md", "---\nnot: closed\nstill text")
    assert note.frontmatter == {} and note.frontmatter_error is None
    assert "still text" in note.body


@pytest.mark.parametrize(
    ("frontmatter", "expected"),
    [
        ("tags: [infra, data/streams]", ("infra", "data/streams")),
        ("tags: '#infra, #data'", ("infra", "data")),
        ("tags: infra data", ("infra", "data")),
        ("tags:\n  - '#infra'\n  - Infra", ("infra",)),
        ("tag: legacy", ("legacy",)),
        ("tags: [[nested, list], ok]", ("ok",)),
    ],
)
def test_front_matter_tags(frontmatter: str, expected: tuple[str, ...]) -> None:
    """Front matter tags: lists, comma or space strings, with or without '#', de-duplicated."""
    assert parse_note("a.md", f"---\n{frontmatter}\n---\nbody").tags == expected


def test_inline_tags_nested_and_unicode() -> None:
    """Inline #tags, nested a/b and non-Latin ones, case-insensitively de-duplicated."""
    text = "Plan #todo and #project/alpha, #日本語 #café (#Todo) #a-b_c\n#ёлка"
    assert parse_note("a.md", text).tags == (
        "todo",
        "project/alpha",
        "日本語",
        "café",
        "a-b_c",
        "ёлка",
    )


@pytest.mark.parametrize(
    "text",
    [
        "# Heading only",
        "## Sub heading",
        "issue #123 and #2024/11",
        "a#b c#d",
        "see [[Note#Section]] and [link](https://x.org/#anchor)",
        "`#inline-code`",
        "```\n#fenced\n```",
        "~~~python\n#comment\n~~~",
        "```\nunclosed fence\n#inside",
    ],
)
def test_not_tags(text: str) -> None:
    """Headings, numbers, mid-word #, anchors and anything in code are not tags."""
    assert parse_note("a.md", text).tags == ()


def test_tags_after_a_code_block_still_count() -> None:
    """A closed fence ends the code: tags after it are tags."""
    assert parse_note("a.md", "```\n#no\n```\nthen #yes").tags == ("yes",)


def test_headings() -> None:
    """ATX headings of every level, closing hashes dropped; not inside code, not #tags."""
    text = "# One\n###### Six ##\n#tag line\n```\n# code\n```\n  ## Indented\n#\n"
    assert parse_note("a.md", text).headings == ("One", "Six", "Indented")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[[Kafka]]", ("Kafka",)),
        ("[[Reading/Books|books]] and [[Plan.md]]", ("Reading/Books", "Plan")),
        ("[[Note#Heading]] [[Note^block-1]] [[Note#H|alias]]", ("Note",)),
        ("![[Diagram.png]] ![[Embedded note]]", ("Diagram.png", "Embedded note")),
        ("| [[Table cell\\|alias]] |", ("Table cell",)),
        ("[[#Heading in this note]]", ()),
        ("`[[not a link]]`\n```\n[[nor this]]\n```", ()),
    ],
)
def test_wikilinks(text: str, expected: tuple[str, ...]) -> None:
    """Link targets without alias, heading or block parts; embeds count; code does not."""
    assert parse_note("a.md", text).links == expected


def test_link_key_folds_case_and_unicode_form() -> None:
    """Link targets compare case-insensitively and regardless of Unicode normal form."""
    assert link_key("Café/Note") == link_key(unicodedata.normalize("NFD", "CAFÉ/note"))


def test_text_is_nfc_normalised() -> None:
    """Decomposed input (as macOS file names are) is stored composed, so queries match."""
    nfd = unicodedata.normalize("NFD", "Crème brûlée")
    note = parse_note(f"{nfd}.md", nfd)
    assert note.title == "Crème brûlée" and note.body == "Crème brûlée"


@pytest.mark.parametrize(
    "frontmatter",
    [
        "title: [unclosed",
        "key: value\n  bad indent: x",
        "- a list\n- not a mapping",
        "date: 2024-02-30",
        "? [unhashable, key]\n: value",
        "evil: !!python/object/apply:os.system ['echo hi']",
    ],
)
def test_malformed_front_matter_does_not_crash(
    frontmatter: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Bad YAML: empty front matter, an error, the body kept, a warning naming only the file."""
    with caplog.at_level(logging.WARNING, logger="plugin_bridge.vault.lexical.parse"):
        note = parse_note("Folder/Broken.md", f"---\n{frontmatter}\n---\nThe zebra body.")
    assert note.frontmatter == {}
    assert note.frontmatter_error
    assert note.body == "The zebra body."
    assert note.title == "Broken"
    (record,) = caplog.records
    assert "Folder/Broken.md" in record.getMessage()
    assert frontmatter.split(":")[0] not in record.getMessage().replace("Folder/Broken.md", "")


def test_front_matter_error_names_the_line() -> None:
    """The error says where the YAML broke, without quoting it."""
    note = parse_note("a.md", "---\ntitle: ok\nsecret: [oops\n---\n")
    assert note.frontmatter_error is not None
    assert "line" in note.frontmatter_error and "oops" not in note.frontmatter_error


def test_alias_bomb_is_refused_and_the_body_kept() -> None:
    """YAML aliases of lists or maps are refused before anything is built (each use repeats
    the list: no exponential blow-up); the note keeps its body and tags."""
    bomb = "a: &a [x, x]\nb: &b [*a, *a]\nc: &c [*b, *b]\nd: &d [*c, *c]\ntags: [*d, *d, ok]"
    note = parse_note("a.md", f"---\n{bomb}\n---\nBody #kept")
    assert note.frontmatter == {} and note.tags == ("kept",) and note.body == "Body #kept"
    assert note.frontmatter_error is not None and "alias bomb" in note.frontmatter_error
