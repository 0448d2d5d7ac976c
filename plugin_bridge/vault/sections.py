"""A note's parts by heading: the part of a note under a heading path (``Setup > Linux``), so a
model reads just that part (which heading path a search hit is under: ``lexical/headings.py``).

A heading path names a heading by the headings above it, joined by `` > `` as chunks name
theirs (``chunks.py``); headings inside code fences and front matter are not headings.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

from plugin_bridge.vault.errors import VaultError
from plugin_bridge.vault.lexical.headings import HEADING_LINE
from plugin_bridge.vault.lexical.parse import body_start

SHOWN_HEADINGS: Final = 5
"""An unknown heading's error lists at most this many of the note's headings."""
PDF_HEADINGS: Final = "A PDF has no headings: read it by pages instead (e.g. pages='3-5')."
_FENCED: Final = re.compile(
    r"\n {0,3}(`{3,}|~{3,})[^\n]*(?:\n.*?(?:\n {0,3}\1[`~]*[ \t]*(?=\n|\Z)|\Z)|\Z)", re.S
)
"""A fenced code block, to its closing fence (or the end of the text)."""
_SEPARATOR: Final = re.compile(r"\s*(?:>|#)\s*")


@dataclass(frozen=True)
class Heading:
    """A heading of a note: its path, level and where its part is in the text after the
    front matter (from its own line to the next heading of the same or a higher level)."""

    path: str
    level: int
    start: int
    end: int


def headings(text: str) -> list[Heading]:
    """The headings of the note ``text`` (front matter included or not), in order."""
    body = text[body_start(text) :]
    found: list[tuple[str, int, int]] = []
    above: list[tuple[int, str]] = []
    for level, name, start in _heading_lines(body):
        above = [(lvl, n) for lvl, n in above if lvl < level] + [(level, name)]
        found.append((" > ".join(n for _, n in above), level, start))
    result = []
    for i, (path, level, start) in enumerate(found):
        end = next((s for _, lvl, s in found[i + 1 :] if lvl <= level), len(body))
        result.append(Heading(path, level, start, end))
    return result


def section(rel: str, text: str, heading: str) -> tuple[str, str]:
    """The heading path matched and the part of ``text`` under ``heading`` (its heading line
    and every line up to the next heading of the same or a higher level, subheadings
    included). ``heading`` is a path (``Setup > Linux``, or ``Setup#Linux``) or its last
    parts (``Linux``), compared without case; the first match counts. VaultError
    no_such_heading otherwise, listing some of the note's headings."""
    wanted = _parts(heading)
    found = headings(text)
    for candidate in found:
        parts = _parts(candidate.path)
        if wanted and parts[-len(wanted) :] == wanted:
            body = text[body_start(text) :]
            return candidate.path, body[candidate.start : candidate.end].rstrip()
    raise VaultError("no_such_heading", _missing(rel, heading, [h.path for h in found]), path=rel)


def _heading_lines(body: str) -> Iterator[tuple[int, str, int]]:
    """(level, name, offset) of each heading line of ``body``, those in code fences left out
    (two scans in C: the fences, then the headings)."""
    lines = "\n" + body  # offsets in it are the lines' offsets in ``body`` (see HEADING_LINE)
    fences = []
    if "```" in body or "~~~" in body:
        fences = [(m.start(), m.end()) for m in _FENCED.finditer(lines)]
    inside = 0
    for match in HEADING_LINE.finditer(lines):
        while inside < len(fences) and fences[inside][1] <= match.start():
            inside += 1
        if inside < len(fences) and fences[inside][0] <= match.start():
            continue
        if match.group(2).strip():
            yield len(match.group(1)), match.group(2), match.start()


def _parts(path: str) -> list[str]:
    return [" ".join(p.split()).casefold() for p in _SEPARATOR.split(path.strip()) if p.strip()]


def _missing(rel: str, heading: str, paths: list[str]) -> str:
    if not paths:
        return f"'{rel}' has no headings: read it without heading."
    shown = ", ".join(f"'{p}'" for p in paths[:SHOWN_HEADINGS])
    more = f" and {len(paths) - SHOWN_HEADINGS} more" if len(paths) > SHOWN_HEADINGS else ""
    return f"'{rel}' has no heading '{heading}': its headings are {shown}{more}."
