"""Obsidian's search operators through Vault.search, in every mode: on a small vault each
query gives the notes Obsidian's search would (filters narrow, words rank); the hits carry
the heading they are under."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from llm_service.embedders import FakeEmbedder
from plugin_bridge.vault.errors import VaultError
from plugin_bridge.vault.vault import Mode, Vault

FRUIT_NOTES = {
    "Fruits/alpha.md": "---\nstatus: done\ntags: [fruit]\n---\nApple and banana bread.\n",
    "Fruits/beta.md": (
        "---\nstatus: todo\nrating: 4\n---\nIntro.\n# Setup\nGeneral words.\n## Linux\n"
        "An apple cherry pie. #fruit/red\n"
    ),
    "Notes/gamma.md": "Cherry and apple.\n",
    "Notes/delta.md": "---\nstatus:\n---\nDurian smells.\n",
}
OBSIDIAN = {
    "apple -banana": {"Fruits/beta.md", "Notes/gamma.md"},
    '"apple cherry"': {"Fruits/beta.md"},
    "banana OR durian": {"Fruits/alpha.md", "Notes/delta.md"},
    "file:gamma cherry": {"Notes/gamma.md"},
    "[status:done]": {"Fruits/alpha.md"},
    "tag:#fruit": {"Fruits/alpha.md", "Fruits/beta.md"},
    "path:Fruits": {"Fruits/alpha.md", "Fruits/beta.md"},
}
"""What Obsidian's search answers on FRUIT_NOTES (tag:#fruit holds the nested #fruit/red)."""


def write_notes(root: Path, notes: dict[str, str]) -> Path:
    for rel, text in notes.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


@pytest.fixture
async def vault(tmp_path: Path) -> AsyncIterator[Vault]:
    """The fruit vault, with the tests' fake embedder's vectors ready."""
    opened = Vault(write_notes(tmp_path / "vault", FRUIT_NOTES), tmp_path / "data", watch=False)
    semantic = opened.use_embedder(FakeEmbedder())
    async with opened:
        await opened.index.wait_until_idle(20)
        await semantic.wait_until_idle(20)
        yield opened


async def paths(vault: Vault, query: str, mode: Mode = "lexical") -> set[str]:
    return {hit.path for hit in (await vault.search(query, 10, mode)).hits}


@pytest.mark.parametrize("query", OBSIDIAN)
async def test_each_operator_gives_what_obsidian_gives_lexically(vault: Vault, query: str) -> None:
    assert await paths(vault, query) == OBSIDIAN[query]


@pytest.mark.parametrize("mode", ["semantic", "hybrid"])
@pytest.mark.parametrize("query", OBSIDIAN)
async def test_filters_hold_in_every_mode(vault: Vault, query: str, mode: Mode) -> None:
    """With vectors, filters (exclusions, OR, phrases, file:, properties, tags, paths) keep
    the same notes out; words rank by meaning, so a note without them may follow (only
    "apple -banana" has a plain word here: the note about durian may come last)."""
    found = await paths(vault, query, mode)
    expected = OBSIDIAN[query]
    if query == "apple -banana":
        assert expected <= found <= expected | {"Notes/delta.md"}
    else:
        assert found == expected


async def test_words_with_operators_rank_and_groups_nest(vault: Vault) -> None:
    """OR binds looser than words side by side; a group, a negated group and content:
    combine with them; words in an OR rank too."""
    assert await paths(vault, "apple (cherry OR banana) -pie") == {
        "Fruits/alpha.md",
        "Notes/gamma.md",
    }
    assert await paths(vault, "apple banana OR durian") == {"Fruits/alpha.md", "Notes/delta.md"}
    assert await paths(vault, "-(apple cherry)") == {"Fruits/alpha.md", "Notes/delta.md"}
    assert await paths(vault, "content:alpha") == set()  # a file name is not content
    assert await paths(vault, "file:alpha OR file:delta") == {"Fruits/alpha.md", "Notes/delta.md"}
    assert await paths(vault, 'path:"Fruits/" -tag:fruit/red') == {"Fruits/alpha.md"}
    ranked = await vault.search("cherry OR durian", 10, "lexical")
    assert all(hit.snippet.count("**") >= 2 for hit in ranked.hits)


async def test_line_and_section_ask_one_line_or_one_section(vault: Vault) -> None:
    """line:(…) needs its words on one line, section:(…) between two headings; words are
    parts of the line, without case, as in Obsidian; - and OR work inside."""
    assert await paths(vault, "line:(apple banana)") == {"Fruits/alpha.md"}
    assert await paths(vault, "line:(CHERRY apple)") == {"Fruits/beta.md", "Notes/gamma.md"}
    assert await paths(vault, "line:(apple -pie)") == {"Fruits/alpha.md", "Notes/gamma.md"}
    assert await paths(vault, "section:(cherry pie)") == {"Fruits/beta.md"}
    assert await paths(vault, "section:(general pie)") == set()  # Setup's text, Linux's pie
    assert await paths(vault, "section:(linux pie) OR line:durian") == {
        "Fruits/beta.md",
        "Notes/delta.md",
    }
    semantic = await paths(vault, "apple line:(apple banana)", "semantic")
    assert semantic == {"Fruits/alpha.md"}


async def test_properties(vault: Vault) -> None:
    """[name] is any note with the property, [name:value] compares without case, values may be
    alternatives, numbers are text, and null is an empty value."""
    assert await paths(vault, "[status]") == {"Fruits/alpha.md", "Fruits/beta.md", "Notes/delta.md"}
    assert await paths(vault, "[Status:DONE OR todo]") == {"Fruits/alpha.md", "Fruits/beta.md"}
    assert await paths(vault, '[rating:"4"]') == {"Fruits/beta.md"}
    assert await paths(vault, "[status:null]") == {"Notes/delta.md"}
    assert await paths(vault, "apple -[status]") == {"Notes/gamma.md"}


async def test_only_filters_list_the_notes_by_path(vault: Vault) -> None:
    """A query of filters alone answers lexically, listing the notes in path order."""
    found = await vault.search("-banana", 10)
    assert found.mode == "lexical"
    listed = [hit.path for hit in found.hits]
    assert listed == ["Fruits/beta.md", "Notes/delta.md", "Notes/gamma.md"]


@pytest.mark.parametrize("query", ['"apple cherry', "apple (banana", "[apple", "apple)"])
async def test_an_unclosed_quote_or_parenthesis_searches_plain_words(
    vault: Vault, query: str
) -> None:
    found = await paths(vault, query)
    assert "Notes/gamma.md" in found and found <= {"Fruits/alpha.md", *OBSIDIAN["apple -banana"]}


@pytest.mark.parametrize(
    ("query", "operator"),
    [
        ("block:(mix flour)", "block:"),
        ("apple match-case:A", "match-case:"),
        ("task:call", "task:"),
    ],
)
async def test_operators_the_index_cannot_answer_say_so(
    vault: Vault, query: str, operator: str
) -> None:
    with pytest.raises(VaultError) as raised:
        await vault.search(query)
    assert raised.value.code == "invalid_query"
    assert f"operator {operator} is not supported" in str(raised.value)


async def test_hits_carry_the_heading_they_are_under(vault: Vault) -> None:
    """A word hit names the heading above its match; a vector hit its best chunk's."""
    (lexical,) = (await vault.search("pie", 10, "lexical")).hits
    assert lexical.heading == "Setup > Linux"
    assert (await vault.search("intro", 10, "lexical")).hits[0].heading is None
    semantic = (await vault.search("cherry pie", 10, "semantic")).hits
    beta = next(hit for hit in semantic if hit.path == "Fruits/beta.md")
    assert beta.heading == beta.chunks[0].heading


async def test_a_hybrid_hit_found_by_words_only_names_its_heading_too(vault: Vault) -> None:
    """Fusion makes the words-only hits' snippets last: their heading comes with them."""
    hits = (await vault.search("pie", 10, "hybrid")).hits
    beta = next(hit for hit in hits if hit.path == "Fruits/beta.md")
    assert beta.heading == (beta.chunks[0].heading if beta.chunks else "Setup > Linux")


async def test_a_word_search_reads_the_notes_text_once(vault: Vault) -> None:
    """The heading path is found in the text FTS5 read for the snippet, not read again by
    path (that second read was a third of a WebSocket search's slowdown at 10,000 notes);
    the index's own search, which shows no heading, reads no text for one."""
    statements: list[str] = []
    await vault.index.execute(lambda reader: reader.conn.set_trace_callback(statements.append))
    try:
        (hit,) = (await vault.search("pie", 10, "lexical")).hits
        reads = [columns for columns in _columns(statements) if "body" in columns]
        statements.clear()
        (plain,) = vault.index.search("pie").hits
    finally:
        await vault.index.execute(lambda reader: reader.conn.set_trace_callback(None))
    assert hit.heading == "Setup > Linux"
    assert reads and all("snippet(" in columns for columns in reads)
    assert plain.heading is None
    assert not [columns for columns in _columns(statements) if "body" in columns]


def _columns(statements: list[str]) -> list[str]:
    """What each SQL statement selects (its text before FROM)."""
    return [sql.split("FROM")[0] for sql in statements]
