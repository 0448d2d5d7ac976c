"""A note's parts by heading: which heading path (``Setup > Linux``) a search hit is under, and
the part of a note under a heading path, so a model reads just that part.

A heading path names a heading by the headings above it, joined by `` > `` as chunks name
theirs (``chunks.py``); headings inside code fences and front matter are not headings.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from plugin_bridge.vault.errors import VaultError
from plugin_bridge.vault.lexical.parse import body_start

SHOWN_HEADINGS: Final = 5
"""An unknown heading's error lists at most this many of the note's headings."""
PDF_HEADINGS: Final = "A PDF has no headings: read it by pages instead (e.g. pages='3-5')."
_HEADING: Final = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
_FENCE: Final = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_SEPARATOR: Final = re.compile(r"\s*(?:>|#)\s*")


@dataclass(frozen=True)
class Heading:
    """A heading of a note: its path, level and the line range of its part (its own line to
    the line before the next heading of the same or a higher level)."""

    path: str
    level: int
    start: int
    end: int


def headings(text: str) -> list[Heading]:
    """The headings of the note ``text`` (front matter included or not), in order."""
    lines = text[body_start(text) :].split("\n")
    found: list[tuple[str, int, int]] = []
    above: list[tuple[int, str]] = []
    fence = ""
    for number, line in enumerate(lines):
        opened = _FENCE.match(line)
        if fence:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                fence = ""
            continue
        if opened:
            fence = opened.group(1)
            continue
        if (match := _HEADING.match(line)) is None or not match.group(2).strip():
            continue
        level = len(match.group(1))
        above = [(lvl, name) for lvl, name in above if lvl < level] + [(level, match.group(2))]
        found.append((" > ".join(name for _, name in above), level, number))
    result = []
    for i, (path, level, start) in enumerate(found):
        end = next((s for _, lvl, s in found[i + 1 :] if lvl <= level), len(lines))
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
            lines = text[body_start(text) :].split("\n")
            return candidate.path, "\n".join(lines[candidate.start : candidate.end]).rstrip()
    raise VaultError("no_such_heading", _missing(rel, heading, [h.path for h in found]), path=rel)


def heading_at(body: str, snippet: str) -> str | None:
    """The heading path a search snippet (its match marked ``**…**``) was cut from in the
    note ``body``: the innermost heading above the line holding the marked word with its
    neighbours (else the marked word alone); None above the first heading, or when no line
    holds it."""
    marked = snippet.split("**")
    if len(marked) < 3:
        return None
    before, word, after = marked[0].split("…")[-1].split(), marked[1], marked[2].split("…")[0]
    around = " ".join([*before[-1:], word, *after.replace("**", "").split()[:1]]).casefold()
    lines = body[body_start(body) :].split("\n")
    folded = [" ".join(line.split()).casefold() for line in lines]
    number = next((i for i, line in enumerate(folded) if around in line), None)
    if number is None:
        number = next((i for i, line in enumerate(folded) if word.casefold() in line), None)
    if number is None:
        return None
    inside = [h for h in headings(body) if h.start <= number < h.end]
    return inside[-1].path if inside else None


def _parts(path: str) -> list[str]:
    return [" ".join(p.split()).casefold() for p in _SEPARATOR.split(path.strip()) if p.strip()]


def _missing(rel: str, heading: str, paths: list[str]) -> str:
    if not paths:
        return f"'{rel}' has no headings: read it without heading."
    shown = ", ".join(f"'{p}'" for p in paths[:SHOWN_HEADINGS])
    more = f" and {len(paths) - SHOWN_HEADINGS} more" if len(paths) > SHOWN_HEADINGS else ""
    return f"'{rel}' has no heading '{heading}': its headings are {shown}{more}."
