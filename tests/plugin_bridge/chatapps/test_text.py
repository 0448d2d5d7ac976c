"""The model's Markdown as Telegram's MarkdownV2 (checked against the Bot API's escaping rules
by the stand-in's parser) and the splitting of long answers."""

from __future__ import annotations

import pytest

from plugin_bridge.chatapps.text import (
    DISCORD_LIMIT,
    RESERVED,
    TELEGRAM_LIMIT,
    escape,
    sources_markdown,
    split_text,
    telegram_markdown,
    telegram_pieces,
)
from tests.fakes.telegram import markdown_v2_problem


@pytest.mark.parametrize("character", sorted(RESERVED))
def test_every_reserved_character_is_escaped_alone(character: str) -> None:
    converted = telegram_markdown(f"a {character} b")
    assert converted == f"a \\{character} b"
    assert markdown_v2_problem(converted) is None


@pytest.mark.parametrize(
    ("markdown", "expected"),
    [
        ("Hello.", "Hello\\."),
        ("1 + 1 = 2!", "1 \\+ 1 \\= 2\\!"),
        ("**bold**", "*bold*"),
        ("__bold__", "*bold*"),
        ("*italic*", "_italic_"),
        ("_italic_", "_italic_"),
        ("~~gone~~", "~gone~"),
        ("**bold _nested_ italic**", "*bold _nested_ italic*"),
        ("*italic **bold** inside*", "_italic *bold* inside_"),
        ("snake_case_name stays", "snake\\_case\\_name stays"),
        ("2 * 3 * 4", "2 \\* 3 \\* 4"),
        ("`a_b*c`", "`a_b*c`"),
        ("`back\\slash`", "`back\\\\slash`"),
        ("[the docs](https://example.com/a_b?q=1)", "[the docs](https://example.com/a_b?q=1)"),
        ("[**bold** link](https://x.org)", "[*bold* link](https://x.org)"),
        ("# Title.", "*Title\\.*"),
        ("- one\n- two", "• one\n• two"),
        ("```python\nx = `a` \\ b\n```", "```python\nx = \\`a\\` \\\\ b\n```"),
        ("```\nunclosed code", "```\nunclosed code\n```"),
        ("(a) [b] {c} <d> |e| >f #g", "\\(a\\) \\[b\\] \\{c\\} <d\\> \\|e\\| \\>f \\#g"),
    ],
)
def test_markdown_becomes_markdown_v2(markdown: str, expected: str) -> None:
    converted = telegram_markdown(markdown)
    assert converted == expected
    assert markdown_v2_problem(converted) is None


@pytest.mark.parametrize(
    "markdown",
    [
        "_*[]().!-" * 20,
        "Unbalanced **bold and *italic and `code",
        "```js\nconst a = {b: [1, 2]};\n```\nThen (text) after! [x](y",
        "> quoted **line**.\n1. first\n2. second\n\n| a | b |\n|---|---|",
        "Emoji 🚀 and ünïcödé… done.",
    ],
)
def test_whatever_the_model_writes_the_bot_api_takes(markdown: str) -> None:
    assert markdown_v2_problem(telegram_markdown(markdown)) is None


def test_escape_leaves_plain_text_alone() -> None:
    assert escape("plain words") == "plain words"


@pytest.mark.parametrize("limit", [TELEGRAM_LIMIT, DISCORD_LIMIT, 50])
@pytest.mark.parametrize(
    "text",
    [
        "short",
        "\n\n".join(f"Paragraph {n}: " + "word " * 40 for n in range(40)),
        "\n".join(f"line {n}" for n in range(3000)),
        "x" * 9000,
        "word " * 2500,
    ],
)
def test_splitting_loses_and_repeats_nothing(text: str, limit: int) -> None:
    pieces = split_text(text, limit)
    assert "".join(pieces) == text
    assert all(0 < len(piece) <= limit for piece in pieces)


def test_splitting_prefers_paragraphs_then_lines() -> None:
    text = "a" * 30 + "\n\n" + "b" * 10 + "\n" + "c" * 30
    assert split_text(text, 45) == ["a" * 30 + "\n\n", "b" * 10 + "\n" + "c" * 30]
    assert split_text("x" * 30 + "\n" + "y" * 30, 40) == ["x" * 30 + "\n", "y" * 30]


def test_a_code_block_cut_in_two_is_closed_and_opened_again() -> None:
    code = "```\n" + "\n".join(f"print({n})" for n in range(1000)) + "\n```"
    pieces = telegram_pieces(code)
    assert len(pieces) > 1
    for formatted, _ in pieces:
        assert len(formatted) <= TELEGRAM_LIMIT
        assert markdown_v2_problem(formatted) is None
        assert formatted.startswith("```")


def test_escaping_that_grows_a_piece_past_the_limit_cuts_it_smaller() -> None:
    text = "." * 9000
    pieces = telegram_pieces(text)
    assert all(len(formatted) <= TELEGRAM_LIMIT for formatted, _ in pieces)
    assert "".join(plain for _, plain in pieces) == text


def test_sources_name_each_note_and_give_its_obsidian_url_percent_encoded() -> None:
    paths = ["Languages/学习中文.md", "Notes (old)/a&b #1.md"]
    listed = sources_markdown("My Vault", paths)
    assert listed == (
        "Sources:\n"
        "- 学习中文: `obsidian://open?vault=My%20Vault&file=Languages%2F%E5%AD%A6%E4%B9%A0"
        "%E4%B8%AD%E6%96%87`\n"
        "- a&b #1: `obsidian://open?vault=My%20Vault&file=Notes%20%28old%29%2Fa%26b%20%231`"
    )
    formatted = telegram_markdown(listed)
    assert markdown_v2_problem(formatted) is None
    assert "• a&b \\#1: `obsidian://open?vault=My%20Vault&file=Notes%20%28old%29" in formatted
