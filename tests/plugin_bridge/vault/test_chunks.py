"""A note's parts for chunking: headings open parts, headings inside code fences do not, and
text that merely holds ``#``, backticks or ``~`` is text."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from plugin_bridge.vault.chunks import _sections, chunk_note

_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def _line_by_line(body: str) -> list[tuple[tuple[str, ...], str]]:
    """The rule, read one line at a time."""
    parts: list[tuple[tuple[str, ...], str]] = []
    path: list[tuple[int, str]] = []
    lines: list[str] = []
    fence = ""
    for line in body.split("\n"):
        opened = _FENCE.match(line)
        if fence:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                fence = ""
        elif opened:
            fence = opened.group(1)
        elif heading := _HEADING.match(line):
            parts.append((tuple(name for _, name in path), "\n".join(lines).strip()))
            level = len(heading.group(1))
            path = [(lvl, n) for lvl, n in path if lvl < level] + [(level, heading.group(2))]
            lines = []
            continue
        lines.append(line)
    return [*parts, (tuple(name for _, name in path), "\n".join(lines).strip())]


_LINES = st.sampled_from(
    ["# One", "## Two ##", "   ### Three", "    # code, not a heading", "#tag", "text #x",
     "a [[Note#Part]] b", "```", "````", "~~~", "``` py", "`inline`", "~", "", "  ", "plain",
     "#", "###### Six", "####### seven", "\t# tab"]
)  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(lines=st.lists(_LINES, max_size=30), end=st.sampled_from(["", "\n"]))
def test_parts_follow_the_line_rule(lines: list[str], end: str) -> None:
    body = "\n".join(lines) + end
    assert list(_sections(body)) == _line_by_line(body)


def test_a_fenced_heading_is_text_and_the_last_line_may_be_a_heading() -> None:
    body = "intro\n```\n# not a heading\n```\n## Real\nunder it\n# Last"
    assert list(_sections(body)) == [
        ((), "intro\n```\n# not a heading\n```"),
        (("Real",), "under it"),
        (("Last",), ""),
    ]
    assert [c.heading for c in chunk_note("T", body)] == ["", "Real"]  # short parts joined
